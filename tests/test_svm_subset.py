"""svm-subset (LIBSVM's subset.py, reproducible) and svm-checkdata (LIBSVM's checkdata.py)."""
import collections
import lzma
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled, needs
from svmtrain.cli.checkdata import main as checkdata_main
from svmtrain.cli.subset import main as subset_main
from svmtrain.cli.subset import select

HEART = lzma.decompress(bundled("heart_scale.xz").read_bytes()).decode()


def runner():
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()


def _labels(text):
    return collections.Counter(line.split()[0] for line in text.splitlines())


@pytest.fixture
def heart(tmp_path):
    path = tmp_path / "heart"
    path.write_text(HEART)
    return path


def test_stratified_counts_as_subset_py(heart, tmp_path):
    """subset.py's rule on heart_scale (120 +1, 150 -1) for 30 rows: the rarer class first,
    ceil(120 * 30 / 270) = 14, then min(16, ceil(150 * 30 / 270)) = 16; OUTPUT2 the other lines;
    each line as in the file, in the file's order."""
    r = runner().invoke(subset_main, [str(heart), "30", str(tmp_path / "a"), str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    sub, rest = (tmp_path / "a").read_text(), (tmp_path / "b").read_text()
    assert _labels(sub) == {"+1": 14, "-1": 16}
    lines = HEART.splitlines()
    position = {ln: k for k, ln in enumerate(lines)}         # heart_scale's lines are distinct
    for part in (sub, rest):
        at = [position[ln] for ln in part.splitlines()]
        assert at == sorted(at)
    assert sorted(sub.splitlines() + rest.splitlines()) == sorted(lines)


@needs("/usr/bin/svm-subset", package="libsvm-tools")
def test_class_counts_as_svm_subsets(heart):
    for size in ("7", "100"):
        theirs = subprocess.run(["/usr/bin/svm-subset", str(heart), size], capture_output=True, text=True,
                                check=True).stdout
        ours = runner().invoke(subset_main, [str(heart), size]).stdout
        assert _labels(ours) == _labels(theirs)


def test_reproducible_and_seeded(heart):
    a, b = (runner().invoke(subset_main, [str(heart), "50"]).stdout for _ in range(2))
    c = runner().invoke(subset_main, ["--seed", "2", str(heart), "50"]).stdout
    assert a == b != c and len(c.splitlines()) == 50
    d = runner().invoke(subset_main, ["-s", "1", "--seed", "3", str(heart), "50"]).stdout
    assert len(d.splitlines()) == 50 and d == runner().invoke(subset_main, ["-s", "1", "--seed", "3", str(heart),
                                                                              "50"]).stdout


def test_stratified_selection_vectorised_rule():
    """Rare classes first and at least one row each; the sizes add up to the subset's."""
    labels = np.array([0.0] * 90 + [1.0] * 9 + [2.0])
    rows = select(labels, 10, 0, seed=5)
    taken = collections.Counter(labels[rows].tolist())
    assert taken == {2.0: 1, 1.0: 1, 0.0: 8} and len(set(rows.tolist())) == 10


def test_compressed_input_comments_and_a_last_line_without_newline(tmp_path):
    text = "# a comment\n1 1:1\n\n-1 1:2\n1 1:3\n-1 1:4"
    src = tmp_path / "d.xz"
    src.write_bytes(lzma.compress(text.encode()))
    r = runner().invoke(subset_main, [str(src), "2", str(tmp_path / "a"), str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    sub, rest = (tmp_path / "a").read_text(), (tmp_path / "b").read_text()
    assert _labels(sub) == {"1": 1, "-1": 1} and sub.endswith("\n")
    assert rest.startswith("# a comment\n") and sorted(sub.splitlines() + rest.splitlines()) == sorted(
        text.splitlines())


@pytest.mark.parametrize("args, says", [
    (["300"], "larger than the 270 rows"),
    (["1"], "use -s 1"),                         # two classes cannot both get a row of one
    (["--", "-1"], "must be >= 0"),
])
def test_bad_sizes_one_line_exit_2(heart, args, says):
    r = runner().invoke(subset_main, [str(heart)] + args)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and says in r.stderr, r.output


def test_bad_data_is_the_readers_message(tmp_path):
    (tmp_path / "bad").write_text("1 1:1\n1 1:x\n")
    r = runner().invoke(subset_main, [str(tmp_path / "bad"), "1"])
    assert r.exit_code == 2 and "bad:2:" in r.stderr


# ------------------------------------------------------------------ checkdata

BAD = ("1 1:2 3:4\n\n+1 2:1 1:3\nabc 1:1\n1,2 1:1\n1,x 1:1\n-1 -1:2 0:3 x:1 1:nan 2:inf 3\n"
       "1 1:1e999 2:1_0 3::1\n-1 # comment\nnan 1:2\n1 4:1 4:2\n1 1:2")
# what /usr/bin/svm-checkdata (LIBSVM 3.24) printed for BAD (written down from a run)
BAD_SAYS = """\
line 2: missing label, perhaps an empty line?
line 3: feature indices must be in an ascending order, previous/current features 2:1 1:3
line 4: label abc is not a number
line 6: label 1,x is not a valid multi-label form
line 7: feature index must be positive; wrong feature -1:2
line 7: feature 'x:1' not an <index>:<value> pair, <index> integer, <value> real number 
line 7: feature '1:nan' not an <index>:<value> pair, <index> integer, <value> real number 
line 7: feature '2:inf' not an <index>:<value> pair, <index> integer, <value> real number 
line 7: feature '3' not an <index>:<value> pair, <index> integer, <value> real number 
line 8: feature '3::1' not an <index>:<value> pair, <index> integer, <value> real number 
line 9: feature '#' not an <index>:<value> pair, <index> integer, <value> real number 
line 9: feature 'comment' not an <index>:<value> pair, <index> integer, <value> real number 
line 10: label nan is not a number
line 11: feature indices must be in an ascending order, previous/current features 4:1 4:2
line 12: missing a newline character in the end
Found 10 lines with error.
"""


def test_checkdata_messages_as_checkdata_pys(tmp_path, heart):
    (tmp_path / "bad").write_text(BAD)
    r = runner().invoke(checkdata_main, [str(tmp_path / "bad")])
    assert (r.exit_code, r.stdout) == (1, BAD_SAYS)
    r = runner().invoke(checkdata_main, [str(heart)])
    assert (r.exit_code, r.stdout) == (0, "No error.\n")
    r = runner().invoke(checkdata_main, [])
    assert (r.exit_code, r.stdout) == (1, "Usage: svm-checkdata dataset\n")
    r = runner().invoke(checkdata_main, [str(tmp_path / "none")])
    assert (r.exit_code, r.stdout) == (1, f"dataset {tmp_path / 'none'} not found\n")


@needs("/usr/bin/svm-checkdata", package="libsvm-tools")
def test_checkdata_against_libsvms(tmp_path):
    (tmp_path / "bad").write_text(BAD)
    theirs = subprocess.run(["/usr/bin/svm-checkdata", str(tmp_path / "bad")], capture_output=True, text=True)
    assert (theirs.returncode, theirs.stdout) == (1, BAD_SAYS)
