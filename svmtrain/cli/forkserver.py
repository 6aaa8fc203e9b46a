"""The per-user fork server: numpy, scipy, numba and svmtrain imported and the
cached kernels loaded once; a forked child per run of svm-train, svm-predict
or svm-scale (:mod:`svmtrain.cli.client` is the other end).

Started by a client that found none (``python -c`` with the socket's path,
the client's identity and its pid), detached, output to ``SOCKET.log``:

1. takes ``SOCKET.lock`` (flock; one server per socket, held for life) and
   checks that its own :func:`svmtrain.cli.client.identity` is the client's;
2. waits until the client that started it has ended (at most
   WAIT_FOR_SPAWNER_S): a first run is not slowed by the warm-up;
3. imports what every run imports, binds a fresh socket (0600, in the
   user's 0700 directory) and renames it over SOCKET (a stale one goes);
4. serves, while it imports the rest of svmtrain and loads each numba
   kernel's cached machine code (serial kernels only: loading a parallel one
   would start numba's OpenMP threads, and a process with threads must not
   fork) between requests.

Each run: the client's uid is checked (SO_PEERCRED); the request is refused
(the client then runs in its own process) when its identity differs, when
svmtrain's files changed since the server started (the server then stops),
when a memory rlimit is set, or when the server is no longer safe to fork.
Otherwise the run goes to a child: the spare, forked ahead between runs
(:meth:`Server._fork_spare`; its fork is then on no run's path), or one
forked now. The child takes the client's descriptors, directory, umask,
environment, limits, nice value, affinity and argv
(:func:`_become_client`), answers "started" and runs the command's
in-process entry; its os._exit sends the status to the client first
(:func:`_report_exit_early`), the server reports it otherwise (or the
signal that ended the child) and passes on the signals the client
forwards. A client that goes away (killed) takes its run with it (SIGKILL
to the child); a server that dies takes its children with it
(PR_SET_PDEATHSIG), and their clients exit 1.

For tests: ``SVMTRAIN_SERVER_PRELOAD=0`` leaves out step 4 (the children
import and load what they use, as a run in its own process does);
``SVMTRAIN_SERVER_WATCH=0`` keeps the server when svmtrain's files change
(a checkout others edit while the tests run).

It stops after SVMTRAIN_SERVER_IDLE seconds (default 600) without a run,
on ``svm-train --server stop`` or SIGTERM (running runs finish first), when
its socket is no longer its own, and when svmtrain's files change.
"""
import fcntl
import gc
import importlib
import io
import os
import select
import signal
import socket
import sys
import time

from . import client as C

DEFAULT_IDLE_S = 600.0
CHECK_EVERY_S = 5.0         # the socket still ours?
REQUEST_TIMEOUT_S = 5.0     # a client sends its run as it connects
PR_SET_PDEATHSIG = 1
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)

# loaded first: the kernels of the common runs (reading, scaling, dcd, smo, prediction)
FIRST = ("svmtrain.io", "svmtrain.data", "svmtrain.preprocess", "svmtrain.prediction", "svmtrain.models",
         "svmtrain.solvers._common", "svmtrain.solvers.dcd", "svmtrain.solvers.kernel._smo_kernels",
         "svmtrain.mercer.functions", "svmtrain._numba")
# never imported by the server: optional dependencies (scikit-learn, Dask start threads), scripts
SKIP = ("svmtrain.sklearn", "svmtrain.distributed", "svmtrain.cli.dask", "svmtrain.cli.forkserver")
PARALLEL_SYMBOLS = (b"numba_parallel_for", b"do_scheduling_", b"allocate_sched")


def log(message):
    try:
        print(time.strftime("%H:%M:%S ") + message, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def main():
    """``python -c ... SOCKET IDENTITY LOCK_FD`` (svmtrain.cli.client.start_server): serve, then exit."""
    path, key, lock = sys.argv[1], sys.argv[2], int(sys.argv[3])
    code = Server(path, key).serve(lock)
    os._exit(code)


class Server:
    def __init__(self, path, key):
        self.path, self.key = path, key
        self.pid = os.getpid()
        self.started = time.time()
        self.idle_s = _idle_timeout()
        self.watch = os.environ.get("SVMTRAIN_SERVER_WATCH", "1") != "0"
        self.children = {}          # pid -> _Run
        self.spare = None           # (pid, socket): a child forked ahead, waiting for the next run
        self.conns = {}             # fd of a running child's connection -> _Run
        self.runs = 0
        self.kernels = 0
        self.stopping = None        # the reason, once stopping
        self.listener = None
        self.steps = iter(())
        self.loading = False
        self.last = time.monotonic()
        self.checked = time.monotonic()

    # ------------------------------------------------------------ start

    def serve(self, lock):
        """Serve with ``lock`` (a descriptor of SOCKET.lock, locked by the process this one was
        before its exec); the exit status."""
        self.lock = lock
        try:
            os.set_inheritable(lock, False)
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)     # ours already: a check
            if os.fstat(lock).st_ino != os.stat(C._lock_path(self.path)).st_ino:
                raise OSError("not the lock file")
        except OSError as e:
            log(f"{C._lock_path(self.path)}: {e}; not serving")
            return 1
        try:
            private = os.path.dirname(self.path) == C.socket_dir(create=False)
        except C.Unavailable:
            private = False
        if not private:
            log(f"{self.path} is not in this user's private socket directory; not serving")
            return 1
        mine = C.identity()
        if mine != self.key:
            log(f"this process's identity differs from the client's; not serving\n  {mine}\n  {self.key}")
            return 1
        t0 = time.perf_counter()
        self.files = _package_files()
        self._import_base()
        self.files.update(_dependency_files())
        self._bind()
        self.last = time.monotonic()
        log(f"serving {self.path} (pid {self.pid}, imports {time.perf_counter() - t0:.2f} s, "
            f"idle timeout {self.idle_s:g} s; open descriptors {sorted(_open_fds())})")
        if os.environ.get("SVMTRAIN_SERVER_PRELOAD", "1") != "0":
            self.steps = self._warm_up()
            self.loading = True
        try:
            self._loop()
        finally:
            self._close_listener()
        log(f"stopped: {self.stopping}")
        return 0

    def _import_base(self):
        import numpy  # noqa: F401
        import scipy.sparse  # noqa: F401
        import numba  # noqa: F401
        import click  # noqa: F401
        from .._numba.start import skip_blas_probe
        skip_blas_probe()
        for entry in C.COMMANDS.values():
            try:
                importlib.import_module(entry.split(":")[0])
            except Exception as e:          # that command's runs import it themselves (and fail as they would)
                log(f"importing {entry}: {e!r}")

    def _bind(self):
        tmp = os.path.join(os.path.dirname(self.path), f"t-{self.pid}")
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        old = os.umask(0o177)
        try:
            s.bind(tmp)
        finally:
            os.umask(old)
        os.chmod(tmp, 0o600)
        s.listen(128)
        s.setblocking(False)
        os.rename(tmp, self.path)   # replaces a stale socket; clients never see one not yet listening
        self.listener = s
        self.inode = os.stat(self.path).st_ino

    def _close_listener(self):
        if self.listener is None:
            return
        try:
            if os.stat(self.path).st_ino == self.inode:     # ours (we hold the lock: no other server)
                os.unlink(self.path)
        except OSError:
            pass
        self.listener.close()
        self.listener = None

    # ------------------------------------------------------------ warm-up

    def _warm_up(self):
        """Steps between requests: import svmtrain's modules, then load the cached serial kernels."""
        import pkgutil
        import svmtrain
        for m in pkgutil.walk_packages(svmtrain.__path__, "svmtrain.", onerror=lambda name: None):
            if m.name.startswith(SKIP) or m.name.endswith("__main__") or m.name in sys.modules:
                continue
            try:
                importlib.import_module(m.name)
            except Exception as e:
                log(f"warm-up: importing {m.name}: {e!r}")
            yield
            if not self.fork_safe():
                log(f"warm-up: importing {m.name} started a thread; stopping")
                self.stop("a module started a thread")
                return
        try:
            from numba.core.caching import FunctionCache
            from numba.core.dispatcher import Dispatcher
            import numba.np.ufunc.parallel as parallel
        except ImportError as e:
            log(f"warm-up: no kernels loaded ({e!r})")
            return
        t0 = time.perf_counter()
        for d in _dispatchers(Dispatcher):
            if d.targetoptions.get("parallel") or not isinstance(getattr(d, "_cache", None), FunctionCache):
                continue
            try:
                self.kernels += _load_cached(d, parallel)
            except Exception as e:              # numba's internals moved: the children load their own
                log(f"warm-up: loading {d.py_func.__module__}.{d.py_func.__qualname__}: {e!r}; stopping there")
                break
            yield
            if not self.fork_safe():
                self.stop("loading a kernel started numba's threads")
                return
        gc.collect()
        gc.freeze()
        log(f"warm-up done: {self.kernels} kernels loaded in {time.perf_counter() - t0:.2f} s")
        self._drop_spare()              # forked before the kernels were loaded: the loop forks a new one

    def fork_safe(self):
        """No thread but the main one (numba's thread pool never started; BLAS's own pool handles fork)."""
        import threading
        parallel = sys.modules.get("numba.np.ufunc.parallel")
        return threading.active_count() == 1 and not getattr(parallel, "_is_initialized", False)

    # ------------------------------------------------------------ the loop

    def _loop(self):
        r, w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.wake = (r, w)
        signal.set_wakeup_fd(w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: self.stop("SIGTERM"))
        for s in (signal.SIGINT, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        poller = select.poll()
        poller.register(r, select.POLLIN)
        poller.register(self.listener.fileno(), select.POLLIN)
        self.poller = poller
        while True:
            self._reap()
            if self.spare is None and not self.children:
                self._fork_spare()      # between runs: a fork is on no run's path (nor competes with one)
            now = time.monotonic()
            if self.stopping is not None and not self.children:
                return
            if self.children:
                self.last = now
            elif now - self.last >= self.idle_s:
                self.stop(f"idle for {self.idle_s:g} s")
                continue
            if now - self.checked >= CHECK_EVERY_S:
                self.checked = now
                if self.listener is not None and not self._socket_is_ours():
                    self.stop(f"{self.path} is no longer this server's")
                    continue
            if self.loading and self.stopping is None:
                timeout = 0
            else:
                left = CHECK_EVERY_S if self.children else min(CHECK_EVERY_S, self.idle_s - (now - self.last))
                timeout = max(0.0, left) * 1000
            events = poller.poll(timeout)
            for fd, ev in events:
                if fd == r:
                    try:
                        while os.read(r, 4096):
                            pass
                    except BlockingIOError:
                        pass
                elif self.listener is not None and fd == self.listener.fileno():
                    self._accept()
                elif fd in self.conns:
                    self._from_client(fd)
            if not events and self.loading and self.stopping is None:
                try:
                    next(self.steps)
                except StopIteration:
                    self.loading = False

    def _socket_is_ours(self):
        try:
            return os.stat(self.path).st_ino == self.inode
        except OSError:
            return False

    def stop(self, reason):
        if os.getpid() != self.pid:     # a SIGTERM caught just before a fork, run in the child: not its business
            return
        if self.stopping is None:
            self.stopping = reason
            log(f"stopping: {reason}")
        if self.listener is not None:
            try:
                self.poller.unregister(self.listener.fileno())
            except (KeyError, AttributeError):
                pass
            self._close_listener()
        if self.lock is not None:     # the socket is gone: a new server may start while runs finish here
            os.close(self.lock)
            self.lock = None
        self._drop_spare()

    def _drop_spare(self):
        if self.spare is not None:
            pid, sock = self.spare
            self.spare = None
            sock.close()                # the spare reads the end of its socket and exits
            _kill(pid, signal.SIGKILL)

    def _reap(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.spare is not None and pid == self.spare[0]:     # a spare that died unused
                self.spare[1].close()
                self.spare = None
            run = self.children.pop(pid, None)
            if run is None or run.conn is None:
                continue
            code = os.waitstatus_to_exitcode(status)
            try:
                C.send_frame(run.conn, {"exit": code} if code >= 0 else {"signal": -code})
            except OSError:
                pass
            self._drop(run)

    def _drop(self, run):
        fd = run.conn.fileno()
        self.conns.pop(fd, None)
        try:
            self.poller.unregister(fd)
        except KeyError:
            pass
        run.conn.close()
        run.conn = None

    def _from_client(self, fd):
        """A forwarded signal, or the client gone: its run goes too (SIGKILL to
        the child alone, as to a process killed in place; what it started
        itself lives on, as a killed process's children do)."""
        import marshal
        run = self.conns[fd]
        try:
            data = run.conn.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            if run.pid in self.children:
                _kill(run.pid, signal.SIGKILL)
            self._drop(run)
            return
        run.buf += data
        while len(run.buf) >= 4 and len(run.buf) >= 4 + int.from_bytes(run.buf[:4], "little"):
            n = int.from_bytes(run.buf[:4], "little")
            try:
                msg = marshal.loads(run.buf[4:4 + n])
            except (ValueError, EOFError, TypeError):
                msg = None
            run.buf = run.buf[4 + n:]
            if isinstance(msg, dict) and msg.get("op") == "signal" and run.pid in self.children:
                sig = int(msg.get("signal", 0))
                if sig == signal.SIGTERM:           # `kill PID` of the client: the child alone
                    _kill(run.pid, sig)
                elif sig in (*STOP_SIGNALS, signal.SIGSTOP, signal.SIGCONT):
                    _kill_group(run.pid, sig)       # the terminal's signals: the child's process group

    # ------------------------------------------------------------ requests

    def _accept(self):
        while self.listener is not None:
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                log(f"accept: {e}")
                return
            try:
                self._request(conn)
            except Exception as e:
                log(f"request: {e!r}")
                conn.close()

    def _request(self, conn):
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        uid = int.from_bytes(creds[4:8], sys.byteorder)
        if uid != os.getuid():
            log(f"refused a connection from uid {uid}")
            conn.close()
            return
        self.last = time.monotonic()
        conn.setblocking(True)
        conn.settimeout(REQUEST_TIMEOUT_S)
        req, fds = _read_request(conn)
        try:
            if not isinstance(req, dict):
                conn.close()
                return
            op = req.get("op")
            if op == "status":
                C.send_frame(conn, self.status())
                conn.close()
            elif op == "stop":
                C.send_frame(conn, {"stopping": self.pid})
                conn.close()
                self.stop("svm-train --server stop")
            elif op == "run":
                self._run(conn, req, fds)
                fds = ()
            else:
                conn.close()
        finally:
            for fd in fds:
                os.close(fd)

    def status(self):
        return {"pid": self.pid, "version": _version(), "python": f"Python {sys.version.split()[0]} "
                f"{sys.executable}", "started": self.started, "runs": self.runs, "running": len(self.children),
                "idle": self.idle_s, "kernels": self.kernels, "loading": self.loading,
                "fork_safe": self.fork_safe(), "threads": len(os.listdir("/proc/self/task")),
                "children": sorted(self.children)}

    def _refuse(self, conn, fds, reason):
        try:
            C.send_frame(conn, {"refused": reason, "restart": self.stopping is not None})
        except OSError:
            pass
        conn.close()
        for fd in fds:
            os.close(fd)

    def _run(self, conn, req, fds):
        why = None
        if req.get("proto") != C.PROTOCOL or req.get("key") != self.key:
            why = "the server's identity differs"
        elif self.stopping is not None:
            why = f"the server is stopping ({self.stopping})"
        elif len(fds) != 1 + len(req.get("fds", ())):
            why = "descriptors missing"
        elif self.watch and _changed(self.files) is not None:
            self.stop(f"svmtrain's files changed ({_changed(self.files)})")
            why = "svmtrain's files changed since the server started (it stops)"
        elif not self.fork_safe():
            self.stop("not safe to fork")
            why = "the server started a thread (it stops)"
        elif _memory_limited(req.get("limits", ())):
            why = "a memory limit (ulimit -v/-d) would count the server's memory"
        if why is not None:
            self._refuse(conn, fds, why)
            return
        pid = self._to_spare(conn, req, fds)
        if pid is None:
            pid = self._fork(lambda: (self._prepare_child(), self._child(conn, req, fds)))
        for fd in fds:
            os.close(fd)
        self.runs += 1
        run = _Run(conn, pid)
        self.children[pid] = run
        self.conns[conn.fileno()] = run
        conn.setblocking(False)
        self.poller.register(conn.fileno(), select.POLLIN)

    def _fork(self, child):
        """Fork; the child runs ``child()`` (which never returns). The child's pid."""
        gc.freeze()
        old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS + (signal.SIGCHLD,))
        try:
            pid = os.fork()
            if pid == 0:
                try:
                    child()
                finally:
                    os._exit(1)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        return pid

    def _fork_spare(self):
        """A child forked ahead of the next run (its fork is then off that run's path): prepared
        as every run's child is, it waits for the run on a socket pair."""
        if self.spare is not None or self.stopping is not None or not self.fork_safe():
            return
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            pid = self._fork(lambda: (mine.close(), self._prepare_child(), self._spare(theirs)))
        except OSError as e:
            log(f"forking a spare: {e}")
            mine.close()
            return
        finally:
            theirs.close()
        self.spare = (pid, mine)

    def _to_spare(self, conn, req, fds):
        """Hand the run to the spare: its pid, or None (no spare, or it has gone)."""
        if self.spare is None:
            return None
        pid, sock = self.spare
        self.spare = None
        try:
            C.send_frame(sock, req, [conn.fileno(), *fds])
        except OSError:
            _kill(pid, signal.SIGKILL)
            return None
        finally:
            sock.close()
        return pid

    def _spare(self, sock):
        """The spare: wait for a run (the client's connection, then its descriptors), then be its
        child. Once the server's warm-up is done it loads the parallel kernels while it waits
        (``_warm_parallel``)."""
        if self.kernels and not self.loading and os.environ.get("SVMTRAIN_SERVER_PRELOAD", "1") != "0":
            n = _warm_parallel(sock)
            if n:
                log(f"spare {os.getpid()}: {n} parallel kernels loaded")
        size = socket.CMSG_SPACE(4 * (C.MAX_FDS + 8))
        try:
            data, anc, flags, _ = sock.recvmsg(1 << 20, size, socket.MSG_CMSG_CLOEXEC)
        except OSError:
            os._exit(0)
        fds = _fds_of(anc)
        if not data or flags & socket.MSG_CTRUNC or not fds:
            os._exit(0)
        reader = C.Reader(sock)
        reader.buf = data
        req = reader.frame()
        sock.close()
        conn = socket.socket(fileno=fds[0])
        self._child(conn, req, fds[1:])

    # ------------------------------------------------------------ the child

    def _prepare_child(self):
        """What every run's child does first, before it knows its run (a spare does it ahead): die
        with the server, a process group of its own, a new Python's signal dispositions, none of
        the server's descriptors."""
        _set_pdeathsig(signal.SIGKILL)
        if os.getppid() != self.pid:
            os._exit(1)
        os.setpgid(0, 0)
        signal.set_wakeup_fd(-1)
        _client_signals(())
        mine = [*self.wake, *(run.conn.fileno() for run in self.conns.values())]
        if self.lock is not None:
            mine.append(self.lock)
        if self.listener is not None:
            mine.append(self.listener.fileno())
        if self.spare is not None:
            mine.append(self.spare[1].fileno())
        for fd in mine:
            try:
                os.close(fd)
            except OSError:
                pass

    def _child(self, conn, req, fds):
        """Become the client's process and run its command; never returns."""
        try:
            _client_signals(req.get("ignored", ()), only_ignored=True)
            # the connection on a descriptor above all of the client's
            high = max([n for n, _ in req["fds"]] + [2]) + 1
            fd = fcntl.fcntl(conn.fileno(), fcntl.F_DUPFD_CLOEXEC, high)
            conn.close()
            conn = socket.socket(fileno=fd)
            why = _become_client(req, fds, high)
            if why is not None:
                C.send_frame(conn, {"refused": why})
                os._exit(0)
            C.send_frame(conn, {"started": os.getpid()})
        except BaseException as e:
            try:
                C.send_frame(conn, {"refused": f"server child: {e!r}"})
            finally:
                os._exit(0)
        _report_exit_early(conn)
        code = 1
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            code = _run_entry(req["entry"])
        finally:
            os._exit(code)


class _Run:
    """A running child and its client's connection (None once the client has gone)."""

    def __init__(self, conn, pid):
        self.conn, self.pid, self.buf = conn, pid, b""


# ---------------------------------------------------------------- the child becomes the client

def _become_client(req, fds, high):
    """Take the client's limits, nice value, CPU affinity, descriptors
    (``fds``: its working directory, then its open descriptors, as numbered in
    ``req["fds"]``, each moved above ``high`` first), directory, umask,
    environment, argv and standard streams. None, or the reason (a string)
    when this process cannot be what the client's would be (then nothing has
    changed that the client could see)."""
    import resource
    for res, (soft, hard) in req["limits"]:
        if resource.getrlimit(res) != (soft, hard):
            try:
                resource.setrlimit(res, (soft, hard))
            except (ValueError, OSError):
                return f"resource limit {res} {(soft, hard)} cannot be set here"
    nice = req["nice"]
    if nice != os.getpriority(os.PRIO_PROCESS, 0):
        try:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
        except OSError:
            return f"nice value {nice} cannot be set here"
    if req.get("affinity") and set(req["affinity"]) != os.sched_getaffinity(0):
        try:
            os.sched_setaffinity(0, req["affinity"])
        except OSError:
            return "CPU affinity cannot be set here"
    targets = req["fds"]                                     # [(number, inheritable)]
    cwd, received = fds[0], fds[1:]
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, high) for fd in received]
    for fd in received:
        os.close(fd)
    numbers = {n for n, _ in targets}
    for n in (0, 1, 2):
        if n not in numbers:
            try:
                os.close(n)
            except OSError:
                pass
    for (n, inheritable), fd in zip(targets, moved):
        os.dup2(fd, n, inheritable=inheritable)
        os.close(fd)
    os.fchdir(cwd)
    os.close(cwd)
    os.umask(req["umask"])
    os.environ.clear()
    os.environ.update(req["env"])
    _fresh_process_state(req)
    return None


def _client_signals(ignored, only_ignored=False):
    """The signal dispositions of a new Python started by the client: what it
    ignores stays ignored (nohup's SIGHUP, a background job's SIGINT),
    SIGINT raises KeyboardInterrupt, SIGPIPE and SIGXFSZ are ignored (as
    Python sets them), every other signal has its default action.
    ``only_ignored``: set only the ignored ones (the rest is done)."""
    ignored = set(ignored)
    for s in (ignored if only_ignored else signal.valid_signals()):
        if s in (signal.SIGKILL, signal.SIGSTOP):
            continue
        if s in ignored or s in (signal.SIGPIPE, signal.SIGXFSZ):
            handler = signal.SIG_IGN
        elif s == signal.SIGINT:
            handler = signal.default_int_handler
        else:
            handler = signal.SIG_DFL
        try:
            signal.signal(s, handler)
        except (OSError, ValueError):
            pass


def _fresh_process_state(req):
    """What a new Python would have: argv, __main__, sys.path, standard streams
    on the new descriptors, no cached temporary directory, warnings not yet
    shown, NumPy's global random state reseeded (the random module reseeds itself)."""
    import types
    sys.argv = list(req["argv"])
    main_file, main_package = req.get("main", (None, None))
    main = types.ModuleType("__main__")
    main.__file__, main.__package__ = main_file, main_package
    sys.modules["__main__"] = main
    sys.path[:] = req["path"]
    sys.stdin = sys.__stdin__ = _stdio(0, "r", sys.__stdin__, "<stdin>")
    sys.stdout = sys.__stdout__ = _stdio(1, "w", sys.__stdout__, "<stdout>")
    sys.stderr = sys.__stderr__ = _stdio(2, "w", sys.__stderr__, "<stderr>")
    if "tempfile" in sys.modules:
        sys.modules["tempfile"].tempdir = None
    import warnings
    getattr(warnings, "_filters_mutated", lambda: None)()
    warnings.onceregistry.clear()
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()


def _stdio(fd, mode, old, name):
    """sys.stdin/stdout/stderr as Python's start-up makes them for descriptor
    ``fd`` (line-buffered on a terminal, and always for stderr; unbuffered with
    PYTHONUNBUFFERED / -u), in the encoding and error handler the server's have."""
    try:
        os.fstat(fd)
    except OSError:
        return None
    unbuffered = bool(getattr(old, "write_through", False)) and mode == "w"
    buf = io.open(fd, mode + "b", buffering=0 if unbuffered else -1, closefd=False)
    raw = buf if unbuffered else buf.raw
    try:
        raw.name = name
    except AttributeError:
        pass
    line = not unbuffered and mode == "w" and (raw.isatty() or fd == 2)
    stream = io.TextIOWrapper(buf, encoding=getattr(old, "encoding", None), errors=getattr(old, "errors", None),
                              newline="\n", line_buffering=line, write_through=unbuffered)
    stream.mode = mode
    return stream


def _report_exit_early(conn):
    """Make os._exit (what the console scripts end with, svmtrain.cli._errors.run_and_exit)
    send the status to the client first: it exits while this process is still
    being torn down (everything it wrote is flushed and closed by then). Not in
    a process forked from this one (a multiprocessing worker): the server
    reports this process's end as usual in any case."""
    real, me = os._exit, os.getpid()

    def _exit(code):
        if os.getpid() == me:
            try:
                C.send_frame(conn, {"exit": int(code)})
            except (OSError, ValueError, TypeError):
                pass
        real(code)
    os._exit = _exit


def _run_entry(entry):
    """Run the command's in-process entry as its console script would; its exit code."""
    module, function = entry.split(":")
    try:
        code = getattr(importlib.import_module(module), function)()
    except SystemExit as e:
        code = e.code
    except KeyboardInterrupt:
        import traceback
        traceback.print_exc()
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    except BaseException:
        import traceback
        traceback.print_exc()
        code = 1
    if not isinstance(code, int):
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    if not _flush():
        code = code or 1
    return code


def _flush():
    ok = True
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            ok = False
    return ok


# ---------------------------------------------------------------- helpers

def _read_request(conn):
    """(the request, its descriptors) from a new connection."""
    size = socket.CMSG_SPACE(4 * (C.MAX_FDS + 4))
    data, anc, flags, _ = conn.recvmsg(65536, size, socket.MSG_CMSG_CLOEXEC)
    fds = _fds_of(anc)
    if flags & socket.MSG_CTRUNC:
        for fd in fds:
            os.close(fd)
        return None, []
    reader = C.Reader(conn)
    reader.buf = data
    try:
        return reader.frame(), fds
    except (OSError, ValueError, EOFError, TypeError):
        for fd in fds:
            os.close(fd)
        return None, []


def _fds_of(anc):
    """The descriptors of recvmsg's ancillary data (SCM_RIGHTS)."""
    fds = []
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds += [int.from_bytes(payload[i:i + 4], sys.byteorder, signed=True) for i in range(0, usable, 4)]
    return fds


def _memory_limited(limits):
    import resource
    watched = {getattr(resource, n) for n in ("RLIMIT_AS", "RLIMIT_DATA") if hasattr(resource, n)}
    return any(res in watched and soft != resource.RLIM_INFINITY for res, (soft, _hard) in limits)


def _kill(pid, sig):
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _kill_group(pid, sig):
    try:
        os.killpg(pid, sig)
    except OSError:
        _kill(pid, sig)


_prctl = None


def _set_pdeathsig(sig):
    global _prctl
    if _prctl is None:
        import ctypes
        _prctl = ctypes.CDLL(None, use_errno=True).prctl
    _prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)


def _idle_timeout():
    try:
        return max(0.0, float(os.environ.get("SVMTRAIN_SERVER_IDLE", DEFAULT_IDLE_S)))
    except ValueError:
        return DEFAULT_IDLE_S


def _version():
    from .._version import __version__
    return __version__


def _open_fds():
    out = []
    for name in os.listdir("/proc/self/fd"):
        try:
            os.fstat(int(name))
            out.append(int(name))
        except OSError:
            pass
    return out


def _stamp(path):
    try:
        st = os.stat(path)
        return st.st_mtime_ns, st.st_size
    except OSError:
        return None


def _sources(directory):
    """The .py files of ``directory`` (sorted names)."""
    try:
        return sorted(e.name for e in os.scandir(directory) if e.name.endswith(".py"))
    except OSError:
        return None


def _package_files():
    """{path: stamp} of svmtrain's sources (mtime and size) and, per
    directory, its list of sources (a module added or removed)."""
    import svmtrain
    top = os.path.dirname(os.path.abspath(svmtrain.__file__))
    out = {}
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        out[("dir", root)] = _sources(root)
        for f in files:
            if f.endswith(".py"):
                p = os.path.join(root, f)
                out[p] = _stamp(p)
    return out


def _dependency_files():
    out = {sys.executable: _stamp(sys.executable)}
    for name in ("numpy", "scipy", "numba", "llvmlite", "click", "tqdm"):
        mod = sys.modules.get(name)
        f = getattr(mod, "__file__", None)
        if f:
            out[f] = _stamp(f)
    return out


def _changed(files):
    """The first of ``files`` (_package_files, _dependency_files) that changed, or None."""
    for p, stamp in files.items():
        now = _sources(p[1]) if isinstance(p, tuple) else _stamp(p)
        if now != stamp:
            return p[1] if isinstance(p, tuple) else p
    return None


def _dispatchers(Dispatcher):
    """svmtrain's numba dispatchers, those of the common runs first (FIRST)."""
    seen, out = set(), []
    names = sorted((n for n in sys.modules if n.startswith("svmtrain.")),
                   key=lambda n: (not n.startswith(FIRST), n))
    for name in names:
        for value in list(vars(sys.modules[name]).values()):
            for d in (value, getattr(value, "parallel", None), getattr(value, "serial", None)):
                if isinstance(d, Dispatcher) and id(d) not in seen:
                    seen.add(id(d))
                    out.append(d)
    return out


def _warm_parallel(sock):
    """In a spare, until its run arrives on ``sock``: start numba's threading
    layer and load svmtrain's cached parallel kernels (those of the common runs
    first; the run waits for one kernel's load at most). Only with GNU
    OpenMP's layer, which starts no thread before the first parallel region,
    so the run's CPU affinity and nice value, taken after this, still reach
    its threads; the server itself never starts the layer (a fork must not
    copy it). The number of kernels loaded (0 when the layer is another)."""
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    if poller.poll(0) or not _lazy_openmp():
        return 0
    try:
        from numba.core.caching import FunctionCache
        from numba.core.dispatcher import Dispatcher
        import numba.np.ufunc.parallel as parallel
        parallel._launch_threads()
    except Exception:
        return 0
    if parallel._threading_layer != "omp":
        return 0
    n = 0
    for d in _dispatchers(Dispatcher):
        if poller.poll(0):
            break
        if not d.targetoptions.get("parallel") or not isinstance(getattr(d, "_cache", None), FunctionCache):
            continue
        try:
            n += _load_cached(d, parallel, threads=True)
        except Exception:           # numba's internals moved: the run loads its own
            break
    return n


def _lazy_openmp():
    """Whether numba's threading layer will be GNU OpenMP's: asked for, or the
    default with no TBB (numba tries TBB first)."""
    import numba
    layer = numba.config.THREADING_LAYER
    if layer == "default":
        try:
            import numba.np.ufunc.tbbpool  # noqa: F401
            return False
        except ImportError:
            pass
    elif layer != "omp":
        return False
    try:
        from numba.np.ufunc import omppool
    except ImportError:
        return False
    return getattr(omppool, "openmp_vendor", None) == "GNU"


def _load_cached(d, parallel, threads=False):
    """Load every cached overload of dispatcher ``d`` for this CPU whose machine
    code calls no parallel region (that would need numba's thread pool, and
    LLVM aborts on the missing symbol when it is not loaded), or with
    ``threads`` (the layer started: ``_warm_parallel``) every one; their number."""
    cache = d._cache
    index = cache._cache_file._load_index()
    magic = d.targetctx.codegen().magic_tuple()
    n = 0
    for key, data_name in index.items():
        sig = key[0]
        if key[1] != magic or tuple(sig) in d.overloads:
            continue
        try:
            with open(os.path.join(cache._cache_path, data_name), "rb") as f:
                raw = f.read()
        except OSError:
            continue
        if threads:
            cres = cache.load_overload(sig, d.targetctx)
        elif any(s in raw for s in PARALLEL_SYMBOLS):
            continue
        else:
            launch = parallel._launch_threads
            parallel._launch_threads = _no_threads
            try:
                cres = cache.load_overload(sig, d.targetctx)
            except _ThreadsWanted:
                continue
            finally:
                parallel._launch_threads = launch
        if cres is None:
            continue
        if not cres.objectmode:
            d.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
        d.add_overload(cres)
        n += 1
    return n


class _ThreadsWanted(Exception):
    pass


def _no_threads():
    raise _ThreadsWanted()

