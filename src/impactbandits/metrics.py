"""Metrics computed after the run from recorded summaries.

* **regret** — ``optimum − cumulative expected reward`` (pseudo-regret; policy regret for rested
  and history-dependent settings, where the oracle is the exact optimal *policy*'s value);
* **per-step regret** — regret / horizon (the y-axis of Lindner et al.'s figures);
* **pulls** per arm and **switches** come straight from the trajectory summaries;
* :func:`summarise` gives means with Student-t confidence intervals over seeds
  (:func:`group_stats`, the one computation of them).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "STATISTICS",
    "competitive_ratio",
    "confidence_halfwidth",
    "group_stats",
    "grouped_stats",
    "per_step",
    "potential_gap",
    "regret",
    "summarise",
]


def regret(optimum: np.ndarray, expected_reward: np.ndarray) -> np.ndarray:
    """Regret against an oracle's optimum (``NaN`` where no optimum is defined)."""
    return np.asarray(optimum, dtype=float) - np.asarray(expected_reward, dtype=float)


def competitive_ratio(optimum: np.ndarray, reward: np.ndarray) -> np.ndarray:
    """OPT(T) / ALG(T) (Patil et al. 2023, Definition 2 for one instance); ``inf`` where the
    algorithm has collected nothing but the optimum is positive, 1 where both are 0."""
    optimum = np.asarray(optimum, dtype=float)
    reward = np.asarray(reward, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = optimum / reward
    return np.where((optimum == 0) & (reward == 0), 1.0, ratio)


def potential_gap(curves: np.ndarray, pulls: np.ndarray, potentials: np.ndarray) -> np.ndarray:
    """a_i − f_i(N_i): each arm's distance from its true potential (Patil et al. 2023, §2 and
    Theorem 5), a_i = lim_{n→∞} f_i(n).

    ``curves`` is ``(k, length)``; ``pulls`` is ``(..., k)`` pull counts (0 pulls: the gap to
    f_i(1)); ``potentials`` the ``(k,)`` a_i — not the curves' last column, which for a curve
    still rising at the end of the table is below a_i: take them from
    :func:`impactbandits.envs.improving.true_potentials` (closed form for the parametric
    families)."""
    curves = np.asarray(curves, dtype=float)
    pulls = np.asarray(pulls, dtype=np.int64)
    potentials = np.asarray(potentials, dtype=float)
    if potentials.shape != curves.shape[:1]:
        raise ValueError(
            f"potentials need one value per arm ({curves.shape[0]}), got {potentials.shape}"
        )
    index = np.clip(pulls - 1, 0, curves.shape[1] - 1)
    current = np.take_along_axis(
        np.broadcast_to(curves, (*pulls.shape[:-1], *curves.shape)), index[..., None], axis=-1
    )[..., 0]
    return potentials - current


def per_step(values: np.ndarray, horizon: np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=float) / np.asarray(horizon, dtype=float)


def confidence_halfwidth(values: np.ndarray, level: float = 0.95) -> float:
    """Half-width of the Student-t confidence interval of the mean (0 for fewer than 2 values)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    n = values.size
    if n < 2:
        return 0.0
    sem = values.std(ddof=1) / np.sqrt(n)
    # scipy.special.stdtrit is scipy.stats.t.ppf (identical values) without importing
    # scipy.stats, which costs the report about 55 MB
    from scipy.special import stdtrit

    return float(stdtrit(n - 1, 0.5 + level / 2) * sem)


#: The statistics :func:`group_stats` gives per group, and the value of a group without values.
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
            # scipy.special, not scipy.stats: see confidence_halfwidth
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


def grouped_stats(
    table: pd.DataFrame, by: Sequence[str], columns: Sequence[str], level: float = 0.95
) -> tuple[pd.DataFrame, dict[str, dict[str, np.ndarray]]]:
    """:func:`group_stats` of ``columns`` of ``table`` grouped by ``by``: the groups' keys
    (in order of first appearance; rows with a missing key are left out, as by ``groupby``)
    with ``seeds``, the distinct values of ``seed`` (the rows if the table has no ``seed``),
    and ``values[statistic][column]`` (statistics :data:`STATISTICS`), one entry per group."""
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
        stats: tuple[np.ndarray, ...]
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
    return keys, values


def summarise(
    table: pd.DataFrame,
    metric: str,
    by: Sequence[str] = ("environment", "policy", "horizon"),
    level: float = 0.95,
) -> pd.DataFrame:
    """Mean, count and confidence half-width (:func:`confidence_halfwidth` of the finite
    values) of ``metric`` per group, in order of first appearance: :func:`grouped_stats`, the
    computation the report's summary and figures use."""
    keys, values = grouped_stats(table, by, [metric], level)
    out = keys[list(by)].copy()
    out["mean"] = values["mean"][metric]
    out["n"] = values["n"][metric]
    out["ci"] = values["ci"][metric]
    return out
