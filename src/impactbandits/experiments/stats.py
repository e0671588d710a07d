"""Statistics over seeds of groups of tidy-table rows: the numbers the report's summary and
figures show (:mod:`~impactbandits.experiments.summary`, :mod:`~impactbandits.experiments.plots`).

:func:`group_stats` is the one computation: numpy's on each group's values in the table's
order (the mean of the non-NaN values, as ``Series.dropna().mean()``;
:func:`~impactbandits.metrics.confidence_halfwidth` of the finite ones), for all groups at
once. :func:`table_stats` applies it to a tidy table;
:func:`~impactbandits.experiments.aggregates.read_aggregates` to the store, one cell at a time,
without the table. Both give :class:`Stats`, so what is drawn from either is the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from impactbandits.metrics import confidence_halfwidth

__all__ = ["STATISTICS", "Stats", "group_stats", "make_stats", "table_stats"]

#: The statistics of a column, and the value of a group without values.
STATISTICS = {"mean": np.nan, "ci": 0.0, "n": 0}


def group_stats(rows: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(mean, ci, n)`` of every row of ``rows`` (groups × values): the mean of its non-NaN
    values, the half-width of the ``level`` Student-t interval of the mean of its finite values
    (0 below two) and the count of its non-NaN values.

    Bit for bit what numpy gives on each row alone (``row[~isnan(row)].mean()`` and
    :func:`~impactbandits.metrics.confidence_halfwidth`): rows of finite values are reduced
    together along the contiguous axis (numpy sums each of them pairwise, as it sums a 1-D
    array), the others one by one."""
    rows = np.ascontiguousarray(rows, dtype=float)
    count, size = rows.shape
    mean = np.full(count, np.nan)
    ci = np.zeros(count)
    n = np.full(count, size, dtype=np.int64)
    finite = np.isfinite(rows).all(axis=1)
    if size and finite.any():
        block = rows if finite.all() else rows[finite]
        mean[finite] = block.mean(axis=1)
        if size >= 2:
            # scipy.special, not scipy.stats: see metrics.confidence_halfwidth
            from scipy.special import stdtrit

            std = block.std(axis=1, ddof=1)
            ci[finite] = stdtrit(size - 1, 0.5 + level / 2) * (std / np.sqrt(size))
    for i in np.flatnonzero(~finite):
        values = rows[i][~np.isnan(rows[i])]
        n[i] = values.size
        if values.size:
            mean[i] = values.mean()
        ci[i] = confidence_halfwidth(values, level)
    return mean, ci, n


@dataclass(frozen=True)
class Stats:
    """Statistics over seeds of groups of tidy-table rows. ``keys``: one row per group (the
    grouping columns, and ``seeds``: the distinct seeds of the group), in the order the groups
    first appear in the table; ``mean``, ``ci`` (Student-t half-width, 95% unless asked
    otherwise) and ``n`` (non-NaN values): the same rows, one column per measured column of the
    table (see :func:`group_stats`)."""

    keys: pd.DataFrame
    mean: pd.DataFrame
    ci: pd.DataFrame
    n: pd.DataFrame

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.mean.columns]

    def take(self, mask: Any) -> Stats:
        """The groups selected by a boolean mask."""
        index = np.flatnonzero(np.asarray(mask, dtype=bool))
        frames = (self.keys, self.mean, self.ci, self.n)
        return Stats(*(frame.iloc[index].reset_index(drop=True) for frame in frames))

    def where(self, **equal: Any) -> Stats:
        """The groups whose keys equal the given values (``None``: any value)."""
        mask = np.ones(len(self), dtype=bool)
        for name, value in equal.items():
            if value is not None:
                mask &= (self.keys[name] == value).to_numpy(dtype=bool)
        return self.take(mask)

    def only(self, columns: Iterable[str]) -> Stats:
        """The same groups, with the statistics of ``columns`` only."""
        names = list(columns)
        return Stats(self.keys, self.mean[names], self.ci[names], self.n[names])


def make_stats(
    keys: pd.DataFrame, columns: Sequence[str], values: Mapping[str, Mapping[str, np.ndarray]]
) -> Stats:
    """:class:`Stats` of ``keys`` from ``values[statistic][column]`` (arrays in the order of
    ``keys``); a column without values gets :data:`STATISTICS`' empty values."""
    keys = keys.reset_index(drop=True)
    frames = []
    for name, empty in STATISTICS.items():
        given = values.get(name, {})
        data = {c: given[c] if c in given else np.full(len(keys), empty) for c in columns}
        frames.append(pd.DataFrame(data, index=keys.index, columns=list(columns)))
    return Stats(keys, *frames)


def table_stats(
    table: pd.DataFrame, by: Sequence[str], columns: Sequence[str], level: float = 0.95
) -> Stats:
    """:class:`Stats` of ``columns`` of a tidy table grouped by ``by`` (rows with a missing key
    are left out, as by ``groupby``); ``seeds`` counts the distinct values of ``seed`` (the rows
    if the table has no ``seed``)."""
    by, columns = list(by), list(columns)
    code = table.groupby(by, sort=False, observed=True).ngroup().to_numpy(dtype=float)
    valid = np.flatnonzero(~np.isnan(code))
    code = code[valid].astype(np.int64)
    count = int(code.max()) + 1 if code.size else 0
    first = np.full(count, code.size)
    np.minimum.at(first, code, np.arange(code.size))
    rank = np.empty(count, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(count)  # groups by first appearance
    code = rank[code]
    order = valid[np.argsort(code, kind="stable")]  # rows by group, each in the table's order
    sizes = np.bincount(code, minlength=count)
    starts = np.cumsum(sizes) - sizes
    keys = table[by].iloc[order[starts]].reset_index(drop=True)
    if "seed" in table:
        seeds = pd.Series(table["seed"].to_numpy()[order])
        keys["seeds"] = seeds.groupby(np.repeat(np.arange(count), sizes)).nunique().to_numpy()
    else:
        keys["seeds"] = sizes
    keys["seeds"] = keys["seeds"].astype(np.int64)
    values: dict[str, dict[str, np.ndarray]] = {name: {} for name in STATISTICS}
    for column in columns:
        data = table[column].to_numpy(dtype=float)[order]
        if not count:
            stats = (np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64))
        elif (sizes == sizes[0]).all():  # as many rows in every group: one block
            stats = group_stats(data.reshape(count, sizes[0]), level)
        else:
            per_group = [group_stats(data[a : a + s][None, :], level)
                         for a, s in zip(starts, sizes, strict=True)]  # fmt: skip
            stats = tuple(np.concatenate(part) for part in zip(*per_group, strict=True))
        for name, result in zip(STATISTICS, stats, strict=True):
            values[name][column] = result
    return make_stats(keys, columns, values)
