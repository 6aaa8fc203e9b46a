"""Options that no other test sets, on the command line: svmocas's stopping
rules (--tol-abs, --qp-bound, --max-time), ASSET's --eig-threshold and
--record-time. Each is checked against what it promises, from the run's own
per-iteration lines or from the model file recomputed here with NumPy."""
import re

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled
from svmtrain.cli.train import main as train_main
from svmtrain.io.model_io import load_model

# ocas --verbose: "  88: tim=0.547, Q_P=11434.565880, Q_D=11428.945919, Q_P-Q_D=5.619961, ..."
ITERATION = re.compile(r"^\s*(\d+): tim=([\d.]+), Q_P=([-\d.]+), Q_D=([-\d.]+), Q_P-Q_D=([-\d.]+),", re.M)


def run(args):
    r = CliRunner().invoke(train_main, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r


def ocas_iterations(tmp_path, *options):
    """(tim, Q_P, Q_D, gap) of every iteration of a verbose -s ocas run on a9a,
    and the model it wrote."""
    r = run(["-s", "ocas", "--threads", "1", "--verbose", *options, bundled("a9a.xz"), tmp_path / "m"])
    rows = [tuple(float(v) for v in m.groups()[1:]) for m in ITERATION.finditer(r.output)]
    assert len(rows) >= 2, r.output
    return np.array(rows), load_model(tmp_path / "m")


def test_tol_abs_stops_at_the_first_gap_below_it(tmp_path):
    """svmocas's -a: stop once Q_P - Q_D <= A (here with the relative rule off)."""
    rows, model = ocas_iterations(tmp_path, "-e", "1e-12", "--tol-abs", "5")
    gaps = rows[:, 3]
    assert gaps[-1] <= 5 and (gaps[:-1] > 5).all()
    assert gaps[-1] > 1e-12 * abs(rows[-1, 1])      # the relative rule did not stop it


def test_qp_bound_stops_at_the_first_primal_value_below_it(tmp_path):
    """svmocas's -q: stop once Q_P <= Q (a9a's optimum is about 11,434 in C form)."""
    rows, model = ocas_iterations(tmp_path, "--qp-bound", "12000")
    q_p = rows[:, 1]
    assert q_p[-1] <= 12000 and (q_p[:-1] > 12000).all()
    assert rows[-1, 3] > 0.01 * abs(q_p[-1])          # far from the default tolerance: the bound stopped it


def test_max_time_stops_at_the_first_iteration_past_it(tmp_path):
    rows, model = ocas_iterations(tmp_path, "-e", "1e-12", "--max-time", "0.3")
    seconds = rows[:, 0]
    assert seconds[-1] >= 0.3 and (seconds[:-1] < 0.3).all()
    assert rows[-1, 3] > 1e-12 * abs(rows[-1, 1])
    assert "converged false\n" in (tmp_path / "m").read_text()


def rbf_gram(model):
    """K(SV_s, SV_t) of an RBF kernel model, by dense NumPy."""
    sv = model.SV
    X = np.zeros((sv.n_rows, model.n_features))
    for i in range(sv.n_rows):
        lo, hi = sv.indptr[i], sv.indptr[i + 1]
        X[i, sv.indices[lo:hi]] = sv.values[lo:hi]
    sq = (X * X).sum(1)
    return np.exp(-model.kernel.gamma * np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0))


# heart_scale, 128 landmarks, gamma 0.5: K_SS's eigenvalues run from 0.0075 to 7.6
@pytest.mark.parametrize("threshold, dropped", [("1e-8", "none"), ("0.1", "some"), ("10", "all")])
def test_eig_threshold_keeps_the_coefficients_in_the_kept_eigenspace(tmp_path, threshold, dropped):
    """Nystrom with --eig-threshold E: the landmarks' coefficients
    alpha_S = Q_d D_d^{-1/2} gamma lie in the span of K_SS's eigenvectors whose
    eigenvalues are >= E; those below E are dropped (checked by eigh here)."""
    run(["-q", "-s", "asset", "-D", "128", "-g", "0.5", "--eig-threshold", threshold,
         bundled("heart_scale.xz"), tmp_path / "m"])
    model = load_model(tmp_path / "m")
    assert model.n_sv == 128
    values, vectors = np.linalg.eigh(rbf_gram(model))
    alpha = model.coef[:, 0]
    below = values < float(threshold)
    assert {"none": not below.any(), "some": 0 < below.sum() < 128, "all": below.all()}[dropped]
    in_dropped = np.abs(vectors[:, below].T @ alpha)
    in_kept = np.abs(vectors[:, ~below].T @ alpha)
    assert (in_dropped <= 1e-9 + 1e-6 * np.abs(alpha).max()).all()
    if dropped == "all":
        assert not alpha.any()                      # nothing kept: a zero expansion
    else:                                           # the kept eigenvectors carry the model
        assert in_kept.max() > 1e-3 * np.abs(alpha).max() > 0


def test_record_time_adds_one_header_line_and_nothing_else(tmp_path):
    plain = []
    for k in range(2):
        run(["-q", "-s", "dcd", bundled("heart_scale.xz"), tmp_path / f"plain{k}"])
        plain.append((tmp_path / f"plain{k}").read_text())
    assert plain[0] == plain[1] and "train_time" not in plain[0]     # byte-identical without it
    run(["-q", "-s", "dcd", "--record-time", bundled("heart_scale.xz"), tmp_path / "timed"])
    timed = (tmp_path / "timed").read_text().splitlines(keepends=True)
    extra = [line for line in timed if line.startswith("train_time ")]
    assert len(extra) == 1 and 0 < float(extra[0].split()[1]) < 60
    assert "".join(line for line in timed if line not in extra) == plain[0]
