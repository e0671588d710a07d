"""The memory the report's reading takes does not grow with the results of a cell, and the
numbers stay those of the tidy table.

* the seed coverage (:func:`store_coverage`) holds a few bytes per stored result, not a Python
  object (a store of 10⁶ results took 0.2 GB there);
* the streamed statistics (:func:`read_aggregates`) reduce a cell a block at a time and set
  values aside in a temporary file beyond a budget (:mod:`~impactbandits.experiments.group_pool`,
  :mod:`~impactbandits.experiments.spill`): their peak stays near the budget, and what they
  give is bit for bit the tidy table's statistics, spilled or not, the file writable or not.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from impactbandits import ExperimentSpec, run_experiment
from impactbandits.experiments import columns as table_columns
from impactbandits.experiments import group_pool
from impactbandits.experiments.aggregates import (
    HORIZON_KEYS,
    KEY_COLUMNS,
    TRAJECTORY_KEYS,
    read_aggregates,
)
from impactbandits.experiments.report import longest_cells
from impactbandits.experiments.spill import Spill
from impactbandits.experiments.stats import table_stats
from impactbandits.experiments.store import Store
from impactbandits.experiments.tidy import read_table, seed_limit, store_coverage


def _mixed_spec() -> ExperimentSpec:
    return ExperimentSpec.create(
        name="report-memory",
        environments=[
            {"kind": "bernoulli", "label": "bandit", "means": [0.2, 0.5, 0.7]},
            {
                "kind": "opportunity",
                "label": "opportunity",
                "means": [0.2, 0.5, 0.9],
                "fairness": "linear",
                "transfer_cost": 0.5,
            },
        ],
        policies=[
            {"kind": "ucb1"},
            {"kind": "etc"},
            {"kind": "srum", "environments": ["opportunity"]},
        ],
        horizons=[30, 80],
        seeds=23,
        checkpoints=9,
    )


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory):
    path = tmp_path_factory.mktemp("report-memory")
    run_experiment(_mixed_spec(), path, backend="serial")
    return path


def _as_text(keys: pd.DataFrame) -> pd.DataFrame:
    return keys.astype({"environment": str, "policy": str}).reset_index(drop=True)


def _aggregates_and_tables(path):
    with Store.open_existing(path) as store:
        spec = store.spec()
        longest = longest_cells(store, seed_limit(spec, None))
        aggregates = read_aggregates(store, spec, trajectory_cells=longest)
        table = read_table(store, spec)
        trajectories = read_table(store, spec, trajectories=True, cells=longest)
    return aggregates, table, trajectories


def _assert_the_tables_statistics(aggregates, table, trajectories):
    measured = [c for c in table.columns if c not in KEY_COLUMNS]
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


@pytest.fixture
def small_pieces(monkeypatch):
    """Batches of 5 results, blocks of 7 values, and every part spilled as soon as it comes:
    every join, block boundary and read-back path is taken."""
    monkeypatch.setattr(table_columns, "_GROUP", 5)
    monkeypatch.setattr(group_pool, "BLOCK", 7)
    monkeypatch.setattr(group_pool, "HELD_BYTES", 1)
    written = []
    put = Spill.put

    def counting(self, rows):
        written.append(rows.nbytes)
        return put(self, rows)

    monkeypatch.setattr(Spill, "put", counting)
    return written


def test_spilled_statistics_are_the_tables_bit_for_bit(mixed_run, small_pieces):
    aggregates, table, trajectories = _aggregates_and_tables(mixed_run)
    assert small_pieces, "nothing was spilled"
    _assert_the_tables_statistics(aggregates, table, trajectories)


def test_an_unwritable_spill_keeps_the_values_in_memory(mixed_run, small_pieces, monkeypatch):
    def refuse(self, rows):
        raise OSError("No space left on device")

    monkeypatch.setattr(Spill, "put", refuse)
    _assert_the_tables_statistics(*_aggregates_and_tables(mixed_run))


def test_a_spilled_array_reads_back_rows_and_indices():
    values = np.arange(42, dtype=np.int64).reshape(6, 7)
    with Spill() as spill:
        spill.put(np.ones((2, 3)))  # not at offset 0
        spilled = spill.put(values)
        np.testing.assert_array_equal(spilled.rows(slice(1, 4)), values[1:4])
        np.testing.assert_array_equal(spilled.rows(slice(5, 99)), values[5:])
        np.testing.assert_array_equal(spilled.rows(np.array([4, 0])), values[[4, 0]])
        assert spilled.rows(slice(3, 3)).shape == (0, 7)
        with pytest.raises(IndexError):
            spilled.rows(np.array([6]))


@pytest.fixture(scope="module")
def long_run(tmp_path_factory):
    """One cell read as a trajectory: 1,500 seeds × about 300 checkpoints (3.5 MB of regret,
    as much of reward)."""
    path = tmp_path_factory.mktemp("report-memory-long")
    spec = ExperimentSpec.create(
        name="report-memory-long",
        environments=[{"kind": "bernoulli", "label": "bandit", "means": [0.3, 0.6]}],
        policies=[{"kind": "ucb1"}],
        horizons=[800],
        seeds=1500,
        checkpoints=400,
    )
    run_experiment(spec, path, backend="serial")
    return path


def _peak(call):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        value = call()
        return value, tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


def test_the_statistics_hold_no_more_than_the_budget(long_run, monkeypatch):
    monkeypatch.setattr(group_pool, "HELD_BYTES", 256 * 1024)
    monkeypatch.setattr(group_pool, "BLOCK", 16 * 1024)
    monkeypatch.setattr(table_columns, "_GROUP", 16)  # a batch of results: 0.6 MB decoded
    with Store.open_existing(long_run) as store:
        spec = store.spec()
        longest = longest_cells(store, seed_limit(spec, None))
        aggregates, peak = _peak(lambda: read_aggregates(store, spec, trajectory_cells=longest))
    checkpoints = len(aggregates.trajectories)  # 400 asked, fewer distinct rounds
    assert checkpoints > 250
    trajectory = 1500 * checkpoints * 8 * 2  # regret and reward of every seed and checkpoint
    # before: every value held, then copied into one array and its deviations (3x and more);
    # now the budget, a block and one batch of results (about 1 MB here)
    assert peak < trajectory / 3, f"{peak / 1e6:.2f} MB at the peak for {trajectory / 1e6:.2f} MB"


def test_the_seed_coverage_takes_a_few_bytes_per_result(tmp_path):
    spec = ExperimentSpec.create(
        name="coverage-memory",
        environments=[
            {"kind": "bernoulli", "label": f"b{i}", "means": [0.3, 0.5 + 0.1 * i]} for i in (0, 1)
        ],
        policies=[{"kind": "ucb1"}, {"kind": "greedy"}],
        horizons=[3],
        seeds=4000,
        checkpoints=2,
    )
    run_experiment(spec, tmp_path, backend="serial")
    with Store.open_existing(tmp_path) as store:
        store.cells()  # the store's own checks, read once
        coverage, peak = _peak(lambda: store_coverage(store, spec, None))
    assert coverage.expected == 16_000 and coverage.missing == 0
    # a set of (cell, seed) tuples: about 200 bytes a result; sorted seed arrays: 8
    assert peak < 48 * 16_000, f"{peak / 16_000:.0f} bytes per result"
