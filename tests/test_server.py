"""The start-up server (svmtrain.cli.client, svmtrain.cli.forkserver): a run
through it is the run in process -- the same models and decision values, the
same output and exit statuses, signals passed on -- and a server is never
shared by two users, two identities or two environments.

Each server here lives in a private XDG_RUNTIME_DIR (a fresh 0700 directory)
and is stopped at teardown (the rest of the suite runs with
SVMTRAIN_SERVER=0, conftest.py). SVMTRAIN_SERVER_PRELOAD=0 spares the suite
each server's kernel loading (its children load what they use, as a run in
its own process does); SVMTRAIN_SERVER_WATCH=0 keeps a server when someone
edits the checkout during the tests (the restart on a change is tested on
its own, test_a_changed_package_is_noticed).

Why two solvers are enough for "the same decision values": the child runs the
very function the console script runs in process (client.COMMANDS, e.g.
svmtrain.cli.train:console_main), on the client's own descriptors, directory,
environment and argv, in a process forked from one that imported the same
modules; no solver code knows which process it is in. What could differ is
the process around the code -- descriptors, terminal, directory, umask,
environment, limits, signals, argv, __main__ -- and the probe test below
compares all of them with a run in process.
"""
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT, bundled

BIN = Path(sys.executable).parent
TRAIN, PREDICT = BIN / "svm-train", BIN / "svm-predict"

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not TRAIN.exists() or "svmtrain.cli.client" not in TRAIN.read_text(),
    reason="the console scripts are not installed through svmtrain.cli.client (pip install -e .)")

TIME = re.compile(rb"Training time = [0-9.e+-]+ s")


# ---------------------------------------------------------------- helpers

def private_dir(base):
    d = Path(base)
    d.mkdir(parents=True, exist_ok=True)
    d.chmod(0o700)
    return d


def server_env(runtime, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVMTRAIN_SERVER")}
    env.update(XDG_RUNTIME_DIR=str(runtime), SVMTRAIN_SERVER_PRELOAD="0", SVMTRAIN_SERVER_WATCH="0")
    env.update(extra)
    return env


def run(argv, env, **kw):
    kw.setdefault("capture_output", True)
    return subprocess.run([str(a) for a in argv], env=env, timeout=120, **kw)


def start(env, script=TRAIN):
    """Start this environment's server (svm-train --server start waits until it serves); its pid."""
    r = run([script, "--server", "start"], env, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return int(re.search(r"server pid (\d+)", r.stdout).group(1))


def status(env, script=TRAIN):
    """{pid: (runs, running, is this environment's, the runs' pids)} of the servers `--server status` lists."""
    r = run([script, "--server", "status"], env, text=True)
    out = {}
    for line in r.stdout.splitlines():
        m = re.search(r"server pid (\d+) .*?: up \d+ s, (\d+) runs, (\d+) running(?: \(pid ([\d, ]+)\))?", line)
        if m:
            pids = {int(p) for p in (m.group(4) or "").split(", ") if p}
            out[int(m.group(1))] = (int(m.group(2)), int(m.group(3)), "(this environment)" in line, pids)
    return out


def runs(env, script=TRAIN):
    return next(v[0] for v in status(env, script).values() if v[2])


def launched(env, server, argv, **kw):
    """A client started with ``argv``, once the server has its run (its signal handlers are in
    place then); (the client, the run's pid)."""
    old = status(env)[server]
    p = subprocess.Popen([str(a) for a in argv], env=env, **kw)
    end = time.monotonic() + 30
    while time.monotonic() < end:
        now = status(env)[server]
        if now[0] > old[0] and now[3] - old[3]:
            return p, (now[3] - old[3]).pop()
        time.sleep(0.02)
    raise AssertionError("the run did not start in the server")


def server_processes(runtime):
    """pids of the live servers of ``runtime`` (from their lock files)."""
    pids = []
    for lock in (Path(runtime) / "svmtrain").glob("s-*.lock"):
        try:
            pid = int(lock.read_text().split()[0])
            if "svmtrain.cli.forkserver" in Path(f"/proc/{pid}/cmdline").read_text():
                pids.append(pid)
        except (OSError, ValueError, IndexError):
            pass
    return pids


def stop_all(runtime, env):
    run([TRAIN, "--server", "stop"], env)
    end = time.monotonic() + 10
    while server_processes(runtime) and time.monotonic() < end:
        time.sleep(0.05)
    for pid in server_processes(runtime):
        os.kill(pid, signal.SIGKILL)


def alive(pid):
    return state(pid) not in (None, "Z")


def state(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def in_process(main, args):
    """A command run in this process (the code a console script runs with SVMTRAIN_SERVER=0)."""
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r


@pytest.fixture(scope="module")
def heart(tmp_path_factory):
    import lzma
    p = tmp_path_factory.mktemp("data") / "heart_scale"
    p.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    return p


@pytest.fixture(scope="module")
def shared():
    """(env, runtime directory, pid) of a server the tests of this module share
    (its directory outside pytest's 0700 one: the user nobody is shown it)."""
    runtime = Path(tempfile.mkdtemp(prefix="svmtrain-test-run-"))
    runtime.chmod(0o700)
    env = server_env(runtime, SVMTRAIN_SERVER_PRELOAD="1")     # kernels loaded: its runs are quick
    try:
        pid = start(env)
        yield env, runtime, pid
    finally:
        stop_all(runtime, env)
        shutil.rmtree(runtime, ignore_errors=True)


@pytest.fixture
def own(tmp_path):
    """A fresh private runtime directory; its servers are stopped at teardown."""
    runtime = private_dir(tmp_path / "run")
    made = []

    def make(**extra):
        env = server_env(runtime, **extra)
        made.append(env)
        return env, runtime
    yield make
    for env in made:
        stop_all(runtime, env)


# ---------------------------------------------------------------- the client

@pytest.mark.slow
def test_client_imports_only_the_standard_library(own):
    """-X importtime of a run through the server (--version: its child imports nothing more, so every
    line is the client's; -X importtime is part of the identity: the server is one started with it)."""
    env, _ = own()
    argv = [sys.executable, "-X", "importtime", TRAIN]
    assert run(argv + ["--server", "start"], env).returncode == 0
    r = run(argv + ["--version"], env, text=True)
    assert r.returncode == 0 and r.stdout.startswith("svm-train (svmtrain) ")
    imported = [line.split("|")[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")]
    assert "svmtrain.cli.client" in imported
    heavy = {"numpy", "scipy", "numba", "llvmlite", "click", "tqdm"}
    assert not [m for m in imported if m.split(".")[0] in heavy]
    assert [v[0] for v in status(env).values()] == [1]      # the run was the -X importtime server's


@pytest.mark.slow
def test_server_status_and_stop_answer_without_svmtrains_imports(own):
    env, runtime = own()
    r = run([sys.executable, "-X", "importtime", TRAIN, "--server", "status"], env, text=True)
    assert r.returncode == 1 and "no server running" in r.stdout
    assert "numpy" not in r.stderr and "click" not in r.stderr
    pid = start(env)
    (line,) = run([TRAIN, "--server", "status"], env, text=True).stdout.splitlines()
    assert f"server pid {pid} " in line and "(this environment)" in line and str(runtime) in line
    r = run([TRAIN, "--server=stop"], env, text=True)
    assert r.returncode == 0 and f"stopped server pid {pid}" in r.stdout
    end = time.monotonic() + 10
    while alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    assert not alive(pid) and not list((runtime / "svmtrain").glob("s-????????????????"))
    r = run([TRAIN, "--server", "status"], dict(env, SVMTRAIN_SERVER="0"), text=True)
    assert "off (SVMTRAIN_SERVER=0)" in r.stdout


# ---------------------------------------------------------------- the same runs

@pytest.mark.slow
@pytest.mark.parametrize("args", [[], ["-s", "smo", "-t", "2", "-c", "4"]], ids=["dcd", "smo"])
def test_models_and_decision_values_are_the_same(shared, heart, tmp_path, args):
    from svmtrain.cli.predict import main as predict_main
    from svmtrain.cli.train import main as train_main
    env = shared[0]
    before = runs(env)
    r = run([TRAIN, *args, heart, tmp_path / "server.model"], env)
    assert r.returncode == 0 and r.stderr == b""
    here = in_process(train_main, [*args, heart, tmp_path / "here.model"])
    assert TIME.sub(b"", r.stdout) == TIME.sub(b"", here.stdout_bytes)
    assert (tmp_path / "server.model").read_bytes() == (tmp_path / "here.model").read_bytes()
    r = run([PREDICT, "-d", heart, tmp_path / "server.model", "-"], env)
    assert r.returncode == 0
    here = in_process(predict_main, ["-d", heart, tmp_path / "here.model", "-"])
    assert r.stdout == here.stdout_bytes and len(r.stdout.splitlines()) == 270
    assert r.stderr == here.stderr_bytes and r.stderr.startswith(b"Accuracy = ")
    assert runs(env) == before + 2


def wide_text(path, rows=2500, per_row=50, features=20000, seed=3):
    """A sparse binary set with 125,000 stored values (so -s ocas takes two threads)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    w = rng.normal(size=features + 1)
    lines = []
    for _ in range(rows):
        idx = np.sort(rng.choice(features, per_row, replace=False)) + 1
        val = rng.integers(1, 4, per_row)
        lines.append(("+1" if val @ w[idx] > 0 else "-1") + "".join(f" {i}:{v}" for i, v in zip(idx, val)))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
def test_a_spare_with_the_parallel_kernels_loaded_runs_them(shared, tmp_path):
    """With GNU OpenMP's threading layer, a spare (after the server's warm-up)
    loads the parallel kernels while it waits, and says so in the server's log;
    a two-thread -s ocas run then is the run in process, byte for byte."""
    from svmtrain.cli.forkserver import _lazy_openmp
    from svmtrain.cli.train import main as train_main
    env, runtime, server = shared
    data = wide_text(tmp_path / "wide")
    (log,) = (Path(runtime) / "svmtrain").glob("s-*.log")
    loaded = re.compile(r"spare (\d+): (\d+) parallel kernels loaded")
    end = time.monotonic() + 60
    while _lazy_openmp() and time.monotonic() < end:
        found = loaded.findall(log.read_text())
        if found and alive(int(found[-1][0])):
            assert int(found[-1][1]) > 0
            break
        time.sleep(0.1)
    else:
        assert not _lazy_openmp(), "no spare loaded the parallel kernels"
    r = run([TRAIN, "-s", "ocas", "--threads", "2", data, tmp_path / "server.model"], env)
    assert r.returncode == 0 and r.stderr == b""
    here = in_process(train_main, ["-s", "ocas", "--threads", "2", data, tmp_path / "here.model"])
    assert TIME.sub(b"", r.stdout) == TIME.sub(b"", here.stdout_bytes)
    assert (tmp_path / "server.model").read_bytes() == (tmp_path / "here.model").read_bytes()


@pytest.mark.slow
def test_sixteen_clients_at_once(shared, heart, tmp_path):
    from svmtrain.cli.train import main as train_main
    env = shared[0]
    before = runs(env)
    costs = [0.25, 0.5, 1, 2]
    procs = [subprocess.Popen([str(TRAIN), "-q", "-c", str(costs[i % 4]), str(heart), str(tmp_path / f"m{i}")],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(16)]
    results = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in procs]
    assert results == [(0, b"", b"")] * 16
    for c in costs:
        in_process(train_main, ["-q", "-c", c, heart, tmp_path / f"ref{c}"])
    for i in range(16):
        assert (tmp_path / f"m{i}").read_bytes() == (tmp_path / f"ref{costs[i % 4]}").read_bytes(), i
    assert runs(env) == before + 16


@pytest.mark.slow
def test_exit_statuses_output_and_standard_streams(shared, heart, tmp_path):
    env = shared[0]
    r = run([TRAIN, "-s", "nope", heart, tmp_path / "m"], env, text=True)         # refused: 2, one line
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1
    assert r.stderr.startswith("svm-train: unknown solver 'nope'")
    r = run([TRAIN, tmp_path / "missing", tmp_path / "m"], env, text=True)        # bad input: 2
    assert r.returncode == 2 and "missing" in r.stderr and r.stderr.count("\n") == 1
    r = run([TRAIN, "-q", heart, tmp_path / "no-dir" / "m"], env, text=True)     # the system failed: 1
    assert r.returncode == 1 and "no-dir" in r.stderr
    assert not (tmp_path / "m").exists()
    r = run([TRAIN, "-q", "-", tmp_path / "m"], env, input=heart.read_bytes())   # standard input
    assert r.returncode == 0 and (tmp_path / "m").exists()
    r = run([PREDICT, "-", tmp_path / "m", "-"], env, input=heart.read_bytes())   # and standard output
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 270 and r.stderr.startswith(b"Accuracy = ")
    # relative paths are the client's working directory's
    r = run([TRAIN, "-q", heart, "rel.model"], env, cwd=tmp_path)
    assert r.returncode == 0 and (tmp_path / "rel.model").exists()
    # the reader of the output goes away: 141 (SIGPIPE's status), as in process
    big = tmp_path / "big"
    big.write_bytes(heart.read_bytes() * 200)
    p = subprocess.Popen([str(PREDICT), str(big), str(tmp_path / "m"), "-"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.readline()
    p.stdout.close()
    assert p.wait(timeout=60) == 141 and p.stderr.read() == b""


def reading(pid, timeout=10.0):
    """Wait until process ``pid`` sleeps reading a pipe (its wchan), so that a
    signal reaches the run itself, not its start-up (a spare may finish
    loading a kernel before it starts: SIGINT there is click's "Aborted!", as
    in a process of its own); where the kernel hides wchan, wait 0.5 s."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            wchan = Path(f"/proc/{pid}/wchan").read_text()
        except OSError:
            return
        if wchan in ("", "0"):
            time.sleep(0.5)
            return
        if "pipe_read" in wchan:
            return
        time.sleep(0.01)


@pytest.mark.slow
def test_ctrl_c_term_and_ctrl_z_reach_the_run(shared, tmp_path):
    env, _, server = shared
    model = tmp_path / "m"

    def blocked(**kw):      # a run waiting for standard input
        p, child = launched(env, server, [TRAIN, "-", model], stdin=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
        p.stdin.write(b"1 1:1\n")
        p.stdin.flush()
        reading(child)
        return p, child

    p, child = blocked()
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=30) == 130
    assert p.stderr.read() == b"svm-train: interrupted; no files were written\n"
    p, child = blocked()
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == -signal.SIGTERM and p.stderr.read() == b""
    p, child = blocked(process_group=0)     # a job of its own, as a shell starts it
    p.send_signal(signal.SIGTSTP)           # Ctrl-Z stops the client and its run; fg continues both
    end = time.monotonic() + 10
    while not (state(p.pid) == state(child) == "T") and time.monotonic() < end:
        time.sleep(0.02)
    assert state(p.pid) == state(child) == "T"
    p.send_signal(signal.SIGCONT)
    end = time.monotonic() + 10
    while state(child) == "T" and time.monotonic() < end:
        time.sleep(0.02)
    assert state(child) not in ("T", None)
    p.stdin.close()                         # the end of the data: the run trains and writes the model
    assert p.wait(timeout=60) == 0
    assert model.exists()


@pytest.mark.slow
def test_a_server_killed_mid_run_ends_the_client_with_1_and_writes_nothing(own, tmp_path):
    env, runtime = own()
    pid = start(env)
    model = tmp_path / "m"
    p, child = launched(env, pid, [TRAIN, "-", model], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(b"1 1:1\n-1 1:-1\n")
    p.stdin.flush()
    os.kill(pid, signal.SIGKILL)
    assert p.wait(timeout=30) == 1
    end = time.monotonic() + 10
    while alive(child) and time.monotonic() < end:       # the run went with its server
        time.sleep(0.02)
    assert not alive(child)
    assert b"server ended during the run" in p.stderr.read()
    assert not model.exists() and not list(tmp_path.glob(".m.*"))
    # its socket is stale now: the next run runs in process and starts a new server over it
    socket_file = next((runtime / "svmtrain").glob("s-????????????????"))
    r = run([TRAIN, "-q", "-", model], env, input=b"1 1:1\n-1 1:-1\n")
    assert r.returncode == 0 and r.stderr == b"" and model.exists()
    new = start(env)
    assert new != pid and socket_file.exists()


@pytest.mark.slow
def test_idle_server_exits(own):
    env, runtime = own(SVMTRAIN_SERVER_IDLE="1")
    pid = start(env)
    end = time.monotonic() + 20
    while alive(pid) and time.monotonic() < end:
        time.sleep(0.1)
    assert not alive(pid)
    assert not list((runtime / "svmtrain").glob("s-????????????????"))      # its socket went with it


# ---------------------------------------------------------------- the process around the run

PROBE = r'''
import json, os, resource, signal, sys, tempfile

def main():
    extra = {}
    for path in sys.argv[1:]:
        with open(path) as f:
            extra[path] = f.read()
    umask = os.umask(0)
    os.umask(umask)
    import numba
    out = {
        "server": "svmtrain.cli.forkserver" in sys.modules, "argv": sys.argv, "cwd": os.getcwd(), "umask": umask,
        "value": os.environ.get("PROBE_VALUE"), "tmp": tempfile.gettempdir(), "path": sys.path,
        "isatty": [os.isatty(i) for i in (0, 1, 2)], "stderr_isatty": sys.stderr.isatty(),
        "buffering": [sys.stdout.line_buffering, sys.stderr.line_buffering, sys.stdout.write_through],
        "encoding": [sys.stdout.encoding, sys.stderr.errors, sys.stdin.name, sys.stdout.name],
        "nofile": resource.getrlimit(resource.RLIMIT_NOFILE), "nice": os.nice(0), "extra": extra,
        "signals": [str(signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE,
                                                     signal.SIGTERM)],
        "main": [sys.modules["__main__"].__package__, sys.modules["__main__"].__file__],
        "threads": numba.config.NUMBA_NUM_THREADS,
    }
    print(json.dumps(out))
    print("to stderr", file=sys.stderr)
    return int(os.environ.get("PROBE_EXIT", "0"))
'''

SCRIPT = r'''#!{python}
import sys
from svmtrain.cli import client
client.COMMANDS["svm-probe"] = "svmprobe:main"      # one line of the table: a command through the server
if sys.argv[1:2] == ["--server"]:
    sys.exit(client.server_control("svm-probe", sys.argv[2]))
client.launch("svm-probe")
'''


@pytest.fixture
def probe(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "svmprobe.py").write_text(PROBE)
    script = bin_dir / "svm-probe"
    script.write_text(SCRIPT.replace("{python}", sys.executable))
    script.chmod(0o755)
    return script


def probe_run(script, env, cwd, extra_fd, pty_stderr=None):
    """The probe with umask 027, ulimit -n 512, nice 3, SIGHUP ignored (nohup), descriptor 5 open on
    ``extra_fd``, stderr on a pty (when given)."""
    shell = f"umask 027; ulimit -n 512; trap '' HUP; exec nice -n 3 {script} /dev/fd/5 5<{extra_fd}"
    r = subprocess.run(["sh", "-c", shell], env=env, cwd=cwd, capture_output=pty_stderr is None, timeout=120,
                       stdout=subprocess.PIPE if pty_stderr is not None else None, stderr=pty_stderr)
    return r.returncode, json.loads(r.stdout)


@pytest.mark.slow
def test_the_run_has_the_clients_process_around_it(own, probe, tmp_path):
    import pty
    env, _ = own(PROBE_VALUE="x y", PROBE_EXIT="3", TMPDIR=str(tmp_path))
    cwd = tmp_path / "work"
    cwd.mkdir()
    extra = tmp_path / "extra.txt"
    extra.write_text("the client's descriptor 5\n")
    master, slave = pty.openpty()
    try:
        code, here = probe_run(probe, dict(env, SVMTRAIN_SERVER="0"), cwd, extra, slave)
        start(env, script=probe)
        code2, there = probe_run(probe, env, cwd, extra, slave)
    finally:
        os.close(slave)
        os.close(master)
    assert (code, code2) == (3, 3)
    assert here.pop("server") is False and there.pop("server") is True
    assert there == here
    assert here["isatty"] == [False, False, True] and here["stderr_isatty"] and here["umask"] == 0o027
    assert here["nice"] >= 3 and here["nofile"][0] == 512 and here["cwd"] == str(cwd)
    assert list(here["extra"].values()) == ["the client's descriptor 5\n"] and here["value"] == "x y"
    assert here["signals"][1] == str(int(signal.SIG_IGN))
    # a run whose numba would start differently gets a server of its own
    env1 = dict(env, NUMBA_NUM_THREADS="1")
    start(env1, script=probe)
    code, one = probe_run(probe, env1, cwd, extra)
    assert code == 3 and one["server"] and one["threads"] == 1 and here["threads"] == os.cpu_count()
    assert len(status(env)) == 2


# ---------------------------------------------------------------- two users

def test_socket_directory_must_be_the_users_alone(tmp_path, monkeypatch):
    from svmtrain.cli import client
    runtime = private_dir(tmp_path / "run")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert client.socket_dir() == str(runtime / "svmtrain")
    assert stat.S_IMODE(os.stat(runtime / "svmtrain").st_mode) == 0o700
    (runtime / "svmtrain").chmod(0o755)                    # readable by others: not used
    with pytest.raises(client.Unavailable, match="not a directory of this user's alone"):
        client.socket_dir()
    (runtime / "svmtrain").chmod(0o700)
    other = os.getuid() + 4242
    os.mkdir(tmp_path / f"svmtrain-{other}", 0o700)        # this user's: planted for the other one
    monkeypatch.setattr(os, "getuid", lambda: other)        # the other user: XDG's is not theirs, nor that one
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with pytest.raises(client.Unavailable, match="not a directory of this user's alone"):
        client.socket_dir()
    monkeypatch.undo()
    runtime.chmod(0o755)                                   # an XDG_RUNTIME_DIR open to others: the 0700 fallback
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert client.socket_dir() == str(tmp_path / f"svmtrain-{os.getuid()}")


NOBODY = r'''
import json, os, sys
sys.path.insert(0, sys.argv[1])
from svmtrain.cli import client
out = {"uid": os.getuid()}
try:
    out["dir"] = client.socket_dir()
except client.Unavailable as e:
    out["dir"] = "unavailable: %s" % e
try:
    client.connect(sys.argv[2]).close()
    out["connect"] = "connected"
except client.Unavailable as e:
    out["connect"] = str(e)
import _socket
s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[2])
try:
    client.send_frame(s, {"proto": client.PROTOCOL, "op": "status"})
    out["reply"] = client.Reader(s).frame()
except ConnectionError:                 # closed unread (reset, or a broken pipe)
    out["reply"] = None
print(json.dumps(out))
'''


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_another_user_is_never_served(shared):
    """As the user nobody, with root's XDG_RUNTIME_DIR and its server's socket
    opened to everyone on purpose: nobody's client will not use root's
    directory or server, and the server does not answer nobody."""
    env, runtime, pid = shared
    sock = next((runtime / "svmtrain").glob("s-????????????????"))
    python = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    if not os.access(python, os.X_OK):
        pytest.skip(f"{python} missing")
    modes = [(p, stat.S_IMODE(os.stat(p).st_mode)) for p in (runtime, runtime / "svmtrain", sock)]
    leftovers = [p for p in Path("/tmp").glob("svmtrain-*")]
    try:
        for p, _ in modes:
            p.chmod(0o777)
        r = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", python, "-c", NOBODY,
                            str(ROOT), str(sock)], env=dict(env, HOME="/tmp"), capture_output=True, text=True,
                           timeout=60, cwd="/")
    finally:
        for p, mode in modes:
            p.chmod(mode)
        for p in Path("/tmp").glob("svmtrain-*"):          # nobody's own directory, made by its client
            if p not in leftovers:
                shutil.rmtree(p, ignore_errors=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    log = sock.with_name(sock.name + ".log").read_text()
    assert out["uid"] != 0, out
    assert not out["dir"].startswith(str(runtime)), out     # not root's directory
    assert "served by another user" in out["connect"], out
    assert out["reply"] is None, out                       # the server closed the connection unanswered
    assert f"refused a connection from uid {out['uid']}" in log, log
    assert alive(pid)


def test_a_changed_package_is_noticed(tmp_path, monkeypatch):
    """What the server checks before each run (it then refuses the run and stops): a source
    changed (mtime or size), a module added or removed."""
    from svmtrain.cli import forkserver
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for name in ("__init__.py", "sub/__init__.py", "sub/a.py"):
        (pkg / name).write_text("x = 1\n")
    fake = type(sys)("svmtrain")
    fake.__file__ = str(pkg / "__init__.py")
    monkeypatch.setitem(sys.modules, "svmtrain", fake)
    files = forkserver._package_files()
    assert forkserver._changed(files) is None
    (pkg / "sub" / "notes.txt").write_text("not a module")
    assert forkserver._changed(files) is None
    (pkg / "sub" / "b.py").write_text("")
    assert forkserver._changed(files) == str(pkg / "sub")
    (pkg / "sub" / "b.py").unlink()
    (pkg / "sub" / "a.py").write_text("x = 22\n")
    assert forkserver._changed(files) == str(pkg / "sub" / "a.py")
