"""The report's statistics streamed from the store (experiments/aggregates.py) against the
tidy-table route: every fast path against a slow exact one.

* the vectorised statistics (:func:`group_stats`) against numpy on each group alone;
* the streamed statistics against :func:`table_stats` of the tidy table (bit for bit) and
  against a pandas groupby reference (to 1e-12);
* the summary's strings against the summary of the tidy table as it was computed before
  (``_reference_summary``, kept here verbatim);
* the report never builds the tidy table.
"""

from __future__ import annotations

import math
import sqlite3
import warnings

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from impactbandits import ExperimentSpec, run_experiment, tidy_table
from impactbandits.experiments import columns as table_columns
from impactbandits.experiments.aggregates import (
    HORIZON_KEYS,
    KEY_COLUMNS,
    TRAJECTORY_KEYS,
    read_aggregates,
)
from impactbandits.experiments.payload import decode, encode
from impactbandits.experiments.plots import (
    draw_metric_vs_horizon,
    draw_metric_vs_time,
    plot_metric_vs_horizon,
    plot_metric_vs_time,
)
from impactbandits.experiments.report import longest_cells, write_report
from impactbandits.experiments.stats import table_stats
from impactbandits.experiments.store import Store
from impactbandits.experiments.store_facts import cell_checksum
from impactbandits.experiments.store_repair import row_checksum
from impactbandits.experiments.summary import (
    TITLES,
    format_estimate,
    pull_shares,
    summary_from_stats,
    summary_table,
)
from impactbandits.experiments.tidy import read_table, seed_limit
from impactbandits.metrics import confidence_halfwidth, group_stats, summarise

ALL_METRICS = ("reward", "regret", "per_step_regret", "pulls", "switches", "phases")


def _spec(seeds: int) -> ExperimentSpec:
    return ExperimentSpec.create(
        name="aggregates",
        environments=[
            {"kind": "bernoulli", "label": "bandit", "means": [0.2, 0.5, 0.7]},
            # extras (utility, required_i), regret on expected utility, policies with phases
            {
                "kind": "opportunity",
                "label": "opportunity",
                "means": [0.2, 0.5, 0.9],
                "fairness": "linear",
                "transfer_cost": 0.5,
            },
            {"kind": "bernoulli", "label": "no oracle", "means": [0.4, 0.6], "oracle": "none"},
        ],
        policies=[
            {"kind": "ucb1"},  # anytime: one cell measures every horizon
            {"kind": "etc"},  # horizon-aware: one cell per horizon
            {"kind": "srum", "environments": ["opportunity"]},  # phases (NaN for the others)
        ],
        horizons=[30, 80, 150],
        seeds=seeds,
        checkpoints=6,
    )


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("aggregates")
    run_experiment(_spec(5), path, backend="serial")
    run_experiment(_spec(4), path, backend="serial")  # the latest spec shows 4 of 5 seeds
    return path


def _read(path, seeds):
    with Store.open_existing(path) as store:
        spec = store.spec()
        longest = longest_cells(store, seed_limit(spec, seeds))
        aggregates = read_aggregates(store, spec, seeds=seeds, trajectory_cells=longest)
        table = read_table(store, spec, seeds=seeds)
        trajectories = read_table(store, spec, trajectories=True, seeds=seeds, cells=longest)
    return aggregates, table, trajectories, spec


def _as_text(keys: pd.DataFrame) -> pd.DataFrame:
    return keys.astype({"environment": str, "policy": str}).reset_index(drop=True)


def _pandas_summarise(table, metric, by, level=0.95):
    """Mean, count and Student-t half-width per group computed with pandas' groupby — the
    implementation ``metrics.summarise`` had before it shared ``group_stats``: an independent
    reference for it."""
    from scipy.special import stdtrit

    values = table[metric].astype(float)
    finite = values.where(np.isfinite(values))
    keys = [table[k] for k in by]
    out = values.groupby(keys, sort=False, observed=True).agg(mean="mean", n="count")
    spread = finite.groupby(keys, sort=False, observed=True).agg(["std", "count"])
    k = spread["count"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = (
            stdtrit(np.maximum(k - 1, 1), 0.5 + level / 2) * spread["std"].to_numpy() / np.sqrt(k)
        )
    out["ci"] = np.where(k >= 2, half, 0.0)
    return out.reset_index()


def test_summarise_equals_the_pandas_reference(run_dir):
    _, table, _, _ = _read(run_dir, None)
    for metric in ("regret", "reward", "switches", "per_step_regret"):
        by = ["environment", "policy", "horizon"]
        mine, reference = summarise(table, metric), _pandas_summarise(table, metric, by)
        pd.testing.assert_frame_equal(_as_text(mine[by]), _as_text(reference[by]))
        np.testing.assert_array_equal(mine["n"].to_numpy(), reference["n"].to_numpy())
        np.testing.assert_allclose(mine["mean"], reference["mean"], rtol=1e-12)
        scale = np.maximum(np.abs(np.nan_to_num(reference["mean"].to_numpy())), 1.0)
        assert np.all(np.abs(mine["ci"] - reference["ci"]).to_numpy() <= 1e-12 * scale)


def _assert_close_to_summarise(stats, table, by, columns):
    """Each statistic against the pandas reference of the table: counts exactly, means to 1e-12
    relative, half-widths to 1e-12 of the mean's magnitude (the half-width of a constant
    column is rounding noise, 1e-14 or 0 depending on the order of the sums)."""
    for column in columns:
        reference = _pandas_summarise(table, column, by)
        pd.testing.assert_frame_equal(_as_text(stats.keys[list(by)]), _as_text(reference[by]))
        np.testing.assert_array_equal(stats.n[column].to_numpy(), reference["n"].to_numpy())
        mean, expected = stats.mean[column].to_numpy(), reference["mean"].to_numpy()
        np.testing.assert_allclose(mean, expected, rtol=1e-12, atol=0, err_msg=column)
        scale = np.maximum(np.abs(np.nan_to_num(expected, posinf=0, neginf=0)), 1.0)
        ci = stats.ci[column].to_numpy()
        assert np.all(np.abs(ci - reference["ci"].to_numpy()) <= 1e-12 * scale), column


def _assert_equal_to_the_table_route(aggregates, table, trajectories, measured):
    """The streamed statistics bit for bit what the same statistics give on the tidy table's
    rows, and close to the pandas reference."""
    for streamed, rows, by, names in (
        (aggregates.horizons, table, HORIZON_KEYS, measured),
        (aggregates.trajectories, trajectories, TRAJECTORY_KEYS, ["regret", "reward"]),
    ):
        reference = table_stats(rows, by, names)
        pd.testing.assert_frame_equal(_as_text(streamed.keys), _as_text(reference.keys))
        for part in ("mean", "ci", "n"):
            pd.testing.assert_frame_equal(
                getattr(streamed, part), getattr(reference, part), check_exact=True
            )
        _assert_close_to_summarise(streamed, rows, list(by), names)


@pytest.mark.parametrize("seeds", [None, "all", 2])
def test_streamed_statistics_equal_those_of_the_tidy_table(run_dir, seeds):
    aggregates, table, trajectories, _ = _read(run_dir, seeds)
    assert aggregates.columns == tuple(table.columns)
    measured = [c for c in table.columns if c not in KEY_COLUMNS]
    assert {"utility", "phase_1", "competitive_ratio", "pulls_2"} <= set(measured)
    _assert_equal_to_the_table_route(aggregates, table, trajectories, measured)
    # the seeds of every group, horizon-aware and anytime cells alike
    shown = {None: 4, "all": 5, 2: 2}[seeds]
    assert (aggregates.horizons.keys["seeds"] == shown).all()
    assert len(aggregates.horizons) == table.groupby(list(HORIZON_KEYS), observed=True).ngroups


def _reference_summary(table: pd.DataFrame, metrics) -> pd.DataFrame:
    """summary_table as it was before the report read statistics (from the tidy table, per
    group with pandas and metrics.confidence_halfwidth)."""

    def estimate(values: pd.Series) -> str:
        data = values.dropna().to_numpy(dtype=float)
        if not data.size:
            return ""
        half = confidence_halfwidth(data) if data.size > 1 else None
        return format_estimate(float(data.mean()), half)

    arms = [c for c in table.columns if c.startswith("pulls_")]
    phases = [c for c in table.columns if c.startswith("phase_") and c != "phase_switches"]
    last = table[
        table["horizon"] == table.groupby("environment", observed=True)["horizon"].transform("max")
    ]
    wanted = [m for m in metrics if m in table.columns or m in ("pulls", "phases")]
    if "reward" in wanted and "optimum" in table.columns and table["optimum"].notna().any():
        wanted.insert(wanted.index("reward") + 1, "optimum")
    rows = []
    for (env, policy), group in last.groupby(["environment", "policy"], sort=False, observed=True):
        row = {"environment": env, "policy": policy, "T": int(group["horizon"].iloc[0]),
               "seeds": int(group["seed"].nunique())}  # fmt: skip
        for metric in wanted:
            if metric == "pulls":
                if arms:
                    row[TITLES["pulls"]] = pull_shares(group[arms].mean().to_numpy())
            elif metric == "phases":
                for column in phases:
                    row[column] = estimate(group[column])
            else:
                row[TITLES.get(metric, metric)] = estimate(group[metric])
        row["_order"] = float(group["regret"].mean()) if "regret" in group else 0.0
        rows.append(row)
    out = pd.DataFrame(rows)
    out["_env"] = pd.Categorical(
        out["environment"], categories=list(dict.fromkeys(out["environment"]))
    )
    out = out.sort_values(["_env", "_order"], kind="stable", na_position="last")
    return out.drop(columns=["_env", "_order"]).reset_index(drop=True)


@pytest.mark.parametrize("seeds", [None, "all", 2])
@pytest.mark.parametrize("metrics", [ALL_METRICS, ("regret", "pulls")])
def test_summary_strings_are_those_of_the_table(run_dir, seeds, metrics):
    aggregates, table, _, _ = _read(run_dir, seeds)
    has_optimum = bool((aggregates.horizons.n["optimum"] > 0).any())
    streamed = summary_from_stats(aggregates.horizons, aggregates.columns, metrics, has_optimum)
    reference = _reference_summary(table, metrics)
    pd.testing.assert_frame_equal(streamed, reference, check_exact=True)
    pd.testing.assert_frame_equal(summary_table(table, metrics), reference, check_exact=True)
    if "phases" in metrics:  # srum's phase shares; empty for the policies without phases
        assert {"phase_1", "phase_4"} <= set(streamed.columns)
        assert (streamed.loc[streamed.policy == "ucb1", "phase_1"] == "").all()
        assert (streamed.loc[streamed.policy == "srum", "phase_1"] != "").all()


def _curves(ax):
    """The drawn lines (label, x, y) and the vertices of their bands."""
    lines = [(line.get_label(), *np.asarray(line.get_xydata()).T) for line in ax.lines]
    bands = [np.asarray(c.get_paths()[0].vertices) for c in ax.collections]
    return lines, bands


def test_figures_from_the_store_draw_the_tidy_tables_means_and_bands(run_dir):
    aggregates, table, trajectories, _ = _read(run_dir, None)
    for env, metric_h, metric_t in (("bandit", "per_step_regret", "regret"),
                                    ("opportunity", "regret", "regret"),
                                    ("no oracle", "reward", "reward")):  # fmt: skip
        drawn = []
        for plot, data, metric in (
            (plot_metric_vs_horizon, table, metric_h),
            (draw_metric_vs_horizon, aggregates.horizons, metric_h),
            (plot_metric_vs_time, trajectories, metric_t),
            (draw_metric_vs_time, aggregates.trajectories, metric_t),
        ):
            ax = Figure().subplots()
            plot(data, ax, metric=metric, environment=env)
            drawn.append(_curves(ax))
        for table_route, streamed in (drawn[:2], drawn[2:]):
            (lines, bands), (lines_s, bands_s) = table_route, streamed
            assert [label for label, *_ in lines] == [label for label, *_ in lines_s]
            assert len(lines) == (3 if env == "opportunity" else 2)
            for (_, x, y), (_, xs, ys) in zip(lines, lines_s, strict=True):
                np.testing.assert_array_equal(x, xs)
                np.testing.assert_array_equal(y, ys)
            for band, band_s in zip(bands, bands_s, strict=True):
                np.testing.assert_array_equal(band, band_s)
        # and the means are those pandas gives (the figures' statistics before)
        rows = table[table.environment == env]
        reference = _pandas_summarise(rows, metric_h, ("policy", "horizon"))
        for label, _, y in drawn[1][0]:
            mine = reference[reference.policy == label].sort_values("horizon")
            np.testing.assert_allclose(y, mine["mean"], rtol=1e-12)


def _pooled_store(path, drop: bool):
    """A store in which two cells measure the same groups: a copy of the anytime UCB1 cell of
    "bandit", listed last, with other values (shifted rewards) and, with ``drop``, for odd
    seeds without its first grid horizon and first trajectory point (other checkpoints than
    the original)."""
    run_experiment(_spec(3).replace(name="pooled"), path, backend="serial")
    db = sqlite3.connect(path / "results.sqlite")
    cell = db.execute(
        "SELECT * FROM cells WHERE environment = 'bandit' AND policy = 'ucb1'"
    ).fetchone()
    position = db.execute("SELECT MAX(position) FROM cells").fetchone()[0] + 1
    copy = "f" * 16
    row = (copy, position, *cell[2:10])  # the columns before the row's checksum
    db.execute("INSERT INTO cells VALUES (?,?,?,?,?,?,?,?,?,?,?)",
               (*row, cell_checksum(row)))  # fmt: skip
    for seed, blob in db.execute(
        "SELECT seed, payload FROM results WHERE cell = ?", (cell[0],)
    ).fetchall():
        payload = decode(blob)
        payload["reward"] = payload["reward"] + 3.0 * seed
        payload["expected"] = payload["expected"] + 0.25 * (seed + 1)
        if drop and seed % 2:
            first_grid = np.flatnonzero(payload["times"] == 30)[0]
            kept = np.delete(np.arange(payload["times"].size), [0, first_grid])
            for name in ("times", "reward", "expected", "optimum", "pulls", "switches"):
                payload[name] = payload[name][kept]
        data = encode(payload)
        db.execute("INSERT INTO results (cell, seed, payload, seconds, crc) VALUES (?,?,?,?,?)",
                   (copy, seed, data, 0.0, row_checksum(copy, seed, data)))  # fmt: skip
    db.commit()
    db.close()


@pytest.mark.parametrize("drop", [False, True])
def test_groups_spanning_several_cells_are_pooled_as_the_table_pools_them(tmp_path, drop):
    # never made by a spec (an anytime cell is alone in measuring its horizons), but the
    # streamed statistics must not depend on it
    _pooled_store(tmp_path, drop)
    aggregates, table, trajectories, _ = _read(tmp_path, None)
    measured = [c for c in table.columns if c not in KEY_COLUMNS]
    _assert_equal_to_the_table_route(aggregates, table, trajectories, measured)
    pooled = aggregates.horizons.where(environment="bandit", policy="ucb1")
    # 3 seeds in each cell (the same 3); with drop, the odd seed of the copy lacks horizon 30
    assert pooled.n["reward"].tolist() == [5 if drop else 6, 6, 6]
    assert (pooled.keys["seeds"] == 3).all()
    has_optimum = bool((aggregates.horizons.n["optimum"] > 0).any())
    streamed = summary_from_stats(aggregates.horizons, aggregates.columns, ALL_METRICS,
                                  has_optimum)  # fmt: skip
    pd.testing.assert_frame_equal(streamed, _reference_summary(table, ALL_METRICS))


@pytest.mark.parametrize("size", [1, 2, 3, 7, 8, 9, 16, 127, 128, 129, 200, 1000, 4099])
def test_group_statistics_are_numpys_on_each_group_alone(size):
    rng = np.random.default_rng(size)
    rows = rng.normal(1e3, 5.0, (6, size)) * rng.uniform(0.1, 10, (6, 1))
    rows[1] = 7.3  # constant: the half-width is rounding noise, the same noise
    rows[2, ::3] = np.nan
    rows[3, 0] = np.inf
    rows[4, -1] = -np.inf
    rows[5] = np.nan
    mean, ci, n = group_stats(rows)
    for i, row in enumerate(rows):
        values = row[~np.isnan(row)]
        assert n[i] == values.size
        expected = values.mean() if values.size else np.nan
        assert (mean[i] == expected) or (math.isnan(mean[i]) and math.isnan(expected)), i
        assert ci[i] == confidence_halfwidth(values), i
    wide = group_stats(rows, level=0.8)[1]
    assert wide[0] == confidence_halfwidth(rows[0], level=0.8)


def test_table_stats_of_unequal_groups_and_without_seeds():
    table = pd.DataFrame({"policy": ["a", "b", "a", "b", "a"], "x": [1, 1, 1, 2, 1],
                          "v": [1.0, 2.0, 4.0, np.nan, 8.0]})  # fmt: skip
    stats = table_stats(table, ("policy", "x"), ["v"])
    assert stats.keys.to_dict("list") == {"policy": ["a", "b", "b"], "x": [1, 1, 2],
                                          "seeds": [3, 1, 1]}  # fmt: skip
    assert stats.mean["v"].tolist()[:2] == [13 / 3, 2.0] and np.isnan(stats.mean["v"][2])
    assert stats.n["v"].tolist() == [3, 1, 0]
    assert stats.ci["v"][0] == confidence_halfwidth(np.array([1.0, 4.0, 8.0]))
    empty = table_stats(table.iloc[:0], ("policy", "x"), ["v"])
    assert len(empty) == 0 and list(empty.mean.columns) == ["v"]


def test_the_report_never_builds_the_tidy_table(run_dir, monkeypatch):
    # every tidy table is built in columns.Columns (read_table): the report must not make one
    def refuse(*args, **kwargs):
        raise AssertionError("the report built the tidy table")

    monkeypatch.setattr(table_columns.Columns, "__init__", refuse)
    with pytest.raises(AssertionError, match="built the tidy table"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tidy_table(run_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = write_report(run_dir).read_text(encoding="utf-8")
        assert "Summary at T = 150, 4 seeds" in text and text.count("<img") == 3
        write_report(run_dir, seeds="all")
        png = next((run_dir / "figures").glob("*.png"))
        paper = write_report(run_dir, extra_figures=[png]).read_text(encoding="utf-8")
    assert paper.count("<img") == 1
