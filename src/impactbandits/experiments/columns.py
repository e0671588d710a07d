"""Building the tidy table (:mod:`~impactbandits.experiments.tidy`) without per-row objects:
columns allocated once and filled block by block, from groups of results decoded together."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["Columns", "flat", "groups", "stack"]

_COMPUTED = ("regret", "realised_regret", "per_step_regret", "competitive_ratio")


def stack(values: list[np.ndarray], keep: np.ndarray | None) -> np.ndarray:
    """``(results, checkpoints shown, ...)``: one array of every result of a group."""
    block = np.stack(values)
    return block if keep is None else block[:, keep]


def flat(group: list[dict[str, Any]], name: str, keep: np.ndarray | None) -> np.ndarray:
    """Array ``name`` of every result of a group, one after the other."""
    return stack([p[name] for p in group], keep).ravel()


#: Results decoded and written together (at most): the rows of one cell, stacked.
_GROUP = 256


def groups(
    results: Iterator[tuple[str, int, dict[str, Any]]],
) -> Iterator[tuple[str, list[int], list[dict[str, Any]]]]:
    """Consecutive results of one cell with the same checkpoints and the same arrays, in
    groups of at most :data:`_GROUP`: ``(cell, seeds, payloads)``."""
    group: list[dict[str, Any]] = []
    seeds: list[int] = []
    current: tuple[Any, ...] = ()
    for key, seed, p in results:
        extras = p["extras"]
        signature = (
            key,
            p["times"].tobytes(),
            p["pulls"].shape,
            None if p["phases"] is None else p["phases"].shape,
            p["optimum"] is None,
            p["phase_switches"] is None,
            tuple((name, v.shape) for name, v in extras.items()),
            tuple(p["phase_names"]),
            p["regret_on"],
            p["realised_on"],
        )
        if group and (signature != current or len(group) >= _GROUP):
            yield current[0], seeds, group
            group, seeds = [], []
        current = signature
        group.append(p)
        seeds.append(seed)
    if group:
        yield current[0], seeds, group


class Columns:
    """The table's columns (``computed``: those made from others, placed last), allocated
    for ``capacity`` rows (grown by doubling if more come) and filled block by block:
    :meth:`start` a block of rows, :meth:`put` its values, then :meth:`finish` it. A column
    gets ``NaN`` (floats) or 0 where nothing is put."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.size = 0
        self.block = slice(0, 0)
        self.data: dict[str, np.ndarray] = {}
        self.computed = {name: _empty(float, capacity) for name in _COMPUTED}

    def start(self, rows: int) -> None:
        if self.size + rows > self.capacity:
            self.capacity = max(self.size + rows, 2 * self.capacity)
            for table in (self.data, self.computed):
                for name, column in table.items():
                    grown = _empty(column.dtype, self.capacity)
                    grown[: self.size] = column[: self.size]
                    table[name] = grown
        self.block = slice(self.size, self.size + rows)

    def put(self, name: str, values: Any, dtype: Any = float, computed: bool = False) -> None:
        """Write ``values`` (an array of the block's length, a scalar, or ``None``: the column
        exists, its block stays empty) into column ``name``, created with ``dtype`` (widened
        if ``values`` need it)."""
        table = self.computed if computed else self.data
        column = table.get(name)
        if column is None:
            column = table[name] = _empty(dtype, self.capacity)
        if values is None:
            return
        if isinstance(values, np.ndarray) and not np.can_cast(values.dtype, column.dtype, "safe"):
            column = table[name] = column.astype(np.result_type(column.dtype, values.dtype))
            if column.dtype.kind == "f":
                column[self.size :] = np.nan  # the rows not filled yet
        column[self.block] = values

    def last(self, name: str) -> np.ndarray:
        return self.computed[name][self.block]

    def finish(self) -> None:
        self.size = self.block.stop

    def columns(self) -> dict[str, np.ndarray]:
        """Every column (in order of creation, the computed ones last), cut to the rows
        filled (a copy only if fewer rows came than were allocated)."""
        out = {}
        for name, column in [*self.data.items(), *self.computed.items()]:
            out[name] = column if self.size == column.size else column[: self.size].copy()
        return out


def _empty(dtype: Any, rows: int) -> np.ndarray:
    dtype = np.dtype(dtype)
    return np.full(rows, np.nan) if dtype.kind == "f" else np.zeros(rows, dtype)
