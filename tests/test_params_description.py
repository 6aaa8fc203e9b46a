"""One description of the training parameters: svm-train's options are built
from TrainParams' fields, with the same names, defaults and help."""
from dataclasses import MISSING, fields

import click

from svmtrain.cli.train import main
from svmtrain.params import TrainParams


def test_every_field_is_an_svm_train_option_with_its_default_and_help():
    options = {p.name: p for p in main.params if isinstance(p, click.Option)}
    for f in fields(TrainParams):
        opt = options[f.name]
        assert opt.help == f.metadata["help"]
        assert set(opt.opts + opt.secondary_opts) == {s for flag in f.metadata["flags"] for s in flag.split("/")}
        if f.default is not MISSING and not opt.multiple:
            assert opt.default == (int(f.default) if f.name == "probability" else f.default), f.name


def test_svm_train_options_parse_into_the_fields():
    ctx = main.make_context("svm-train", ["-s", "pegasos", "-c", "2", "-B", "1", "-w", "1", "3", "-b", "1",
                                          "--task", "c", "-t", "0", "--strongly-convex", "--no-bias", "x"])
    p = ctx.params
    assert (p["solver"], p["C"], p["bias"], p["class_weights"], p["probability"], p["kernel_type"],
            p["strongly_convex"], p["unreg_bias"]) == ("pegasos", 2.0, 1.0, ((1.0, 3.0),), True, 0, True, False)
    assert p["seed"] == 1 and p["cut_buffer"] == 2000 and p["lam"] is None


def test_describe_lists_every_field_in_order_with_its_flags():
    rows = TrainParams.describe()
    assert [r[0] for r in rows] == [f.name for f in fields(TrainParams)]
    assert ("C", "-c", None) == rows[[r[0] for r in rows].index("C")][:3]
    assert ("class_weights", "-w", {}) == rows[[r[0] for r in rows].index("class_weights")][:3]
    assert all(r[3] for r in rows)
