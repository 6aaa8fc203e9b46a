"""Start-up: the scipy.linalg probe skipped, BLAS still reachable, the fast exit's output and codes.

Each check runs in a fresh interpreter (a subprocess), since what it checks
is what a new process imports and how it ends.
"""
import lzma
import subprocess
import sys

import numpy as np

from conftest import ROOT, bundled


def python(code, *args, stdin=None):
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, input=stdin, timeout=300)


def test_training_run_never_imports_scipy_linalg(tmp_path):
    code = ("import sys; from svmtrain.cli.train import main\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
            "print('scipy.linalg' in sys.modules, 'numba.np.arraymath' in sys.modules)")
    r = python(code, "-q", bundled("heart_scale.xz"), tmp_path / "m")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True"]


def test_blas_still_works_after_the_probe_is_skipped():
    code = ("import numpy as np\nfrom svmtrain._numba.start import skip_blas_probe\nskip_blas_probe()\n"
            "from numba import njit\n"
            "@njit\ndef f(a, b):\n    return np.dot(a, b), np.linalg.solve(a, b[:, 0])\n"
            "rng = np.random.default_rng(0); a = rng.normal(size=(5, 5)) + 5 * np.eye(5); b = rng.normal(size=(5, 2))\n"
            "d, x = f(a, b)\n"
            "print(float(np.abs(d - a @ b).max()), float(np.abs(x - np.linalg.solve(a, b[:, 0])).max()))")
    r = python(code)
    assert r.returncode == 0, r.stderr
    err_dot, err_solve = map(float, r.stdout.split())
    assert err_dot < 1e-12 and err_solve < 1e-10


def test_skip_blas_probe_is_a_no_op_once_numba_has_loaded():
    code = ("import numba.np.arraymath, numba.np.linalg as L\nprobe = L.ensure_blas\n"
            "from svmtrain._numba.start import skip_blas_probe\nskip_blas_probe()\nprint(L.ensure_blas is probe)")
    assert python(code).stdout.strip() == "True"


def test_console_scripts_flush_everything_and_keep_exit_codes(tmp_path):
    data = tmp_path / "heart"
    data.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    train = "from svmtrain.cli.train import console_main; console_main()"
    predict = "from svmtrain.cli.predict import console_main; console_main()"
    r = python(train, data, tmp_path / "m")
    assert r.returncode == 0 and "Training time = " in r.stdout.rstrip().splitlines()[-1]
    r = python(predict, data, tmp_path / "m", "-")          # 270 labels on stdout, accuracy on stderr
    assert r.returncode == 0
    assert len(r.stdout.splitlines()) == 270 and r.stderr.startswith("Accuracy = ")
    truth = [float(line.split()[0]) for line in data.read_text().splitlines()]
    assert np.mean(np.array(r.stdout.split(), float) == np.array(truth)) > 0.8
    r = python(train, "-s", "5", "-W", "w", data, tmp_path / "m2")     # refused: exit 2, one line
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and not (tmp_path / "m2").exists()
    r = python(train, tmp_path / "missing", tmp_path / "m3")      # bad input: 2
    assert r.returncode == 2 and "missing" in r.stderr
    r = python(train, "-q", data, tmp_path / "no-such-dir" / "m3")  # the system failed: 1
    assert r.returncode == 1 and "no-such-dir" in r.stderr
    r = python(train, "-", tmp_path / "m4", stdin="1 1:1\n-1 1:-1\n")
    assert r.returncode == 0 and (tmp_path / "m4").exists()
