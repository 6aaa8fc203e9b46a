"""A read-only install (a system-wide one): numba keeps each user's compiled
kernels in that user's cache directory, and ``svm-train --precompile`` by that
user leaves nothing to compile for any solver.

The package is copied (without caches) into a directory its user cannot
write, and every run is a fresh interpreter as an unprivileged user: the
user ``nobody`` (through ``setpriv``) when the suite runs as root, for whom
permissions would not apply, else the user running the suite. HOME is a
fresh directory, so numba's user-wide cache starts empty. What the scripts
``check_readonly_install.sh`` and ``check_precompile.py`` print, asserted."""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numba
import pytest

from conftest import COMPILE_LISTENER, ROOT, bundled

sys.path.insert(0, str(ROOT / "scripts"))
from check_precompile import RUN_LOOP  # noqa: E402

# run each svm-train argument list of argv[2] (JSON) on argv[1] and print, per
# run, the numba functions it compiled, and the package's directory
RUN_AND_COUNT = COMPILE_LISTENER + RUN_LOOP + r"""
import svmtrain
print(json.dumps({"package": os.path.dirname(svmtrain.__file__), "compiled": counts}))
"""


def _python_and_prefix():
    """(argv prefix that drops to an unprivileged user, Python it can run)."""
    if os.geteuid() != 0:
        return [], sys.executable
    if shutil.which("setpriv") is None:
        pytest.skip("running as root needs setpriv (util-linux) to test as the user nobody")
    python = sys.executable
    if not os.access(python, os.X_OK) or "/root/" in os.path.realpath(python):
        python = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"], python


@pytest.fixture(scope="module")
def readonly_install():
    """(run(home, *argv) -> CompletedProcess, new_home(name) -> a fresh HOME,
    the read-only package directory, the data file)."""
    top = Path(tempfile.mkdtemp(prefix="svmtrain-readonly-"))     # not under pytest's 0700 directory
    top.chmod(0o755)
    site = top / "site"
    shutil.copytree(ROOT / "svmtrain", site / "svmtrain",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "*.pyc"))
    data = top / "heart_scale.xz"
    shutil.copy(bundled("heart_scale.xz"), data)
    for path in [site, *site.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    data.chmod(0o444)
    prefix, python = _python_and_prefix()
    deps = str(Path(numba.__file__).resolve().parents[1])       # numpy, scipy, numba, click, tqdm

    def run(home, *argv, code=RUN_AND_COUNT):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "XDG_", "PYTHON"))}
        env.update(HOME=str(home), PYTHONPATH=f"{site}{os.pathsep}{deps}", PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run(prefix + [python, "-c", code, *argv], env=env, cwd=home,
                              capture_output=True, text=True, timeout=900)

    def new_home(name):
        home = top / name
        home.mkdir()
        if prefix:
            shutil.chown(home, "nobody", "nogroup")
        return home

    try:
        probe = run(new_home("probe"), code="import numpy, scipy, numba, click, tqdm, svmtrain")
        if probe.returncode != 0 and prefix:
            pytest.skip(f"the user nobody cannot run {python} with {deps} (a root-only install: "
                        f"install svmtrain's dependencies where every user can read them): {probe.stderr[-200:]}")
        assert probe.returncode == 0, probe.stderr
        yield run, new_home, site, data
    finally:
        for path in [site, *site.rglob("*")]:
            path.chmod(stat.S_IRWXU)
        shutil.rmtree(top, ignore_errors=True)


def counts(result):
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def cache_files(home):
    return sorted((home / ".cache" / "numba").rglob("*.nbi"))


def test_first_run_caches_in_the_users_directory_and_the_second_compiles_nothing(readonly_install):
    run, new_home, site, data = readonly_install
    home = new_home("two-runs")
    first = counts(run(home, str(data), json.dumps([["-s", "pegasos"]])))
    assert Path(first["package"]).resolve() == (site / "svmtrain").resolve()    # the read-only copy
    assert "svmtrain.solvers.sgd._pegasos_kernels.pegasos_steps" in first["compiled"][0]
    assert cache_files(home)                                      # written to ~/.cache/numba
    assert not list(site.rglob("__pycache__"))                    # and nothing into the package
    second = counts(run(home, str(data), json.dumps([["-s", "pegasos"]])))
    assert second["compiled"] == [[]]


def test_precompile_by_the_user_fills_the_users_cache(readonly_install):
    """precompile (here two of its groups; every group is checked against
    every command line of scripts/check_precompile.py by ``make test``,
    ``check_precompile.py --in-place``) writes the user's cache, and the
    runs it covers then compile nothing."""
    run, new_home, site, data = readonly_install
    home = new_home("precompiled")
    code = ("import json; from svmtrain.cli.precompile import precompile; "
            "print(json.dumps(precompile(jobs=1, groups=['reader', 'pegasos'])))")
    r = run(home, code=code)
    assert r.returncode == 0, r.stderr
    assert [g for g, _ in json.loads(r.stdout.strip().splitlines()[-1])] == ["reader", "pegasos"]
    assert cache_files(home) and not list(site.rglob("__pycache__"))
    assert counts(run(home, str(data), json.dumps([["-s", "pegasos"]])))["compiled"] == [[]]
