"""The command line's conventions for a release (issue "release-grade", the CLI part):
``list --json`` / ``describe --json``, ``-q`` / ``-v``, shell completion, the figure names in
``reproduce --help``, ``reproduce --no-report``, ``check_policy``'s account of its checks, and
conditionally required parameters (:class:`~impactbandits.params.RequiredWhen`).

Expected values come from the sources the output describes — the registries' tables,
constructor signatures read with ``inspect``, the figures' own objects, parameter sets written
out here — never from the rendering code under test.
"""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.shell_completion import ShellComplete
from click.testing import CliRunner

from impactbandits import cli as cli_module
from impactbandits.cli import cli
from impactbandits.cli import options as cli_options
from impactbandits.errors import SpecError
from impactbandits.experiments.figures import FIGURES, get_figure
from impactbandits.links import docs_page
from impactbandits.params import RequiredWhen
from impactbandits.registry import ENVIRONMENTS, ORACLES, POLICIES, resolve, validate_params

COMPONENTS = sorted({*ENVIRONMENTS, *POLICIES, *ORACLES})
MARKUP = re.compile(r"``|:[a-z]+:`")

SPEC = """
name = "conventions"
seeds = {seeds}
horizons = [20, 50]
checkpoints = 4

[[environments]]
kind = "bernoulli"
label = "b2"
means = [0.3, 0.7]

[[policies]]
kind = "ucb1"
"""


def invoke(*args: str, **kwargs):
    return CliRunner().invoke(cli, list(args), **kwargs)


def signature_parameters(cls: type) -> dict[str, inspect.Parameter]:
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    return {p.name: p for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


# -- list --json / describe --json --------------------------------------------------------------


def test_list_json_has_every_section_and_every_name():
    result = invoke("list", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert list(document) == ["environments", "policies", "oracles", "figures"]
    assert [e["name"] for e in document["figures"]] == sorted(FIGURES)
    assert {e["name"]: e["title"] for e in document["figures"]} == {
        name: get_figure(name).title for name in FIGURES
    }
    for section, table in (
        ("environments", ENVIRONMENTS),
        ("policies", POLICIES),
        ("oracles", ORACLES),
    ):
        assert [e["name"] for e in document[section]] == sorted(table)
        for entry in document[section]:
            assert set(entry) == {"name", "summary"}
            assert entry["summary"] and not MARKUP.search(entry["summary"]), entry


def test_list_json_of_one_section():
    result = invoke("list", "policies", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert list(document) == ["policies"]
    assert [e["name"] for e in document["policies"]] == sorted(POLICIES)


def test_list_sections_are_describes():
    from impactbandits.describe import SECTIONS

    assert tuple(SECTIONS) == cli_module.LIST_WHAT


@pytest.mark.parametrize(
    ("role", "name"),
    [("policy", n) for n in sorted(POLICIES)] + [("environment", n) for n in sorted(ENVIRONMENTS)],
)
def test_describe_json_parameters_are_the_constructor_arguments(role, name):
    from impactbandits.construct import params_model

    result = invoke("describe", name, "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    cls = resolve(role, name, "kind")
    assert document["name"] == name and document["role"] == role
    assert document["import_path"] == f"{cls.__module__}:{cls.__qualname__}"
    expected = signature_parameters(cls)
    described = [p["name"] for p in document["parameters"]]
    assert described == list(expected) == list(params_model(cls).model_fields)
    for p in document["parameters"]:
        default = expected[p["name"]].default
        assert p["required"] is (default is inspect.Parameter.empty), p
        if not p["required"]:
            try:  # the default itself where JSON holds it, else its repr
                assert p["default"] == json.loads(json.dumps(default, allow_nan=False)), p
            except (TypeError, ValueError):
                assert p["default"] == repr(default), p


def test_describe_json_of_a_policy_names_its_paper_and_bounds():
    document = json.loads(invoke("describe", "ucb1", "--json").stdout)
    # policies/classic.py: UCB1 (Auer, Cesa-Bianchi & Fischer 2002, Fig. 1); c: PositiveFloat
    assert "Auer" in document["citation"] and "2002" in document["citation"]
    assert document["module"]["name"] == "impactbandits.policies.classic"
    c = {p["name"]: p for p in document["parameters"]}["c"]
    assert c["allowed"] == "> 0.0" and c["type"] == "float" and c["required"] is False
    variant = {p["name"]: p for p in document["parameters"]}["variant"]
    assert variant["choices"] == ["paper", "authors-code"] and variant["default"] == "paper"


def test_describe_json_of_an_oracle_and_an_import_path():
    oracle = json.loads(invoke("describe", "best_fixed_arm", "--json").stdout)
    assert oracle["role"] == "oracle" and oracle["parameters"] is None
    path = json.loads(invoke("describe", "impactbandits.policies.classic:UCB1", "--json").stdout)
    assert path["role"] == "import path"
    from impactbandits.policies.classic import UCB1

    assert [p["name"] for p in path["parameters"]] == list(signature_parameters(UCB1))


@pytest.mark.parametrize("name", ["lindner-fig1", "demo-stationary"])
def test_describe_json_of_a_figure_gives_its_size(name):
    from impactbandits.experiments.cells import cell_count

    result = invoke("describe", name, "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    figure = get_figure(name)
    assert document["role"] == "figure" and document["figure"]["title"] == figure.title
    assert document["figure"]["variants"] == list(figure.variants)
    for key, quick in (("full", False), ("quick", True)):
        spec = figure.spec(quick)
        cells, rounds = cell_count(spec)
        assert document["figure"]["sizes"][key] == {
            "environments": len(spec.environments),
            "policies": len(spec.policies),
            "max_horizon": max(spec.horizons),
            "seeds": spec.seeds,
            "cells": cells,
            "simulated_rounds": rounds * spec.seeds,
        }


def test_describe_json_is_the_text_in_another_form():
    """The facts of ``describe`` and ``describe --json`` are the same: every parameter row of
    the text carries the JSON's name, type, default and requirements."""
    text = invoke("describe", "impact").stdout
    document = json.loads(invoke("describe", "impact", "--json").stdout)
    rows = text.split("parameters:\n", 1)[1].splitlines()[1:]
    assert len(rows) == len(document["parameters"])
    for row, p in zip(rows, document["parameters"], strict=True):
        assert row.split()[0] == p["name"] and p["type"] in row
        for condition in p["required_when"]:
            assert condition["text"] in row


def test_json_errors_stay_one_line():
    result = invoke("describe", "ucb2", "--json")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("error: kind: ") and result.stderr.count("\n") == 1


# -- conditionally required parameters ----------------------------------------------------------

#: Parameter sets that build, per environment with RequiredWhen declarations (written out from
#: the constructors' rules, not from the declarations).
BUILDS: dict[str, list[dict]] = {
    "impact": [
        {"family": "police", "high": [0.5, 0.4], "low": [0.1, 0.2]},
        {"family": "linear", "intercept": [0.2, 0.3], "slope": [0.5, 0.4]},
        {"family": "concave", "intercept": [0.2, 0.3], "slope": [0.5, 0.4]},
    ],
    "imab": [
        {"family": "saturating", "asymptotes": [0.5, 0.8], "saturation": [10, 20]},
        {"family": "curves", "curves": [[0.1, 0.3, 0.4], [0.2, 0.2, 0.2]]},  # their own length
    ],
    "rotting": [{"instance": "custom", "means": [0.5, 0.2]}],
    "gaussian": [{"means": [0.1, 0.5]}, {"n_arms": 3}],
    "blocking": [
        {"means": [0.3, 0.7], "delays": [1, 2]},
        {"n_arms": 3, "delay_range": [1, 3]},
    ],
    "recovering": [{"values": [[0.1, 0.5], [0.2, 0.3]]}, {"n_arms": 2}],
}


def declarations() -> dict[tuple[str, str, str], tuple[RequiredWhen, ...]]:
    """``(role, kind, parameter)`` → its RequiredWhen metadata, over every registered class."""
    from impactbandits.construct import params_model

    found = {}
    for role, table in (("environment", ENVIRONMENTS), ("policy", POLICIES)):
        for kind in table:
            cls = resolve(role, kind, "kind")
            for param, field in params_model(cls).model_fields.items():
                marks = tuple(m for m in field.metadata if isinstance(m, RequiredWhen))
                if marks:
                    found[(role, kind, param)] = marks
    return found


def _builds(kind: str, params: dict) -> bool:
    cls = resolve("environment", kind, "kind")
    try:
        cls(**validate_params(cls, params, kind))
    except SpecError:
        return False
    return True


def test_impact_declares_what_its_families_require():
    found = declarations()
    police, curves = (RequiredWhen("family", "police"), RequiredWhen("family", "linear", "concave"))
    assert found[("environment", "impact", "high")] == (police,)
    assert found[("environment", "impact", "low")] == (police,)
    assert found[("environment", "impact", "intercept")] == (curves,)
    assert found[("environment", "impact", "slope")] == (curves,)


def test_every_declaration_is_what_the_constructor_requires():
    """Each declared parameter, left out of a parameter set that builds and meets its
    condition, makes the build fail; and every declaration is exercised by such a set."""
    covered = set()
    for kind, examples in BUILDS.items():
        cls = resolve("environment", kind, "kind")
        for params in examples:
            assert _builds(kind, params), (kind, params)
            values = validate_params(cls, params, kind)
            for (role, name, param), marks in declarations().items():
                if name != kind or param not in params:
                    continue
                if any(mark.applies(values) for mark in marks):
                    less = {k: v for k, v in params.items() if k != param}
                    assert not _builds(kind, less), (kind, params, param)
                    covered.add((role, name, param))
    assert covered == set(declarations())


def test_describe_shows_the_conditional_requirement():
    result = invoke("describe", "impact")
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line.startswith("  ")}
    assert "required when family = 'police'" in rows["high"]
    assert "required when family = 'police'" in rows["low"]
    assert "required when family = 'linear' or 'concave'" in rows["slope"]
    assert "required when" not in rows["gamma"]
    document = json.loads(invoke("describe", "impact", "--json").stdout)
    high = {p["name"]: p for p in document["parameters"]}["high"]
    assert high["required"] is False and high["default"] is None
    assert high["required_when"] == [
        {"param": "family", "values": ["police"], "text": "required when family = 'police'"}
    ]
    gaussian = invoke("describe", "gaussian").stdout
    assert "required when n_arms is not given" in gaussian
    assert "required when means is not given" in gaussian


def test_required_when_reads_as_a_sentence():
    assert str(RequiredWhen("family", "police")) == "required when family = 'police'"
    assert str(RequiredWhen("n_arms", None)) == "required when n_arms is not given"
    assert RequiredWhen("family", "a", "b").applies({"family": "b"})
    assert not RequiredWhen("n_arms", None).applies({"n_arms": 3})
    with pytest.raises(TypeError):
        RequiredWhen("family")


# -- -q / -v ------------------------------------------------------------------------------------


@pytest.fixture
def spec_file(tmp_path) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(SPEC.format(seeds=3), encoding="utf-8")
    return path


def _run(spec_file: Path, out: Path, *group: str, seeds: int | None = None):
    extra = ["--seeds", str(seeds)] if seeds else []
    args = ["run", str(spec_file), "--out", str(out), "--backend", "serial", "--no-report"]
    return invoke(*group, *args, *extra)


def test_quiet_silences_the_informational_lines(spec_file, tmp_path):
    loud = _run(spec_file, tmp_path / "a")
    assert loud.exit_code == 0, loud.output
    assert "3 results computed, 0 reused" in loud.stderr and "to run" in loud.stderr
    quiet = _run(spec_file, tmp_path / "b", "-q")
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stderr == ""
    # the choice lives in the command's context, not in the process: the next call talks again
    again = _run(spec_file, tmp_path / "c")
    assert "results computed" in again.stderr


def test_quiet_silences_warnings_but_not_errors(spec_file, tmp_path):
    run_dir = tmp_path / "run"
    assert _run(spec_file, run_dir).exit_code == 0
    assert _run(spec_file, run_dir, seeds=2).exit_code == 0  # 3 stored, the latest asks for 2
    loud = invoke("export", str(run_dir), "-o", str(tmp_path / "a.csv"))
    assert loud.exit_code == 0 and "warning: showing 2 of 3 stored seeds" in loud.stderr
    quiet = invoke("-q", "export", str(run_dir), "-o", str(tmp_path / "b.csv"))
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert quiet.stdout.strip() == str(tmp_path / "b.csv")  # results still on stdout
    error = invoke("-q", "export", str(tmp_path / "nothing-here"))
    assert error.exit_code == 2 and error.stderr.startswith("error: ")


def test_verbose_adds_the_backend_and_the_timings(spec_file, tmp_path):
    result = _run(spec_file, tmp_path / "run", "-v")
    assert result.exit_code == 0, result.output
    assert "asked for: backend serial, 1 worker(s)" in result.stderr
    session = [line for line in result.stderr.splitlines() if line.startswith("session: ")]
    assert len(session) == 1 and "backend serial" in session[0] and " s wall" in session[0]
    assert "3 results computed" in result.stderr
    again = _run(spec_file, tmp_path / "run", "-v")
    assert "session: nothing to compute" in again.stderr


def test_quiet_and_verbose_exclude_each_other():
    result = invoke("-q", "-v", "list")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: quiet: ") and result.stderr.count("\n") == 1


def test_quiet_means_no_progress_bar(monkeypatch, spec_file, tmp_path):
    """On a terminal the progress bar is on by default, off with -q (an explicit --progress
    still asks for one)."""
    import click.testing

    import impactbandits.experiments.runner as runner

    seen = []
    original = runner.run_experiment

    def spy(*args, **kwargs):
        seen.append(kwargs["progress"])
        return original(*args, **kwargs)

    monkeypatch.setattr(runner, "run_experiment", spy)
    # the stderr CliRunner gives the command, as a terminal
    monkeypatch.setattr(click.testing._NamedTextIOWrapper, "isatty", lambda self: True)
    assert _run(spec_file, tmp_path / "a").exit_code == 0
    assert _run(spec_file, tmp_path / "b", "-q").exit_code == 0
    args = ["-q", "run", str(spec_file), "--out", str(tmp_path / "c"), "--backend", "serial"]
    assert invoke(*args, "--no-report", "--progress").exit_code == 0
    assert seen == [True, False, True]


# -- shell completion ---------------------------------------------------------------------------


def completions(args: list[str], incomplete: str) -> list[tuple[str, str]]:
    complete = ShellComplete(cli, {}, "impactbandits", "_IMPACTBANDITS_COMPLETE")
    return [(item.value, item.type) for item in complete.get_completions(args, incomplete)]


def test_reproduce_completes_figure_names():
    assert completions(["reproduce"], "lind") == [
        (name, "plain") for name in sorted(FIGURES) if name.startswith("lind")
    ]
    assert {value for value, _ in completions(["reproduce"], "")} == set(FIGURES)


def test_describe_completes_figure_and_component_names():
    expected = sorted(n for n in {*FIGURES, *COMPONENTS} if n.startswith("ucb"))
    assert [value for value, _ in completions(["describe"], "ucb")] == expected
    assert "ucb1" in expected and "ucb-greedy" in expected
    assert {value for value, _ in completions(["describe"], "")} == {*FIGURES, *COMPONENTS}
    assert completions(["describe"], "mypackage:") == []


def test_component_names_are_the_registry_and_import_nothing_heavy():
    assert cli_options._component_names() == COMPONENTS
    probe = (
        "import sys\n"
        "from impactbandits.cli.options import _component_names, _figure_names\n"
        "assert len(_component_names()) > 50 and _figure_names()\n"
        "mods = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('numpy', 'pydantic') or m.startswith(('impactbandits.registry', "
        "'impactbandits.policies', 'impactbandits.experiments.papers')))\n"
        "print(mods)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_completion_through_the_environment_variable():
    """What a shell runs on Tab: the command with _IMPACTBANDITS_COMPLETE set."""
    env = {
        "_IMPACTBANDITS_COMPLETE": "bash_complete",
        "COMP_WORDS": "impactbandits reproduce ron",
        "COMP_CWORD": "2",
    }
    result = CliRunner().invoke(cli, [], env=env, prog_name="impactbandits")
    assert result.exit_code == 0, result.output
    expected = [f"plain,{n}" for n in sorted(FIGURES) if n.startswith("ron")]
    assert result.stdout.split() == expected and expected


def test_paths_and_settings_complete():
    assert completions(["run"], "sp") == [("sp", "file")]
    assert completions(["report"], "ru") == [("ru", "dir")]
    assert completions(["reproduce", "demo-stationary", "--out"], "") == [("", "dir")]
    assert ("rotting", "plain") in completions(["benchmark", "--setting"], "rot")


def test_the_group_help_says_how_to_enable_completion():
    text = invoke("--help").stdout
    for shell in ("bash", "zsh", "fish"):
        assert f"_IMPACTBANDITS_COMPLETE={shell}_source impactbandits" in text
    assert "-q, --quiet" in text and "-v, --verbose" in text


# -- reproduce --help / --no-report -------------------------------------------------------------


def test_reproduce_help_lists_every_figure():
    text = invoke("reproduce", "--help").stdout
    listed = text.split("Registered figures (NAME):", 1)[1].split("\n\n", 1)[0]
    assert sorted(re.findall(r"[\w-]+", listed)) == sorted(FIGURES)
    assert docs_page("fidelity") in text


def test_reproduce_help_imports_no_figure_module(tmp_path):
    probe = (
        "import sys\n"
        "from impactbandits.cli import cli\n"
        "try:\n"
        "    cli(['reproduce', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('\\n--- ' + repr(sorted(m for m in sys.modules "
        "if m.startswith('impactbandits.experiments.papers'))))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rsplit("--- ", 1)[1].strip() == "[]"


def test_no_help_points_into_the_repository():
    for command in ("run", "reproduce", "benchmark", "report", "export", "list", "describe"):
        text = invoke(command, "--help").stdout
        assert "docs/" not in text and "fidelity.md" not in text, command


def test_reproduce_no_report_prints_the_run_directory_and_how_to_draw(tmp_path):
    run_dir = tmp_path / "run"
    args = ["demo-stationary", "--quick", "--seeds", "1", "--backend", "serial"]
    result = invoke("reproduce", *args, "--out", str(run_dir), "--no-report")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(run_dir)
    assert not (run_dir / "report.html").exists() and not list(run_dir.glob("*.png"))
    redraw = re.search(r"draw it with `([^`]+)`", result.stderr)
    assert redraw, result.stderr
    command = redraw.group(1).split()
    assert command[:2] == ["impactbandits", "reproduce"]
    assert command[2:] == ["demo-stationary", "--quick", "--seeds", "1", "--out", str(run_dir)]
    drawn = invoke(*command[1:], "--backend", "serial")  # as printed: nothing is recomputed
    assert drawn.exit_code == 0, drawn.output
    assert "0 results computed" in drawn.stderr
    assert (run_dir / "report.html").is_file()


# -- check_policy -------------------------------------------------------------------------------

CHECKS = (
    "valid actions",
    "reset semantics",
    "determinism",
    "batch independence",
    "no global random state",
    "horizon",
    "pickling",
    "pull counts",
)


def test_check_policy_names_each_check(capsys):
    from impactbandits.policies.classic import UCB1
    from impactbandits.testing import check_policy

    check_policy(UCB1, rounds=60)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[:-1]] == [f"ok  {c}" for c in CHECKS]
    assert "(4 replications × 60 rounds)" in lines[1]
    assert lines[-1] == (
        "check_policy: UCB1 on BernoulliBandit passed all 8 checks (4 replications × 60 rounds)"
    )
    check_policy(UCB1, rounds=60, verbose=False)
    assert capsys.readouterr().out == ""


def test_check_policy_still_raises_and_says_what_passed(capsys):
    from impactbandits.core.policy import Policy
    from impactbandits.testing import ContractError, check_policy

    class DrawsWhenAnyoneExplores(Policy):
        def reset(self, space, horizon, rng):
            self.rng, self.n, self.last = rng, space.n, None

        def select(self):
            if self.last is not None and self.last.any():  # draws depend on the whole batch
                self.rng.random()
            return self.rng.integers(self.n)

        def update(self, actions, feedback):
            self.last = feedback.reward > 0

    with pytest.raises(ContractError, match="alone"):
        check_policy(DrawsWhenAnyoneExplores, rounds=40)
    out = capsys.readouterr().out
    assert "ok  determinism" in out and "batch independence" not in out
    assert "passed all" not in out
