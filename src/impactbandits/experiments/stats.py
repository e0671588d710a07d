"""Statistics over seeds of groups of tidy-table rows: the numbers the report's summary and
figures show (:mod:`~impactbandits.experiments.summary`, :mod:`~impactbandits.experiments.plots`).

:func:`~impactbandits.metrics.group_stats` is the one computation (the mean of the non-NaN
values, :func:`~impactbandits.metrics.confidence_halfwidth` of the finite ones, for all groups
at once; :func:`~impactbandits.metrics.summarise` uses it too). :func:`table_stats` applies it
to a tidy table;
:func:`~impactbandits.experiments.aggregates.read_aggregates` to the store, one cell at a time,
without the table. Both give :class:`Stats`, so what is drawn from either is the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from impactbandits.metrics import STATISTICS, grouped_stats

__all__ = ["Stats", "make_stats", "table_stats"]


@dataclass(frozen=True)
class Stats:
    """Statistics over seeds of groups of tidy-table rows. ``keys``: one row per group (the
    grouping columns, and ``seeds``: the distinct seeds of the group), in the order the groups
    first appear in the table; ``mean``, ``ci`` (Student-t half-width, 95% unless asked
    otherwise) and ``n`` (non-NaN values): the same rows, one column per measured column of the
    table (see :func:`~impactbandits.metrics.group_stats`)."""

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
    ``keys``); a column without values gets the empty values of
    :data:`~impactbandits.metrics.STATISTICS`."""
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
    """:class:`Stats` of ``columns`` of a tidy table grouped by ``by``
    (:func:`~impactbandits.metrics.grouped_stats`: rows with a missing key are left out, as by
    ``groupby``; ``seeds`` counts the distinct values of ``seed``)."""
    keys, values = grouped_stats(table, by, columns, level)
    return make_stats(keys, columns, values)
