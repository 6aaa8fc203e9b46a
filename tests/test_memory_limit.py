"""--memory-limit, measured: the peak resident memory of a streamed run, in a
fresh process, stays within the limit plus the interpreter's baseline, on a
file whose in-memory training needs several times the limit.

The baseline is the same streamed command on the bundled heart_scale (270
rows): numpy, scipy, numba and the streamed path's compiled kernels, which
``--memory-limit`` does not cover. Peak RSS comes from the kernel
(``ru_maxrss`` of a wrapper's only child), so the figures are the machine's,
not the program's own accounting."""
import subprocess
import sys

import pytest

from conftest import ROOT, bundled

sys.path.insert(0, str(ROOT / "scripts"))
from gen_synthetic import generate  # noqa: E402

MIB = 1 << 20
LIMIT_MB = 16
TRAIN = [sys.executable, "-c", "import sys; sys.argv[0] = 'svm-train'; from svmtrain.cli.train import main; main()"]
# runs the command given as its arguments and prints its child's peak RSS (kB on Linux)
PEAK_RSS = ("import resource, subprocess, sys\n"
            "rc = subprocess.call(sys.argv[1:])\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
            "sys.exit(rc)\n")


def peak_rss(args):
    """Peak resident bytes of ``svm-train ARGS`` in a fresh process (it must exit 0)."""
    r = subprocess.run([sys.executable, "-c", PEAK_RSS] + TRAIN + [str(a) for a in args],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return int(r.stdout.split()[-1]) * 1024


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    """100,000 rows, 20,000 features with power-law frequencies, 40 values a row
    (about 48 MB parsed, 3x the limit in values alone)."""
    path = tmp_path_factory.mktemp("memory") / "train.svm"
    generate(path, rows=100_000, features=20_000, nnz_per_row=40, seed=3)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["pegasos", "ocas", "dcd"])
def test_streamed_peak_rss_within_limit_plus_baseline(big_file, tmp_path, solver):
    options = ["-q", "-s", solver, "-c", "0.1"]
    baseline = peak_rss(options + ["--stream", bundled("heart_scale.xz"), tmp_path / "small.model"])
    streamed = peak_rss(options + ["--memory-limit", LIMIT_MB, big_file, tmp_path / "streamed.model"])
    in_memory = peak_rss(options + [big_file, tmp_path / "memory.model"])
    assert streamed <= baseline + LIMIT_MB * MIB, (streamed / MIB, baseline / MIB)
    # the limit binds: in memory the same training needs several times as much
    assert in_memory - baseline > 3 * LIMIT_MB * MIB, (in_memory / MIB, baseline / MIB)
