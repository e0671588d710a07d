"""The durations the README, CONTRIBUTING.md, the documentation, the Makefile and ``--help``
state come from one measured table (``docs/fidelity/timings.toml``): each sentence says what the
table says, each duration said in words is one the table makes true, and no other duration is
stated (``benchmarks/fidelity/timing_statements.py``). Every measurement in the table names the
command that reproduces it (``benchmarks/fidelity/timing_measurements.py``)."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks" / "fidelity"))
import timing_measurements  # noqa: E402 - benchmarks/ is not a package
import timing_statements  # noqa: E402


def test_every_text_agrees_with_the_table():
    problems = timing_statements.check()
    assert problems == [], "\n".join(problems)


def test_the_statements_are_the_table_s_numbers():
    table = timing_statements.load()
    figures = {k: v for k, v in table.items() if not k.startswith("_")}
    text = {key: s.render(table) for key, s in timing_statements.STATEMENTS.items()}
    total = sum(float(v["cpu_s"]) for v in figures.values())
    assert text["figures"].startswith(f"{total:,.0f} CPU s for all {len(figures)} registered")
    assert f"{float(table['_kernels']['cpu_s']):,.0f} CPU s" in text["kernels"]
    fig1 = float(table["lindner-fig1"]["cpu_s"])
    shown = f"{fig1:,.0f}" if fig1 >= 10 else f"{fig1:.1f}"
    assert f"takes {shown} CPU s instead of" in text["compiled"]
    assert text["lindner-fig1"].endswith(f"full paper scale, {shown} CPU s")


def test_each_measurement_names_the_command_that_reproduces_it():
    table = timing_statements.load()
    measured = {k[1:]: v for k, v in table.items() if k.startswith("_") and k != "_meta"}
    assert set(measured) == set(timing_measurements.MEASUREMENTS)
    for name, entry in measured.items():
        assert entry["command"] == timing_measurements.MEASUREMENTS[name].command, name
        assert {"cpu_s", "wall_s", "date"} <= set(entry), name


def test_the_scratch_folder_holds_what_the_commands_name():
    folder = timing_measurements._scratch(ROOT)
    try:
        files = {path.name for path in folder.iterdir()}
        for name, spec in timing_measurements.MEASUREMENTS.items():
            named = {word for word in spec.command.split() if word.endswith((".toml", ".py"))}
            if spec.where == "scratch":
                assert named <= files, (name, named - files)
        assert (folder / ".venv" / "bin").is_dir()
    finally:
        shutil.rmtree(folder)


# ---- the check can fail ------------------------------------------------------------------------


def _copy(tmp_path: Path) -> Path:
    """The texts and the table, copied: a tree :func:`timing_statements.check` reads."""
    names = {"README.md", "CONTRIBUTING.md", "Makefile"}
    names |= {place for s in timing_statements.STATEMENTS.values() for place in s.places}
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "docs", tmp_path / "docs", dirs_exist_ok=True)
    return tmp_path


@pytest.fixture(scope="module")
def copied(tmp_path_factory):
    return _copy(tmp_path_factory.mktemp("texts"))


def _edit(root: Path, name: str, old: str, new: str) -> None:
    """Replace ``old`` (wherever its lines break) by ``new`` in the copy of ``name``."""
    path = root / name
    pattern = r"\s+".join(map(re.escape, old.split()))
    text, count = re.subn(pattern, new, path.read_text(encoding="utf-8"), count=1)
    assert count == 1, old
    path.write_text(text, encoding="utf-8")


def test_a_stale_statement_is_found(tmp_path):
    root = _copy(tmp_path)
    wanted = timing_statements.STATEMENTS["kernels"].render(timing_statements.load())
    _edit(root, "README.md", wanted, "about 25 seconds to build the compiled loops")
    problems = timing_statements.check(root)
    assert any(p.startswith("README.md: does not say") for p in problems), problems
    assert any("a duration that is not from the table" in p for p in problems), problems


def test_a_duration_not_from_the_table_is_found(tmp_path):
    root = _copy(tmp_path)
    _edit(root, "docs/how-to/dask.md", "## When Dask pays", "It starts in ~3 s.\n\n## When")
    problems = timing_statements.check(root)
    assert len(problems) == 1, problems
    assert problems[0].startswith("docs/how-to/dask.md: a duration that is not from the table")
    assert "~3 s" in problems[0]


def test_a_duration_in_words_the_table_contradicts_is_found(copied):
    table = timing_statements.load()
    slow = {**table, "tang-fig2": {**table["tang-fig2"], "quick_cpu_s": 95.0}}
    problems = timing_statements.check(copied, slow)
    assert any("is not true" in p and "quick" in p for p in problems), problems


def test_a_figure_missing_from_the_table_is_found(copied):
    table = {k: v for k, v in timing_statements.load().items() if k != "patil-potential"}
    problems = timing_statements.check(copied, table)
    assert problems and "patil-potential" in problems[0]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("--out runs/fig1-quick   # ~5 s", ["~5 s"]),
        ("marked `slow`, about two minutes)", ["two minutes"]),
        ("full paper scale, 12 CPU s", ["12 CPU s"]),
        ("compiled on its first use (a few seconds)", ["a few seconds"]),
        ("about 2–3 µs a round", ["2–3 µs"]),
        ("load it in a fraction of a second", ["a fraction of a second"]),
        ("10^6-10^7 pulls per CPU second", ["per CPU second"]),
        ("runs in seconds instead of minutes", ["seconds", "minutes"]),
        ("params, streams, 10 MB, T = 10,000, 5 seeds, 3 sites", []),
    ],
)
def test_the_pattern_finds_durations(text, found):
    assert [m.group(0) for m in timing_statements.PHRASE.finditer(text)] == found
