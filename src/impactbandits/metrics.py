"""Metrics computed after the run from recorded summaries.

* **regret** — ``optimum − cumulative expected reward`` (pseudo-regret; policy regret for rested
  and history-dependent settings, where the oracle is the exact optimal *policy*'s value);
* **per-step regret** — regret / horizon (the y-axis of Lindner et al.'s figures);
* **pulls** per arm and **switches** come straight from the trajectory summaries;
* :func:`summarise` gives means with Student-t confidence intervals over seeds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "competitive_ratio",
    "confidence_halfwidth",
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
    :func:`impactbandits.envs.imab.true_potentials` (closed form for the parametric families)."""
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


def summarise(
    table: pd.DataFrame,
    metric: str,
    by: Sequence[str] = ("environment", "policy", "horizon"),
    level: float = 0.95,
) -> pd.DataFrame:
    """Mean, confidence half-width and count of ``metric`` per group (in order of first
    appearance). The half-width is :func:`confidence_halfwidth` of each group's finite values,
    computed for all groups at once."""
    from scipy.special import stdtrit

    values = table[metric].astype(float)
    finite = values.where(np.isfinite(values))
    keys = [table[k] for k in by]
    out = values.groupby(keys, sort=False, observed=True).agg(mean="mean", n="count")
    spread = finite.groupby(keys, sort=False, observed=True).agg(["std", "count"])
    k = spread["count"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        sem = spread["std"].to_numpy() / np.sqrt(k)
        half = stdtrit(np.maximum(k - 1, 1), 0.5 + level / 2) * sem
    out["ci"] = np.where(k >= 2, half, 0.0)
    return out.reset_index()
