"""``backend="auto"`` (the default): small sweeps run serially, large ones on the process pool;
and the per-process memos that let a run's figures reuse what its simulation computed."""

from __future__ import annotations

import json

import numpy as np

from impactbandits.experiments import aggregates, runner
from impactbandits.experiments.aggregates import AGGREGATES_MEMO, run_aggregates
from impactbandits.experiments.cells import expand
from impactbandits.experiments.store import Store
from impactbandits.oracles import rested

from .conftest import small_spec


def _sessions(path):
    with Store.open_existing(path) as store:
        return json.loads(store.meta("sessions"))


def _tasks(spec, workers=2):
    cells = expand(spec)
    return runner.plan(cells, [list(range(spec.seeds))] * len(cells), workers)


def test_small_work_is_planned_serial_and_large_work_on_the_pool(monkeypatch):
    spec = small_spec()
    tasks = _tasks(spec)
    work = runner.planned_work(tasks)
    assert work > 0
    # the planned work is the tasks' cost estimate, in pulls: at least the pulls themselves
    assert work >= sum(t.cell.rounds * len(t.replications) for t in tasks)
    monkeypatch.setattr(runner, "SERIAL_WORK", work)
    assert runner.choose_backend(tasks, 2) == "serial"
    monkeypatch.setattr(runner, "SERIAL_WORK", work - 1)
    assert runner.choose_backend(tasks, 2) == "process"
    assert runner.choose_backend(tasks, 1) == "serial"  # one core: no pool to gain from


def test_auto_records_the_backend_it_chose(tmp_path, monkeypatch):
    spec = small_spec()
    runner.run_experiment(spec, tmp_path / "small")
    assert [s["backend"] for s in _sessions(tmp_path / "small")] == ["serial"]
    assert _sessions(tmp_path / "small")[0]["workers"] == 1
    monkeypatch.setattr(runner, "SERIAL_WORK", 0)
    runner.run_experiment(spec, tmp_path / "large", workers=2)
    assert [s["backend"] for s in _sessions(tmp_path / "large")] == ["process"]


def test_a_resumed_run_with_nothing_left_starts_no_pool(tmp_path, monkeypatch):
    spec = small_spec()
    runner.run_experiment(spec, tmp_path, backend="serial")
    monkeypatch.setattr(runner, "SERIAL_WORK", 0)
    started = []
    monkeypatch.setattr(runner, "_enter_backend", lambda *a: started.append(a[1]) or (None, None))
    summary = runner.run_experiment(spec, tmp_path)
    assert summary.computed == 0 and started == ["serial"]


def test_compiled_cells_are_costed_per_pull():
    """A compiled cell's task costs rounds × (replications + the loop's small overhead), a
    batched readable one rounds × (replications + TASK_OVERHEAD)."""
    spec = small_spec()
    for task in _tasks(spec):
        reps = len(task.replications)
        if task.cell.compiled:
            expected = task.cell.rounds * (reps + runner.LOOP_TASK_OVERHEAD)
        elif task.cell.vectorised:
            expected = task.cell.rounds * (reps + runner.TASK_OVERHEAD)
        else:
            expected = task.cell.rounds * (runner.WRAPPED_PULL * reps + runner.LOOP_TASK_OVERHEAD)
        assert runner._cost(task) == expected


def test_aggregates_are_read_once_and_again_after_a_write(tmp_path, monkeypatch):
    spec = small_spec(seeds=3)
    runner.run_experiment(spec, tmp_path, backend="serial")
    AGGREGATES_MEMO.clear()
    reads = []
    original = aggregates.read_aggregates

    def counting(*args, **kwargs):
        reads.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(aggregates, "read_aggregates", counting)
    _, first = run_aggregates(tmp_path)
    _, again = run_aggregates(tmp_path)
    assert len(reads) == 1 and again is first
    runner.run_experiment(spec.replace(seeds=5), tmp_path, backend="serial")  # a write
    _, grown = run_aggregates(tmp_path)
    assert len(reads) == 2
    assert int(grown.horizons.keys["seeds"].max()) == 5 > int(first.horizons.keys["seeds"].max())


def test_the_renderer_and_the_oracle_share_one_optimal_allocation(monkeypatch):
    rested._memo.cache_clear()
    calls = []
    original = rested.optimal_allocation

    def counting(curves, *args):
        calls.append(np.asarray(curves).tobytes())
        return original(curves, *args)

    monkeypatch.setattr(rested, "optimal_allocation", counting)
    curves = np.array([[0.5, 0.6, 0.2, 0.1], [0.4, 0.4, 0.4, 0.4]])
    values = rested.allocation_values(curves)
    counts = rested.allocation(curves.copy()).counts
    assert len(calls) == 1
    assert np.array_equal(values, original(curves).values)
    assert np.array_equal(counts, original(curves).counts)


def test_describe_counts_the_cells_expand_makes():
    """``describe`` counts a figure's cells and rounds without building them: the same numbers
    as :func:`expand` for every registered figure at both scales."""
    from impactbandits.experiments.cells import cell_count
    from impactbandits.experiments.figures import FIGURES, get_figure

    for name in sorted(FIGURES):
        for quick in (True, False):
            spec = get_figure(name).spec(quick)
            cells = expand(spec)
            assert cell_count(spec) == (len(cells), sum(c.rounds for c in cells)), (name, quick)
