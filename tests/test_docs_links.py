"""Every relative link and image in README.md and docs/*.md points at a file
that exists, and every #anchor at a heading of that file (GitHub's slugs)."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _prose(text):
    """The text outside fenced code blocks and inline code."""
    out, fence = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if not fence:
            out.append(re.sub(r"`[^`]*`", "``", line))
    return out


def _slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)  # GitHub keeps letters, digits, _, -, spaces
    return s.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    fence = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = _slug(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(path):
    for lineno, line in enumerate(_prose(path.read_text(encoding="utf-8")), 1):
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                continue
            yield target


CASES = [(page, target) for page in PAGES for target in links(page)]


def test_pages_have_links():
    assert (ROOT / "docs").is_dir()
    assert len(CASES) > 20


@pytest.mark.parametrize("page,target", CASES, ids=[f"{p.relative_to(ROOT)}->{t}" for p, t in CASES])
def test_link_resolves(page, target):
    file_part, _, anchor = target.partition("#")
    dest = (page.parent / file_part).resolve() if file_part else page
    assert dest.exists(), f"{page.relative_to(ROOT)}: {target}: {dest} does not exist"
    if anchor and dest.suffix == ".md":
        assert anchor in anchors(dest), f"{page.relative_to(ROOT)}: {target}: no heading #{anchor} in {dest.name}"
