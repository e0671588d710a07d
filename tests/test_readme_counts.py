"""The counts the README, CONTRIBUTING.md, the documentation and ``--help`` state agree with the
code: how many subcommands and which, the figures of the README's table, the benchmark's
horizons and seeds, the auto backend's threshold, the loops' stop polling, the sampling interval
of the benchmarks, what CI runs, the tutorials. (Durations: ``tests/test_timing_statements.py``.)

Each test finds the sentence in the text (so a reworded sentence fails here until this test says
where the count went) and compares its number with the code's, read from the registry, the
command line or the source.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from impactbandits.cli import cli
from impactbandits.experiments.figures import FIGURES, get_figure

ROOT = Path(__file__).resolve().parents[1]
WORDS = {
    word: number
    for number, word in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    )
}


def flat(text: str) -> str:
    """``text`` with its line breaks (and a Makefile's ``#``) as single spaces."""
    return re.sub(r"\s*\n\s*(?:#+ ?)?", " ", text)


def page(name: str) -> str:
    return flat((ROOT / name).read_text(encoding="utf-8"))


def said(text: str, pattern: str) -> re.Match[str]:
    found = re.search(pattern, text)
    assert found is not None, f"no longer says {pattern!r}: update this test"
    return found


def number(word: str) -> int:
    return WORDS[word] if word in WORDS else int(word.replace(",", ""))


def help_text(*command: str) -> str:
    shown = CliRunner().invoke(cli, [*command, "--help"], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    return flat(shown.output)


def subcommands() -> list[str]:
    return cli.list_commands(click.Context(cli, info_name="impactbandits"))


def test_getting_started_names_every_subcommand():
    found = said(page("docs/getting-started.md"), r"has (\w+) subcommands: (.*?)\. Every")
    listed = re.findall(r"`(\w+)`", found.group(2))
    assert number(found.group(1)) == len(subcommands()), found.group(0)
    assert sorted(listed) == sorted(subcommands()), found.group(0)


def test_the_readme_table_lists_every_registered_figure_once():
    rows = re.findall(r"^\| `([\w-]+)` \|", (ROOT / "README.md").read_text(), re.M)
    assert sorted(rows) == sorted(FIGURES)


def test_lindner_fig1_has_the_baselines_the_readme_counts():
    found = said(page("README.md"), r"`lindner-fig1` \| [^|]*SPO vs (\w+) baselines")
    kinds = [policy.kind for policy in get_figure("lindner-fig1").spec(False).policies]
    spo = [kind for kind in kinds if kind.startswith("spo")]  # SPO, or SPO-δ for noise
    assert len(spo) == 1 and number(found.group(1)) == len(kinds) - 1


def test_the_tutorials_are_counted():
    found = said(page("README.md"), r"(\w+) executed tutorials")
    assert number(found.group(1)) == len(list((ROOT / "docs" / "tutorials").glob("*.py")))


def _grid(quick: bool) -> tuple[list[int], int]:
    spec = get_figure("benchmark").spec(quick)
    return sorted(spec.horizons), spec.seeds


def _horizons(text: str) -> list[int]:
    return [number(n) for n in re.findall(r"[\d,]*\d", text)]


@pytest.mark.parametrize(
    ("where", "pattern", "quick"),
    [
        ("README.md", r"at T = ([\d,]+ and [\d,]+) with (\d+) seeds", False),
        ("docs/benchmark.md", r"horizon T = ([\d,]+ and [\d,]+) and (\d+) seeds", False),
        ("README.md", r"`--quick`: T = ([\d,]+ and [\d,]+) with (\d+) seeds", True),
        ("docs/benchmark.md", r"--quick +# T = ([\d,]+ and [\d,]+), (\d+) seeds", True),
        ("benchmark --help", r"--quick +Reduced grid: T = ([\d,]+ and [\d,]+), (\d+) seeds", True),
    ],
)
def test_the_benchmark_scale_is_the_benchmark_s(where, pattern, quick):
    text = help_text("benchmark") if where.endswith("--help") else page(where)
    found = said(text, pattern)
    assert (_horizons(found.group(1)), int(found.group(2))) == _grid(quick), found.group(0)


def test_the_auto_backend_threshold_is_the_runner_s():
    from impactbandits.experiments.runner import SERIAL_WORK

    for command in ("run", "reproduce", "benchmark"):
        found = said(help_text(command), r"at most (\d+) million pulls")
        assert int(found.group(1)) * 10**6 == SERIAL_WORK, command
    found = said(page("docs/getting-started.md"), r"at most (\d+) million planned pulls")
    assert int(found.group(1)) * 10**6 == SERIAL_WORK


def _constant(path: Path, name: str) -> object:
    """A module-level constant read from the source (importing the module would need numba)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == name for target in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name} not in {path}")


def test_the_compiled_loops_poll_for_a_stop_as_often_as_the_readme_says():
    found = said(page("README.md"), r"stop request every ([\d,]+) rounds")
    poll = _constant(ROOT / "src/impactbandits/kernels/stop.py", "POLL_ROUNDS")
    assert number(found.group(1)) == poll


def test_the_benchmarks_sample_as_often_as_the_readme_says():
    found = said(page("README.md"), r"sampled every ([\d.]+) s\)")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import inspect

        from peak_rss import PeakRSS
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    default = inspect.signature(PeakRSS).parameters["interval"].default
    assert float(found.group(1)) == default
    assert "PeakRSS(proc.pid)" in (ROOT / "benchmarks/measure.py").read_text()  # the default


def test_ci_runs_what_contributing_says():
    found = said(page("CONTRIBUTING.md"), r"CI \(`\.ci/run`, on a fresh clone\) runs (.*?);")
    stated = re.findall(r"`make (\w[\w-]*)`", found.group(1))
    run = re.findall(r"^make (\w[\w-]*)", (ROOT / ".ci/run").read_text(), re.M)
    assert stated == run
    assert "lint" in run  # ruff check and ruff format --check, before the tests
