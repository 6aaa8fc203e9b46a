"""svm-train's help is generated from the solver registry and stays true to it:
no arguments print a short usage naming every solver with the tasks it
trains; ``--help`` groups every option, each group's "Applies to:" line the
registry's answer; ``--help -s NAME`` shows exactly what NAME's Declaration
says, its own options and no other solver's."""
import re
from dataclasses import fields
from importlib.metadata import version

import click
import pytest
from click.testing import CliRunner

from svmtrain.cli import usage
from svmtrain.cli.train import main
from svmtrain.params import TrainParams
from svmtrain.solvers import REGISTRY, SOLVERS, kernel_solvers, listing, names
from svmtrain.tasks import LOSSES, NAMES

WIDE = 10_000       # no wrapping: one option or sentence per line


def run(args):
    return CliRunner().invoke(main, args, terminal_width=WIDE)


def flag_of(name):
    """The first flag of svm-train's option ``name``."""
    return next(p.opts[0] for p in main.params if p.name == name)


def declared(name):
    return [flag for _field, flag in REGISTRY[name].options]


def own_flags(name):
    return [flag_of(field) for field in usage.own_options(name)]


def sections(text):
    """title -> (the 'Applies to:' list, [first flag of every option row]) of
    a help page's option groups (not a solver page's 'What -s NAME does')."""
    out, title = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            title = None if line.startswith("What -s ") else line[:-1]
            if title is not None:
                out[title] = [None, []]
        elif title is not None and line.startswith("  Applies to: "):
            out[title][0] = re.match(r"  Applies to: (.*?)\.", line).group(1)
        elif title is not None and re.match(r"  -", line):
            out[title][1].append(re.match(r"  (-[\w-]+)", line).group(1))
    return out


def every_option_flag():
    help_option = main.get_help_option(click.Context(main))
    return {p.opts[0] for p in main.params if isinstance(p, click.Option)} | {help_option.opts[0]}


# ---------------------------------------------------------------- no arguments

def test_no_arguments_print_a_short_usage_naming_every_solver():
    r = CliRunner().invoke(main, [])
    click_status = 2 if tuple(int(p) for p in version("click").split(".")[:2]) >= (8, 2) else 0
    assert r.exit_code == click_status
    lines = r.output.rstrip("\n").splitlines()
    assert len(lines) < 40 and lines[0] == "Usage: svm-train [options] TRAIN_FILE [MODEL_FILE]"
    for name, d in REGISTRY.items():
        row = [line for line in lines if line.split()[:1] == [name]]
        assert len(row) == 1, name
        assert row[0].endswith("  " + d.summary), row
        assert set(row[0][:-len(d.summary)].split()[1:]) == set(d.tasks), row      # the task letters
    text = "\n".join(lines)
    assert f"(default -1; {', '.join(names(lambda d: d.bias))})" in text
    assert "(" + ", ".join(s + (" -t K" if REGISTRY[s].kernel == "nonlinear" else "") for s in kernel_solvers()) \
        + ")" in text
    assert f"({', '.join(names(lambda d: d.streamed is not None))})" in text
    assert "-C : search C" in text and "--grid : search C and gamma" in text and "-q : quiet" in text
    assert lines[-1] == "All options: svm-train --help; one solver's: svm-train --help -s NAME"


# ---------------------------------------------------------------- --help

def test_help_groups_every_option_once():
    r = run(["--help"])
    assert r.exit_code == 0
    found = [flag for _applies, flags in sections(r.output).values() for flag in flags]
    assert sorted(found) == sorted(every_option_flag())
    assert "Other options" not in r.output
    grouped = [name for g in usage.groups() for name in g.options]
    assert len(grouped) == len(set(grouped))


def test_every_applies_to_line_is_the_registrys():
    """Each group's list, against the registry's answer for what its options need."""
    every = "every solver"
    kernels = listing(kernel_solvers(), kernel_note=True)
    assert set(kernel_solvers()) == set(names(lambda d: d.trains_kernel_model(2)))    # -t K included
    expect = {
        "-s": every, "-v": every, "--model-format": every, "--chunk-size": every,
        "-B": listing(names(lambda d: d.bias)),
        "-t": kernels, "--grid": kernels,
        "-C": listing(names(lambda d: not d.trains_kernel_model() and ({"c", "r"} & set(d.tasks)))),
        "--stream": listing(names(lambda d: d.streamed is not None)),
        "--shuffle-buffer": listing(names(lambda d: d.streamed is not None and d.streamed.shuffle_buffer)),
        "--cut-buffer": listing(names(lambda d: d.streamed is not None and d.streamed.cut_buffer)),
        "--engine": listing(names(lambda d: d.dask)),
    }
    for name in SOLVERS:
        for flag in own_flags(name):
            expect[flag] = f"-s {name}"
    seen = set()
    for title, (applies, flags) in sections(run(["--help"]).output).items():
        assert applies is not None, title
        for flag in flags:
            if flag in expect:
                assert applies == expect[flag], (title, flag)
                seen.add(flag)
            if any(flag in declared(s) for s in SOLVERS):
                assert applies.startswith("-s ") and "," not in applies, flag    # one solver's group
    assert seen == set(expect)


def test_declared_reads_are_fields_of_no_other_solver():
    """Declaration.reads names TrainParams fields that no other solver declares as its own."""
    field_names = {f.name for f in fields(TrainParams)}
    for name, d in REGISTRY.items():
        assert set(d.reads) <= field_names, name
        for other in SOLVERS:
            if other != name:
                assert not set(d.reads) & ({f for f, _flag in REGISTRY[other].options} | set(REGISTRY[other].reads))


def test_help_does_not_say_shrinking_changes_nothing():
    """smo follows LIBSVM's -h through --shrinking, and the help says so."""
    for args in (["--help"], ["--help", "-s", "smo"], []):
        assert "changes nothing" not in CliRunner().invoke(main, args, terminal_width=WIDE).output
    text = run(["--help", "-s", "smo"]).output
    assert re.search(r"--shrinking .*LIBSVM's -h 0\|1 sets it", text)


# ---------------------------------------------------------------- --help -s NAME

def parse_by_task(sentence):
    """'classification (--task c): hinge, log; ...' -> {"c": ("hinge", "log"), ...}."""
    out = {}
    for part in sentence.split("; "):
        m = re.fullmatch(r"(\S+) \(--task (\w)\): (.*)", part)
        assert m and m.group(1) == NAMES[m.group(2)], part
        out[m.group(2)] = tuple(m.group(3).split(", "))
    return out


def facts(text):
    """The rows of the 'What -s NAME does' section."""
    block = text.split(" does:\n", 1)[1].split("\n\n", 1)[0]
    return dict(re.match(r"  (.+?)  +(.*)", line).groups() for line in block.splitlines())


@pytest.mark.parametrize("name", SOLVERS)
def test_solver_page_is_its_declaration(name):
    d = REGISTRY[name]
    r = run(["--help", "-s", name])
    assert r.exit_code == 0 and r.output == run(["-s", name, "--help"]).output
    text = r.output
    assert f"-s {name}: {d.summary}." in text
    row = facts(text)
    assert parse_by_task(row["Trains"]) == {t: tuple(losses) for t, losses in d.tasks.items()}
    assert all(set(losses) <= set(LOSSES[t]) for t, losses in d.tasks.items())
    assert row["-B"].startswith("yes") == d.bias
    assert row["--multiclass cs"].startswith("yes") == bool(d.multiclass_cs)
    assert row["Sample weights"] == "no" if not d.sample_weights else \
        parse_by_task(row["Sample weights"].removeprefix("(Python API) ")) == dict(d.sample_weights)
    if d.streamed is None:
        assert row["--stream"].startswith("no")
    else:
        assert parse_by_task(row["--stream"]) == {t: tuple(v) for t, v in d.streamed.tasks.items()}
    if not d.dask:
        assert row["--engine dask"] == "no"
    else:
        assert parse_by_task(row["--engine dask"]) == {t: tuple(v) for t, v in d.dask.items()}

    groups = sections(text)
    flags = {flag for _applies, fl in groups.values() for flag in fl}
    assert set(own_flags(name)) <= flags and set(declared(name)) <= flags
    for other in SOLVERS:
        if other != name:
            for flag in declared(other):
                assert not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text), (name, flag)
            assert not set(own_flags(other)) & flags, (name, other)
    for _title, (applies, _fl) in groups.items():
        assert applies == "every solver" or f"-s {name}" in applies.split(", ") \
            or f"-s {name} -t K" in applies.split(", ")
    assert ("-t" in flags) == (d.kernel != "none")
    assert ("--stream" in flags) == (d.streamed is not None)
    assert ("--engine" in flags) == bool(d.dask)


def test_help_with_liblinear_numbers_and_unknown_names():
    assert run(["--help", "-s", "3"]).output == run(["--help", "-s", "dcd"]).output
    r = run(["--help", "-s", "nope"])
    assert r.exit_code == 2
    assert r.output.strip() == f"svm-train: unknown solver 'nope'; known solvers: {', '.join(SOLVERS)}"
    assert run(["-s", "6", "--help"]).output == run(["--help", "-s", "cdn"]).output
    r = run(["-s", "9", "--help"])
    assert r.exit_code == 2 and r.output.startswith("svm-train: -s 9: not a LIBLINEAR solver number")
