"""The console scripts' entry: run the command in a child of the user's fork
server (:mod:`svmtrain.cli.forkserver`), or in this process.

A new Python pays ~0.4 s importing numpy, scipy and numba before it reads a
byte; the fork server has them imported and the cached kernels loaded, and
forks a child per run. This module is the thin client: it imports the
standard library only (``python -X importtime`` shows no numpy), connects
to the server's Unix socket and hands over the run -- argv, the environment,
the umask, the working directory and every open file descriptor (0, 1 and 2
and any other, such as a shell's ``/dev/fd/63``), the resource limits, the
nice value and the CPU affinity. The child takes them as its own and runs the
ordinary command (``COMMANDS``); the client forwards SIGINT, SIGTERM, SIGHUP
and SIGQUIT (and Ctrl-Z) to it and exits with its status.

Any failure to reach a server runs the command in this process, as before
(silently; ``--verbose`` says why), and the first such run starts a server
in the background for the next runs. ``SVMTRAIN_SERVER=0`` turns it all off.
Safety rules (README, "The start-up server"): the socket lives in a directory
only the user can enter, checked for owner and mode; both ends check the
other's uid (SO_PEERCRED); a server is used only by runs with its exact
identity (:func:`identity`: svmtrain's version and path, the Python, its
flags and sys.path, the user and groups, the mount namespace and cgroup, and
every environment variable read at import time by numba, OpenMP, BLAS or Python).

A new command is one line in ``COMMANDS`` (its name and the function its
console script ran in process) and its ``[project.scripts]`` line naming
``svmtrain.cli.client:<name with _ for ->``.
"""
import os
import sys

# command name -> "module:function" run in process (in the server's child, or here):
# a console_main that runs the command and ends the process with its status
COMMANDS = {
    "svm-train": "svmtrain.cli.train:console_main",
    "svm-predict": "svmtrain.cli.predict:console_main",
    "svm-scale": "svmtrain.cli.scale:console_main",
    "svm-grid": "svmtrain.cli.grid:console_main",
    "svm-easy": "svmtrain.cli.easy:console_main",
    "svm-subset": "svmtrain.cli.subset:console_main",
    "svm-checkdata": "svmtrain.cli.checkdata:console_main",
}

PROTOCOL = 1
MAX_FDS = 250               # SCM_RIGHTS carries at most 253 descriptors a message
CONNECT_TIMEOUT_S = 5.0
START_TIMEOUT_S = 60.0      # from the request to its child's "started" (after it, a run takes what it takes)
WAIT_FOR_SPAWNER_S = 5.0    # a new server imports after the run that started it ends (or after this)

# environment variables read when numba, llvmlite, OpenMP, a BLAS, NumPy or
# Python start: a run whose values differ gets a server of its own
KEY_PREFIXES = ("NUMBA_", "LLVM", "OMP_", "GOMP_", "KMP_", "OPENBLAS_", "GOTO", "MKL_", "BLIS_", "VECLIB_",
                "TBB_", "NPY_", "NUMPY_", "SCIPY_", "PYTHON", "LC_", "LD_", "MALLOC_", "GLIBC_", "SVMTRAIN_")
KEY_NAMES = ("LANG", "LANGUAGE", "TZ", "HOME", "XDG_CACHE_HOME")
NOT_KEYS = ("SVMTRAIN_SERVER", "SVMTRAIN_SERVER_IDLE", "SVMTRAIN_SERVER_PRELOAD", "SVMTRAIN_SERVER_WATCH")
# signals the client passes on to the child's process group (SIGTERM: to the child alone, as `kill PID`)
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")


SERVER_ACTIONS = ("status", "start", "stop")     # svm-train --server ACTION


class Unavailable(Exception):
    """No server for this run (the reason): it runs in this process. ``restart``:
    the server is stopping (its files changed): start a new one."""
    restart = False


def __getattr__(name):
    """``svm_train`` etc.: the console-script entry of each command of COMMANDS."""
    command = name.replace("_", "-")
    if command in COMMANDS:
        def entry():
            launch(command)
        entry.__name__ = entry.__qualname__ = name
        return entry
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def launch(command):
    """Run ``command`` (a key of COMMANDS) with this process's argv: through
    the server when one can take it, else here. Never returns."""
    args = sys.argv[1:]
    verbose = "--verbose" in _options(args)
    if command == "svm-train" and _server_request(args) is not None:
        sys.exit(server_control(command, _server_request(args)))
    if enabled():
        try:
            result = _through_server(command, args)
        except Exception as e:          # not started (after "started" nothing raises): run here
            if verbose:
                why = e if isinstance(e, Unavailable) else f"{type(e).__name__}: {e}"
                _say(command, f"server: {why}; running in this process")
        else:
            _exit_like(result)
    run_here(command)


def enabled():
    return os.environ.get("SVMTRAIN_SERVER", "1").strip().lower() not in ("0", "no", "off", "false")


def run_here(command):
    """The command in this process: its in-process entry (COMMANDS)."""
    import importlib
    module, function = COMMANDS[command].split(":")
    code = getattr(importlib.import_module(module), function)()
    sys.exit(code)


def _options(args):
    return args[:args.index("--")] if "--" in args else args


def _server_request(args):
    """The action when ``args`` are exactly ``--server status|start|stop`` (answered without svmtrain's imports), else None."""
    if len(args) == 2 and args[0] == "--server" and args[1] in SERVER_ACTIONS:
        return args[1]
    if len(args) == 1 and args[0].startswith("--server=") and args[0][9:] in SERVER_ACTIONS:
        return args[0][9:]
    return None


def _say(command, message):
    try:
        print(f"{command}: {message}", file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def _exit_like(result):
    """End this process as the child ended: ("exit", code) or ("signal", number)."""
    kind, value = result
    if kind == "signal":
        import signal
        try:
            sys.stdout.flush()
        except Exception:
            pass
        signal.signal(value, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [value])
        os.kill(os.getpid(), value)
        value = 128 + value         # a signal that does not end a process (it should not happen)
    os._exit(value)


# ---------------------------------------------------------------- identity and places

def identity():
    """What a server must share with this process to run its commands as this
    process would: a string (the server compares it whole; its hash names the socket)."""
    import svmtrain
    env = sorted((k, v) for k, v in os.environ.items()
                 if (k.startswith(KEY_PREFIXES) or k in KEY_NAMES) and k not in NOT_KEYS)
    try:
        namespaces = tuple(os.readlink(f"/proc/self/ns/{ns}") for ns in ("mnt", "user"))
    except OSError:
        namespaces = ()
    try:                                # its limits (systemd-run -p MemoryMax=..., a container's) apply to the run
        with open("/proc/self/cgroup") as f:
            cgroup = f.read()
    except OSError:
        cgroup = ""
    root = os.stat("/")
    main = sys.modules.get("__main__")
    return repr((
        PROTOCOL, svmtrain.__version__, os.path.dirname(os.path.abspath(svmtrain.__file__)),
        sys.version, sys.executable, sys.prefix, list(sys.path), tuple(sys.flags), list(sys.warnoptions),
        sorted(sys._xoptions.items()), getattr(main, "__package__", None),
        os.getuid(), os.geteuid(), os.getgid(), os.getegid(), sorted(os.getgroups()),
        namespaces, cgroup, (root.st_dev, root.st_ino), env))


def _hash(text):
    """FNV-1a, 64 bits, as 16 hex digits (names a socket; the server checks the identity itself)."""
    h = 0xcbf29ce484222325
    for b in text.encode("utf-8", "surrogateescape"):
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def socket_dir(create=True):
    """This user's private directory of server sockets: ``$XDG_RUNTIME_DIR/svmtrain``
    when XDG_RUNTIME_DIR is the user's own 0700 directory, else
    ``$TMPDIR/svmtrain-UID`` (or /tmp). It must be a real directory (not a
    link) owned by the user with no access for anyone else (Unavailable otherwise)."""
    import stat
    uid = os.getuid()
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    base = None
    if xdg and os.path.isabs(xdg):
        try:
            st = os.stat(xdg)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o077:
                base = os.path.join(xdg, "svmtrain")
        except OSError:
            pass
    if base is None:
        tmp = os.environ.get("TMPDIR") or "/tmp"
        base = os.path.join(tmp if os.path.isabs(tmp) else "/tmp", f"svmtrain-{uid}")
    if create:
        try:
            os.mkdir(base, 0o700)
        except FileExistsError:
            pass
        except OSError as e:
            raise Unavailable(f"cannot create {base}: {e.strerror}") from None
    try:
        st = os.lstat(base)
    except OSError as e:
        raise Unavailable(f"{base}: {e.strerror}") from None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & 0o077:
        raise Unavailable(f"{base} is not a directory of this user's alone (owner {st.st_uid}, "
                          f"mode {stat.S_IMODE(st.st_mode):o}); not using it")
    return base


def socket_path(key=None, create=True):
    """The socket of the server for this process's identity (``key``)."""
    path = os.path.join(socket_dir(create), "s-" + _hash(identity() if key is None else key))
    if len(path.encode()) > 100:
        raise Unavailable(f"socket path too long ({path})")
    return path


# ---------------------------------------------------------------- the wire

def send_frame(sock, obj, fds=()):
    """One message: 4-byte length, marshal of ``obj``; ``fds`` ride with its first byte (SCM_RIGHTS)."""
    import marshal
    import _socket
    payload = marshal.dumps(obj)
    data = len(payload).to_bytes(4, "little") + payload
    if fds:
        anc = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, b"".join(f.to_bytes(4, sys.byteorder, signed=True)
                                                                  for f in fds))]
        sent = sock.sendmsg([data], anc)
        data = data[sent:]
    if data:
        sock.sendall(data)


class Reader:
    """Frames from a stream socket (recv); None at the end of the stream."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def _fill(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                return False
            self.buf += chunk
        return True

    def frame(self):
        import marshal
        if not self._fill(4):
            return None
        n = int.from_bytes(self.buf[:4], "little")
        if not self._fill(4 + n):
            return None
        payload, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
        return marshal.loads(payload)


def peer_uid(sock):
    import _socket
    creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    return int.from_bytes(creds[4:8], sys.byteorder)


def connect(path):
    """A connected socket to the server at ``path`` run by this user, or Unavailable."""
    import _socket
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
    s.settimeout(CONNECT_TIMEOUT_S)
    try:
        s.connect(path)
    except FileNotFoundError:
        s.close()
        raise Unavailable("no server running") from None
    except ConnectionRefusedError:
        s.close()
        raise Unavailable("stale socket (its server has gone)") from None
    except OSError as e:
        s.close()
        raise Unavailable(f"cannot connect to {path}: {e}") from None
    if peer_uid(s) != os.getuid():
        s.close()
        raise Unavailable(f"{path} is served by another user; not using it")
    s.settimeout(None)
    return s


# ---------------------------------------------------------------- a run through the server

def _open_fds():
    """(number, inheritable) of every descriptor open in this process."""
    out = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            out.append((fd, os.get_inheritable(fd)))
        except OSError:             # listdir's own descriptor, closed since
            pass
    return sorted(out)


def _limits():
    import resource
    out = []
    for name in dir(resource):
        if name.startswith("RLIMIT_"):
            res = getattr(resource, name)
            try:
                out.append((res, resource.getrlimit(res)))
            except (OSError, ValueError):
                pass
    return out


def _ignored_signals():
    """The signals this process ignores (nohup's SIGHUP, a background job's SIGINT; Python's SIGPIPE)."""
    import signal
    out = []
    for s in signal.valid_signals():
        try:
            if signal.getsignal(s) == signal.SIG_IGN:
                out.append(int(s))
        except (OSError, ValueError):
            pass
    return out


def request(command, args):
    """The run, as the server's child needs it (the descriptors go beside it)."""
    umask = os.umask(0o022)
    os.umask(umask)
    main = sys.modules.get("__main__")
    try:
        affinity = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    return {
        "proto": PROTOCOL, "op": "run", "command": command, "entry": COMMANDS[command],
        "argv": [sys.argv[0], *args], "env": dict(os.environ), "umask": umask,
        "limits": _limits(), "nice": os.nice(0), "affinity": affinity, "ignored": _ignored_signals(),
        "main": (getattr(main, "__file__", None), getattr(main, "__package__", None)),
        "path": list(sys.path),
    }


def _through_server(command, args):
    """Run ``command`` in a child of the server: ("exit", code) or ("signal", number).
    Unavailable when no server took the run (nothing of it happened)."""
    if sys.platform != "linux":
        raise Unavailable("the server is for Linux")
    key = identity()
    path = socket_path(key)
    fds = _open_fds()
    if len(fds) > MAX_FDS:
        raise Unavailable(f"{len(fds)} open file descriptors (at most {MAX_FDS} pass)")
    try:
        sock = connect(path)
    except Unavailable:
        start_server(path, key)
        raise
    try:
        cwd = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        sock.close()
        raise Unavailable(f"working directory: {e.strerror}") from None
    req = request(command, args)
    req["key"] = key
    req["fds"] = fds
    try:
        send_frame(sock, req, [cwd] + [fd for fd, _ in fds])
    except OSError as e:
        sock.close()
        raise Unavailable(f"sending the run: {e}") from None
    finally:
        os.close(cwd)
    try:
        return _wait(command, sock)
    except Unavailable as e:
        if e.restart:
            start_server(path, key)
        raise


def _wait(command, sock):
    """Follow the run: forward signals; its result (or Unavailable before it started)."""
    import signal
    reader = Reader(sock)
    state = {"started": False, "pending": []}

    def send(obj):
        if state["started"]:
            try:
                send_frame(sock, obj)
            except OSError:
                pass
        else:
            state["pending"].append(obj)

    def forward(signum, _frame):
        send({"op": "signal", "signal": int(signum)})

    def suspend(_signum, _frame):
        """Ctrl-Z: stop the child, then this process as the default action
        would (the kernel discards it in an orphaned process group: then
        no SIGCONT follows, and the child continues at once)."""
        send({"op": "signal", "signal": int(signal.SIGSTOP)})
        state["continued"] = False
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTSTP)
        (lambda: None)()                    # a Python call: the SIGCONT handler runs here, if it came
        signal.signal(signal.SIGTSTP, suspend)
        if not state["continued"]:
            send({"op": "signal", "signal": int(signal.SIGCONT)})

    def resume(_signum, _frame):
        state["continued"] = True
        send({"op": "signal", "signal": int(signal.SIGCONT)})

    handled = [getattr(signal, name) for name in FORWARDED] + [signal.SIGTSTP, signal.SIGCONT]
    # an ignored signal stays ignored here, as in the child (nohup)
    before = {s: signal.signal(s, forward) for s in handled if signal.getsignal(s) != signal.SIG_IGN}
    if signal.SIGTSTP in before:
        signal.signal(signal.SIGTSTP, suspend)
    if signal.SIGCONT in before:
        signal.signal(signal.SIGCONT, resume)
    sock.settimeout(START_TIMEOUT_S)
    try:
        return _follow(command, sock, reader, state, send)
    except Unavailable:
        # the run did not start: it runs here, with the signals as they were
        # (one that came meanwhile is raised again)
        for s, handler in before.items():
            signal.signal(s, handler)
        for obj in state["pending"]:
            if obj["signal"] in before and obj["signal"] != signal.SIGCONT:
                os.kill(os.getpid(), obj["signal"])
        raise


def _follow(command, sock, reader, state, send):
    while True:
        try:
            msg = reader.frame()
            err = None if msg is None or isinstance(msg, dict) else "not a message"
        except (OSError, ValueError, EOFError, TypeError) as e:
            err = e
        if err is not None:
            msg = None
        if msg is None:
            if not state["started"]:
                raise Unavailable("the server closed the connection" + (f" ({err})" if err else ""))
            _say(command, "the svmtrain server ended during the run; it did not finish "
                          "(SVMTRAIN_SERVER=0 runs in this process)")
            return ("exit", 1)
        if "refused" in msg and not state["started"]:
            e = Unavailable(msg["refused"])
            e.restart = bool(msg.get("restart"))
            raise e
        if "started" in msg:
            sock.settimeout(None)
            state["started"] = True
            for obj in state["pending"]:
                send(obj)
            state["pending"] = []
        elif "exit" in msg:
            return ("exit", msg["exit"])
        elif "signal" in msg:
            return ("signal", msg["signal"])


# ---------------------------------------------------------------- starting a server

def _lock_path(path):
    return path + ".lock"


def server_alive(path):
    """True when a server holds ``path``'s lock (running, or starting)."""
    import fcntl
    try:
        fd = os.open(_lock_path(path), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def start_server(path, key, wait_for_me=True):
    """Start the server for ``path`` in the background, detached (a new
    session, no terminal, working directory /, output to ``path``.log),
    unless one holds its lock. A fork of this small process takes the lock
    at once (later runs then start no other), waits for this process to end
    (``wait_for_me``: the first run is not slowed by a Python starting
    beside it), and only then becomes the server (exec), the lock passed on."""
    if server_alive(path):
        return
    import fcntl
    code = ("import sys; sys.path[:] = %r; from svmtrain.cli.forkserver import main; main()" % (list(sys.path),))
    env = dict(os.environ)
    me = os.getpid()
    pid = os.fork()
    if pid == 0:                    # the intermediate: a new session, then the server's process
        try:
            os.setsid()
            if os.fork() == 0:
                lock = os.open(_lock_path(path), os.O_RDWR | os.O_CREAT, 0o600)
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)       # else another server is starting
                os.ftruncate(lock, 0)
                os.write(lock, f"{os.getpid()}\n".encode())            # the server's pid (exec keeps it)
                null = os.open(os.devnull, os.O_RDONLY)
                out = os.open(path + ".log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(null, 0)
                os.dup2(out, 1)
                os.dup2(out, 2)
                os.closerange(3, lock)
                os.closerange(lock + 1, 1 << 16)
                os.chdir("/")
                os.set_inheritable(lock, True)      # through the exec
                if wait_for_me:
                    wait_for(me, WAIT_FOR_SPAWNER_S)
                argv = [sys.executable, *_interpreter_options(), "-c", code, path, key, str(lock)]
                os.execve(sys.executable, argv, env)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def wait_for(pid, timeout):
    """Until process ``pid`` has ended, or ``timeout`` seconds."""
    import select
    import time
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                os.kill(pid, 0)
            except OSError:
                return
            time.sleep(0.02)
        return
    try:
        select.select([fd], [], [], timeout)
    finally:
        os.close(fd)


def _interpreter_options():
    """The options this Python was started with (none for a console script; ``python -O script``'s -O)."""
    orig = getattr(sys, "orig_argv", None)
    if orig is not None and len(orig) > len(sys.argv):
        return list(orig[1:len(orig) - len(sys.argv)])
    import subprocess
    return subprocess._args_from_interpreter_flags()


# ---------------------------------------------------------------- --server status|stop

def servers():
    """(socket path, its reply to "status" or None when it does not answer) of every server socket of this user."""
    base = socket_dir(create=False)
    out = []
    for name in sorted(os.listdir(base)):
        if not name.startswith("s-") or "." in name:
            continue
        path = os.path.join(base, name)
        try:
            out.append((path, ask(path, {"proto": PROTOCOL, "op": "status"})))
        except Unavailable:
            out.append((path, None))
    return out


def ask(path, obj):
    sock = connect(path)
    try:
        sock.settimeout(CONNECT_TIMEOUT_S)
        send_frame(sock, obj)
        reply = Reader(sock).frame()
    except OSError as e:
        raise Unavailable(str(e)) from None
    finally:
        sock.close()
    if not isinstance(reply, dict):
        raise Unavailable("no answer")
    return reply


def _describe(path, reply, mine):
    import time
    up = time.time() - reply.get("started", time.time())
    children = reply.get("children") or []
    running = f"{len(children)} running" + (f" (pid {', '.join(map(str, children))})" if children else "")
    return (f"server pid {reply.get('pid')} (svmtrain {reply.get('version')}, {reply.get('python')}): "
            f"up {up:.0f} s, {reply.get('runs', 0)} runs, {running}, idle timeout "
            f"{reply.get('idle', 0):g} s, {reply.get('kernels', 0)} kernels loaded"
            f"{' (still loading)' if reply.get('loading') else ''}; {path}"
            f"{' (this environment)' if mine else ''}")


def server_control(command, action, echo=None):
    """``--server status``: print each of this user's servers (0 when one
    runs, 1 when none); ``--server stop``: stop them all (they finish their
    runs first); ``--server start``: start this environment's now, and
    print it when it serves (0; 1 when it cannot)."""
    echo = echo or (lambda line: print(line, flush=True))
    if not enabled() and action in ("status", "start"):
        echo(f"{command}: the server is off (SVMTRAIN_SERVER=0)")
        if action == "start":
            return 1
    if action == "start":
        return _start_now(command, echo)
    try:
        base = socket_dir(create=False)
        mine = socket_path(create=False)
        found = servers()
    except (Unavailable, OSError) as e:
        echo(f"{command}: no server running ({e})")
        return 1
    running = 0
    for path, reply in found:
        if reply is None:
            _remove_stale(path)
            continue
        running += 1
        if action == "status":
            echo(f"{command}: {_describe(path, reply, path == mine)}")
        else:
            try:
                ask(path, {"proto": PROTOCOL, "op": "stop"})
                echo(f"{command}: stopped server pid {reply.get('pid')} ({path})")
            except Unavailable as e:
                echo(f"{command}: could not stop the server at {path}: {e}")
    if not running:
        echo(f"{command}: no server running ({base})")
        return 1 if action == "status" else 0
    return 0


def _start_now(command, echo, timeout=120.0):
    import time
    try:
        key = identity()
        path = socket_path(key)
        end = time.monotonic() + timeout
        started = 0
        while True:
            try:
                connect(path).close()
                break
            except Unavailable:
                if not server_alive(path):          # none starting (or one just stopping): start one
                    if started == 3 or time.monotonic() > end:
                        raise Unavailable(f"the server did not start (see {path}.log)") from None
                    start_server(path, key, wait_for_me=False)
                    started += 1
                elif time.monotonic() > end:
                    raise Unavailable(f"the server did not start (see {path}.log)") from None
                time.sleep(0.05)
        echo(f"{command}: {_describe(path, ask(path, {'proto': PROTOCOL, 'op': 'status'}), True)}")
    except (Unavailable, OSError) as e:
        echo(f"{command}: {e}")
        return 1
    return 0


def _remove_stale(path):
    """Remove a socket nobody serves (no server holds its lock): a server that was killed."""
    if not server_alive(path):
        try:
            os.unlink(path)         # never the lock file: a server starting now may hold it
        except OSError:
            pass
