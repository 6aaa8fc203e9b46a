"""What the experiments (scripts/exp_*.py, `make experiments`) share: data, traced training
runs in this process, the LIBSVM reference point, CSV and PNG output.

Each experiment writes results/NAME.csv and, when matplotlib is installed (the
optional extra `plot`: pip install -e '.[plot]'), results/NAME.png; without
matplotlib it says so and writes the CSV only.
"""
import csv
import json
import os
import re
import time

import benchlib as L

RESULTS = L.RESULTS


def read(name_or_path):
    """A Chunk of a data file given by path or by name (data/, then ../shared/data)."""
    from svmtrain.io.reader import read_libsvm
    path = name_or_path if os.path.exists(name_or_path) else L.data_file(name_or_path)
    if path is None:
        raise SystemExit(f"{name_or_path}: no such file (not in data/ nor {L.SHARED_DATA})")
    return read_libsvm(path)


def traced(data, test, steps=None, **params):
    """(model, trace rows) of one training run on ``data`` (a Chunk) with --trace's monitor.

    ``params`` are TrainParams fields; ``test`` a Chunk (test_accuracy column) or None;
    ``steps``: also a row every that many steps (pegasos)."""
    from svmtrain.params import TrainParams
    from svmtrain.training.trace import Trace
    from svmtrain.training.train import train
    trace = Trace(data.labels, test=test, steps=steps)
    model = train(data, TrainParams(**params), monitor=trace)
    return model, trace.rows


def warm_up(**params):
    """Train once on heart_scale with these params: numba compiles (or loads) the solver's code."""
    from svmtrain.params import TrainParams
    from svmtrain.training.train import train
    train(read("heart_scale.xz"), TrainParams(**params))


def write_csv(name, rows, cols=None):
    """results/NAME.csv from a list of dicts; returns the path."""
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, name + ".csv")
    cols = cols or list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path} ({len(rows)} rows)")
    return path


def pyplot(name):
    """matplotlib.pyplot (Agg backend), or None after saying why results/NAME.png is not made."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        print(f"matplotlib is not installed (pip install -e '.[plot]'): no {os.path.join(RESULTS, name + '.png')}, "
              "the CSV has the numbers")
        return None


def two_panels(name):
    """(figure, left axes, right axes) of a 10 x 4 inch figure, or None without matplotlib."""
    plt = pyplot(name)
    if plt is None:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    return fig, ax1, ax2


def save(fig, name):
    """results/NAME.png at a resolution that keeps it small (well under 200 KB)."""
    path = os.path.join(RESULTS, name + ".png")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    print(f"wrote {path} ({os.path.getsize(path) / 1024:.0f} KB)")


def libsvm_reference(C, gamma, workdir, rerun=False):
    """LIBSVM's /usr/bin/svm-train -c C -g gamma on a9a: dict(wall_s, test_acc, iterations, n_sv, load),
    or None when LIBSVM is not installed. Kept in results/libsvm-a9a-cC-gG.json so that the
    experiments of one `make experiments` run it once (delete the file or pass rerun to measure again)."""
    path = os.path.join(RESULTS, f"libsvm-a9a-c{C:g}-g{gamma:g}.json")
    if os.path.exists(path) and not rerun:
        with open(path) as f:
            ref = json.load(f)
        print(f"LIBSVM reference from {path} (measured {ref['when']})")
        return ref
    if not os.path.exists(L.LIBSVM_TRAIN):
        print(f"{L.LIBSVM_TRAIN} not installed: no LIBSVM reference")
        return None
    from svmtrain.io.model_io import load_model
    train, test = L.plain(L.data_file("a9a.xz"), workdir), L.plain(L.data_file("a9a.t.xz"), workdir)
    model_path = os.path.join(workdir, "libsvm-a9a.model")
    print(f"LIBSVM: {L.LIBSVM_TRAIN} -c {C:g} -g {gamma:g} on a9a (load {L.load_average()}) ...", flush=True)
    wall, _, out = L.timed([L.LIBSVM_TRAIN, "-c", repr(C), "-g", repr(gamma), train, model_path])
    model = load_model(model_path)
    iters = [int(t) for t in re.findall(r"#iter = (\d+)", out)]
    ref = {"wall_s": wall, "test_acc": L.accuracy(model, read(test)), "iterations": sum(iters),
           "n_sv": model.n_sv, "n_train": read(train).n_rows, "load": L.load_average(),
           "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    os.makedirs(RESULTS, exist_ok=True)
    with open(path, "w") as f:
        json.dump(ref, f, indent=1)
    print(f"LIBSVM: {wall:.1f} s, test accuracy {100 * ref['test_acc']:.2f} %, {ref['n_sv']} SVs")
    return ref
