"""Atomic file replacement: a reader of PATH sees the old file or the new one, never a mix."""
import contextlib
import glob
import os
import signal
import stat
import tempfile
import time

_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _block_stop_signals():
    """Hold SIGINT/SIGTERM back (POSIX; returns the old mask, or None elsewhere)."""
    if hasattr(signal, "pthread_sigmask"):
        return signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    return None


def _restore_signals(mask):
    if mask is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


@contextlib.contextmanager
def atomic_write(path, mode="w"):
    """Open a temporary file beside ``path``; on success fsync and rename it over ``path``.

    If the block raises (or the process dies), ``path`` is left untouched and
    the temporary file is removed (or, after SIGKILL, left as ``.PATH.*.tmp``).
    """
    path = os.fspath(path)
    try:
        special = not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        special = False
    if special:
        # a device, FIFO or directory (/dev/null, /dev/stdout, a named pipe): a rename
        # would replace the node itself (as root, /dev/null!); write to it in place
        try:
            with open(path, mode) as f:
                yield f
                f.flush()
        except OSError as e:
            raise _naming(e, path, None) from e
        return
    directory = os.path.dirname(os.path.abspath(path))
    # Ctrl-C between the temporary file's creation and the try below would
    # leave it behind: the stop signals wait until the try that removes it
    mask = _block_stop_signals()
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    except BaseException:
        _restore_signals(mask)
        raise
    try:
        try:
            f = os.fdopen(fd, mode)
        finally:
            _restore_signals(mask)      # a signal held back is raised here, inside the try
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        if os.path.exists(path):
            try:
                os.chmod(tmp, os.stat(path).st_mode & 0o7777)
            except OSError:
                pass
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise _naming(e, path, tmp) from e
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _naming(e, path, tmp):
    """``e`` as an OSError that names ``path`` (not the temporary file)."""
    if e.filename not in (None, tmp):
        return e
    return OSError(e.errno, f"cannot write: {e.strerror or e}", path)


def same_file(a, b):
    """True when paths ``a`` and ``b`` name one existing file (so writing one would destroy the other)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def remove_stale_temps(path, min_age=60.0):
    """Remove ``.NAME.*.tmp`` files beside ``path`` (the temporary files of
    :func:`svmtrain.io.atomic.atomic_write`) untouched for ``min_age``
    seconds: left by a run that was killed (SIGKILL, power loss) while it
    wrote ``path``. A live writer touches its file continuously, and if one
    were merely stalled that long, its rename fails cleanly (the target is
    never harmed). Returns the paths removed; errors are ignored."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    pattern = os.path.join(glob.escape(directory), "." + glob.escape(os.path.basename(path)) + ".*.tmp")
    now = time.time()
    removed = []
    for p in glob.glob(pattern):
        try:
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode) and now - st.st_mtime >= min_age:
                os.unlink(p)
                removed.append(p)
        except OSError:
            pass
    return removed
