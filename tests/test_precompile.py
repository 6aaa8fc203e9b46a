"""svmtrain.cli.precompile: after it, a real run of the precompiled groups
compiles nothing.

The package is copied into a temporary directory first, so numba's cache
(``__pycache__`` beside the sources) starts empty and is private to the
test; both steps run in fresh interpreters with that copy first on the path.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import COMPILE_LISTENER, ROOT, bundled

RUN_AND_COUNT = COMPILE_LISTENER + r"""
import json, sys, tempfile, os
from numba import njit
import svmtrain
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main

data, args = sys.argv[1], sys.argv[2:]
tmp = tempfile.mkdtemp()
model, out = os.path.join(tmp, "m"), os.path.join(tmp, "out")
train_main(["-q"] + args + [data, model], standalone_mode=False)
predict_main(["-q", data, model, out], standalone_mode=False)
n_run = len(compiled)

@njit
def probe(x):       # proves that the listener sees compilations
    return x + 1

probe(1)
print(json.dumps({"file": svmtrain.__file__, "run": compiled[:n_run], "probe": compiled[n_run:]}))
"""


def _copy_package(tmp_path):
    dst = tmp_path / "pkg"
    shutil.copytree(ROOT / "svmtrain", dst / "svmtrain",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "*.pyc"))
    return dst


def _env(pkg):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(pkg) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("NUMBA_DISABLE_JIT", None)
    return env


def _count(pkg, args):
    out = subprocess.run([sys.executable, "-c", RUN_AND_COUNT, str(bundled("heart_scale.xz"))] + args,
                         env=_env(pkg), cwd=pkg, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(res["file"]).resolve().is_relative_to(pkg.resolve())   # the copy was imported
    return res


def test_precompiled_group_runs_without_compiling(tmp_path):
    pkg = _copy_package(tmp_path)
    code = ("from svmtrain.cli.precompile import precompile; import json; "
            "print(json.dumps(precompile(jobs=1, groups=['reader', 'pegasos'])))")
    out = subprocess.run([sys.executable, "-c", code], env=_env(pkg), cwd=pkg,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    groups = json.loads(out.stdout.strip().splitlines()[-1])
    assert [g for g, _ in groups] == ["reader", "pegasos"]
    assert out.stderr.strip() == ""                       # quiet
    assert list(pkg.glob("svmtrain/**/__pycache__/*.nbi"))  # the in-tree cache was written
    res = _count(pkg, ["-s", "pegasos"])
    assert res["probe"], "the compile listener saw nothing"
    assert res["run"] == []


def test_without_precompile_the_same_run_compiles(tmp_path):
    # the control: in a fresh copy the run does compile (else the test above proves nothing)
    pkg = _copy_package(tmp_path)
    res = _count(pkg, ["-s", "pegasos"])
    assert "svmtrain.solvers.sgd._pegasos_kernels.pegasos_steps" in res["run"]


def test_unknown_group_is_refused():
    from svmtrain.cli.precompile import precompile
    with pytest.raises(ValueError, match="unknown precompile group"):
        precompile(groups=["nope"])
