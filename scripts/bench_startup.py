"""Wall time of a second `svm-train` run on the small heart_scale file.

The first run fills numba's on-disk cache; the second shows what a user
waits for on every later call (target: under 1.5 s).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    exe = os.path.join(os.path.dirname(sys.executable), "svm-train")
    data = os.path.join(ROOT, "data", "heart_scale.xz")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [exe, "-q", data, os.path.join(tmp, "m")]
        first = timed(cmd)
        later = [timed(cmd) for _ in range(args.runs)]
    print(f"svm-train on heart_scale: first run {first:.2f} s; later runs "
          f"best {min(later):.2f} s, median {sorted(later)[len(later) // 2]:.2f} s (target < 1.5 s)")


if __name__ == "__main__":
    main()
