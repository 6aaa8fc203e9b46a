"""Shared fixtures: paths to bundled data and to ../shared/data when present."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
SHARED_DATA = ROOT.parent / "shared" / "data"


def bundled(name):
    """A file bundled under data/ (always present)."""
    return DATA / name


def shared(name):
    """A file from ../shared/data; skips the test when it is absent."""
    p = SHARED_DATA / name
    if not p.exists():
        pytest.skip(f"{p} not present")
    return p
