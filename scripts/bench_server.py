#!/usr/bin/env python3
"""Short runs with and without the start-up server (issue 34; README, "The start-up server").

    python scripts/bench_server.py [--runs 5] [--loop 100] [--easy] [--easy-before] [--workdir DIR]

1. heart_scale (data/heart_scale.xz, decompressed): ``svm-train`` and
   ``svm-predict`` through a warm server (best and median of ``--runs``);
   the first run, which finds no server, runs in process and starts one
   (each of ``--runs`` from no server); the same runs with
   ``SVMTRAIN_SERVER=0`` (today's in-process runs); LIBSVM's
   ``/usr/bin/svm-train`` and ``svm-predict``. Acceptance: at most 0.10 s
   through the server; the first run no slower than in process.
2. Decision values: ``svm-train`` then ``svm-predict -d`` (dcd, and smo
   -t 2) through the server and with SVMTRAIN_SERVER=0: the same bytes.
3. A Makefile-style loop: ``--loop`` runs of ``svm-train -v 5
   data/heart_scale.xz``, one after the other, with SVMTRAIN_SERVER=0 and
   with the server (none running at the start: the first run starts it).
4. ``--easy``: LIBSVM's easy.py (Debian's /usr/bin/svm-easy) on svmguide1
   (../shared/data; training rows ``awk 'NR%4!=0'``, test rows ``NR%4==0``)
   over LIBSVM's tools and over svmtrain's (no server running at the start).
   easy.py calls the tools by relative paths (``../svm-train``, ``./grid.py``):
   a copy with those paths set runs each (grid.py is /usr/bin/svm-grid, with
   its one local worker, for both). Reported: wall seconds and the test
   accuracy each prints. ``--easy-before`` adds svmtrain's tools with
   SVMTRAIN_SERVER=0.

Servers run in a private XDG_RUNTIME_DIR and are stopped at the end. The
client modules' bytecode is compiled first (an installed package has it;
PYTHONDONTWRITEBYTECODE would otherwise recompile them each run).
``SVMTRAIN_SERVER_WATCH=0`` unless ``--watch``: a checkout being edited
meanwhile would restart the server. Timings are wall seconds of whole
processes; on a shared machine take the best figures.
"""
import argparse
import compileall
import json
import lzma
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TRAIN, PREDICT, SCALE = (str(BIN / n) for n in ("svm-train", "svm-predict", "svm-scale"))
LIBSVM = {"svm-train": "/usr/bin/svm-train", "svm-predict": "/usr/bin/svm-predict", "svm-scale": "/usr/bin/svm-scale"}
SHARED = ROOT.parent / "shared" / "data"


def plain(xz, workdir):
    out = Path(workdir) / Path(xz).name[:-3]
    if not out.exists():
        out.write_bytes(lzma.decompress(Path(xz).read_bytes()))
    return out


def timed(cmd, env, cwd=None, check=True, **kw):
    t = time.perf_counter()
    p = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, capture_output=True, **kw)
    dt = time.perf_counter() - t
    if check and p.returncode:
        raise RuntimeError(f"{' '.join(map(str, cmd))}: exit {p.returncode}: {p.stderr[-800:]}")
    return dt, p


class Servers:
    """The servers of a private runtime directory."""

    def __init__(self, runtime, watch):
        self.runtime = Path(runtime)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SVMTRAIN_SERVER")}
        self.env["XDG_RUNTIME_DIR"] = str(self.runtime)
        if not watch:
            self.env["SVMTRAIN_SERVER_WATCH"] = "0"
        self.off = dict(self.env, SVMTRAIN_SERVER="0")

    def pids(self):
        out = []
        for lock in (self.runtime / "svmtrain").glob("s-*.lock"):
            try:
                pid = int(lock.read_text().split()[0])
                if "svmtrain.cli.forkserver" in Path(f"/proc/{pid}/cmdline").read_text():
                    out.append(pid)
            except (OSError, ValueError, IndexError):
                pass
        return out

    def stop(self):
        """No server left (a starting one, not answering yet, is ended by SIGTERM)."""
        subprocess.run([TRAIN, "--server", "stop"], env=self.env, capture_output=True)
        end = time.monotonic() + 30
        while time.monotonic() < end:
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGTERM)
                except OSError:
                    pass
            time.sleep(0.05)
        for pid in self.pids():
            os.kill(pid, signal.SIGKILL)

    def start_warm(self):
        """Start this environment's server and wait until its kernels are loaded."""
        subprocess.run([TRAIN, "--server", "start"], env=self.env, check=True, capture_output=True)
        end = time.monotonic() + 300
        while time.monotonic() < end:
            out = subprocess.run([TRAIN, "--server", "status"], env=self.env, capture_output=True, text=True).stdout
            if "(this environment)" in out and "still loading" not in out:
                return out.strip()
            time.sleep(0.2)
        raise RuntimeError("the server did not finish loading")

    def wait_for_spawned(self, timeout=30):
        """Until a server started by a run holds its lock (then it can be stopped)."""
        end = time.monotonic() + timeout
        while not self.pids() and time.monotonic() < end:
            time.sleep(0.01)


def best_median(times):
    return min(times), statistics.median(times)


def heart_rows(s, heart, work, runs):
    model, out = work / "heart.model", work / "heart.out"
    rows = {}
    train, predict = [TRAIN, "-q", heart, model], [PREDICT, "-q", heart, model, out]
    s.stop()
    timed(train, s.off)
    # the first run (no server: it runs in process and starts one in the background), each
    # beside a run with SVMTRAIN_SERVER=0 (today's), so that both see the same load
    first, here = [], []
    for _ in range(runs):
        s.stop()
        first.append(timed(train, s.env)[0])
        s.wait_for_spawned()
        s.stop()
        here.append(timed(train, s.off)[0])
    rows["svm-train, first run (starts the server)"] = best_median(first)
    rows["svm-train, SVMTRAIN_SERVER=0 (in process)"] = best_median(here)
    timed(predict, s.off)
    rows["svm-predict, SVMTRAIN_SERVER=0 (in process)"] = best_median([timed(predict, s.off)[0] for _ in range(runs)])
    status = s.start_warm()
    for name, cmd in (("svm-train", train), ("svm-predict", predict)):
        timed(cmd, s.env)
        rows[f"{name}, through the server"] = best_median([timed(cmd, s.env)[0] for _ in range(runs)])
    if all(os.path.exists(p) for p in LIBSVM.values()):
        lm, lo = work / "libsvm.model", work / "libsvm.out"
        for name, cmd in (("svm-train", [LIBSVM["svm-train"], "-q", heart, lm]),
                          ("svm-predict", [LIBSVM["svm-predict"], "-q", heart, lm, lo])):
            timed(cmd, None)
            rows[f"{name}, LIBSVM (/usr/bin)"] = best_median([timed(cmd, None)[0] for _ in range(runs)])
    return rows, status


def same_decision_values(s, heart, work):
    """(solver, identical?) for dcd and smo -t 2: models and svm-predict -d output, server vs SVMTRAIN_SERVER=0."""
    out = []
    for label, args in (("dcd", []), ("smo -t 2", ["-s", "smo", "-t", "2", "-c", "4"])):
        got = []
        for env, tag in ((s.env, "server"), (s.off, "here")):
            m = work / f"dv-{tag}.model"
            timed([TRAIN, "-q", *args, heart, m], env)
            _, p = timed([PREDICT, "-d", heart, m, "-"], env)
            got.append((m.read_bytes(), p.stdout, p.stderr))
        out.append((label, got[0] == got[1] and len(got[0][1]) > 0))
    return out


def loop(s, heart_xz, work, n):
    """Wall seconds of ``n`` runs of svm-train -v 5 in a row, without and with the server (none at the start)."""
    cmd = [TRAIN, "-v", "5", heart_xz]
    out = {}
    for label, env in (("SVMTRAIN_SERVER=0", s.off), ("server (started by the first run)", s.env)):
        s.stop()
        t = time.perf_counter()
        for _ in range(n):
            timed(cmd, env, cwd=work)
        out[label] = time.perf_counter() - t
    return out


def easy_copy(workdir, tools, name):
    """A copy of /usr/bin/svm-easy whose tool paths are ``tools``' and whose grid.py is /usr/bin/svm-grid."""
    text = Path("/usr/bin/svm-easy").read_text()
    for var, tool in (("svmscale_exe", "svm-scale"), ("svmtrain_exe", "svm-train"), ("svmpredict_exe", "svm-predict")):
        text, n = re.subn(rf'^(\s*){var} = "[^"]*"', rf'\g<1>{var} = "{tools[tool]}"', text, count=1, flags=re.M)
        assert n == 1, var
    text, n = re.subn(r'^(\s*)grid_py = "[^"]*"', r'\g<1>grid_py = "/usr/bin/svm-grid"', text, count=1, flags=re.M)
    assert n == 1
    path = Path(workdir) / f"easy-{name}.py"
    path.write_text(text)
    return path


def easy(s, work, before):
    guide = SHARED / "svmguide1.xz"
    if not guide.exists() or not Path("/usr/bin/svm-easy").exists():
        return {"skipped": f"needs {guide} and /usr/bin/svm-easy (apt-get install libsvm-tools)"}
    lines = lzma.decompress(guide.read_bytes()).decode().splitlines(keepends=True)
    train, test = work / "guide1.train", work / "guide1.test"
    train.write_text("".join(line for i, line in enumerate(lines, 1) if i % 4 != 0))     # awk 'NR%4!=0'
    test.write_text("".join(line for i, line in enumerate(lines, 1) if i % 4 == 0))      # awk 'NR%4==0'
    ours = {"svm-train": TRAIN, "svm-predict": PREDICT, "svm-scale": SCALE}
    runs = [("LIBSVM's tools", LIBSVM, None), ("svmtrain's tools, server", ours, s.env)]
    if before:
        runs.append(("svmtrain's tools, SVMTRAIN_SERVER=0", ours, s.off))
    python = shutil.which("python3") or sys.executable
    out = {}
    for label, tools, env in runs:
        d = work / re.sub(r"\W+", "-", label)
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
        script = easy_copy(d, tools, "copy")
        s.stop()
        dt, p = timed([python, script, train, test], env if env is not None else s.env, cwd=d, text=True)
        acc = re.findall(r"Accuracy = ([0-9.]+)%", p.stdout)
        best = re.findall(r"Best c=(\S+), g=(\S+) CV rate=(\S+)", p.stdout)
        out[label] = {"wall_s": dt, "accuracy": float(acc[-1]) if acc else None, "best": best[-1] if best else None}
    s.stop()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--loop", type=int, default=100, help="runs of svm-train -v 5 in the loop (0: none)")
    ap.add_argument("--easy", action="store_true", help="easy.py on svmguide1 (minutes)")
    ap.add_argument("--easy-before", action="store_true", help="also easy.py over svmtrain without the server")
    ap.add_argument("--watch", action="store_true", help="keep the server's restart on a change of svmtrain's files")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--json", default=None, help="also write the figures here")
    a = ap.parse_args(argv)
    for f in ("__init__.py", "_version.py", "cli/__init__.py", "cli/client.py"):
        compileall.compile_file(str(ROOT / "svmtrain" / f), quiet=1)
    work = Path(a.workdir or tempfile.mkdtemp(prefix="svmtrain-bench-server-"))
    work.mkdir(parents=True, exist_ok=True)
    runtime = Path(tempfile.mkdtemp(prefix="svmtrain-bench-run-"))
    runtime.chmod(0o700)
    s = Servers(runtime, a.watch)
    heart_xz = ROOT / "data" / "heart_scale.xz"
    heart = plain(heart_xz, work)
    load = os.getloadavg()
    result = {"load_average_at_start": load, "cores": os.cpu_count()}
    try:
        rows, status = heart_rows(s, heart, work, a.runs)
        result["heart_scale"] = {k: {"best_s": b, "median_s": m} for k, (b, m) in rows.items()}
        result["server"] = status
        print(f"heart_scale, {a.runs} runs each (load average {load[0]:.1f} on {os.cpu_count()} cores):")
        print(f"  {'':<48} {'best':>7} {'median':>7}")
        for k, (b, m) in rows.items():
            print(f"  {k:<48} {b:7.3f} {m:7.3f}")
        print(f"  server: {status}")
        dv = same_decision_values(s, heart, work)
        result["same_decision_values"] = dict(dv)
        print("decision values, server vs SVMTRAIN_SERVER=0: "
              + ", ".join(f"{label}: {'identical' if ok else 'DIFFERENT'}" for label, ok in dv))
        if a.loop:
            lp = loop(s, heart_xz, work, a.loop)
            result["loop"] = {"runs": a.loop, **lp}
            print(f"{a.loop} x svm-train -v 5 heart_scale.xz: "
                  + ", ".join(f"{k} {v:.1f} s" for k, v in lp.items()))
        if a.easy or a.easy_before:
            ez = easy(s, work, a.easy_before)
            result["easy"] = ez
            print("easy.py on svmguide1 (3/4 train, 1/4 test):")
            for k, v in ez.items():
                print(f"  {k}: {v}")
    finally:
        s.stop()
        shutil.rmtree(runtime, ignore_errors=True)
    result["load_average_at_end"] = os.getloadavg()
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
