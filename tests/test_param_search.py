"""-C: the warm-started C path (svmtrain/selection/param_search.py) and stratified folds."""
import dataclasses
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled, needs
from svmtrain.cli.train import main as train_main
from svmtrain.data.dataset import take_rows
from svmtrain.errors import ParameterError
from svmtrain.io.model_io import load_model
from svmtrain.io.reader import read_libsvm
from svmtrain.selection.param_search import MAX_C, UNCHANGED_STOP, search_c, start_c
from svmtrain.params import TrainParams
from svmtrain.training.train import class_folds, fold_assignment, train


@pytest.fixture(scope="module")
def a9a():
    return read_libsvm(bundled("a9a.xz"))


def test_start_c_is_liblinears(heart, a9a):
    """liblinear-train -C -s 2 prints its first line at log2c = -13 on
    heart_scale and -20 on a9a; -s 0's start is twice -s 2's."""
    sq = TrainParams(loss="squared-hinge")
    assert start_c(heart, sq) == 2.0 ** -13
    assert start_c(a9a, sq) == 2.0 ** -20
    assert start_c(heart, TrainParams(loss="log")) == 2.0 ** -12
    max_sq = max(float(heart.values[a:b] @ heart.values[a:b]) for a, b in zip(heart.indptr[:-1], heart.indptr[1:]))
    with_bias = 1.0 / (2 * heart.n_rows * (max_sq + 4.0))
    assert start_c(heart, TrainParams(loss="squared-hinge", bias=2.0)) == 2.0 ** np.floor(np.log2(with_bias))
    assert start_c(heart, TrainParams(loss="squared-hinge", C=3.0)) == 3.0      # -c gives the start
    assert start_c(heart, TrainParams(C=5000.0)) == MAX_C


def test_class_folds_are_stratified_and_seeded():
    labels = np.repeat([1.0, 2.0, 3.0], [50, 23, 7])
    rng = np.random.default_rng(3)
    labels = labels[rng.permutation(len(labels))]
    a = class_folds(labels, 5, np.random.default_rng(1))
    b = class_folds(labels, 5, np.random.default_rng(1))
    assert np.array_equal(a, b) and set(a.tolist()) == set(range(5))
    for c in (1.0, 2.0, 3.0):
        counts = np.bincount(a[labels == c], minlength=5)
        assert counts.max() - counts.min() <= 1 and counts.sum() == np.count_nonzero(labels == c)
    assert not np.array_equal(a, class_folds(labels, 5, np.random.default_rng(2)))
    # regression keeps a random deal; classification -v uses the stratified one
    p = TrainParams(seed=1)
    chunk = read_libsvm(bundled("heart_scale.xz"))
    folds = fold_assignment(chunk, p, 5)
    for c in np.unique(chunk.labels):
        counts = np.bincount(folds[chunk.labels == c], minlength=5)
        assert counts.max() - counts.min() <= 1


def _cold_rates(data, params, Cs, folds=5):
    """Accuracy of independent (cold) cross-validation at each C, on the path's folds.

    The runs are independent and their kernels release the GIL, so they train
    two at a time (as search_c's folds do), the largest C (the longest runs) first."""
    fold_of = fold_assignment(data, params, folds)

    def correct(C, k):
        tr, te = take_rows(data, np.flatnonzero(fold_of != k)), take_rows(data, np.flatnonzero(fold_of == k))
        m = train(tr, dataclasses.replace(params, C=C), n_features=data.n_features)
        return int(np.count_nonzero(m.predict(te) == te.labels))

    with ThreadPoolExecutor(2) as pool:
        runs = {(C, k): pool.submit(correct, C, k) for C in sorted(Cs, reverse=True) for k in range(folds)}
        return np.array([sum(runs[C, k].result() for k in range(folds)) / data.n_rows for C in Cs])


def test_hinge_path_gives_the_same_rates_and_best_c_as_independent_runs(heart):
    """The hinge: dcd walks the path itself, each fold resuming from its dual point."""
    params = TrainParams(loss="hinge", eps=1e-6, max_iter=100000)
    path = search_c(heart, params, 5, threads=2)
    Cs = [p.C for p in path.points]
    assert Cs[0] == start_c(heart, params) and np.allclose(np.diff(np.log2(Cs)), 1.0)
    ours = np.array([p.accuracy for p in path.points])
    cold = _cold_rates(heart, params, Cs)
    # one row at most up to C = 1; two at the largest C, where warm and cold
    # solutions at the same tolerance part (the hinge dual is not unique there)
    small = np.array(Cs) <= 1.0
    assert np.max(np.abs(ours - cold)[small]) <= 1.0 / heart.n_rows + 1e-12
    assert np.max(np.abs(ours - cold)) <= 2.0 / heart.n_rows + 1e-12
    assert Cs[int(np.argmax(cold))] == path.best.C


DCD_CONVERGES = 16.0        # dcd at -e 1e-6 on heart_scale: cold runs up to here take < 5,000 outer iterations


@pytest.mark.parametrize("loss", ["squared-hinge", "log"])
def test_newton_path_gives_the_same_rates_and_best_c_as_independent_runs(heart, loss):
    """-C -s dcd with the squared hinge or the logistic loss walks the path
    by tron's primal Newton method (at a tenth of dcd's -e), warm-started
    from each fold's previous w: every C's rate is that of independent cold
    -v runs of tron at that C, and that of dcd's own -v runs (the solver the
    user named) wherever dcd converges in reasonable time (at larger C its
    dual needs 10^5 outer iterations and more on heart_scale at -e 1e-6).
    The best C is the independent runs'."""
    params = TrainParams(loss=loss, eps=1e-6, max_iter=100000)
    path = search_c(heart, params, 5, threads=2)
    Cs = [p.C for p in path.points]
    assert Cs[0] == start_c(heart, params) and np.allclose(np.diff(np.log2(Cs)), 1.0) and len(Cs) >= 15
    ours = np.array([p.accuracy for p in path.points])
    newton = _cold_rates(heart, dataclasses.replace(params, solver="tron", eps=1e-7, max_iter=None), Cs)
    assert np.max(np.abs(ours - newton)) <= 1.0 / heart.n_rows + 1e-12
    small = [C for C in Cs if C <= DCD_CONVERGES]
    dcd = _cold_rates(heart, params, small)
    assert np.max(np.abs(ours[:len(small)] - dcd)) <= 1.0 / heart.n_rows + 1e-12
    assert Cs[int(np.argmax(newton))] == path.best.C


def test_newton_path_takes_row_weights(heart):
    """Sample weights (the Python API's) are the rows' costs on the Newton
    path as in train: the rates of independent weighted -v runs."""
    weights = np.array([0.0, 0.5, 1.0, 2.0, 3.0])[np.arange(heart.n_rows) % 5]
    data = dataclasses.replace(heart, weights=weights)
    params = TrainParams(solver="tron", eps=1e-8)
    path = search_c(data, params, 5, threads=2)
    Cs = [p.C for p in path.points]
    cold = _cold_rates(data, params, Cs)
    assert np.max(np.abs(np.array([p.accuracy for p in path.points]) - cold)) <= 1.0 / heart.n_rows + 1e-12
    with pytest.raises(ParameterError, match="weights"):     # dcd takes no row weights with the logistic loss
        search_c(data, TrainParams(loss="log"), 5)


def test_newton_path_trains_one_vs_rest(heart):
    """More than two classes: each fold's one-vs-rest problems walk the path
    (class weights included) with the rates of independent -v runs."""
    labels = np.where((heart.labels < 0) & (heart.values[heart.indptr[:-1]] > 0), 2.0, heart.labels)
    data = dataclasses.replace(heart, labels=labels)
    params = TrainParams(loss="log", eps=1e-6, class_weights={2.0: 2.0})
    path = search_c(data, params, 5, threads=2)
    Cs = [p.C for p in path.points]
    cold = _cold_rates(data, dataclasses.replace(params, solver="tron", eps=1e-7), Cs)
    assert len(np.unique(labels)) == 3 and len(Cs) > 10
    assert np.max(np.abs(np.array([p.accuracy for p in path.points]) - cold)) <= 1.0 / heart.n_rows + 1e-12


def warm_and_cold(data, params, Cs):
    """(the model at Cs[-1] warm-started along Cs, the same C solved cold, the warm-start state)."""
    warm = []
    for C in Cs:
        hot = train(data, dataclasses.replace(params, C=C), warm_start=warm)
    return hot, train(data, dataclasses.replace(params, C=Cs[-1])), warm


@pytest.mark.parametrize("loss", ["squared-hinge", "log"])
def test_warm_started_solution_matches_the_cold_one(a9a, loss):
    rows = np.flatnonzero(np.arange(a9a.n_rows) % 4 == 0)
    data = take_rows(a9a, rows)
    params = TrainParams(loss=loss, eps=1e-4)
    hot, cold, warm = warm_and_cold(data, params, (2.0 ** -6, 2.0 ** -5, 2.0 ** -4, 2.0 ** -3))
    assert "alpha" in warm[0] and warm[0]["C"] == 2.0 ** -3
    f_hot = hot.fit_results[0].info["primal_C_form"]
    f_cold = cold.fit_results[0].info["primal_C_form"]
    assert abs(f_hot - f_cold) <= 1e-4 * f_cold
    assert hot.fit_results[0].n_iter < cold.fit_results[0].n_iter


@pytest.mark.parametrize("bias", [-1.0, 1.0, 2.5])
def test_binary_correct_counts_the_models_right_predictions(heart, bias):
    """The path's one-pass score of a fold equals the LinearModel's
    predictions counted, bit for bit (rows whose score is exactly 0, and
    features beyond the model's, included)."""
    from svmtrain.models.linear import LinearModel
    from svmtrain.selection._path_kernels import binary_correct
    d = heart.n_features
    rng = np.random.default_rng(4)
    has_bias = bias >= 0
    for labels in ([1.0, -1.0], [-1.0, 1.0]):
        for trial in range(3):
            w = rng.normal(size=d + 1)
            if trial == 2:
                w[:] = 0.0                  # every score 0: the second label everywhere
            model = LinearModel(labels=np.array(labels), W=(w if has_bias else w[:-1]).reshape(-1, 1),
                                n_features=d - 2, bias=bias)
            expected = int(np.count_nonzero(model.predict(heart) == heart.labels))
            got = binary_correct(heart.indptr, heart.indices, heart.values, model.W[:, 0], d - 2,
                                 bias if has_bias else 0.0, has_bias, heart.labels == labels[0])
            assert got == expected


def test_threads_do_not_change_the_path(heart):
    a = search_c(heart, TrainParams(loss="squared-hinge"), 5, threads=1)
    b = search_c(heart, TrainParams(loss="squared-hinge"), 5, threads=3)
    assert [(p.C, p.accuracy) for p in a.points] == [(p.C, p.accuracy) for p in b.points]


@pytest.fixture(scope="module")
def a9a_liblinear(tmp_path_factory):
    """a9a as liblinear-official's problem (read and converted once)."""
    import lzma

    from liblinear import liblinearutil as util
    text = tmp_path_factory.mktemp("a9a") / "a9a"
    text.write_bytes(lzma.decompress(bundled("a9a.xz").read_bytes()))
    return util.problem(*util.svm_read_problem(str(text)))


@pytest.mark.parametrize("s, loss", [("2", "squared-hinge"), ("0", "log")])
def test_best_cv_accuracy_within_0_3_points_of_liblinear(a9a, a9a_liblinear, s, loss):
    """liblinear-official's find_parameters (-C -s 2 / -s 0, 5 folds) against ours on a9a."""
    from liblinear import liblinearutil as util

    from reference import reset_c_rand
    reset_c_rand()
    best_C, _, best_rate = util.train(a9a_liblinear, f"-C -s {s} -v 5 -q")
    ours = search_c(a9a, TrainParams(loss=loss), 5)
    assert abs(100.0 * (ours.best.accuracy - best_rate)) <= 0.3, (ours.best_line(), best_C, best_rate)   # rates in 0..1


LINE = re.compile(r"log2c=\s*-?\d+\.\d\d\trate=\d+(\.\d+)?\ttime=\S+ s$")


def test_command_prints_liblinears_lines_and_writes_the_best_model(tmp_path):
    data = str(bundled("heart_scale.xz"))
    r = CliRunner().invoke(train_main, ["-C", "-s", "2", data])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == "Doing parameter search with 5-fold cross validation."
    assert all(LINE.match(ln) for ln in lines[1:-1] if not ln.startswith("WARNING")), lines
    best = re.match(r"Best C = (\S+)  CV accuracy = (\S+)%$", lines[-1])
    assert best
    assert not (tmp_path / "heart_scale.xz.model").exists()
    model_file = tmp_path / "m"
    r = CliRunner().invoke(train_main, ["-C", "-s", "2", "-v", "5", "-q", data, str(model_file)])
    assert r.exit_code == 0 and r.output.splitlines() == [lines[-1]]            # -q: only the best C
    model = load_model(model_file)
    assert float(dict(model.header)["C_used"]) == pytest.approx(float(best.group(1)), rel=1e-5)   # %g in the line
    # the path ran tron's Newton method; the model is the named solver's (LIBLINEAR's -s 2 here: dcd)
    assert dict(model.header)["solver"] == "dcd" and dict(model.header)["loss"] == "squared-hinge"
    r = CliRunner().invoke(train_main, ["-C", "-s", "tron", "-q", data, str(model_file)])
    assert r.exit_code == 0 and r.output.splitlines() == [lines[-1]]            # the same path, tron's own model
    assert dict(load_model(model_file).header)["solver"] == "tron"


@pytest.mark.parametrize("args, says", [
    (["-C", "-s", "sbp"], "linear solvers"),
    (["-C", "--task", "o"], "classification"),
    (["-C", "--task", "r", "-s", "ocas"], "resumes along C (-s dcd), not -s ocas"),
    (["-C", "--task", "r", "-s", "pegasos"], "resumes along C (-s dcd), not -s pegasos"),
    (["-C", "-l", "0.1"], "give no -l"),
    (["-C", "-v", "1"], "N >= 2"),
    (["-C", "--stream"], "in memory"),
])
def test_refusals(args, says):
    r = CliRunner().invoke(train_main, args + [str(bundled("heart_scale.xz"))])
    assert r.exit_code == 2 and says in r.output, r.output


def test_more_folds_than_rows_is_an_error(heart):
    small = take_rows(heart, np.arange(4))
    with pytest.raises(ParameterError, match="more folds than the 4 training rows"):
        search_c(small, TrainParams(), 5)


@needs("liblinear-train", package="liblinear-tools")
@pytest.mark.parametrize("liblinear_s, loss", [("2", "squared-hinge"), ("0", "log")])
def test_path_visits_the_cs_liblinears_visits(tmp_path, liblinear_s, loss):
    """LIBLINEAR's start, doubling and stop: the log2c values that
    liblinear-train -C prints on the same file, from the same start. Both
    walk the path by a primal Newton method from the previous C's w and
    stop once no fold's w has moved for 5 C values (a warm start that meets
    the tolerance takes no step); the folds differ (LIBLINEAR deals rows at
    random, svmtrain stratifies), so the stop may come a C earlier or later."""
    import lzma
    import subprocess
    text = tmp_path / "heart_scale"
    text.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    out = subprocess.run(["liblinear-train", "-C", "-s", liblinear_s, str(text)], capture_output=True, text=True,
                         cwd=tmp_path).stdout
    theirs = [float(v) for v in re.findall(r"^log2c=\s*(-?\d+\.\d+)", out, re.M)]
    path = search_c(read_libsvm(text), TrainParams(loss=loss), 5)
    ours = [float(np.log2(p.C)) for p in path.points]
    common = min(len(ours), len(theirs))
    assert common >= 15 and ours[:common] == theirs[:common] and abs(len(ours) - len(theirs)) <= 2
    assert np.all(np.diff(ours) == 1.0)
    if not path.reached_max:            # stopped on w: the last 5 points have one w per fold, so one rate
        assert ours[-1] < np.log2(MAX_C) and len({p.accuracy for p in path.points[-UNCHANGED_STOP:]}) == 1


def test_newton_path_stops_where_w_stops_moving(a9a):
    """On a9a the squared hinge's w settles long before C = 1024: the path
    ends by LIBLINEAR's rule (liblinear-train -C -s 2 ends at log2c = 1 on
    this file), without a point past it."""
    path = search_c(a9a, TrainParams(loss="squared-hinge"), 5)
    assert not path.reached_max and path.points[-1].C <= 4.0
    assert len({p.accuracy for p in path.points[-UNCHANGED_STOP:]}) == 1
    assert path.best.accuracy > 0.845


def test_a_dip_does_not_stop_the_path(heart):
    """The accuracy falls for several C values on heart_scale and the path
    goes on (LIBLINEAR has no stop on accuracy) to where w stops moving or
    to MAX_C."""
    path = search_c(heart, TrainParams(loss="squared-hinge"), 5)
    rates = [p.accuracy for p in path.points]
    best = int(np.argmax(rates))
    assert path.points[-1].C >= MAX_C / 4
    # more than 3 Cs past the best, none better: a stop on accuracy would have ended there
    assert len(rates) - 1 - best > 3 and max(rates[best + 1:]) <= rates[best] > rates[-1]


def test_a_flat_start_does_not_stop_the_path(a9a):
    """At the smallest C every fold predicts the majority class (75.9 % on
    a9a) for several steps; the path must go on to where it rises."""
    data = take_rows(a9a, np.flatnonzero(np.arange(a9a.n_rows) % 4 == 0))
    path = search_c(data, TrainParams(loss="log"), 5)
    assert path.points[0].accuracy == path.points[3].accuracy < 0.77
    assert path.best.accuracy > 0.83 and path.best.C > 2.0 ** -10


@pytest.mark.parametrize("solver, loss", [("ocas", "hinge"), ("ocas", "log")])
def test_ocas_warm_start_reaches_the_cold_optimum(a9a, solver, loss):
    data = take_rows(a9a, np.flatnonzero(np.arange(a9a.n_rows) % 4 == 0))
    params = TrainParams(solver=solver, loss=loss, eps=1e-6)
    hot, cold, warm = warm_and_cold(data, params, (2.0 ** -4, 2.0 ** -3, 2.0 ** -2))
    assert "w" in warm[0]
    f_hot, f_cold = hot.fit_results[0].info["Q_P"], cold.fit_results[0].info["Q_P"]
    assert abs(f_hot - f_cold) <= 2e-6 * f_cold
    assert hot.fit_results[0].info["Q_D"] <= f_cold * (1 + 1e-12)


def test_ocas_path_finds_the_best_c_of_independent_runs(heart):
    params = TrainParams(solver="ocas", eps=1e-7)
    path = search_c(heart, params, 5)
    Cs = [p.C for p in path.points]
    cold = _cold_rates(heart, params, Cs)
    assert np.max(np.abs(np.array([p.accuracy for p in path.points]) - cold)) <= 1.0 / heart.n_rows + 1e-12
    assert Cs[int(np.argmax(cold))] == path.best.C


def test_b1_fits_sigmoids_on_the_final_model_only(tmp_path):
    """-C -b 1: the path compares labels (no sigmoids per fold and C); the model at the best C has them."""
    r = CliRunner().invoke(train_main, ["-q", "-C", "-s", "2", "-b", "1", str(bundled("heart_scale.xz")),
                                        str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    assert load_model(tmp_path / "m").has_probabilities


# ---------------------------------------------------------------- regression: C and p (LIBLINEAR's -s 11 -C)

REGRESSION_LINE = re.compile(r"^log2c=\s*(-?\d+\.\d\d)\tp=\s*(\d+\.\d\d)\tMean squared error=(\S+)", re.M)


@pytest.fixture(scope="module")
def concrete_text(tmp_path_factory):
    import lzma

    from conftest import shared
    path = tmp_path_factory.mktemp("concrete") / "concrete_scale"
    path.write_bytes(lzma.decompress(shared("concrete_scale.xz").read_bytes()))
    return path


@needs("liblinear-train", package="liblinear-tools")
def test_regression_search_starts_each_p_where_liblinear_does(concrete_text, tmp_path):
    """The p values (19/20 max|y| down to 0) and each p's start C are
    LIBLINEAR's: the first log2c printed for each p is the same."""
    import subprocess
    out = subprocess.run(["liblinear-train", "-s", "11", "-C", str(concrete_text)], capture_output=True, text=True,
                         cwd=tmp_path).stdout
    theirs = {}
    for log2c, p, _ in REGRESSION_LINE.findall(out):
        theirs.setdefault(p, log2c)
    r = CliRunner().invoke(train_main, ["-C", "-s", "11", str(concrete_text)])
    assert r.exit_code == 0, r.output
    ours = {}
    for log2c, p, _ in REGRESSION_LINE.findall(r.output):
        ours.setdefault(p, log2c)
    assert len(theirs) == 20 and ours == theirs
    assert re.fullmatch(r"Best C = \S+ Best p = \S+  CV MSE = \S+", r.output.splitlines()[-1])


def test_regression_search_writes_the_model_at_the_best_c_and_p(concrete_text, tmp_path):
    """From a given -p down (LIBLINEAR's start_p): the p values i max|y|/20
    below it, and the model at the best point, C and p both."""
    r = CliRunner().invoke(train_main, ["-C", "-s", "11", "-p", "8", "-q", str(concrete_text), str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    best = re.fullmatch(r"Best C = (\S+) Best p = (\S+)  CV MSE = (\S+)", r.output.strip())
    assert best, r.output
    header = dict(load_model(tmp_path / "m").header)
    assert float(header["C_used"]) == pytest.approx(float(best.group(1)), rel=1e-5)
    assert float(header["epsilon"]) == pytest.approx(float(best.group(2)), rel=1e-5)
    top = 82.6                                            # max |y| of concrete_scale
    assert float(best.group(2)) in [pytest.approx(i * top / 20, rel=1e-3) for i in range(2)]   # 8 / (82.6/20) -> i <= 1


@pytest.mark.parametrize("loss", ["squared-epsilon-insensitive", "epsilon-insensitive"])
def test_regression_warm_start_reaches_the_cold_optimum(concrete_text, loss):
    data = read_libsvm(concrete_text)
    params = TrainParams(task="r", loss=loss, epsilon=2.0, eps=1e-8, max_iter=100000)
    hot, cold, warm = warm_and_cold(data, params, (2.0 ** -6, 2.0 ** -5, 2.0 ** -4))
    assert "beta" in warm[0] and warm[0]["C"] == 2.0 ** -4
    f_hot = hot.fit_results[0].info["primal_C_form"]
    f_cold = cold.fit_results[0].info["primal_C_form"]
    assert abs(f_hot - f_cold) <= 1e-6 * f_cold


def linear_classifiers():
    """The solvers the registry has for classification that train linear models."""
    from svmtrain.solvers import solvers_for, trains_kernel_model
    return [s for s in solvers_for("c") if not trains_kernel_model(s)]


@pytest.mark.parametrize("solver", linear_classifiers())
def test_every_linear_classifier_of_the_registry_searches(heart, solver):
    """-C takes every linear solver the registry lists (warm-started or not):
    the whole path from LIBLINEAR's start, and the best of its own points."""
    params = TrainParams(solver=solver, C=2.0 ** -4)
    path = search_c(heart, params, 3)
    Cs = [p.C for p in path.points]
    assert Cs[0] == 2.0 ** -4 and np.all(np.diff(np.log2(Cs)) == 1.0)
    assert path.best.accuracy == max(p.accuracy for p in path.points) > 0.75
