"""Tables and reports say when stored seeds are left out or results are missing."""

from __future__ import annotations

import sqlite3
import warnings

import matplotlib

matplotlib.use("Agg")
import pandas as pd
import pytest
from click.testing import CliRunner

from impactbandits import SpecError, tidy_table
from impactbandits.cli import cli
from impactbandits.experiments.store import StoreWarning
from impactbandits.experiments.tidy import seed_coverage

SPEC = """
name = "hidden"
seeds = {seeds}
horizons = [20, 50]
checkpoints = 4

[[environments]]
kind = "bernoulli"
label = "b2"
means = [0.3, 0.7]

[[policies]]
kind = "ucb1"

[[policies]]
kind = "greedy"
"""


def _run(tmp_path, seeds: int, *extra: str):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(seeds=6))
    args = ["run", str(spec), "--out", str(tmp_path / "run"), "--backend", "serial"]
    result = CliRunner().invoke(cli, [*args, "--no-report", "--seeds", str(seeds), *extra])
    assert result.exit_code == 0, result.output
    return tmp_path / "run"


def _warnings(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("warning: ")]


def _seeds(path) -> int:
    return pd.read_csv(path)["seed"].nunique()


@pytest.fixture
def rerun_with_fewer_seeds(tmp_path):
    """6 seeds stored, then the same spec run again with --seeds 2."""
    _run(tmp_path, 6)
    return _run(tmp_path, 2)


def test_export_warns_about_hidden_seeds_and_all_seeds_shows_them(tmp_path, rerun_with_fewer_seeds):
    run_dir = rerun_with_fewer_seeds
    result = CliRunner().invoke(cli, ["export", str(run_dir), "-o", str(tmp_path / "a.csv")])
    assert result.exit_code == 0, result.output
    # before: no word; the table silently held 2 of the 6 stored seeds
    assert _warnings(result) == [
        "warning: showing 2 of 6 stored seeds (the latest run asked for 2); use --all-seeds "
        "to show them all"
    ]
    assert _seeds(tmp_path / "a.csv") == 2
    result = CliRunner().invoke(
        cli, ["export", str(run_dir), "-o", str(tmp_path / "b.csv"), "--all-seeds"]
    )
    assert result.exit_code == 0, result.output
    assert _warnings(result) == []
    assert _seeds(tmp_path / "b.csv") == 6


def test_report_warns_and_states_seeds_shown_and_stored(rerun_with_fewer_seeds):
    run_dir = rerun_with_fewer_seeds
    result = CliRunner().invoke(cli, ["report", str(run_dir)])
    assert result.exit_code == 0, result.output
    assert len(_warnings(result)) == 1 and "2 of 6 stored seeds" in result.stderr
    assert "2 seeds shown of 6 stored" in (run_dir / "report.html").read_text(encoding="utf-8")
    result = CliRunner().invoke(cli, ["report", str(run_dir), "--all-seeds"])
    assert result.exit_code == 0, result.output
    assert _warnings(result) == []
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    # the summary's heading says how many seeds its rows average (the same in every row)
    assert "6 seeds (every stored seed)" in html and ", 6 seeds</h2>" in html


def _delete(run_dir, where: str) -> None:
    with sqlite3.connect(run_dir / "results.sqlite") as db:
        db.execute(f"DELETE FROM results WHERE {where}")


def test_incomplete_store_says_how_many_results_are_missing(tmp_path):
    run_dir = _run(tmp_path, 6)
    # an interrupted run: the greedy cell has seeds 0-2 only
    cell = "(SELECT cell FROM cells WHERE policy = 'greedy')"
    _delete(run_dir, f"cell = {cell} AND seed >= 3")
    result = CliRunner().invoke(cli, ["export", str(run_dir), "-o", str(tmp_path / "a.csv")])
    assert result.exit_code == 0, result.output
    assert _warnings(result) == [
        "warning: 3 of 12 results are missing; run the same command again to finish"
    ]
    # --all-seeds on cells holding different seed sets says so
    result = CliRunner().invoke(
        cli, ["export", str(run_dir), "-o", str(tmp_path / "b.csv"), "--all-seeds"]
    )
    lines = _warnings(result)
    assert any("cells hold different seed sets (3 to 6 seeds each)" in line for line in lines)
    # the same command finishes the run, and the warnings go away
    _run(tmp_path, 6)
    result = CliRunner().invoke(cli, ["export", str(run_dir), "-o", str(tmp_path / "c.csv")])
    assert _warnings(result) == []


def test_uneven_seeds_behind_fewer_seeds_are_named(tmp_path):
    run_dir = _run(tmp_path, 6)
    _delete(run_dir, "cell = (SELECT cell FROM cells WHERE policy = 'greedy') AND seed >= 4")
    _run(tmp_path, 2)
    result = CliRunner().invoke(cli, ["export", str(run_dir), "-o", str(tmp_path / "a.csv")])
    assert _warnings(result) == [
        "warning: showing 2 seeds; cells hold 4 to 6 stored seeds each (the latest run asked "
        "for 2); use --all-seeds to show them all"
    ]


def test_library_api(rerun_with_fewer_seeds):
    run_dir = rerun_with_fewer_seeds
    with pytest.warns(StoreWarning, match="showing 2 of 6 stored seeds"):
        assert tidy_table(run_dir)["seed"].nunique() == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        assert tidy_table(run_dir, seeds="all")["seed"].nunique() == 6
        assert tidy_table(run_dir, seeds=6)["seed"].nunique() == 6
    with pytest.warns(StoreWarning, match=r"showing 3 of 6 stored seeds \(asked for 3\)"):
        assert tidy_table(run_dir, seeds=3)["seed"].nunique() == 3
    coverage = seed_coverage(run_dir)
    assert (coverage.shown, coverage.stored, coverage.missing) == (2, 6, 0)
    assert coverage.describe() == "2 seeds shown of 6 stored"
    for bad in (0, -1, "some", 2.5):
        with pytest.raises(SpecError, match="seeds"):
            tidy_table(run_dir, seeds=bad)
