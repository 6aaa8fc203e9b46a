"""One-vs-rest classes trained side by side in threads, when there are
spare cores.

A one-vs-rest model is one binary fit per class, independent of the
others. Solvers whose fit spends its time in numba kernels that release
the GIL (``nogil``) and that mark themselves ``PARALLEL_CLASSES = True``
train up to ``--threads`` (default all cores) classes at once. Each class
then runs serially inside (``threads`` 1 and every size-dispatched kernel
on its serial twin, :class:`svmtrain._numba.options.serial_kernels`), so no
parallel region is ever launched from two threads, and the cores go to
whole classes: no synchronisation inside a class's iterations.

The fits are the same as a serial one-vs-rest run with ``--threads 1``,
class for class (each fit draws its random numbers from ``--seed`` alone,
not from a shared stream), and they come back in class order.
"""
import dataclasses
import threading

from .._numba import options as _opts


def class_workers(solver, params, n_problems, monitored=False):
    """How many classes train at once: 1 (the classes one after the other)
    unless the solver takes parallel classes, there are at least two
    problems and two threads to give (``params.threads``, default all
    cores), and the run is not traced or warm-started (``monitored``)."""
    if n_problems < 2 or monitored or not getattr(solver, "PARALLEL_CLASSES", False):
        return 1
    import numba
    cores = int(numba.config.NUMBA_NUM_THREADS)
    want = min(int(params.threads or cores), cores)
    return max(1, min(want, n_problems))


def shared_progress(progress, n_problems):
    """One progress callback per problem for classes that run at once: the
    whole run's bar shows the sum of the classes' steps (each class's total
    is the first total it reports). Calls to ``progress`` are serialised."""
    if progress is None:
        return [None] * n_problems
    lock = threading.Lock()
    done = [0] * n_problems
    totals = [0] * n_problems

    def for_class(j):
        def report(d, total, status=None):
            with lock:
                done[j] = d
                totals[j] = totals[j] or total
                known = [t for t in totals if t]
                whole = sum(known) + (n_problems - len(known)) * max(known)
                progress(sum(done), whole, status)
        return report
    return [for_class(j) for j in range(n_problems)]


def fit_classes(solver, data, order, problems, d, params, progress=None, log=None, workers=2):
    """``solver.fit`` of every (labels, class cost) problem (problem j: class
    ``order[j]`` against the rest), ``workers`` at a time, each with
    ``threads`` 1 and serial kernels; the FitResults in problem order. Each
    line a fit logs starts with its class. An exception in any class is
    raised here (after the running classes end)."""
    from concurrent.futures import ThreadPoolExecutor     # here: binary runs do not pay its import
    one = dataclasses.replace(params, threads=1)
    reports = shared_progress(progress, len(problems))

    def fit(j):
        y, cost = problems[j]
        tagged = None if log is None else (lambda s, c=order[j]: log(f"class {c:g}: {s}"))
        return solver.fit(data, y, d, one, progress=reports[j], log=tagged, class_cost=cost)

    with _opts.serial_kernels(), ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fit, range(len(problems))))
