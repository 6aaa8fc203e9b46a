"""The Dask engine: connecting to a cluster, and one run's rounds of tasks.

``connect(scheduler)`` yields a ``distributed.Client``: to the scheduler at
``scheduler``, or to a ``LocalCluster`` started for the run (one
single-threaded worker process per core, loopback only) and closed after.

A ``Session`` is one run over a partitioned data set. Each partition has a
*home* worker that parsed it and keeps it (and the solvers' per-partition
state) in memory. A *round* submits one task per home worker, covering all
of that worker's partitions, so a worker sends one summary per round
whatever its number of partitions, and waits for all of them. Tasks are
submitted with a loose restriction to their home: when the home worker is
lost, Dask runs the task elsewhere, where it parses the partitions again;
the session then moves their home there and says so (``notify``). State
that a solver kept on the lost worker is gone: the task raises StateLost
and the solver recomputes the iteration (see ``ocas.py``).

The session counts the payload it sends and receives (numpy arrays by
their size, numbers as 8 bytes, strings by length), per round kind, for
the traffic figures in docs/dask.md.
"""
import collections
import contextlib
import logging
import os
import time
import uuid

import numpy as np

from ..errors import ParameterError, SvmtrainError
from . import partitions

INSTALL_HINT = "pip install 'svmtrain[dask]'"
MAX_RECOVERIES = 8   # worker losses survived by one solver call before giving up


class StateLost(Exception):
    """A worker lacks the per-partition state a task needs (its worker was
    lost, or the task ran elsewhere); the driver recomputes the iteration."""

    def __init__(self, address, indices):
        self.address = address
        self.indices = list(indices)
        super().__init__(f"state of partition(s) {self.indices} missing on {address}")

    def __reduce__(self):
        return type(self), (self.address, self.indices)


def require_dask():
    """The ``distributed`` module, or ParameterError saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise ParameterError("--engine dask needs Dask distributed, which is not installed: "
                             + INSTALL_HINT) from None
    return distributed


def local_workers():
    """Workers of the LocalCluster started when no scheduler is given: one per core."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@contextlib.contextmanager
def connect(scheduler=None, n_workers=None):
    """A Client of the scheduler at ``scheduler``, or of a LocalCluster of
    ``n_workers`` (default: one per core) single-threaded worker processes
    on 127.0.0.1, closed on exit."""
    distributed = require_dask()
    if scheduler:
        try:
            client = distributed.Client(scheduler, timeout="30s", set_as_default=False)
        except (OSError, TimeoutError) as e:
            raise OSError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
        try:
            yield client
        finally:
            client.close()
        return
    import dask
    # the workers' statistical profiler wakes every 10 ms; without it a round is ~5% faster here
    with dask.config.set({"distributed.worker.profile.enabled": False}):
        cluster = distributed.LocalCluster(n_workers=n_workers or local_workers(), threads_per_worker=1,
                                           processes=True, host="127.0.0.1", dashboard_address=None,
                                           silence_logs=logging.CRITICAL)
    try:
        client = distributed.Client(cluster, set_as_default=False)
        try:
            yield client
        finally:
            client.close()
    finally:
        cluster.close()


def payload_bytes(obj):
    """Bytes of the numbers in ``obj`` (arrays, nested lists/tuples/dicts)."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (list, tuple)):
        return sum(payload_bytes(x) for x in obj)
    if isinstance(obj, dict):
        return sum(payload_bytes(x) for x in obj.values())
    if isinstance(obj, (str, bytes)):
        return len(obj)
    if obj is None:
        return 0
    return 8


def _task(fn, run_id, specs, threads, *args):
    """Run ``fn(run_id, specs, nb, *args)`` on a worker; returns (address,
    seconds spent in fn, result).

    ``nb`` is the thread (block) count for the numba kernels: ``threads``,
    or the worker's own thread count. A StateLost raised by ``fn`` names
    this worker.
    """
    import numba
    from distributed import get_worker
    worker = get_worker()
    own = getattr(getattr(worker, "state", None), "nthreads", None) or getattr(worker, "nthreads", 1)
    nb = max(1, min(int(threads or own), numba.config.NUMBA_NUM_THREADS))
    old = numba.get_num_threads()
    numba.set_num_threads(nb)
    t0 = time.perf_counter()
    try:
        res = fn(run_id, specs, nb, *args)
        return worker.address, time.perf_counter() - t0, res
    except StateLost as e:
        raise StateLost(worker.address, e.indices) from None
    finally:
        numba.set_num_threads(old)


class Traffic:
    """Per kind of round: payload bytes down (driver -> workers) and up, rounds,
    tasks, wall seconds of the rounds and seconds of their slowest task."""

    def __init__(self):
        self.down = collections.Counter()
        self.up = collections.Counter()
        self.rounds = collections.Counter()
        self.tasks = collections.Counter()
        self.wall = collections.Counter()
        self.compute = collections.Counter()

    def add(self, kind, down, up, tasks, wall, compute):
        self.down[kind] += down
        self.up[kind] += up
        self.rounds[kind] += 1
        self.tasks[kind] += tasks
        self.wall[kind] += wall
        self.compute[kind] += compute

    def total(self):
        return sum(self.down.values()), sum(self.up.values())


class Session:
    """One run's partitions on a Dask cluster (see the module doc).

    ``specs``: the partitions (``partitions.expand``). ``notify(message)``
    reports worker losses. ``threads``: numba threads per task (default:
    the worker's thread count).
    """

    def __init__(self, client, specs, notify=None, threads=None):
        self.client = client
        self.specs = list(specs)
        self.notify = notify or (lambda s: None)
        self.threads = threads
        self.run_id = uuid.uuid4().hex
        self.home = {}
        self.lost = set()
        self.traffic = Traffic()
        self.meta = None

    # -- placement
    def _workers(self):
        info = self.client.scheduler_info(n_workers=-1) if _takes_n_workers(self.client) \
            else self.client.scheduler_info()
        workers = sorted(info.get("workers", {}))
        if not workers:
            raise SvmtrainError("the Dask cluster has no workers")
        return workers

    def _assign(self):
        """Partitions to workers, largest file first to the least loaded worker."""
        workers = self._workers()
        load = {w: 0 for w in workers}
        sizes = []
        for s in self.specs:
            try:
                sizes.append(os.path.getsize(s.path))
            except OSError:
                sizes.append(0)
        for i in sorted(range(len(self.specs)), key=lambda i: (-sizes[i], i)):
            w = min(workers, key=lambda w: (load[w], workers.index(w)))
            self.home[self.specs[i].index] = w
            load[w] += sizes[i] + 1

    def groups(self, only=None):
        """[(worker, [specs])] in order of each group's first partition."""
        by = collections.OrderedDict()
        for s in self.specs:
            if only is None or s.index in only:
                by.setdefault(self.home[s.index], []).append(s)
        return list(by.items())

    def _moved(self, requested, ran_on, specs, what):
        idx = [s.index for s in specs]
        for i in idx:
            self.home[i] = ran_on
        names = ", ".join(s.display for s in specs)
        if requested in self._workers():   # alive: Dask chose to run the task elsewhere
            self.notify(f"Dask moved partitions ({names}) from {requested} to {ran_on}{what}, "
                        "which parses them again")
        elif requested not in self.lost:
            self.lost.add(requested)
            self.notify(f"lost worker {requested}{what}; Dask moved its partitions ({names}) to "
                        f"{ran_on}, which parses them again")

    # -- rounds
    def run(self, kind, fn, *args, per_group=None, only=None, what=""):
        """One round: ``fn(run_id, specs, nb, *args, *per_group(specs))`` on each
        home worker (or only for the partition indices in ``only``). Waits for
        every task; returns the results in group order. Raises the first
        error, a StateLost after every task has finished (so no task of this
        round still runs when the caller recomputes)."""
        t0 = time.perf_counter()
        groups = self.groups(only)
        futures = []
        down = 0
        for worker, specs in groups:
            extra = tuple(per_group(specs)) if per_group is not None else ()
            down += payload_bytes(args) + payload_bytes(extra)
            futures.append(self.client.submit(_task, fn, self.run_id, specs, self.threads, *args, *extra,
                                              workers=[worker], allow_other_workers=True, pure=False))
        # one gather for all (it waits for every task, failed ones included)
        done = iter(self.client.gather(futures, errors="skip"))
        results, lost, error = [], None, None
        slowest = 0.0
        for (worker, specs), fut in zip(groups, futures):
            if fut.status == "finished":
                ran_on, seconds, res = next(done)
                slowest = max(slowest, seconds)
                if ran_on != worker:
                    self._moved(worker, ran_on, specs, what)
                results.append(res)
                continue
            exc = fut.exception() if fut.status == "error" else None
            if isinstance(exc, StateLost):
                if exc.address != worker:
                    self._moved(worker, exc.address, specs, what)
                lost = lost or exc
            elif error is None:
                error = exc if exc is not None else SvmtrainError(f"a Dask task ended as {fut.status}")
        up = payload_bytes(results)
        self.traffic.add(kind, down, up, len(futures), time.perf_counter() - t0, slowest)
        del futures
        if error is not None:
            raise error
        if lost is not None:
            raise lost
        return results

    def load(self, cache=False):
        """Parse every partition on its home worker; returns their descriptions
        (``partitions.describe``) in partition order, printing cache messages."""
        self._assign()
        got = self.run("load", _load, cache, what=" (while parsing)")
        meta = {}
        for res in got:
            for index, desc, messages in res:
                meta[index] = desc
                for m in messages:
                    self.notify(m)
        self.meta = [meta[s.index] for s in self.specs]
        return self.meta

    def close(self):
        """Forget this run's partitions and state on every worker."""
        with contextlib.suppress(Exception):
            self.client.run(partitions.drop, self.run_id)


def _takes_n_workers(client):
    import inspect
    try:
        return "n_workers" in inspect.signature(client.scheduler_info).parameters
    except (TypeError, ValueError):
        return False


def _load(run_id, specs, nb, cache):
    out = []
    for spec in specs:
        messages = []
        chunk = partitions.partition(run_id, spec, threads=nb, cache=cache, messages=messages)
        out.append((spec.index, partitions.describe(chunk), messages))
    return out
