"""svm-predict on a model written by SVMlight's svm_learn, against svm_classify's own output.

The files (tests/data/svmlight/README.md says where each comes from) are
SVMlight's example2: the model svm_learn V5.00 wrote from
train_induction.dat, the predictions file svm_classify wrote for
test.dat, and 21 of test.dat's 600 rows. Nothing here was written by
svmtrain or by a test helper: the expected decision values are the ones
svm_classify printed.
"""
import hashlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from conftest import ROOT
from svmtrain.io.model_io import load_model
from svmtrain.io.svmlight_format import read_svmlight_model
from svmtrain.models.linear import LinearModel

DATA = Path(__file__).resolve().parent / "data" / "svmlight"
MODEL = DATA / "example2.model"
PREDICTIONS = DATA / "example2.predictions"
ROWS = DATA / "example2.test_rows.dat"
# the lines of SVMlight's example2/test.dat kept in ROWS (line 1 is its comment line);
# test.dat line L is the row whose svm_classify value is on line L - 1 of PREDICTIONS
KEPT_LINES = (1, 2, 3, 7, 56, 76, 96, 146, 154, 187, 252, 253, 278, 293, 344, 350, 450, 459, 510, 512, 537, 601)
# git blob ids of the upstream files (liujing007/tsvm @ fafdf87c, example2/model and example2/predictions)
MODEL_BLOB = "2fa359f34bce1a27a086a679024e0632a3eae58a"
PREDICTIONS_BLOB = "a87bf9cd87dfdd03d35b0e36b617ef682f619785"
THRESHOLD = 0.021830433          # line 11 of the model: b, and f(x) = w.x - b


def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def svm_classify_values():
    """svm_classify's decision values for the kept rows, and their labels, from the files as written."""
    values = np.array([float(t) for t in PREDICTIONS.read_bytes().split()])
    assert len(values) == 600
    rows = [line for line in ROWS.read_bytes().split(b"\r\n")[:-1] if not line.startswith(b"#")]
    labels = np.array([float(line.split()[0]) for line in rows])
    return values[np.array(KEPT_LINES[1:]) - 2], labels


def test_the_files_are_svmlights_bytes():
    # a checkout that rewrites line ends (or any byte) would test something SVMlight never wrote
    assert git_blob_id(MODEL.read_bytes()) == MODEL_BLOB
    assert git_blob_id(PREDICTIONS.read_bytes()) == PREDICTIONS_BLOB
    rows = ROWS.read_bytes()
    assert rows.count(b"\r\n") == len(KEPT_LINES) and b"\n" not in rows.replace(b"\r\n", b"")
    assert rows.startswith(b'# Reuters category "corporate aquisitions"')


def test_reader_reads_it_as_the_linear_model_svm_learn_wrote():
    m = read_svmlight_model(MODEL)
    assert isinstance(m, LinearModel)
    assert isinstance(load_model(MODEL), LinearModel)            # the format svm-predict picks by line 1
    assert m.n_features == 9253                                   # "9253 # highest feature index"
    assert m.W.shape == (9253, 1)
    assert m.labels.tolist() == [1.0, -1.0]
    assert m.b.tolist() == [-THRESHOLD]
    assert m.solver == "svmlight-V5.00"
    assert dict(m.header)["n_train"] == 10                        # "10 # number of training documents"
    # w = sum_i alpha_i y_i sv_i; features 1 and 9253 each occur in one support vector only
    text = MODEL.read_text()
    assert text.count(" 1:") == 1 and text.count(" 9253:") == 1
    assert m.W[0, 0] == -1.0000000059604646 * 0.25735265
    assert m.W[9252, 0] == 0.99810571606895893 * 0.89485931
    # feature 142 occurs in all ten: the sum, in the file's order
    pairs = [(float(line.split()[0]), float(re.search(r" 142:(\S+)", line).group(1)))
             for line in text.splitlines()[11:]]
    assert len(pairs) == 10
    assert m.W[141, 0] == sum(ay * v for ay, v in pairs)
    # no weight outside the support vectors' features
    used = {int(i) for i in re.findall(r" (\d+):", text)}
    assert len(used) == 357
    assert set((np.flatnonzero(m.W[:, 0]) + 1).tolist()) == used


def test_svm_predict_gives_svm_classifys_decision_values(tmp_path):
    expected, labels = svm_classify_values()
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "svmtrain.cli.predict", "-d", str(ROWS), str(MODEL), str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 21
    pred = [line.split()[0] for line in lines]
    ours = np.array([float(line.split()[1]) for line in lines])
    # SVMlight predicts +1 where f(x) > 0
    assert pred == ["1" if v > 0 else "-1" for v in expected]
    # svm_classify prints %.8g and sums single-precision features: 1.6e-8 apart at most here
    np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-7)
    # rows with no feature in common with any support vector (two of them empty): f = -b exactly
    for line in (56, 187, 344):
        k = KEPT_LINES[1:].index(line)
        assert expected[k] == -THRESHOLD and ours[k] == -THRESHOLD
    # accuracy as svm_classify's signs give it: 13 of the 21 rows
    correct = int(np.sum((expected > 0) == (labels > 0)))
    assert correct == 13
    assert r.stdout.strip() == f"Accuracy = {100 * correct / 21:g}% ({correct}/21)"
