"""Rewrite docs/capabilities.md from the solver registry (svmtrain.cli.matrix.page).

    python scripts/write_capabilities.py           # rewrite it
    python scripts/write_capabilities.py --check   # exit 1 if it is out of date

tests/test_capabilities.py fails while the page differs from the registry.
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from svmtrain.cli.matrix import page  # noqa: E402

PATH = ROOT / "docs" / "capabilities.md"


def main(argv):
    fresh = page()
    if "--check" in argv:
        current = PATH.read_text(encoding="utf-8") if PATH.exists() else ""
        if current != fresh:
            print(f"{PATH} is out of date: run python scripts/write_capabilities.py", file=sys.stderr)
            return 1
        return 0
    PATH.write_text(fresh, encoding="utf-8")
    print(f"wrote {PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
