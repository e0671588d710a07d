"""``impactbandits list`` / ``describe`` and the CLI's typed options (issue 14, item 5).

Expected values come from the sources they describe — constructor signatures read with
``inspect`` here, the parameter types of ``impactbandits.params`` written out by hand — never
from the rendering code under test.
"""

from __future__ import annotations

import inspect
import json
import re

import pytest
from click.testing import CliRunner

from impactbandits import cli as cli_module
from impactbandits.cli import cli
from impactbandits.describe import parameters, plain, summary
from impactbandits.experiments.figures import FIGURES
from impactbandits.registry import ENVIRONMENTS, ORACLES, POLICIES, resolve

MARKUP = re.compile(r"``|:[a-z]+:`")
ALL_NAMES = sorted({*ENVIRONMENTS, *POLICIES, *ORACLES, *FIGURES})


def test_backends_and_variants_match_the_runner_and_figures():
    from impactbandits.experiments.figures import get_figure
    from impactbandits.experiments.runner import BACKENDS

    assert cli_module.BACKENDS == BACKENDS
    variants = {v for name in FIGURES for v in get_figure(name).variants}
    assert variants == set(cli_module.VARIANTS)


def test_plain_drops_markup():
    """Roles show their target's name; a literal keeps single backticks, so that "with means
    ``means``" does not read "with means means"."""
    text = "See :class:`~impactbandits.core.policy.Policy` and :func:`a.b.f`, ``x = 1``, `y`."
    assert plain(text) == "See Policy and a.b.f, `x = 1`, y."


def test_summary_is_the_whole_first_paragraph():
    from impactbandits.policies.single_peaked import LastRewardGreedy

    doc = inspect.getdoc(LastRewardGreedy) or ""
    first = doc.split("\n\n")[0]
    assert "\n" in first, "pick a class whose first paragraph spans lines"
    last_word = first.split()[-1].strip("`")
    text = summary(LastRewardGreedy)
    assert text.endswith(last_word.replace("``", "")) and "\n" not in text


@pytest.mark.parametrize("name", ALL_NAMES)
def test_describe_every_registered_name(name):
    result = CliRunner().invoke(cli, ["describe", name])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{name} (")
    assert not MARKUP.search(result.output), result.output


@pytest.mark.parametrize(
    "role,name", [("policy", n) for n in POLICIES] + [("environment", n) for n in ENVIRONMENTS]
)
def test_parameters_are_the_constructor_arguments(role, name):
    cls = resolve(role, name, "kind")
    signature = inspect.signature(cls.__init__)
    expected = {
        p.name: ("required" if p.default is p.empty else repr(p.default))
        for p in list(signature.parameters.values())[1:]
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }
    assert {p.name: p.default for p in parameters(cls)} == expected


def test_constraints_written_out():
    # impactbandits.params: PositiveFloat = Field(gt=0.0); Probability = Field(ge=0.0, le=1.0)
    from impactbandits.policies.classic import UCB1, EpsilonGreedy

    assert {p.name: p.constraint for p in parameters(UCB1)}["c"] == "> 0.0"
    epsilon = {p.name: p for p in parameters(EpsilonGreedy)}["epsilon"]
    assert epsilon.constraint == "in [0.0, 1.0]" and epsilon.type == "float"
    variant = {p.name: p for p in parameters(UCB1)}["variant"]
    assert variant.type == "'paper' | 'authors-code'"


@pytest.mark.parametrize(
    ("kind", "param", "allowed"),
    [
        ("sw-ucb", "window", "in (0, 1000000]"),  # plays kept per replication
        ("rotting", "length", "in (0, 100000000]"),  # tabulated values per arm
        ("eep", "lookahead", "in (0, 20]"),  # K^d plans, at most 10^6
        ("cucb", "resolution", "in (0, 10000]"),  # K/ε statistics, the grid searched per round
        ("gaussian", "sigma", "in [0.0, 1000000.0]"),  # a noise scale
    ],
)
def test_describe_shows_the_bound_of_a_size(kind, param, allowed):
    # before: "> 0" (or ">= 0.0"): no upper bound, and 10^18 ran out of memory or never ended
    result = CliRunner().invoke(cli, ["describe", kind, "--json"])
    assert result.exit_code == 0, result.output
    shown = {p["name"]: p["allowed"] for p in json.loads(result.output)["parameters"]}
    assert shown[param] == allowed
    text = CliRunner().invoke(cli, ["describe", kind]).output
    assert any(line.split()[:1] == [param] and allowed in line for line in text.splitlines())


def test_describe_a_figure_gives_its_size():
    result = CliRunner().invoke(cli, ["describe", "lindner-fig1"])
    assert result.exit_code == 0, result.output
    # Lindner et al. 2021, Figure 1: 30 seeds, horizons up to 20,000 (the paper's Tmax)
    assert "30 seeds" in result.output and "20,000" in result.output
    assert "impactbandits reproduce lindner-fig1" in result.output


def test_describe_unknown_name_is_one_line():
    result = CliRunner().invoke(cli, ["describe", "ucb2"])
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and "kind" in result.stderr


def test_list_wraps_to_the_terminal_and_shows_no_markup():
    result = CliRunner().invoke(cli, ["list"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert not MARKUP.search(result.output)
    listed = {line.split()[0] for line in lines if line.startswith("  ") and line[2] != " "}
    assert listed == set(ALL_NAMES)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["reproduce"], "name"),
        (["run", "x.toml", "--bogus"], "--bogus"),
        (["reproduce", "lindner-fig1", "--variant", "authors"], "variant"),
        (["export", "x", "--format", "xml"], "format"),
        (["run", "x.toml", "--batch-size", "1.5"], "batch-size"),
    ],
)
def test_usage_errors_are_one_line(args, field):
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert message.startswith("error: ") and "\n" not in message and field in message


def test_help_shows_types():
    result = CliRunner().invoke(cli, ["run", "--help"])
    assert "[auto|serial|process|dask]" in result.output and "INTEGER>=1" in result.output


def test_sources_cite_only_files_in_the_repository():
    """Docstrings point to documents a reader of the repository has (issue 14, item 5)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    cited = re.compile(r"\bdocs/[\w./-]+\.md\b")
    for path in (root / "src/impactbandits").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "REPRODUCTION" not in text and "ARCHITECTURE" not in text, path
        for name in cited.findall(text):
            assert (root / name).is_file(), f"{path.name} cites {name}"
