"""The statistics the report shows, streamed from the store instead of read from the tidy table.

Everything the report shows is a statistic over seeds of a group of tidy-table rows
(:mod:`~impactbandits.experiments.stats`): per environment, policy and horizon, and per round
of the longest run of each policy. :func:`read_aggregates` reads the store cell by cell
(:meth:`~impactbandits.experiments.store.Store.results` streams it ordered by cell, then seed),
derives the table's columns of each batch of results with
:func:`~impactbandits.experiments.tidy.measurements` (as
:func:`~impactbandits.experiments.tidy.read_table` does), stacks one cell's values
(seeds × checkpoints) and keeps only their statistics. In memory: the values of one cell at its
grid horizons (for a cell read as a trajectory also the trajectory columns at every
checkpoint), never the table.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from impactbandits.experiments.columns import groups
from impactbandits.experiments.spec import SpecRecord
from impactbandits.experiments.stats import Stats, make_stats
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
from impactbandits.metrics import STATISTICS, group_stats

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


@dataclass
class _Part:
    """The values of one batch of results of one cell."""

    position: int  # the cell's position in the store
    key: tuple[Any, ...]  # the group key without its last column (x)
    x: np.ndarray  # x of every checkpoint
    seeds: list[int]
    values: dict[str, np.ndarray]  # column → (results, checkpoints)


@dataclass
class _Reduced:
    """The statistics of the groups of one component: ``stats[s, c, g]`` is statistic ``s``
    (:data:`STATISTICS`) of ``columns[c]`` in group ``g``."""

    keys: list[tuple[Any, ...]]  # the group keys, x last
    seeds: list[int]
    positions: list[int]  # of the cell each group first appears in
    columns: list[str]
    stats: np.ndarray


@dataclass
class _Pool:
    """Parts of cells whose groups may be shared, kept until the last of those cells is read
    (a component: normally one cell), then reduced to statistics."""

    names: tuple[str, ...]  # the group key, x last
    level: float
    waiting: dict[Any, list[_Part]] = field(default_factory=dict)
    done: list[_Reduced] = field(default_factory=list)

    def add(self, component: Any, part: _Part) -> None:
        self.waiting.setdefault(component, []).append(part)

    def finish(self, component: Any) -> None:
        parts = self.waiting.pop(component, None)
        if parts:
            self.done.append(self._reduce(parts))

    def _reduce(self, parts: list[_Part]) -> _Reduced:
        first = parts[0]
        columns = list(dict.fromkeys(c for p in parts for c in p.values))
        same = all(
            p.key == first.key and np.array_equal(p.x, first.x) and p.values.keys() ==
            first.values.keys() for p in parts
        )  # fmt: skip
        if same:  # one cell (or cells measuring the same checkpoints): one block
            keys = [(*first.key, x) for x in first.x.tolist()]
            seeds = [s for p in parts for s in p.seeds]
            one_cell = len({p.position for p in parts}) == 1  # a cell's seeds are distinct
            counts = [len(seeds) if one_cell else len(set(seeds))] * len(keys)
            # (columns × checkpoints) × results: each group's values contiguous, copied once
            rows = np.concatenate([
                np.concatenate([p.values[c].T for p in parts], axis=1) for c in columns
            ])  # fmt: skip
            stats = np.stack(group_stats(rows, self.level)).reshape(3, len(columns), len(keys))
            return _Reduced(keys, counts, [first.position] * len(keys), columns, stats)
        # each group gathered from the parts that have it, in the table's order
        where: dict[tuple[Any, ...], list[tuple[_Part, np.ndarray]]] = {}
        for p in parts:
            for x in dict.fromkeys(p.x.tolist()):
                where.setdefault((*p.key, x), []).append((p, np.flatnonzero(p.x == x)))
        keys = list(where)
        counts = [len({s for p, _ in where[g] for s in p.seeds}) for g in keys]
        stats = np.empty((3, len(columns), len(keys)))
        for c, column in enumerate(columns):
            for g, key in enumerate(keys):
                values = np.concatenate([
                    (p.values[column][:, at] if column in p.values
                     else np.full((len(p.seeds), at.size), np.nan)).ravel()
                    for p, at in where[key]
                ])  # fmt: skip
                stats[:, c, g] = [s[0] for s in group_stats(values[None, :], self.level)]
        positions = [where[g][0][0].position for g in keys]
        return _Reduced(keys, counts, positions, columns, stats)

    def stats(self, columns: Sequence[str]) -> Stats:
        """Every group (in the order the table lists them) with the statistics of
        ``columns``."""
        for component in list(self.waiting):  # cells the planning did not know of
            self.finish(component)
        keys = [key for r in self.done for key in r.keys]
        frame = pd.DataFrame(keys, columns=list(self.names)) if keys else pd.DataFrame(
            {name: [] for name in self.names}
        )  # fmt: skip
        frame["seeds"] = np.asarray([n for r in self.done for n in r.seeds], dtype=np.int64)
        values = {name: {c: np.full(len(keys), empty) for c in columns}
                  for name, empty in STATISTICS.items()}  # fmt: skip
        start = 0
        positions = []
        for r in self.done:
            stop = start + len(r.keys)
            for c, column in enumerate(r.columns):
                if column in values["mean"]:
                    for s, name in enumerate(STATISTICS):
                        values[name][column][start:stop] = r.stats[s, c]
            positions += r.positions
            start = stop
        values["n"] = {c: v.astype(np.int64) for c, v in values["n"].items()}
        # by the cell a group first appears in, then as that cell lists them
        order = np.argsort(np.asarray(positions, dtype=np.int64), kind="stable")
        for per_column in values.values():
            for column in per_column:
                per_column[column] = per_column[column][order]
        return make_stats(frame.iloc[order], columns, values)


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
    store."""
    cells = store.cells()
    info = {c["cell"]: c for c in cells}
    position = {key: i for i, key in enumerate(info)}
    grids = {key: json.loads(c["grid"]) for key, c in info.items()}
    limit = seed_limit(spec, seeds)
    stored = store.samples(seeds=limit)
    with_results = [c for c in cells if c["cell"] in stored]
    plans = (
        (
            _Pool(HORIZON_KEYS, level),
            _components(with_results, lambda a, b: bool(set(grids[a["cell"]]) &
                                                         set(grids[b["cell"]]))),
        ),
        (
            _Pool(TRAJECTORY_KEYS, level),
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
        x = shown if cell["horizon"] is None else np.full(shown.size, cell["horizon"])
        at_grid = {name: v[:, keep] for name, v in values.items()} if traced else values
        component = horizon_plan.get(key, (key, key))[0]
        horizons.add(component, _Part(position[key], pair, x, seeds_read, at_grid))
        if traced:
            kept = {c: values[c] for c in trajectory_columns if c in values}
            part = _Part(position[key], (*pair, cell["rounds"]), times, seeds_read, kept)
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
    run_dir = Path(run_dir)
    with Store.open_existing(run_dir) as store:
        spec = store.spec()
        return spec, AGGREGATES_MEMO.read(run_dir, store, spec, seeds)
