"""The transductive SVM (--transduction; SVMlight's -p): Joachims's switching
of labels, on a text-like set where it should beat the inductive SVM."""
import dataclasses

import numpy as np
import pytest
from click.testing import CliRunner

from svmtrain.cli.train import main as train_main
from svmtrain.data.dataset import take_rows
from svmtrain.errors import InputFormatError, ParameterError
from svmtrain.io.model_io import load_model
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams
from svmtrain.training.train import train
from svmtrain.training.transductive import switch_pairs


def _text_like(path, n, vocabulary=3000, seed=0):
    """``n`` bag-of-words rows of two topics (+1 / -1 alternately): Zipf word
    frequencies shared by both topics, each topic 6x as likely to use its own
    150 words, log-normal lengths, log(1 + count) values normalised to unit
    length. Writes the file; returns the labels."""
    rng = np.random.default_rng(seed)
    base = 1.0 / np.arange(1, vocabulary + 1) ** 1.1
    topics = []
    for _ in range(2):
        p = base.copy()
        p[rng.choice(np.arange(50, vocabulary), 150, replace=False)] *= 6.0
        topics.append(p / p.sum())
    labels = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    with open(path, "w") as f:
        for y in labels:
            length = int(np.clip(rng.lognormal(4.0, 0.6), 5, 600))
            words, counts = np.unique(rng.choice(vocabulary, length, p=topics[int(y < 0)]), return_counts=True)
            values = np.log1p(counts) / np.linalg.norm(np.log1p(counts))
            f.write(f"{y:g} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in zip(words, values)) + "\n")
    return labels


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    """(training Chunk: 50 labelled rows, 950 labelled 0; test Chunk of 1000 rows; the training rows' true labels)."""
    path = tmp_path_factory.mktemp("tsvm") / "text"
    truth = _text_like(path, 2000)
    data = read_libsvm(path)
    order = np.random.default_rng(1).permutation(2000)
    train_rows, test_rows = order[:1000], order[1000:]
    labels = truth[train_rows].copy()
    labels[50:] = 0.0
    training = dataclasses.replace(take_rows(data, train_rows), labels=labels)
    return training, take_rows(data, test_rows), truth[train_rows]


def test_switch_pairs_pairs_the_largest_slacks_while_they_sum_above_two():
    slack = np.array([1.5, 0.0, 0.9, 1.2, 2.5, 0.4, 0.7])
    labels = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0, 1.0])
    # +1 rows by slack: 0 (1.5), 2 (0.9), 6 (0.7); -1 rows: 4 (2.5), 3 (1.2), 5 (0.4)
    # pairs: (0, 4) 4.0 > 2, (2, 3) 2.1 > 2, (6, 5) 1.1: stop
    plus, minus = switch_pairs(slack, labels)
    assert plus.tolist() == [0, 2] and minus.tolist() == [4, 3]
    none = switch_pairs(np.array([3.0, 0.0]), np.array([1.0, -1.0]))     # a zero slack never switches
    assert len(none[0]) == 0 and len(none[1]) == 0


def test_transduction_beats_the_inductive_svm_on_text_with_50_labels(text):
    """Joachims's setting: few labelled documents, many unlabelled ones; the
    transductive model is more accurate on the test rows, keeps num+ of the
    unlabelled rows positive, labels them better than the inductive model
    does, and leaves no pair that the method would still switch."""
    training, test, truth = text
    labelled = training.labels != 0
    inductive = train(take_rows(training, np.flatnonzero(labelled)), TrainParams(C=1.0))
    model = train(training, TrainParams(C=1.0, transduction="0.5"))
    acc_ind = np.mean(inductive.predict(test) == test.labels)
    acc_tsvm = np.mean(model.predict(test) == test.labels)
    assert acc_tsvm >= acc_ind + 0.05, (acc_ind, acc_tsvm)
    guess = model.transductive_labels
    assert int(np.sum(guess > 0)) == round(0.5 * np.sum(~labelled)) and model.switches > 0
    assert np.mean(guess == truth[~labelled]) > np.mean(inductive.predict(take_rows(training, np.flatnonzero(~labelled)))
                                                         == truth[~labelled])
    scores = model.decision_function(take_rows(training, np.flatnonzero(~labelled)))[:, 0]
    scores = scores if model.labels[0] == 1.0 else -scores
    slack = np.maximum(0.0, 1.0 - guess * scores)
    assert len(switch_pairs(slack, guess)[0]) == 0


def test_svmlight_line_and_model_file(tmp_path, text):
    """svm_learn's -p F -b 0 is --transduction F; the model file records it;
    SVMlight's biased -p and a file without unlabelled rows are refused."""
    training, _, _ = text
    path = tmp_path / "train"
    with open(path, "w") as f:
        for i in range(training.n_rows):
            lo, hi = training.indptr[i], training.indptr[i + 1]
            f.write(f"{training.labels[i]:g} " + " ".join(
                f"{j + 1}:{v!r}" for j, v in zip(training.indices[lo:hi].tolist(), training.values[lo:hi].tolist()))
                + "\n")
    ours = CliRunner().invoke(train_main, ["-q", "-c", "1", "--transduction", "0.5", str(path), str(tmp_path / "a")])
    theirs = CliRunner().invoke(train_main, ["-q", "-z", "c", "-c", "1", "-b", "0", "-p", "0.5", str(path),
                                             str(tmp_path / "b")])
    assert ours.exit_code == 0 and theirs.exit_code == 0, (ours.output, theirs.output)
    a, b = load_model(tmp_path / "a"), load_model(tmp_path / "b")
    assert np.array_equal(a.W, b.W) and dict(a.header)["transduction"] == "0.5"
    biased = CliRunner().invoke(train_main, ["-z", "c", "-c", "1", "-p", "0.5", str(path), str(tmp_path / "c")])
    assert biased.exit_code == 2 and "give -b 0" in biased.output and not (tmp_path / "c").exists()
    with pytest.raises(InputFormatError, match="needs unlabelled rows"):
        train(dataclasses.replace(training, labels=np.where(training.labels == 0, 1.0, training.labels)),
              TrainParams(transduction="auto"))


@pytest.mark.parametrize("kw, message", [
    ({"transduction": "1.5"}, "a fraction in \\[0, 1\\] or auto"),
    ({"transduction": "0.5", "solver": "ocas"}, "-s dcd, -s pegasos take with --loss hinge"),
    ({"transduction": "0.5", "task": "r"}, "binary classifier"),
    ({"transduction": "0.5", "probability": True}, "does not fit -b 1"),
])
def test_refusals(kw, message):
    from svmtrain.params import check_params
    with pytest.raises(ParameterError, match=message):
        check_params(TrainParams(**kw))
