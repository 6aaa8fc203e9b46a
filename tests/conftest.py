"""Shared fixtures: paths to bundled data and to ../shared/data when present."""
import os
from pathlib import Path

import pytest

# The suite runs its console scripts in process, never through a start-up server
# (svmtrain.cli.client); tests/test_server.py turns it on for its own runs, each
# in a private XDG_RUNTIME_DIR, and stops its servers.
os.environ["SVMTRAIN_SERVER"] = "0"

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
SHARED_DATA = ROOT.parent / "shared" / "data"


def bundled(name):
    """A file bundled under data/ (always present)."""
    return DATA / name


def shared(name):
    """A file from ../shared/data; skips the test when it is absent."""
    p = SHARED_DATA / name
    if not p.exists():
        pytest.skip(f"{p} not present")
    return p


def heart_scale():
    """The bundled heart_scale (270 rows, 13 features, labels +1/-1), read afresh."""
    from svmtrain.io.reader import read_libsvm
    return read_libsvm(bundled("heart_scale.xz"))


@pytest.fixture(scope="module")
def heart():
    """heart_scale, read once per test module."""
    return heart_scale()


def scaled_svmguide1(every):
    """Every ``every``-th row of svmguide1 (4 features; skips when absent),
    scaled to [-1, 1] as svm-scale does: the guide's small RBF problem."""
    import numpy as np
    from svmtrain.data.dataset import take_rows
    from svmtrain.io.reader import read_libsvm
    from svmtrain.preprocess.scaling import Ranges, compute_stats, scale_rows
    data = read_libsvm(shared("svmguide1.xz"))
    data = scale_rows(Ranges.from_stats(compute_stats([data]), -1.0, 1.0), data)
    return take_rows(data, np.arange(0, data.n_rows, every))


def three_classes(data):
    """``data`` with every third +1 row relabelled 2: three classes, three one-vs-one pairs."""
    import dataclasses
    import numpy as np
    third = (data.labels > 0) & (np.arange(data.n_rows) % 3 == 0)
    return dataclasses.replace(data, labels=np.where(third, 2.0, data.labels))


@pytest.fixture(scope="session")
def a9a_arrays(tmp_path_factory):
    """a9a and a9a.t as scikit-learn reads them (CSR, float64, 123 features), and their paths."""
    import lzma
    from sklearn.datasets import load_svmlight_file
    root = tmp_path_factory.mktemp("a9a")
    paths = []
    for name in ("a9a.xz", "a9a.t.xz"):
        p = root / name[:-3]
        p.write_bytes(lzma.decompress(bundled(name).read_bytes()))
        paths.append(p)
    X, y = load_svmlight_file(str(paths[0]), n_features=123)
    T, t = load_svmlight_file(str(paths[1]), n_features=123)
    return X, y, T, t, paths


def needs(*programs, package):
    """Skip unless every one of the peer's ``programs`` (a name on PATH or an
    absolute path) is installed; the reason names the Debian package."""
    import shutil
    missing = [p for p in programs if shutil.which(p) is None]
    return pytest.mark.skipif(bool(missing), reason=f"{', '.join(missing)} not installed "
                                                    f"(apt-get install {package})")


# Python source that makes a fresh interpreter list, in ``compiled``, every
# numba function it compiles ("module.qualname"); the start of the code that
# tests of numba's cache run with ``python -c``
COMPILE_LISTENER = r"""
from numba.core import event
compiled = []

class Listener(event.Listener):
    def on_start(self, ev):
        d = ev.data["dispatcher"]
        compiled.append(d.py_func.__module__ + "." + d.py_func.__qualname__)

    def on_end(self, ev):
        pass

event.register("numba:compile", Listener())
"""
