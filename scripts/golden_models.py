#!/usr/bin/env python3
"""Record the models, decision values and printed lines of a fixed set of
command lines, and check a later tree against the record, byte for byte.

    python scripts/golden_models.py record DIR     # before a move: write DIR/NAME.{model,out,log}
    python scripts/golden_models.py check DIR      # after it: exit 1 naming every file that differs
    python scripts/golden_models.py list           # the command lines

Each case trains with this checkout's ``svm-train`` (a fresh interpreter
per command, as a user runs it) on small real or generated data, then
predicts the training file with ``svm-predict -d`` (decision values after
each label). The printed lines are kept with their times masked
(``Training time = <t> s``). Every solver, task and loss runs once, and each
layer around them (cross-validation, -C, --grid, -b 1, weights, --scale,
--stream, one-vs-rest and Crammer-Singer classes, the LIBLINEAR and LIBSVM
model formats, foreign command lines). Numba's reductions and BLAS may round
differently on another processor: record and check on the same machine.
"""
import argparse
import difflib
import lzma
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
TRAIN = "import sys; sys.argv[0] = 'svm-train'; from svmtrain.cli.train import main; main()"
PREDICT = "import sys; sys.argv[0] = 'svm-predict'; from svmtrain.cli.predict import main; main()"
TIME = re.compile(r"(?<=time)(\s*=\s*)\d+(?:\.\d+)?(?:e[-+]?\d+)?(?= s\b)")

# name -> (data set, svm-train options); data sets are made by make_data below
CASES = {
    "dcd": ("heart", "-s dcd"),
    "dcd-squared-hinge-bias": ("heart", "-s dcd --loss squared-hinge -B 1"),
    "dcd-log": ("heart", "-s dcd --loss log"),
    "dcd-regression": ("regression", "-s dcd --task r"),
    "dcd-regression-squared": ("regression", "-s dcd --task r --loss squared-epsilon-insensitive -B 1"),
    "dcd-oneclass": ("heart", "-s dcd --task o --nu 0.2"),
    "dcd-classes": ("blobs", "-s dcd"),
    "dcd-cs": ("blobs", "-s dcd --multiclass cs"),
    "dcd-weights": ("heart", "-s dcd -w 1 3"),
    "ocas": ("heart", "-s ocas --threads 1"),
    "ocas-cp": ("heart", "-s ocas --ocas-method cp --threads 1 -B 1"),
    "ocas-log": ("heart", "-s ocas --loss log --threads 1"),
    "ocas-regression": ("regression", "-s ocas --task r --threads 1"),
    "ocas-ranking": ("ranking", "-s ocas --task p --threads 1"),
    "ocas-cs": ("blobs", "-s ocas --multiclass cs --threads 1"),
    "pegasos": ("heart", "-s pegasos"),
    "pegasos-batch-bias": ("heart", "-s pegasos -k 8 -R"),
    "pegasos-log": ("heart", "-s pegasos --loss log"),
    "pegasos-regression": ("regression", "-s pegasos --task r"),
    "pegasos-kernel": ("heart", "-s pegasos -t 2 -g 0.5"),
    "sgd": ("heart", "-s sgd"),
    "sgd-qn": ("heart", "-s sgd --update sgdqn -B 1"),
    "sgd-fobos": ("heart", "-s sgd --update fobos --l1 0.001"),
    "bmrm": ("heart", "-s bmrm"),
    "tron-ranking": ("ranking", "-s tron --task p"),
    "sbp": ("heart", "-s sbp -T 3"),
    "sbp-poly": ("heart", "-s sbp -t 1 -T 3"),
    "asset": ("heart", "-s asset -D 64"),
    "asset-fourier": ("heart", "-s asset --approx fourier -D 64"),
    "asset-inner-dcd": ("heart", "-s asset -D 64 --inner dcd"),
    "asset-oneclass": ("heart", "-s asset -D 64 --task o --inner dcd"),
    "smo": ("heart", "-s smo -t 2 -g 0.5 -c 10"),
    "smo-working-set": ("heart", "-s smo -t 2 --working-set 64"),
    "smo-regression": ("regression", "-s smo --task r -t 2"),
    "smo-oneclass": ("heart", "-s smo --task o -t 2 --nu 0.3"),
    "smo-weights": ("heart", "-s smo -t 2 -w 1 2"),
    "norma": ("heart", "-s norma"),
    "cvm": ("heart", "-s cvm"),
    "probability": ("heart", "-s dcd -b 1"),
    "probability-smo": ("heart", "-s smo -t 2 -b 1"),
    "scale": ("heart", "-s dcd --scale"),
    "stream-dcd": ("heart", "-s dcd --stream"),
    "stream-pegasos": ("heart", "-s pegasos --stream"),
    "stream-ocas": ("heart", "-s ocas --stream --threads 1"),
    "stream-asset": ("heart", "-s asset -D 64 --stream"),
    "stream-sgd": ("heart", "-s sgd --stream"),
    "stream-bmrm": ("heart", "-s bmrm --stream"),
    "stream-ocas-cs": ("blobs", "-s ocas --multiclass cs --stream --threads 1"),
    "search-C": ("heart", "-C -s 2"),
    "grid": ("heart", "--grid -s sbp -log2c -1,1,2 -log2g -3,-1,2 -v 3 -T 2"),
    "cv": ("heart", "-v 5 -s dcd"),
    "cv-smo": ("heart", "-v 3 -s smo -t 2"),
    "liblinear-format": ("heart", "-s dcd --model-format liblinear"),
    "liblinear-s0": ("heart", "-s 0 --model-format liblinear"),
    "liblinear-s21": ("heart", "-s 21 -n 0.2 --model-format liblinear"),
    "libsvm-line": ("heart", "-t 2 -g 0.5 -c 10 --model-format libsvm"),
    "libsvm-b1": ("heart", "-b 1 -c 1"),
    "svmlight-line": ("heart", "-z c -c 1 -t 0"),
}


def make_data(tmp):
    """The data sets of CASES as plain text files in ``tmp``: bundled heart_scale,
    and three made here (deterministic): a regression set with real-scale
    targets, a ranking set with qid, and three well-separated classes."""
    import numpy as np
    files = {"heart": tmp / "heart_scale"}
    files["heart"].write_bytes(lzma.decompress((DATA / "heart_scale.xz").read_bytes()))
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 6))
    w = rng.normal(size=6)
    y = 7.5 + X @ w * 0.4 + rng.normal(scale=0.2, size=200)        # log-price-like targets
    files["regression"] = tmp / "regression"
    files["regression"].write_text("".join(
        f"{float(t)!r} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row)) + "\n"
        for t, row in zip(y, X)))
    files["ranking"] = tmp / "ranking"
    lines = []
    for q in range(1, 9):
        Xq = rng.normal(size=(12, 5))
        for row, rel in zip(Xq, np.clip(np.round(Xq @ w[:5]), -2, 2) + 2):
            lines.append(f"{int(rel)} qid:{q} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row)))
    files["ranking"].write_text("\n".join(lines) + "\n")
    files["blobs"] = tmp / "blobs"
    centres = rng.normal(scale=4.0, size=(3, 5))
    lines = [f"{label} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(centres[k] + rng.normal(size=5)))
             for k, label in enumerate(("2", "3", "7")) for _ in range(60)]
    files["blobs"].write_text("\n".join(lines[i] for i in rng.permutation(len(lines))) + "\n")
    return files


def run_case(name, data, options, work):
    """{suffix: bytes} of one case: the model, svm-predict -d's output, and the
    printed lines of both commands (times masked, exit statuses added)."""
    model, out = work / f"{name}.model", work / f"{name}.out"
    train = subprocess.run([sys.executable, "-c", TRAIN] + options.split() + [str(data), str(model)],
                           capture_output=True, cwd=work)
    log = [f"$ svm-train {options} DATA MODEL -> {train.returncode}", train.stdout.decode(), train.stderr.decode()]
    files = {}
    if model.exists():
        files["model"] = model.read_bytes()
        pred = subprocess.run([sys.executable, "-c", PREDICT, "-d", str(data), str(model), str(out)],
                              capture_output=True, cwd=work)
        log += [f"$ svm-predict -d DATA MODEL OUT -> {pred.returncode}", pred.stdout.decode(), pred.stderr.decode()]
        if out.exists():
            files["out"] = out.read_bytes()
    files["log"] = TIME.sub(r"\1<t>", "\n".join(log).replace(str(work), "WORK")).encode()
    return files


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("action", choices=["record", "check", "list"])
    ap.add_argument("dir", nargs="?", type=Path)
    ap.add_argument("--only", help="comma-separated case names")
    args = ap.parse_args(argv)
    cases = {k: v for k, v in CASES.items() if args.only is None or k in args.only.split(",")}
    if args.action == "list":
        for name, (data, options) in cases.items():
            print(f"{name:24s} {data:10s} svm-train {options}")
        return 0
    if args.dir is None:
        ap.error("record and check need DIR")
    args.dir.mkdir(parents=True, exist_ok=True)
    differ = []
    with tempfile.TemporaryDirectory(prefix="svmtrain-golden-") as tmp:
        work = Path(tmp)
        data = make_data(work)
        for name, (data_name, options) in cases.items():
            got = run_case(name, data[data_name], options, work)
            for suffix, content in got.items():
                path = args.dir / f"{name}.{suffix}"
                if args.action == "record":
                    path.write_bytes(content)
                elif not path.exists() or path.read_bytes() != content:
                    differ.append(path.name)
                    old = path.read_bytes().decode(errors="replace").splitlines() if path.exists() else []
                    sys.stdout.writelines(line + "\n" for line in list(difflib.unified_diff(
                        old, content.decode(errors="replace").splitlines(), f"recorded {path.name}", "now",
                        lineterm=""))[:20])
            print(f"{name}: {', '.join(sorted(got))}", file=sys.stderr)
    if args.action == "record":
        print(f"recorded {len(cases)} cases in {args.dir}")
        return 0
    print(f"{len(differ)} file(s) differ: {', '.join(differ)}" if differ else f"all {len(cases)} cases identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
