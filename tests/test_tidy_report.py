"""The tidy table's columns and identities; export; report; plots on a given axis."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from click.testing import CliRunner

from impactbandits import run_experiment, tidy_table
from impactbandits.cli import cli
from impactbandits.experiments.plots import plot_metric_vs_horizon
from impactbandits.experiments.report import write_report

from .conftest import small_spec

REQUIRED = ["experiment", "environment", "policy", "horizon", "seed", "reward", "optimum", "regret"]


def test_tidy_table_identities(tmp_path):
    spec = small_spec()
    run_experiment(spec, tmp_path, backend="serial")
    table = tidy_table(tmp_path)
    assert set(REQUIRED) <= set(table.columns)
    # one row per (cell, seed, horizon)
    keys = table[["environment", "policy", "horizon", "seed"]]
    assert not keys.duplicated().any()
    per_cell = table.groupby(["environment", "policy"]).size()
    assert (per_cell == len(spec.horizons) * spec.seeds).all()
    np.testing.assert_allclose(table["regret"], table["optimum"] - table["expected_reward"])
    np.testing.assert_allclose(table["per_step_regret"], table["regret"] / table["horizon"])
    b2 = table[table.environment == "b2"]
    np.testing.assert_allclose(b2[["pulls_0", "pulls_1"]].sum(axis=1), b2["horizon"])
    assert b2["pulls_2"].isna().all()  # the 2-arm bandit has no third arm
    np.testing.assert_allclose(b2["optimum"], 0.7 * b2["horizon"])
    assert (table["switches"] < table["horizon"]).all()


def test_export_csv_and_parquet_round_trip(tmp_path):
    run_experiment(small_spec(seeds=2), tmp_path / "run", backend="serial")
    runner = CliRunner()
    for fmt in ("csv", "parquet"):
        out = tmp_path / f"t.{fmt}"
        result = runner.invoke(
            cli, ["export", str(tmp_path / "run"), "--format", fmt, "-o", str(out)]
        )
        assert result.exit_code == 0, result.output
        read = pd.read_csv(out) if fmt == "csv" else pd.read_parquet(out)
        expected = tidy_table(tmp_path / "run")
        assert list(read.columns) == list(expected.columns)
        np.testing.assert_allclose(read["regret"], expected["regret"])


def test_environment_without_oracle_leaves_regret_empty(tmp_path):
    spec = small_spec(
        environments=[{"kind": "bernoulli", "means": [0.2, 0.4], "oracle": "none"}],
        policies=[{"kind": "ucb1"}],
    )
    run_experiment(spec, tmp_path, backend="serial")
    table = tidy_table(tmp_path)
    assert table["optimum"].isna().all() and table["regret"].isna().all()
    assert table["reward"].notna().all()
    assert write_report(tmp_path).is_file()


def test_report_and_plot_take_an_axis(tmp_path):
    run_experiment(small_spec(seeds=3), tmp_path, backend="serial")
    report = write_report(tmp_path)
    text = report.read_text()
    assert "<img" in text and "Summary" in text
    pngs = list((tmp_path / "figures").glob("*.png"))
    assert len(pngs) == 2 and all(p.stat().st_size > 1000 for p in pngs)
    fig, ax = plt.subplots()
    assert plot_metric_vs_horizon(tidy_table(tmp_path), ax) is ax
    assert len(ax.lines) == 4  # one line per policy
    plt.close(fig)


def test_reproduce_demo_quick_writes_report(tmp_path):
    result = CliRunner().invoke(
        cli,
        [
            "reproduce",
            "demo-stationary",
            "--quick",
            "--seeds",
            "3",
            "--backend",
            "serial",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "report.html").is_file()
    assert str(tmp_path / "report.html") in result.stdout


def test_plots_show_only_the_policies_run_on_an_environment(tmp_path):
    spec = small_spec(
        environments=[
            {"kind": "bernoulli", "label": "a", "means": [0.3, 0.7]},
            {"kind": "bernoulli", "label": "b", "means": [0.6, 0.4]},
        ],
        policies=[{"kind": "ucb1"}, {"kind": "greedy", "environments": ["a"]}],
        seeds=2,
    )
    run_experiment(spec, tmp_path, backend="serial")
    table = tidy_table(tmp_path)
    assert isinstance(table["policy"].dtype, pd.CategoricalDtype)
    for env, expected in (("a", 2), ("b", 1)):
        fig, ax = plt.subplots()
        plot_metric_vs_horizon(table, ax, environment=env)
        assert len(ax.lines) == expected
        plt.close(fig)
