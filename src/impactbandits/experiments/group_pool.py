"""The values of the report's statistics held until they are reduced
(:mod:`~impactbandits.experiments.aggregates`).

A :class:`Pool` keeps the values of the cells of a component (cells whose groups may be shared;
normally one cell) as :class:`Part` objects — one batch of results each, ``(results,
checkpoints)`` per column — until the component's last cell is read, then reduces them to
statistics over seeds with :func:`~impactbandits.metrics.group_stats`, :data:`BLOCK` values at
a time (a group's values contiguous; every row is reduced alone, so the numbers are those of
one array). The pools of one read share a :class:`Held` budget: beyond :data:`HELD_BYTES` in
memory, every part held goes to a temporary file (:mod:`~impactbandits.experiments.spill`),
consecutive parts of a cell joined, and is read back a block at a time. Memory then stays
bounded however many seeds a cell has; the numbers do not change.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from impactbandits.experiments.spill import Spill, Spilled
from impactbandits.experiments.stats import Stats, make_stats
from impactbandits.metrics import STATISTICS, group_stats

__all__ = ["BLOCK", "HELD_BYTES", "Held", "Part", "Pool", "Reduced"]


#: Values reduced at once (a block of 16 MB): :func:`group_stats`' temporaries are a few
#: times that, however many seeds a cell has.
BLOCK = 2**21
#: Bytes of values the pools hold in memory at most; beyond it they go to a
#: :class:`~impactbandits.experiments.spill.Spill` (module docstring).
HELD_BYTES = 96 * 2**20


@dataclass
class Part:
    """The values of one batch of results of one cell (or of consecutive batches, once they
    are spilled)."""

    position: int  # the cell's position in the store
    key: tuple[Any, ...]  # the group key without its last column (x)
    x: np.ndarray  # x of every checkpoint
    seeds: np.ndarray
    values: dict[str, np.ndarray | Spilled]
    """column → ``(results, checkpoints)`` array, or its transpose in a spill file"""

    @property
    def nbytes(self) -> int:
        return sum(v.nbytes for v in self.values.values() if isinstance(v, np.ndarray))

    def rows(self, column: str, at: slice | np.ndarray) -> np.ndarray:
        """``(checkpoints at, results)``: the values of ``column`` at checkpoints ``at``."""
        values = self.values[column]
        if isinstance(values, Spilled):
            return values.rows(at)
        return values[:, at].T

    def joins(self, other: Part) -> bool:
        """Whether ``other`` continues this part (the same cell, checkpoints and arrays)."""
        return (
            other.position == self.position and other.key == self.key
            and np.array_equal(other.x, self.x) and other.values.keys() == self.values.keys()
            and all(isinstance(v, np.ndarray) and v.dtype == self.values[c].dtype
                    for c, v in other.values.items())
        )  # fmt: skip


def _spilled(run: list[Part], spill: Spill) -> Part:
    """Consecutive parts of one cell (:meth:`Part.joins`) as one part in ``spill``, each
    column transposed (a block of checkpoints is then one read)."""
    first = run[0]
    values: dict[str, np.ndarray | Spilled] = {}
    for column in first.values:
        arrays = [v.T for p in run if isinstance(v := p.values[column], np.ndarray)]
        values[column] = spill.put(np.concatenate(arrays, axis=1))
    seeds = np.concatenate([p.seeds for p in run])
    return Part(first.position, first.key, first.x, seeds, values)


@dataclass
class Held:
    """The bytes the pools of one read
    (:func:`~impactbandits.experiments.aggregates.read_aggregates`) hold in memory, and the file
    they spill to beyond :attr:`limit` (:data:`HELD_BYTES`)."""

    spill: Spill
    limit: int = field(default_factory=lambda: HELD_BYTES)
    bytes: int = 0
    pools: list[Pool] = field(default_factory=list)

    def grow(self, nbytes: int) -> None:
        self.bytes += nbytes
        if self.bytes > self.limit:
            for pool in self.pools:
                pool.spill_all()


@dataclass
class Reduced:
    """The statistics of the groups of one component: ``stats[s, c, g]`` is statistic ``s``
    (:data:`STATISTICS`) of ``columns[c]`` in group ``g``."""

    keys: list[tuple[Any, ...]]  # the group keys, x last
    seeds: list[int]
    positions: list[int]  # of the cell each group first appears in
    columns: list[str]
    stats: np.ndarray


@dataclass
class Pool:
    """Parts of cells whose groups may be shared, kept until the last of those cells is read
    (a component: normally one cell), then reduced to statistics."""

    names: tuple[str, ...]  # the group key, x last
    level: float
    held: Held
    waiting: dict[Any, list[Part]] = field(default_factory=dict)
    done: list[Reduced] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.held.pools.append(self)

    def add(self, component: Any, part: Part) -> None:
        self.waiting.setdefault(component, []).append(part)
        self.held.grow(part.nbytes)

    def spill_all(self) -> None:
        """Move every part held in memory to the spill file, consecutive parts of a cell
        joined into one; if the file cannot be written they stay in memory (and the limit is
        lifted: nothing is tried again)."""
        for component, parts in self.waiting.items():
            out: list[Part] = []
            run: list[Part] = []
            for part in parts:
                if run and (not part.nbytes or not run[0].joins(part)):
                    out += self._spill(run)
                    run = []
                if part.nbytes:
                    run.append(part)
                else:  # spilled already (or nothing to hold)
                    out.append(part)
            out += self._spill(run)
            self.waiting[component] = out

    def _spill(self, run: list[Part]) -> list[Part]:
        """``run`` as one spilled part, or as it is if it cannot be written."""
        if not run or self.held.limit == sys.maxsize:
            return run
        try:
            spilled = _spilled(run, self.held.spill)
        except OSError:
            self.held.limit = sys.maxsize
            return run
        self.held.bytes -= sum(p.nbytes for p in run)
        return [spilled]

    def finish(self, component: Any) -> None:
        parts = self.waiting.pop(component, None)
        if parts:
            self.held.bytes -= sum(p.nbytes for p in parts)
            self.done.append(self._reduce(parts))

    def _reduce(self, parts: list[Part]) -> Reduced:
        first = parts[0]
        columns = list(dict.fromkeys(c for p in parts for c in p.values))
        same = all(
            p.key == first.key and np.array_equal(p.x, first.x) and p.values.keys() ==
            first.values.keys() for p in parts
        )  # fmt: skip
        if same:  # one cell (or cells measuring the same checkpoints): block by block
            keys = [(*first.key, x) for x in first.x.tolist()]
            results = sum(p.seeds.size for p in parts)
            one_cell = len({p.position for p in parts}) == 1  # a cell's seeds are distinct
            seeds = (
                results if one_cell else np.unique(np.concatenate([p.seeds for p in parts])).size
            )
            stats = np.empty((3, len(columns), len(keys)))
            # a block: checkpoints × results of one column, each group's values contiguous;
            # group_stats reduces every row alone, so blocks give the numbers of one array
            step = max(1, BLOCK // max(results, 1))
            for c, column in enumerate(columns):
                for start in range(0, len(keys), step):
                    at = slice(start, start + step)
                    rows = np.concatenate([p.rows(column, at) for p in parts], axis=1)
                    stats[:, c, at] = np.stack(group_stats(rows, self.level))
            return Reduced(keys, [seeds] * len(keys), [first.position] * len(keys), columns, stats)
        # each group gathered from the parts that have it, in the table's order
        where: dict[tuple[Any, ...], list[tuple[Part, np.ndarray]]] = {}
        for p in parts:
            for x in dict.fromkeys(p.x.tolist()):
                where.setdefault((*p.key, x), []).append((p, np.flatnonzero(p.x == x)))
        keys = list(where)
        counts = [np.unique(np.concatenate([p.seeds for p, _ in where[g]])).size for g in keys]
        stats = np.empty((3, len(columns), len(keys)))
        for c, column in enumerate(columns):
            for g, key in enumerate(keys):
                values = np.concatenate([
                    (p.rows(column, at).T if column in p.values
                     else np.full((p.seeds.size, at.size), np.nan)).ravel()
                    for p, at in where[key]
                ])  # fmt: skip
                stats[:, c, g] = [s[0] for s in group_stats(values[None, :], self.level)]
        positions = [where[g][0][0].position for g in keys]
        return Reduced(keys, counts, positions, columns, stats)

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
