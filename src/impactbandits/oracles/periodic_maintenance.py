"""The Periodic Maintenance Scheduling Problem and its reduction to delay-dependent payoffs.

Paper: Cella & Cesa-Bianchi, "Stochastic Bandits with Delay-Dependent Payoffs", AISTATS 2020,
Theorem 1 (finding the optimal policy is NP-hard) and its proof (supplementary §1), which reduces
from the Periodic Maintenance Scheduling Problem (PMSP; Section 4, after Bar-Noy et al. 2002).

PMSP: machines ``i = 1..n`` with service intervals ``ℓ_i`` (``Σ 1/ℓ_i ≤ 1``); find an infinite
sequence over machines and idle in which the consecutive services of machine ``i`` are *exactly*
``ℓ_i`` rounds apart (pinwheel scheduling asks for *at most* ``ℓ_i``). :func:`pmsp_instance`
builds the B2DEP instance of the reduction, :func:`pmsp_schedule` finds one period of a feasible
schedule by brute force and :func:`pmsp_feasible` says whether one exists; the tests check the
reduction against :func:`impactbandits.oracles.delay.optimal_value`. Moved unchanged from
``impactbandits.oracles.delay``, which re-exports these names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from impactbandits.errors import SpecError

__all__ = ["MAX_PMSP_PERIOD", "pmsp_feasible", "pmsp_instance", "pmsp_schedule"]

MAX_PMSP_PERIOD = 1_000_000
"""Longest common period (lcm of the service intervals) :func:`pmsp_schedule` agrees to build."""


def _as_periods(periods: Sequence[int]) -> list[int]:
    values = list(periods)
    if not values or any(int(p) != p or p < 1 for p in values):
        raise SpecError("periods", f"need ≥ 1 positive integer service intervals; got {values}")
    values = [int(p) for p in values]
    if sum(Fraction(1, p) for p in values) > 1:
        raise SpecError("periods", f"a PMSP instance needs Σ 1/ℓ_i ≤ 1; got {values}")
    return values


def pmsp_instance(periods: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The B2DEP instance of the proof of Theorem 1 (supplementary §1) for a PMSP instance.

    ``periods = (ℓ_1, …, ℓ_n)`` with ``Σ 1/ℓ_i ≤ 1``. Returns ``(mu, delays, f)`` with ``n + 1``
    arms: ``mu_i = 1``, ``d_i = ℓ_i − 1`` for the machines, an idle arm ``n`` with ``mu = 0``,
    ``d = 0``, and ``f ≡ 1`` (as the array ``(f(1), …, f(max d))``). An arm then pays 1 exactly
    when at least ``ℓ_i`` rounds have passed since its last pull, so the long-run average is at
    most ``Σ 1/ℓ_i = Σ mu_i/(d_i + 1)``, with equality iff some schedule pulls every machine
    exactly every ``ℓ_i`` rounds, i.e. iff the PMSP instance is feasible.
    """
    lengths = _as_periods(periods)
    n = len(lengths)
    mu = np.append(np.ones(n), 0.0)
    delays = np.append(np.asarray(lengths, dtype=np.int64) - 1, 0)
    return mu, delays, np.ones(max(1, int(delays.max())))


def pmsp_schedule(periods: Sequence[int]) -> tuple[int, ...] | None:
    """One period (length ``lcm(ℓ)``) of a feasible maintenance schedule, or ``None``.

    PMSP (Section 4, after Bar-Noy et al. 2002): find an infinite sequence over machines and
    idle in which the consecutive services of machine ``i`` are exactly ``ℓ_i`` rounds apart.
    Machine ``i`` then occupies the times ``o_i + ℓ_i ℕ``; two machines collide iff
    ``o_i ≡ o_j (mod gcd(ℓ_i, ℓ_j))`` (Chinese remainder theorem). Brute force: backtracking
    over the offsets ``o_i ∈ [0, ℓ_i)`` (``o_1 = 0``). The schedule uses the arm indices of
    :func:`pmsp_instance` (machine ``i`` → arm ``i``, idle → arm ``n``).
    """
    lengths = _as_periods(periods)
    n = len(lengths)
    period = math.lcm(*lengths)
    if period > MAX_PMSP_PERIOD:
        raise SpecError("periods", f"common period {period} exceeds {MAX_PMSP_PERIOD}")
    offsets: list[int] = []

    def place(i: int) -> bool:
        if i == n:
            return True
        for o in range(1 if i == 0 else lengths[i]):
            if all((o - offsets[j]) % math.gcd(lengths[i], lengths[j]) for j in range(i)):
                offsets.append(o)
                if place(i + 1):
                    return True
                offsets.pop()
        return False

    if not place(0):
        return None
    slots = [n] * period
    for machine, (o, length) in enumerate(zip(offsets, lengths, strict=True)):
        for t in range(o, period, length):
            slots[t] = machine
    return tuple(slots)


def pmsp_feasible(periods: Sequence[int]) -> bool:
    """Whether the PMSP instance ``periods`` has a feasible schedule (:func:`pmsp_schedule`)."""
    return pmsp_schedule(periods) is not None
