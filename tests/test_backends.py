"""Results are identical whatever the backend, worker count and batch size."""

from __future__ import annotations

import pandas as pd
import pytest

from impactbandits.experiments.runner import run_experiment
from impactbandits.experiments.tidy import tidy_table

from .conftest import small_spec


def _table(spec, path, **kwargs):
    run_experiment(spec, path, **kwargs)
    return tidy_table(path, trajectories=True)


def test_serial_process_and_dask_give_identical_tables(tmp_path):
    spec = small_spec()
    reference = _table(spec, tmp_path / "serial", backend="serial")
    assert len(reference) > 0
    variants = {
        "auto": dict(),
        "serial-batch1": dict(backend="serial", batch_size=1),
        "process-1": dict(backend="process", workers=1),
        "process-2": dict(backend="process", workers=2, batch_size=4),
        "dask-2": dict(backend="dask", workers=2),
    }
    for name, kwargs in variants.items():
        table = _table(spec, tmp_path / name, **kwargs)
        pd.testing.assert_frame_equal(reference, table, check_exact=True, obj=name)


def test_seed_count_can_grow_without_recomputing(tmp_path):
    spec = small_spec(seeds=3)
    first = run_experiment(spec, tmp_path, backend="serial")
    assert first.computed == first.cells * 3
    grown = run_experiment(spec.replace(seeds=5), tmp_path, backend="serial")
    assert grown.reused == first.cells * 3 and grown.computed == first.cells * 2
    table = tidy_table(tmp_path)
    full = tidy_table(_run_fresh(spec.replace(seeds=5), tmp_path.parent / "fresh"))
    pd.testing.assert_frame_equal(table, full, check_exact=True)


def _run_fresh(spec, path):
    run_experiment(spec, path, backend="serial")
    return path


def test_common_random_numbers_across_policies(tmp_path):
    """Two policies pulling the same arm for the m-th time see the same reward."""
    spec = small_spec(
        environments=[{"kind": "bernoulli", "means": [0.5]}],
        policies=[{"kind": "ucb1"}, {"kind": "greedy"}],
        horizons=[40],
    )
    run_experiment(spec, tmp_path, backend="serial")
    table = tidy_table(tmp_path, trajectories=True)
    ucb = table[table.policy == "ucb1"].reset_index(drop=True)
    greedy = table[table.policy == "greedy"].reset_index(drop=True)
    pd.testing.assert_series_equal(ucb["reward"], greedy["reward"])


@pytest.mark.parametrize("seed", [0, 1])
def test_root_seed_changes_results(tmp_path, seed):
    spec = small_spec(seed=seed, policies=[{"kind": "ucb1"}], horizons=[50])
    run_experiment(spec, tmp_path / "a", backend="serial")
    other = spec.replace(seed=seed + 10)
    run_experiment(other, tmp_path / "b", backend="serial")
    a, b = tidy_table(tmp_path / "a"), tidy_table(tmp_path / "b")
    assert not a["reward"].equals(b["reward"])
