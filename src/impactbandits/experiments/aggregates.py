"""The statistics the report shows, streamed from the store instead of read from the tidy table.

Everything the report shows is a statistic over seeds of a group of tidy-table rows
(:mod:`~impactbandits.experiments.stats`): per environment, policy and horizon, and per round
of the longest run of each policy. :func:`read_aggregates` reads the store cell by cell
(:meth:`~impactbandits.experiments.store.Store.results` streams it ordered by cell, then seed),
derives the table's columns of each batch of results with
:func:`~impactbandits.experiments.tidy.measurements` (as
:func:`~impactbandits.experiments.tidy.read_table` does), stacks one cell's values
(seeds × checkpoints) and keeps only their statistics
(:class:`~impactbandits.experiments.group_pool.Pool`). Held: the values of one cell at its grid
horizons (for a cell read as a trajectory also the trajectory columns at every checkpoint),
never the table; beyond :data:`~impactbandits.experiments.group_pool.HELD_BYTES` they wait in a
temporary file, so the memory a report takes does not grow with the seeds of a cell.

A group spans one cell in every store a spec makes: an anytime cell measures all the horizons of
its (environment, policy), a horizon-aware cell one horizon, and labels are unique per
environment. Should a store hold more (two cells of one environment and policy that measure a
horizon, or two read as trajectories of one length), their values are kept until the last of
them is read and pooled in the table's order, as the table would pool them.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from impactbandits.experiments.columns import groups
from impactbandits.experiments.group_pool import Held, Part, Pool
from impactbandits.experiments.spec import SpecRecord
from impactbandits.experiments.spill import Spill
from impactbandits.experiments.stats import Stats
from impactbandits.experiments.store import STORE_FILE, Store
from impactbandits.experiments.store_files import companions
from impactbandits.experiments.tidy import (
    BASE_COLUMNS,
    ORACLE_COLUMNS,
    Seeds,
    grid_checkpoints,
    measurements,
    seed_limit,
)

__all__ = [
    "AGGREGATES_MEMO",
    "HORIZON_KEYS",
    "KEY_COLUMNS",
    "TRAJECTORY_COLUMNS",
    "TRAJECTORY_KEYS",
    "Aggregates",
    "read_aggregates",
    "run_aggregates",
    "table_columns",
]

#: Columns of the tidy table that say which row it is rather than measure something.
KEY_COLUMNS = frozenset(BASE_COLUMNS[:8])
#: Groups of :attr:`Aggregates.horizons` and of :attr:`Aggregates.trajectories`.
HORIZON_KEYS = ("environment", "policy", "horizon")
TRAJECTORY_KEYS = ("environment", "policy", "run_horizon", "time")
#: The trajectory columns read by default: those of the report's time panels.
TRAJECTORY_COLUMNS = ("regret", "reward")


@dataclass(frozen=True)
class Aggregates:
    """What :func:`read_aggregates` keeps of a store."""

    horizons: Stats
    """By :data:`HORIZON_KEYS`: the groups of the tidy table's rows (every cell at its grid
    horizons), every measured column."""
    trajectories: Stats
    """By :data:`TRAJECTORY_KEYS`: every checkpoint of the cells read as trajectories (the
    tidy table with ``trajectories=True``), the trajectory columns."""
    columns: tuple[str, ...]
    """The columns of the tidy table of the same results, in its order."""

    def __len__(self) -> int:
        return len(self.horizons)


def _root(parent: list[int], i: int) -> int:
    while parent[i] != i:
        i = parent[i]
    return i


def _components(
    cells: list[dict[str, Any]], shared: Callable[[dict[str, Any], dict[str, Any]], bool]
) -> dict[str, tuple[str, str]]:
    """Per cell key: its component (cells of one environment and policy that may share
    groups: ``shared(a, b)``, transitively; named by its first cell) and its last cell."""
    by_pair: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for cell in cells:
        by_pair.setdefault((cell["environment"], cell["policy"]), []).append(cell)
    out: dict[str, tuple[str, str]] = {}
    for same_pair in by_pair.values():  # a few cells each: one per horizon at most
        parent = list(range(len(same_pair)))
        for i, a in enumerate(same_pair):
            for j, b in enumerate(same_pair[:i]):
                if shared(a, b):
                    parent[_root(parent, i)] = _root(parent, j)
        roots = [same_pair[_root(parent, i)]["cell"] for i in range(len(same_pair))]
        last = {root: cell["cell"] for root, cell in zip(roots, same_pair, strict=True)}
        out.update({c["cell"]: (r, last[r]) for r, c in zip(roots, same_pair, strict=True)})
    return out


def table_columns(n_arms: int, names: Sequence[str], rows: bool) -> tuple[str, ...]:
    """The tidy table's columns, in :func:`~impactbandits.experiments.tidy.read_table`'s
    order: ``names`` are the extras (``extra:<name>``) and phases (``phase_<name>``) in the
    order their columns were created."""
    pulls = [f"pulls_{arm}" for arm in range(n_arms)]
    if not rows:
        return (*BASE_COLUMNS, *pulls)
    created = [*BASE_COLUMNS[:11], "switches", "phase_switches", *pulls, *names, *ORACLE_COLUMNS]
    ordered = dict.fromkeys(name.removeprefix("extra:") for name in created)
    return (*BASE_COLUMNS, *(c for c in ordered if c not in BASE_COLUMNS))


def read_aggregates(
    store: Store,
    spec: SpecRecord,
    seeds: Seeds = None,
    trajectory_cells: Collection[str] = (),
    trajectory_columns: Sequence[str] = TRAJECTORY_COLUMNS,
    level: float = 0.95,
) -> Aggregates:
    """The statistics over seeds of the tidy table of an open store (``seeds`` as in
    :func:`~impactbandits.experiments.tidy.read_table`; no checks or warnings), and of
    ``trajectory_columns`` at every checkpoint of ``trajectory_cells``, in one pass over the
    store. Memory: the values of the cells being read, up to
    :data:`~impactbandits.experiments.group_pool.HELD_BYTES`, and beyond
    it a temporary file (:mod:`~impactbandits.experiments.spill`)."""
    cells = store.cells()
    grids = {c["cell"]: json.loads(c["grid"]) for c in cells}
    limit = seed_limit(spec, seeds)
    stored = store.samples(seeds=limit)
    with_results = [c for c in cells if c["cell"] in stored]
    with Spill() as spill:
        return _read(store, cells, grids, limit, with_results, Held(spill), trajectory_cells,
                     trajectory_columns, level)  # fmt: skip


def _read(
    store: Store,
    cells: list[dict[str, Any]],
    grids: dict[str, Any],
    limit: int | None,
    with_results: list[dict[str, Any]],
    held: Held,
    trajectory_cells: Collection[str],
    trajectory_columns: Sequence[str],
    level: float,
) -> Aggregates:
    """:func:`read_aggregates` once the cells are known."""
    info = {c["cell"]: c for c in cells}
    position = {key: i for i, key in enumerate(info)}
    plans = (
        (
            Pool(HORIZON_KEYS, level, held),
            _components(with_results, lambda a, b: bool(set(grids[a["cell"]]) &
                                                         set(grids[b["cell"]]))),
        ),
        (
            Pool(TRAJECTORY_KEYS, level, held),
            _components([c for c in with_results if c["cell"] in trajectory_cells],
                        lambda a, b: a["rounds"] == b["rounds"]),
        ),
    )  # fmt: skip
    (horizons, horizon_plan), (trajectories, trajectory_plan) = plans
    names: dict[str, None] = {}  # extras and phases, as read_table creates their columns
    extra_names: list[str] = []
    phase_names: list[str] = []
    keeps: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    current: str | None = None
    read = False

    def end(key: str | None) -> None:
        for pool, plan in plans:
            if key is not None and key in plan and plan[key][1] == key:
                pool.finish(plan[key][0])

    for key, seeds_read, group in groups(store.results(seeds=limit)):
        if key != current:
            end(current)
            current = key
        read = True
        cell, first = info[key], group[0]
        times = first["times"]
        cached = keeps.get(key)
        if cached is None or not np.array_equal(cached[0], times):
            cached = keeps[key] = (times, grid_checkpoints(times, grids[key]))
        keep = cached[1]
        traced = key in trajectory_plan
        values = measurements(group, None if traced else keep)
        extra_names += [name for name in first["extras"] if name not in extra_names]
        phase_names += [name for name in first["phase_names"] if name not in phase_names]
        names.update(dict.fromkeys(f"extra:{name}" for name in extra_names))
        names.update(dict.fromkeys(f"phase_{name}" for name in phase_names))
        values = {name.removeprefix("extra:"): v for name, v in values.items()}
        shown = times[keep]
        pair = (cell["environment"], cell["policy"])
        seeds = np.asarray(seeds_read, dtype=np.int64)
        x = shown if cell["horizon"] is None else np.full(shown.size, cell["horizon"])
        at_grid = {name: v[:, keep] for name, v in values.items()} if traced else values
        component = horizon_plan.get(key, (key, key))[0]
        horizons.add(component, Part(position[key], pair, x, seeds, dict(at_grid)))
        if traced:
            kept = {c: values[c] for c in trajectory_columns if c in values}
            part = Part(position[key], (*pair, cell["rounds"]), times, seeds, dict(kept))
            trajectories.add(trajectory_plan[key][0], part)
    end(current)
    n_arms = max((c["n_arms"] for c in cells), default=0)
    columns = table_columns(n_arms, list(names), read)
    measured = [c for c in columns if c not in KEY_COLUMNS]
    return Aggregates(
        horizons.stats(measured), trajectories.stats(list(trajectory_columns)), columns
    )


class AggregatesMemo:
    """The last few :func:`read_aggregates` results of this process, keyed by the store's
    identity (its resolved path, the size, modification time and inode of its database, and of
    its write-ahead log when that holds anything: any write changes them) and the arguments.
    A paper figure's renderer and the report drawn after it read the same statistics once; a
    value is exactly what reading the store again gives."""

    def __init__(self, max_entries: int = 2) -> None:
        self.max_entries = max_entries
        self._values: OrderedDict[tuple[Any, ...], Aggregates] = OrderedDict()

    @staticmethod
    def identity(run_dir: Path) -> tuple[Any, ...]:
        database = run_dir / STORE_FILE
        stamps: list[Any] = []
        for path in (database, companions(database)[0]):
            try:
                stat = path.stat()
            except OSError:
                stamps.append(None)
            else:  # an empty log (a reader's) holds no write
                stamps.append(
                    (stat.st_size, stat.st_mtime_ns, stat.st_ino) if stat.st_size else None
                )
        return (str(run_dir.resolve()), *stamps)

    def read(
        self,
        run_dir: Path,
        store: Store,
        spec: SpecRecord,
        seeds: Seeds = None,
        trajectory_cells: Collection[str] = (),
    ) -> Aggregates:
        """:func:`read_aggregates` of the open ``store`` of ``run_dir``, remembered."""
        key = (self.identity(run_dir), seeds, frozenset(trajectory_cells))
        value = self._values.get(key)
        if value is None:
            value = read_aggregates(store, spec, seeds=seeds, trajectory_cells=trajectory_cells)
            self._values[key] = value
            while len(self._values) > self.max_entries:
                self._values.popitem(last=False)
        self._values.move_to_end(key)
        return value

    def clear(self) -> None:
        self._values.clear()


#: This process's :class:`AggregatesMemo` (what :func:`run_aggregates` and the report read).
AGGREGATES_MEMO = AggregatesMemo()


def run_aggregates(run_dir: str | Path, seeds: Seeds = None) -> tuple[SpecRecord, Aggregates]:
    """The spec stored in ``run_dir`` and the statistics over seeds of its tidy table
    (:attr:`Aggregates.horizons`: every measured column by environment, policy and horizon;
    no trajectories), through :data:`AGGREGATES_MEMO`: what a renderer draws from. Data only:
    nothing the spec names is imported."""
    from impactbandits.experiments.arguments import run_dir_argument, seeds_argument

    run_dir = run_dir_argument(run_dir)
    seeds_argument(seeds)
    with Store.open_existing(run_dir) as store:
        spec = store.spec()
        return spec, AGGREGATES_MEMO.read(run_dir, store, spec, seeds)
