#!/bin/sh
# Does numba's cache work when svmtrain is installed read-only? (run as root)
#
#   scripts/check_readonly_install.sh [PYTHON] [SITE_PACKAGES_WITH_NUMBA]
#
# Copies the package (git HEAD, no caches) into a root-owned directory, as a
# non-editable install would, and runs svm-train as the unprivileged user
# "nobody" (setpriv) with HOME in a fresh writable directory:
#   1. two runs: the first compiles and caches into $HOME/.cache/numba (numba's
#      user-wide fallback when the package's __pycache__ is not writable), the
#      second compiles nothing;
#   2. precompile as nobody, then other solvers compile nothing;
#   3. precompile as root into the package's own __pycache__, then a run as
#      nobody: numba ignores an in-tree cache it cannot write, so that user
#      compiles again (into its own ~/.cache/numba).
# PYTHON must be executable by nobody (default /usr/bin/python3.11) and
# SITE_PACKAGES must hold numpy/numba/scipy/click/tqdm for it.
set -e
PY=${1:-/usr/bin/python3.11}
DEPS=${2:-$(cd "$(dirname "$0")/.." && python -c 'import numba, os; print(os.path.dirname(os.path.dirname(numba.__file__)))')}
REPO=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d /tmp/svmtrain-ro-XXXXXX)
chmod 755 "$T"
mkdir -p "$T/site" "$T/home" "$T/rootsite"
(cd "$REPO" && git archive HEAD svmtrain) | tar -x -C "$T/site"
(cd "$REPO" && git archive HEAD svmtrain) | tar -x -C "$T/rootsite"
cp "$REPO/data/heart_scale.xz" "$T/heart_scale.xz"
chmod -R a-w "$T/site"
chown nobody:nogroup "$T/home"

cat > "$T/run.py" <<'PY'
import os, sys, time
t0 = time.perf_counter()
from numba.core import event
n = []
class L(event.Listener):
    def on_start(self, ev): n.append(ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev): pass
event.register("numba:compile", L())
import svmtrain
if __name__ == "__main__" and sys.argv[1] == "precompile":
    from svmtrain.precompile import precompile
    precompile(jobs=2)
    print(f"  precompile as uid {os.getuid()}: {time.perf_counter() - t0:.1f} s")
elif __name__ == "__main__":
    from svmtrain.cli.train import main
    main(["-q", *sys.argv[1:], os.environ["DATA"], os.path.join(os.environ["HOME"], "m")], standalone_mode=False)
    print(f"  uid {os.getuid()} svm-train {' '.join(sys.argv[1:])}: {time.perf_counter() - t0:.2f} s, "
          f"{len(n)} functions compiled (package at {os.path.dirname(svmtrain.__file__)})")
PY
chmod 644 "$T/run.py"

as_nobody() {
    setpriv --reuid=nobody --regid=nogroup --clear-groups \
        env HOME="$T/home" DATA="$T/heart_scale.xz" PYTHONPATH="$SITE:$DEPS" NUMBA_CACHE_DIR= \
        sh -c "cd '$T/home' && '$PY' '$T/run.py' $*"
}

echo "1. read-only install, user nobody, two runs:"
SITE="$T/site" as_nobody -s pegasos
SITE="$T/site" as_nobody -s pegasos
echo "   numba cache files under the user's HOME: $(find "$T/home" -name '*.nbi' | wc -l)," \
     "in the package: $(find "$T/site" -name '*.nbi' | wc -l)"
echo "2. precompile as nobody, then other solvers:"
SITE="$T/site" as_nobody precompile
SITE="$T/site" as_nobody -s ocas
SITE="$T/site" as_nobody -s sbp
echo "3. precompiled by root into the package's __pycache__, then a run as nobody (fresh HOME):"
rm -rf "$T/home" && mkdir "$T/home" && chown nobody:nogroup "$T/home"
(cd "$T" && HOME="$T/roothome" PYTHONPATH="$T/rootsite:$DEPS" "$PY" -c \
    "from svmtrain.precompile import precompile; precompile(jobs=2, groups=['reader', 'pegasos'])")
echo "   cache files in the package: $(find "$T/rootsite" -name '*.nbi' | wc -l)"
SITE="$T/rootsite" as_nobody -s pegasos
rm -rf "$T"
