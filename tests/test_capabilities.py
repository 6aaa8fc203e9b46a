"""The support matrix (svmtrain/cli/matrix.py, from the solver registry) against what svmtrain does.

docs/capabilities.md is the matrix (rewrite it with scripts/write_capabilities.py) and
``svm-train --capabilities`` prints it. Every combination the matrix marks trains on tiny data,
predicts its rows and round-trips its model file (save, load, the same predictions): each
(solver, task, loss) in memory, with a kernel, --multiclass cs, --stream, sample weights, -C and
--grid. Every combination it leaves blank is refused by svm-train (exit status 2) with a message
naming every solver the registry says can, and no other (the refused solver itself aside).
--engine dask: the refusals only (starting a cluster is slow; tests/test_dask.py trains the rest).
Runs are kept short (few epochs / iterations): this checks that combinations work, not accuracy.
"""
import lzma
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import svmtrain
from conftest import bundled
from svmtrain.cli.train import main as train_main
from svmtrain.errors import ParameterError
from svmtrain.io.model_io import load_model, save_model
from svmtrain.io.reader import read_libsvm
from svmtrain.models.linear import LinearModel
from svmtrain.params import TrainParams
from svmtrain.solvers import REGISTRY, trains_kernel_model
from svmtrain.cli.matrix import (DASK, MEMORY, NO, PAIRS, SEARCH_C, STREAM, WEIGHTS, WITH_T, matrix, page,
                                     text)

ROOT = Path(__file__).resolve().parent.parent
ROWS = {r.solver: r for r in matrix()}

# Options that keep each run short (the solvers' iteration and epoch caps): speed only, no capability.
FAST = {"dcd": {"max_iter": 50}, "ocas": {"max_iter": 50}, "cvm": {"max_iter": 30}, "pegasos": {"epochs": 2},
        "sgd": {"epochs": 2}, "norma": {"epochs": 2}, "sbp": {"epochs": 2}, "asset": {"epochs": 2, "dim": 16}}
FAST_FLAGS = {"max_iter": "--max-iter", "epochs": "-T", "dim": "-D"}


def needs(solver, task, loss):
    """Options a declared pair needs that the registry does not express: asset trains every loss but
    the hinge through --inner dcd (its declaration's comment; svmtrain/solvers/asset/asset.py refuses
    the rest)."""
    return {"inner": "dcd"} if solver == "asset" and (task, loss) != ("c", "hinge") else {}


def options(solver, task, loss, **more):
    return dict(solver=solver, task=task, loss=loss, **FAST.get(solver, {}), **needs(solver, task, loss), **more)


def flags(solver, task, loss):
    """The command line of options(solver, task, loss)."""
    out = ["-s", solver, "--task", task, "--loss", loss]
    for k, v in {**FAST.get(solver, {}), **needs(solver, task, loss)}.items():
        out += [FAST_FLAGS.get(k, "--" + k), str(v)]
    return out


def cases(predicate):
    """pytest params (solver, task, loss) of every row and pair where predicate(row, (task, loss))."""
    return [pytest.param(r.solver, t, l, id=f"{r.solver}-{t}-{l}")
            for r in ROWS.values() for t, l in PAIRS if predicate(r, (t, l))]


def solver_cases(predicate):
    return [pytest.param(r.solver, id=r.solver) for r in ROWS.values() if predicate(r)]


def first_pair(row):
    return next(p for p in PAIRS if MEMORY in row.pairs[p])


# ------------------------------------------------------------------- tiny data

def _write(path, rows):
    with open(path, "w") as f:
        for label, qid, feats in rows:
            q = "" if qid is None else f" qid:{qid}"
            f.write(f"{label:g}{q} " + " ".join(f"{i}:{v:g}" for i, v in feats) + "\n")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """60 rows of heart_scale as: binary classification (also one-class), regression (real targets),
    ranking (6 queries, relevance 0-2) and 3-class classification; task -> path ("m": 3 classes)."""
    root = tmp_path_factory.mktemp("capabilities")
    lines = lzma.decompress(bundled("heart_scale.xz").read_bytes()).decode().splitlines()[:60]
    parsed = []
    for line in lines:
        label, *pairs = line.split()
        parsed.append((float(label), [(int(i), float(v)) for i, v in (p.split(":") for p in pairs)]))
    v = np.random.default_rng(0).normal(size=14)
    score = np.array([sum(x * v[i] for i, x in feats) for _, feats in parsed])
    third = np.quantile(score, [1 / 3, 2 / 3])
    binary = _write(root / "c.svm", [(y, None, f) for y, f in parsed])
    return {
        "c": binary, "o": binary,
        "r": _write(root / "r.svm", [(round(s, 4), None, f) for s, (_, f) in zip(score, parsed)]),
        "p": _write(root / "p.svm", [(float(np.searchsorted(np.sort(score[k // 10 * 10:k // 10 * 10 + 10])[[3, 7]],
                                                           s)), 1 + k // 10, f)
                                     for k, (s, (_, f)) in enumerate(zip(score, parsed))]),
        "m": _write(root / "m.svm", [(1.0 + float(np.searchsorted(third, s)), None, f)
                                     for s, (_, f) in zip(score, parsed)]),
    }


@pytest.fixture(scope="module")
def chunks(files):
    return {k: read_libsvm(p) for k, p in files.items()}


def round_trip(model, data, path):
    """Predictions of every row (finite), and the same after save_model + load_model; the predictions."""
    pred = svmtrain.predict(data, model)
    assert pred.shape == (data.n_rows,) and np.all(np.isfinite(pred))
    save_model(model, path)
    np.testing.assert_array_equal(svmtrain.predict(data, load_model(path)), pred)
    return pred


def cli(*args):
    return CliRunner().invoke(train_main, [str(a) for a in args])


SOLVER_WORD = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, REGISTRY)) + r")(?![\w])")


def assert_refused(result, refused, able):
    """Exit status 2 and a message naming every solver in ``able`` and no other (the refused one aside)."""
    message = result.output if hasattr(result, "output") else str(result)
    assert getattr(result, "exit_code", 2) == 2, message
    named = set(SOLVER_WORD.findall(message)) - {refused}
    missing, extra = set(able) - named, named - set(able)
    assert not missing, f"{message.strip()!r} does not name {sorted(missing)}, which can"
    assert not extra, f"{message.strip()!r} names {sorted(extra)}, which cannot"


# ------------------------------------------------------------------- the page

def test_docs_page_is_the_registrys_matrix():
    current = (ROOT / "docs" / "capabilities.md").read_text(encoding="utf-8")
    assert current == page(), "docs/capabilities.md is out of date: run python scripts/write_capabilities.py"


def test_svm_train_capabilities_prints_the_matrix():
    r = cli("--capabilities")
    assert r.exit_code == 0, r.output
    assert r.output == text()
    for name in REGISTRY:
        assert re.search(rf"^{name}\s", r.output, re.M)


def test_every_solver_trains_something():
    for r in ROWS.values():
        assert any(MEMORY in layers for layers in r.pairs.values()), r.solver


# ------------------------------------------------------------ declared: they work

@pytest.mark.parametrize("solver,task,loss", cases(lambda r, p: MEMORY in r.pairs[p]))
def test_declared_pair_trains_in_memory(solver, task, loss, chunks, tmp_path):
    """Trains, predicts, round-trips; a kernel model exactly when the kernel column says so without -t."""
    data = chunks[task]
    model = svmtrain.train(data, **options(solver, task, loss))
    round_trip(model, data, tmp_path / "m.model")
    assert isinstance(model, LinearModel) != trains_kernel_model(solver), type(model).__name__


@pytest.mark.parametrize("solver,task,loss", [
    p for p in cases(lambda r, p: MEMORY in r.pairs[p] and r.kernel != NO
                     and REGISTRY[r.solver].trains(*p, kernel_type=2))])
def test_declared_kernel_trains_a_kernel_model(solver, task, loss, chunks, tmp_path):
    """-t 2 with every solver whose kernel column is yes or with -t K, at each of its pairs."""
    data = chunks[task]
    model = svmtrain.train(data, **options(solver, task, loss, kernel_type=2))
    round_trip(model, data, tmp_path / "m.model")
    assert not isinstance(model, LinearModel), type(model).__name__


@pytest.mark.parametrize("solver", solver_cases(lambda r: MEMORY in r.multiclass_cs))
def test_declared_crammer_singer_trains(solver, chunks, tmp_path):
    data = chunks["m"]
    model = svmtrain.train(data, **options(solver, "c", "hinge", multiclass="cs"))
    pred = round_trip(model, data, tmp_path / "m.model")
    assert set(np.unique(pred)) <= {1.0, 2.0, 3.0}


@pytest.mark.parametrize("solver,task,loss", cases(lambda r, p: STREAM in r.pairs[p]))
def test_declared_stream_trains(solver, task, loss, files, chunks, tmp_path):
    from svmtrain.training.streamed import train_streamed
    model = train_streamed(str(files[task]), TrainParams(**options(solver, task, loss)), memory_limit_mb=64,
                           cache_path=str(tmp_path / "cache"))
    round_trip(model, chunks[task], tmp_path / "m.model")


@pytest.mark.parametrize("solver", solver_cases(lambda r: STREAM in r.multiclass_cs))
def test_declared_stream_crammer_singer_trains(solver, files, chunks, tmp_path):
    from svmtrain.training.streamed import train_streamed
    params = TrainParams(**options(solver, "c", "hinge", multiclass="cs"))
    model = train_streamed(str(files["m"]), params, memory_limit_mb=64, cache_path=str(tmp_path / "cache"))
    round_trip(model, chunks["m"], tmp_path / "m.model")


@pytest.mark.parametrize("solver,task,loss", cases(lambda r, p: WEIGHTS in r.pairs[p]))
def test_declared_sample_weights_train(solver, task, loss, chunks, tmp_path):
    data = chunks[task]
    X = sp.csr_matrix((data.values, data.indices, data.indptr))
    w = np.where(np.arange(data.n_rows) % 2 == 0, 1.0, 2.0)
    model = svmtrain.train(X, data.labels, sample_weight=w, **options(solver, task, loss))
    round_trip(model, data, tmp_path / "m.model")


@pytest.mark.parametrize("solver,task,loss", cases(lambda r, p: SEARCH_C in r.pairs[p]))
def test_declared_search_c_runs(solver, task, loss, files, chunks, tmp_path):
    """svm-train -C -v 2 MODEL_FILE on a short path (a given -c is its start; regression from -p 0.001
    down walks one tube width)."""
    short = ["-c", 256] if task == "c" else ["-c", 2.0 ** 18, "-p", 0.001]
    model_file = tmp_path / "m.model"
    r = cli(*flags(solver, task, loss), "-C", "-v", 2, *short, "-q", files[task], model_file)
    assert r.exit_code == 0, r.output
    assert "Best C = " in r.output
    pred = svmtrain.predict(chunks[task], load_model(model_file))
    assert pred.shape == (chunks[task].n_rows,) and np.all(np.isfinite(pred))


@pytest.mark.parametrize("solver", solver_cases(lambda r: r.grid != NO))
def test_declared_grid_runs(solver, files, chunks, tmp_path):
    """svm-train --grid on a 2 x 1 grid, 2 folds, one process; the best point's model file predicts."""
    kernel = ["-t", 2] if ROWS[solver].grid == WITH_T else []
    loss = next(loss for task, loss in PAIRS if task == "c" and MEMORY in ROWS[solver].pairs[(task, loss)])
    model_file = tmp_path / "m.model"
    r = cli(*flags(solver, "c", loss), *kernel, "--grid", "-log2c", "0,1,1", "-log2g", "-2,-2,1", "-v", 2,
            "-out", "null", "--jobs", 1, "-q", files["c"], model_file)
    assert r.exit_code == 0, r.output
    assert re.search(r"^\S+ \S+ \S+$", r.output.strip().splitlines()[-1]), r.output    # 'C gamma rate'
    model = load_model(model_file)
    assert not isinstance(model, LinearModel)
    assert np.all(np.isfinite(svmtrain.predict(chunks["c"], model)))


# ------------------------------------------------------------ undeclared: refused

def able(predicate):
    return [r.solver for r in ROWS.values() if predicate(r)]


@pytest.mark.parametrize("solver,task,loss", cases(lambda r, p: MEMORY not in r.pairs[p]))
def test_undeclared_pair_is_refused(solver, task, loss, files, tmp_path):
    r = cli("-s", solver, "--task", task, "--loss", loss, files[task], tmp_path / "m.model")
    assert_refused(r, solver, able(lambda x: MEMORY in x.pairs[(task, loss)]))


@pytest.mark.parametrize("solver,task,loss", cases(lambda r, p: MEMORY in r.pairs[p] and STREAM not in r.pairs[p]))
def test_undeclared_stream_is_refused(solver, task, loss, files, tmp_path):
    r = cli(*flags(solver, task, loss), "--stream", "--memory-limit", 64, files[task], tmp_path / "m.model")
    assert_refused(r, solver, able(lambda x: STREAM in x.pairs[(task, loss)]))


@pytest.mark.parametrize("solver,task,loss", cases(lambda r, p: MEMORY in r.pairs[p] and DASK not in r.pairs[p]))
def test_undeclared_dask_is_refused(solver, task, loss, files, tmp_path):
    r = cli(*flags(solver, task, loss), "--engine", "dask", files[task], tmp_path / "m.model")
    assert_refused(r, solver, able(lambda x: DASK in x.pairs[(task, loss)]))


@pytest.mark.parametrize("solver,task,loss", cases(lambda r, p: MEMORY in r.pairs[p] and WEIGHTS not in r.pairs[p]))
def test_undeclared_sample_weights_are_refused(solver, task, loss, chunks):
    data = chunks[task]
    X = sp.csr_matrix((data.values, data.indices, data.indptr))
    w = np.where(np.arange(data.n_rows) % 2 == 0, 1.0, 2.0)
    with pytest.raises(ParameterError) as e:
        svmtrain.train(X, data.labels, sample_weight=w, **options(solver, task, loss))
    assert_refused(e.value, solver, able(lambda x: WEIGHTS in x.pairs[(task, loss)]))


@pytest.mark.parametrize("solver,task,loss", cases(lambda r, p: MEMORY in r.pairs[p] and SEARCH_C not in r.pairs[p]))
def test_undeclared_search_c_is_refused(solver, task, loss, files, tmp_path):
    r = cli(*flags(solver, task, loss), "-C", "-v", 2, files[task], tmp_path / "m.model")
    assert_refused(r, solver, able(lambda x: SEARCH_C in x.pairs[(task, loss)]))


@pytest.mark.parametrize("solver", solver_cases(lambda r: MEMORY not in r.multiclass_cs
                                                and MEMORY in r.pairs[("c", "hinge")]))
def test_undeclared_crammer_singer_is_refused(solver, files, tmp_path):
    r = cli(*flags(solver, "c", "hinge"), "--multiclass", "cs", files["m"], tmp_path / "m.model")
    assert_refused(r, solver, able(lambda x: MEMORY in x.multiclass_cs))


@pytest.mark.parametrize("solver", solver_cases(lambda r: MEMORY in r.multiclass_cs and STREAM not in r.multiclass_cs))
def test_undeclared_stream_crammer_singer_is_refused(solver, files, tmp_path):
    r = cli(*flags(solver, "c", "hinge"), "--multiclass", "cs", "--stream", files["m"], tmp_path / "m.model")
    assert_refused(r, solver, able(lambda x: STREAM in x.multiclass_cs))


@pytest.mark.parametrize("solver", solver_cases(lambda r: MEMORY in r.multiclass_cs and DASK not in r.multiclass_cs))
def test_undeclared_dask_crammer_singer_is_refused(solver, files, tmp_path):
    r = cli(*flags(solver, "c", "hinge"), "--multiclass", "cs", "--engine", "dask", files["m"], tmp_path / "m.model")
    assert_refused(r, solver, able(lambda x: DASK in x.multiclass_cs))


@pytest.mark.parametrize("option", [["-t", 2], ["-g", 0.5], ["-d", 2], ["-r", 1]], ids=["-t", "-g", "-d", "-r"])
@pytest.mark.parametrize("solver", solver_cases(lambda r: r.kernel == NO))
def test_kernel_options_on_a_linear_solver_are_refused(solver, option, files, tmp_path):
    task, loss = first_pair(ROWS[solver])
    r = cli(*flags(solver, task, loss), *option, files[task], tmp_path / "m.model")
    assert_refused(r, solver, able(lambda x: x.kernel != NO))


@pytest.mark.parametrize("solver,task,loss", cases(lambda r, p: MEMORY in r.pairs[p] and r.kernel != NO
                                                   and not REGISTRY[r.solver].trains(*p, kernel_type=2)))
def test_pairs_its_kernel_model_does_not_train_are_refused(solver, task, loss, files, tmp_path):
    """A solver that trains (task, loss) linearly but not with -t 2 (Declaration.kernelized_tasks)."""
    r = cli(*flags(solver, task, loss), "-t", 2, files[task], tmp_path / "m.model")
    assert_refused(r, solver, [s for s, d in REGISTRY.items()
                               if d.trains(task, loss, kernel_type=2) and d.trains_kernel_model(2)])


@pytest.mark.parametrize("solver", solver_cases(lambda r: r.grid == NO))
def test_grid_without_a_kernel_model_is_refused(solver, files, tmp_path):
    task, loss = first_pair(ROWS[solver])
    r = cli(*flags(solver, task, loss), "--grid", "-v", 2, files[task], tmp_path / "m.model")
    assert_refused(r, solver, able(lambda x: x.grid != NO))


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
