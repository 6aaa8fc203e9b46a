#!/usr/bin/env python3
"""make bench-ocas-svmocas: ``-s ocas`` against Debian's ``svmocas`` on a9a (and, with
--synthetic, the 200k x 200k synthetic file), single thread, in one run: the table
"Against svmocas" of docs/solvers.md.

Commands (same C, same relative tolerance 0.01 and no bias, both programs' defaults):

    svmocas -c C FILE MODEL                                      (OCAS)
    svmocas -m 0 -c C FILE MODEL                                 (plain cutting plane)
    svm-train -s ocas --threads 1 -c C --verbose FILE MODEL
    svm-train -s ocas --ocas-method cp --threads 1 -c C --verbose FILE MODEL

Both read the same plain-text file (a9a decompressed into a temporary directory;
svmocas reads no xz). Each program reports its own numbers, which the script parses:
iterations are the number of the last per-iteration log line (svmocas ``N: tim=...``,
ours ``N: tim=...``, the same as its ``#iter = N``), training time is svmocas's
``ocas_time`` (solver only, reading excluded) and our summary line's ``Training time =
X s`` (from the data in memory to the model: solver set-up and the solver, reading and
writing excluded); the objective is the final primal value in C form (svmocas: Q_P of
its last line; ours: the summary's ``C form``). The whole process's wall time is shown
too. Ours is run once untimed per method first (numba's on-disk cache), then every
command --runs times, interleaved; the table shows the minimum of each (the machine may
be shared) and the ratio of the training time to svmocas's with the same method.

--profile: afterwards, one more run of ours (``svmtrain.train(FILE, solver="ocas",
threads=1, C=C)`` in this process, after an untimed in-process warm-up) on the last file
(the synthetic one with --synthetic), with every numba kernel the OCAS loop calls wrapped
in a timer: the table gives each one's share of the training time (the rest is Python
and small numpy work in the loop, and set-up).

--text adds issue 33's text-like set (``gen_synthetic.bag_of_words``: 15,935
documents of power-law word frequencies over 62,061 words and 20 overlapping topics,
counts; topics 0-9 against 10-19, the first 12,779 rows for training; written once into
--workdir), OCAS only; ``--files PATH ...`` adds any LIBSVM files (for example the real
docstring corpus of ``scripts/docstrings_bow.py``), OCAS only.

--synthetic adds ``scripts/gen_synthetic.py --rows 200000`` (200,000 rows, 200,000
features, 60 nonzeros per row, seed 1; written once into --workdir, 180 MB), OCAS
only, to keep the run short (about half a minute per program and run, 4 minutes in all
with the default --runs on a 2-core VM).
"""
import argparse
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import OURS_TRAIN, ROOT, SVMOCAS, data_file, load_average, plain, run  # noqa: E402

ITER_LINE = re.compile(r"^\s*(\d+): tim=.*?Q_P=([0-9.eE+-]+)", re.M)


def parse_svmocas(text):
    """(iterations, training s, objective) from svmocas's -v 1 output."""
    lines = ITER_LINE.findall(text)
    t = re.search(r"ocas_time\s*:\s*([0-9.eE+-]+)", text)
    if not lines or not t:
        raise RuntimeError(f"cannot parse svmocas's output:\n{text[-1500:]}")
    return int(lines[-1][0]), float(t.group(1)), float(lines[-1][1])


def parse_ours(text):
    """(iterations, training s, objective in C form) from svm-train --verbose's summary line."""
    it = re.search(r"#iter = (\d+)", text)
    t = re.search(r"Training time = ([0-9.eE+-]+) s", text)
    obj = re.search(r"C form ([0-9.eE+-]+)\)", text)
    if not (it and t and obj):
        raise RuntimeError(f"cannot parse svm-train's output:\n{text[-1500:]}")
    return int(it.group(1)), float(t.group(1)), float(obj.group(1))


def commands(path, model, C, methods):
    """[(solver label, method, peer?, command, parser)] for one data file."""
    out = []
    for method in methods:
        m0 = ["-m", "0"] if method == "cp" else []
        ours = ["--ocas-method", "cp"] if method == "cp" else []
        out.append((f"svmocas{' `-m 0` (cp)' if method == 'cp' else ''}", method, True,
                    [SVMOCAS, *m0, "-c", repr(C), path, model + ".svmocas"], parse_svmocas))
        out.append((f"svmtrain `-s ocas{' --ocas-method cp' if method == 'cp' else ''} --threads 1`", method, False,
                    [OURS_TRAIN, "-s", "ocas", *ours, "--threads", "1", "-c", repr(C), "--verbose", path,
                     model + ".ours"], parse_ours))
    return out


def measure(label, path, C, methods, runs, tmp):
    """Table rows for one data file."""
    cmds = commands(path, os.path.join(tmp, "model"), C, methods)
    for name, _, peer, cmd, _ in cmds:
        if not peer:
            run(cmd)                         # untimed: numba's cache
    best = {name: None for name, *_ in cmds}
    for r in range(runs):
        for name, _, _, cmd, parse in cmds:
            wall, text = run(cmd)
            it, t, obj = parse(text)
            print(f"  {label}, run {r + 1}: {name}: {it} iterations, training {t:.3f} s, wall {wall:.2f} s, "
                  f"objective {obj:.6g} (load {load_average()})", flush=True)
            old = best[name]
            best[name] = dict(iters=it, train=t if old is None else min(old["train"], t), obj=obj,
                              wall=wall if old is None else min(old["wall"], wall),
                              all_iters=({it} if old is None else old["all_iters"] | {it}))
    rows = []
    for name, method, peer, _, _ in cmds:
        b = best[name]
        ref = next(best[n] for n, m, p, *_ in cmds if m == method and p)
        iters = "/".join(str(i) for i in sorted(b["all_iters"]))
        rows.append((label if not rows else "", name, iters, b["train"], b["train"] / ref["train"], b["wall"],
                     b["obj"]))
    return rows


# (phase, module attribute of svmtrain.solvers.ocas.ocas's kernels) in loop order; "margins" is
# looked up in svmtrain.solvers.ocas.ocas itself
PHASES = [
    ("outputs X w_d (one pass over the data)", "margins"),
    ("output update, violators of the next cut point", "update_outputs"),
    ("line search (breakpoints, selection)", "line_search"),
    ("the cut (scatter of the violators' rows)", "scatter_cut"),
    ("the cut made sparse (dense form)", "sparsify"),
    ("Gram row of the new cut (dense form, mixed dense/sparse cuts)", "gram_row_mixed"),
    ("Gram row of the new cut (row form: cut rows' products)", "rows_dot"),
    ("w_c = sum alpha_j a_j (dense form, mixed cuts)", "combine_mixed"),
    ("w_c = sum alpha_j a_j (dense cuts only)", "combine_cuts"),
    ("w_c = sum alpha_j a_j (row form)", "combine_rows"),
    ("row form: the rows' shift", "shift_rows"),
    ("w_b += t w_d", "axpy_sqnorm"),
    ("reduced QP", "qp_simplex"),
]


def text_file(workdir):
    """Issue 33's text-like training file (see the module doc), written once into ``workdir``."""
    import numpy as np
    from gen_synthetic import bag_of_words, write_bag_of_words
    path = os.path.join(workdir, "bag_of_words_12779")
    if not os.path.exists(path):
        os.makedirs(workdir, exist_ok=True)
        M, topic = bag_of_words()
        write_bag_of_words(path + ".tmp", M[:12779], np.where(topic[:12779] < 10, 1, -1))
        os.replace(path + ".tmp", path)
    return path


def profile(path, C):
    """(rows of the profile table, iterations, training s) of one in-process run on ``path``."""
    import time
    import svmtrain
    import svmtrain.solvers.ocas._ocas_kernels as K
    import svmtrain.solvers.ocas.ocas as ocas
    svmtrain.train(data_file("a9a.xz"), solver="ocas", threads=1, C=C)       # untimed warm-up
    spent = {name: [0.0, 0] for _, name in PHASES}
    saved = []

    def timer(name, fn):
        def wrapped(*a, **kw):
            t = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                spent[name][0] += time.perf_counter() - t
                spent[name][1] += 1
        return wrapped
    for _, name in PHASES:
        mod = ocas if name == "margins" else K
        saved.append((mod, name, getattr(mod, name)))
        setattr(mod, name, timer(name, getattr(mod, name)))
    try:
        model = svmtrain.train(path, solver="ocas", threads=1, C=C)
    finally:
        for mod, name, fn in saved:
            setattr(mod, name, fn)
    total, iters = model.train_time, model.fit_results[0].n_iter
    rows = [(phase, name, spent[name][1], spent[name][0], spent[name][0] / total) for phase, name in PHASES]
    rest = total - sum(r[3] for r in rows)
    rows.append(("rest of the training time (Python loop, set-up)", "", "", rest, rest / total))
    return rows, iters, total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="timed runs of every command (minimum shown; default 3)")
    ap.add_argument("-c", "--cost", type=float, default=1.0)
    ap.add_argument("--synthetic", action="store_true",
                    help="also the 200k x 200k synthetic file (OCAS only; minutes per run)")
    ap.add_argument("--synthetic-rows", type=int, default=200_000)
    ap.add_argument("--text", action="store_true", help="also issue 33's text-like set (OCAS only)")
    ap.add_argument("--files", nargs="*", default=[], help="also these LIBSVM files (OCAS only)")
    ap.add_argument("--profile", action="store_true",
                    help="also time each kernel of one in-process run of ours on the last file")
    ap.add_argument("--workdir", default=os.path.join(ROOT, "bench-data"),
                    help="where the synthetic file is written once (default bench-data/)")
    args = ap.parse_args()
    if not os.path.exists(SVMOCAS):
        raise SystemExit(f"{SVMOCAS} is not installed (Debian package svmocas)")
    print(f"bench-ocas-svmocas: C {args.cost:g}, {args.runs} runs; load {load_average()}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        a9a = plain(data_file("a9a.xz"), tmp)
        rows += measure("a9a (32,561 x 123)", a9a, args.cost, ["ocas", "cp"], args.runs, tmp)
        if args.synthetic:
            from bench_parse import cached_file
            path = str(cached_file(args.workdir, args.synthetic_rows, 200_000, 60, 1))
            label = f"synthetic {args.synthetic_rows // 1000}k x 200k, 60 nnz/row"
            rows += measure(label, path, args.cost, ["ocas"], args.runs, tmp)
        else:
            path, label = a9a, "a9a"
        if args.text:
            path = text_file(args.workdir)
            label = "text-like (bag_of_words, 12,779 x 62,061, counts)"
            rows += measure(label, path, args.cost, ["ocas"], args.runs, tmp)
        for path in args.files:
            label = os.path.basename(path)
            rows += measure(label, path, args.cost, ["ocas"], args.runs, tmp)
        prof = profile(path, args.cost) if args.profile else None
    print(f"\nload average at the end: {load_average()}\n")
    print("| data | solver | iterations | training time | ratio to svmocas (same method) | whole process wall "
          "| objective (C form) |")
    print("|---|---|---|---|---|---|---|")
    for data, name, iters, t, ratio, wall, obj in rows:
        print(f"| {data} | {name} | {iters} | {t:.3f} s | {ratio:.2f} | {wall:.2f} s | {obj:.2f} |")
    if prof is not None:
        prows, iters, total = prof
        print(f"\nProfile of `-s ocas --threads 1` on {label}, in process: {iters} iterations, "
              f"training {total:.2f} s ({1000 * total / iters:.1f} ms per iteration)\n")
        print("| phase | kernel | calls | seconds | share |")
        print("|---|---|---|---|---|")
        for phase, name, calls, sec, share in prows:
            print(f"| {phase} | {f'`{name}`' if name else ''} | {calls} | {sec:.3f} | {100 * share:.0f} % |")


if __name__ == "__main__":
    main()
