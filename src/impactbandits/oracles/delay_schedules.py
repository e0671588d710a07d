"""Delay-dependent payoffs (B2DEP): periodic schedules and the greedy policy.

Paper: Cella & Cesa-Bianchi, "Stochastic Bandits with Delay-Dependent Payoffs", AISTATS 2020,
Sections 3 and 5 (Eq. 2). The model and its conventions are described in
:mod:`impactbandits.oracles.delay`, which re-exports every name here. A policy that repeats an
arm sequence is valued exactly (:func:`periodic_schedule_value`), the best such sequence up to a
period is found by brute force (:func:`best_periodic_schedule`, the test reference of the exact
optimum), and ``π_greedy`` (Eq. 2) is simulated on the delay state until the state repeats
(:func:`greedy_schedule`, :func:`greedy_value`). :class:`OptimalPolicy` is the value and cycle
returned by the brute force and by :func:`~impactbandits.oracles.delay.optimal_value`. Moved
unchanged from ``impactbandits.oracles.delay``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from impactbandits.errors import SpecError
from impactbandits.oracles.delay_payoffs import TIE_TOL, FLike, _arm_payoffs, _instance

__all__ = [
    "MAX_BRUTE_FORCE_SCHEDULES",
    "OptimalPolicy",
    "best_periodic_schedule",
    "greedy_schedule",
    "greedy_value",
    "periodic_schedule_value",
]

MAX_BRUTE_FORCE_SCHEDULES = 5_000_000
"""Most schedules (Σ_P k^P) :func:`best_periodic_schedule` agrees to enumerate."""

_BRUTE_FORCE_CHUNK = 1 << 20
"""Schedules evaluated at once by :func:`best_periodic_schedule` (memory ~ chunk × period)."""


@dataclass(frozen=True)
class OptimalPolicy:
    """A long-run average expected reward and a periodic arm sequence that achieves it.

    ``cycle`` uses the caller's arm indices; playing it periodically from any start (in
    particular from the all-fresh initial state) earns ``value`` per round in the long run.
    """

    value: float
    cycle: tuple[int, ...]


# ---------------------------------------------------------------------------------------------
# Periodic schedules
# ---------------------------------------------------------------------------------------------


def _as_schedule(schedule: Sequence[int], n_arms: int) -> np.ndarray:
    arms = np.asarray(schedule)
    if arms.ndim != 1 or arms.size < 1 or arms.dtype.kind not in "iu":
        raise SpecError("schedule", "need a nonempty 1-D sequence of arm indices")
    if np.any(arms < 0) or np.any(arms >= n_arms):
        raise SpecError("schedule", f"arm indices must lie in 0..{n_arms - 1}")
    return arms.astype(np.int64)


def _previous_pull_gaps(arms: np.ndarray, cyclic: bool) -> np.ndarray:
    """Rounds since the previous pull of the same arm (0 for a first pull unless ``cyclic``)."""
    n = arms.size
    pos = np.lexsort((np.arange(n), arms))  # positions grouped by arm, increasing in each group
    same = np.zeros(n, dtype=bool)  # same[i]: pos[i] has the same arm as pos[i - 1]
    same[1:] = arms[pos[1:]] == arms[pos[:-1]]
    gaps = np.zeros(n, dtype=np.int64)
    gaps[pos[same]] = pos[same] - pos[np.flatnonzero(same) - 1]
    if cyclic:  # an arm's first pull in the period follows its last pull of the previous period
        firsts = np.flatnonzero(~same)
        lasts = np.append(firsts[1:] - 1, n - 1)
        gaps[pos[firsts]] = pos[firsts] + n - pos[lasts]
    return gaps


def periodic_schedule_value(
    mu: Any, delays: Any, f: FLike, schedule: Sequence[int], horizon: int | None = None
) -> float:
    """Average expected reward of repeating ``schedule`` (one period of arm indices).

    ``horizon=None``: the long-run average, ``(1/P) Σ_p mu_{a_p}(gap_p)`` with ``gap_p`` the
    cyclic distance to the previous pull of the same arm (``P`` if it occurs once per period).
    ``horizon=T``: ``G_T/T`` over the first ``T`` rounds starting with every arm fresh.
    """
    means, lags, table = _instance(mu, delays, f)
    arms = _as_schedule(schedule, means.size)
    if horizon is None:
        gaps = _previous_pull_gaps(arms, cyclic=True)
        return math.fsum(_arm_payoffs(means, lags, table, arms, gaps)) / arms.size
    if int(horizon) != horizon or horizon < 1:
        raise SpecError("horizon", f"must be a positive integer; got {horizon}")
    unrolled = np.resize(arms, int(horizon))
    gaps = _previous_pull_gaps(unrolled, cyclic=False)
    return math.fsum(_arm_payoffs(means, lags, table, unrolled, gaps)) / int(horizon)


def best_periodic_schedule(mu: Any, delays: Any, f: FLike, max_period: int) -> OptimalPolicy:
    """Brute force: the best long-run value over all schedules of period ``1..max_period``.

    Enumerates all ``Σ_P k^P`` arm sequences (refused beyond
    :data:`MAX_BRUTE_FORCE_SCHEDULES`). Ties (within :data:`TIE_TOL`) go to the shortest
    period, then the lexicographically smallest sequence. This is a lower bound on
    :func:`optimal_value`, equal to it as soon as ``max_period`` reaches the length of some
    optimal cycle.
    """
    means, lags, table = _instance(mu, delays, f)
    k = means.size
    if int(max_period) != max_period or max_period < 1:
        raise SpecError("max_period", f"must be a positive integer; got {max_period}")
    total = sum(k**p for p in range(1, int(max_period) + 1))
    if total > MAX_BRUTE_FORCE_SCHEDULES:
        raise SpecError(
            "max_period",
            f"{total} schedules with {k} arms up to period {max_period} exceed the brute-force "
            f"limit {MAX_BRUTE_FORCE_SCHEDULES}",
        )
    best_value = -np.inf
    best_cycle: tuple[int, ...] = (0,)
    for period in range(1, int(max_period) + 1):
        count = k**period
        weights = k ** np.arange(period - 1, -1, -1, dtype=np.int64)
        for start in range(0, count, _BRUTE_FORCE_CHUNK):
            index = np.arange(start, min(count, start + _BRUTE_FORCE_CHUNK), dtype=np.int64)
            seqs = (index[:, None] // weights[None, :]) % k  # lexicographic order
            gaps = np.full(seqs.shape, period, dtype=np.int64)
            for lag in range(period - 1, 0, -1):
                gaps = np.where(seqs == np.roll(seqs, lag, axis=1), lag, gaps)
            values = _arm_payoffs(means, lags, table, seqs, gaps).mean(axis=1)
            top = int(np.argmax(values >= values.max() - TIE_TOL))
            if values[top] > best_value + TIE_TOL:
                best_value, best_cycle = float(values[top]), tuple(int(a) for a in seqs[top])
    exact = periodic_schedule_value(means, lags, table[1:], best_cycle)
    return OptimalPolicy(value=exact, cycle=best_cycle)


# ---------------------------------------------------------------------------------------------
# The greedy policy (Eq. 2)
# ---------------------------------------------------------------------------------------------


def greedy_schedule(mu: Any, delays: Any, f: FLike) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(transient, cycle)``: the arms ``π_greedy`` (Eq. 2) pulls from the all-fresh start.

    Each round it pulls an arm of highest current expected payoff ``mu_i(τ_i(t))``; ties (within
    :data:`TIE_TOL`) go to the higher baseline mean, then the smaller index (so on the paper's
    example with ``ε = 0`` it keeps pulling arm 1). Greedy is a deterministic function of the
    delay vector, so the state repeats after at most (number of reachable states) rounds; from
    then on it repeats ``cycle`` forever.
    """
    means, lags, table = _instance(mu, delays, f)
    k = means.size
    preference = np.argsort(-means, kind="stable")
    tau = np.zeros(k, dtype=np.int64)
    first_seen: dict[bytes, int] = {}
    pulls: list[int] = []
    arange = np.arange(k)
    while (key := tau.tobytes()) not in first_seen:
        first_seen[key] = len(pulls)
        pay = _arm_payoffs(means, lags, table, arange, tau)
        candidates = pay[preference] >= pay.max() - TIE_TOL
        arm = int(preference[np.argmax(candidates)])
        pulls.append(arm)
        tau = np.where((tau > 0) & (tau < lags), tau + 1, 0)
        tau[arm] = 1 if lags[arm] >= 1 else 0
    start = first_seen[key]
    return tuple(pulls[:start]), tuple(pulls[start:])


def greedy_value(mu: Any, delays: Any, f: FLike, horizon: int | None = None) -> float:
    """Average expected reward of ``π_greedy`` (Eq. 2, tie-break of :func:`greedy_schedule`).

    ``horizon=None``: the long-run average (the mean over greedy's cycle). ``horizon=T``:
    ``G_T/T`` over the first ``T`` rounds from the all-fresh start.
    """
    means, lags, table = _instance(mu, delays, f)
    transient, cycle = greedy_schedule(means, lags, table[1:])
    if horizon is None:
        return periodic_schedule_value(means, lags, table[1:], cycle)
    if int(horizon) != horizon or horizon < 1:
        raise SpecError("horizon", f"must be a positive integer; got {horizon}")
    horizon = int(horizon)
    n_cycle = max(0, horizon - len(transient))
    arms = np.concatenate(
        [np.asarray(transient, dtype=np.int64), np.resize(np.asarray(cycle), n_cycle)]
    )[:horizon]
    gaps = _previous_pull_gaps(arms, cyclic=False)
    return math.fsum(_arm_payoffs(means, lags, table, arms, gaps)) / horizon
