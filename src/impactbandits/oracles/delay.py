"""Exact oracles for bandits with delay-dependent payoffs (B2DEP).

Paper: Cella & Cesa-Bianchi, "Stochastic Bandits with Delay-Dependent Payoffs", AISTATS 2020
(Cella & Cesa-Bianchi 2020); instance facts in docs/fidelity.md.

Model (Section 3, Eq. 1)
------------------------
``k`` arms with baseline means ``mu_i`` in [0, 1], integer delays ``d_i ≥ 0`` and a function
``f: {1, 2, …} → [0, 1]`` (nonincreasing in the paper). Pulling arm ``i`` when ``τ`` rounds have
passed since its last pull has expected payoff

    mu_i(τ) = (1 − f(τ)·1{0 < τ ≤ d_i})·mu_i,       τ = 0: never pulled (full mu_i).

``τ`` is the difference of pull times: an arm pulled at rounds ``t`` and ``t + τ`` has delay ``τ``
at the second pull, so pulling the same arm twice in a row gives ``τ = 1`` and the ranking policy
``π_m`` (cycle over the ``m`` best arms) meets every arm at ``τ = m`` (Section 5).

``f`` is either a callable ``f(τ)`` (called with ``τ = 1, 2, …``) or an array-like of the values
``(f(1), f(2), …, f(L))`` — **entry 0 is f(1)** — with ``L ≥ max_i d_i`` (values beyond are
never used by the payoffs). :func:`f_table` turns either form into the table ``t`` with
``t[τ] = f(τ)`` and ``t[0] = 0``. The functions here only require ``f(τ) ∈ [0, 1]``; the
paper's monotonicity assumption is used by Fact 1 and Theorem 2, not by the oracles, and it is
not enforced (see "The 3-arm example" below for why that is useful).

Delay state and transition (Section 3, paragraph after the objective)
---------------------------------------------------------------------
The state is the paper's delay vector ``τ(t) = (τ_1(t), …, τ_k(t))`` with ``0 ≤ τ_i(t) ≤ d_i``:
``τ_i(t)`` is the number of rounds since arm ``i`` was last pulled, set to 0 if it was never
pulled or was last pulled more than ``d_i`` rounds ago (a 0 pays the full ``mu_i``, exactly like
any ``τ > d_i`` in Eq. 1). The initial state is all zeros. Pulling arm ``a`` in state ``τ`` pays
``mu_a(τ_a)`` and moves to ``τ'`` with

    τ'_a = 1 if d_a ≥ 1 else 0;      for j ≠ a:  τ'_j = τ_j + 1 if 0 < τ_j < d_j else 0.

Every policy's expected reward is a function of its arm sequence only, so the expected-reward
problem is a deterministic graph problem on the (finite) set of delay vectors.

What is computed
----------------
- :func:`payoff` (Eq. 1, vectorised), :func:`ranking_value` / :func:`ranking_values`
  (``g(m)``, Section 5), :func:`ghost` (``π_ghost``, Eq. 3), :func:`r0` (Theorem 2),
  :func:`ranking_schedule` (playing ranking policies one cycle each; Fact 1).
- :func:`greedy_schedule` / :func:`greedy_value`: ``π_greedy`` (Eq. 2) simulated on the delay
  state until the state repeats (it is a deterministic function of the state, so its path is
  "rho-shaped": a transient, then a cycle).
- :func:`optimal_value`: the best long-run average expected reward over **all** policies, a
  maximum cycle mean on the delay-state graph (Howard's policy iteration, or Karp's algorithm as
  a cross-check). Finding it is NP-hard (Theorem 1), so the cost grows with the number of
  reachable delay vectors (see :func:`optimal_value` for sizes, limits and timings). The states
  and transitions live in :mod:`impactbandits.oracles.delay_graph` (:func:`delay_states`), the
  generic maximum-cycle-mean solver in :mod:`impactbandits.oracles.mean_cycle`.
- :func:`periodic_schedule_value` and :func:`best_periodic_schedule` (brute force over all
  periodic schedules up to a period; the test reference).
- :func:`pmsp_instance`, :func:`pmsp_schedule`, :func:`pmsp_feasible`: the reduction from the
  Periodic Maintenance Scheduling Problem in the proof of Theorem 1 (supplementary §1), in
  :mod:`impactbandits.oracles.periodic_maintenance`.

The names that moved to those three modules are re-exported here, so imports from
``impactbandits.oracles.delay`` keep working.

Ranking order. Ranking policies are defined on arms sorted by decreasing ``mu`` (the paper
assumes ``mu_1 > … > mu_k``). The ranking functions accept any order and sort internally with a
stable sort (:func:`ranking_order`: ties keep the smaller index first); ``m`` and ``r*`` count
arms in that order, and schedules are returned in the caller's arm indices. The other functions
never reorder arms.

Conventions checked against the paper's examples (see ``tests/test_delay_oracles.py``)
--------------------------------------------------------------------------------------
- Section 3 greedy example (``f ≡ 1/2``, ``mu = (1, 1/2 − ε)``, ``d = (1, 1)``): greedy earns
  ``1 + (T−1)/2`` and alternation ``1 + (T−1)(3/2 − ε)/2`` over ``T`` rounds (odd ``T``),
  exactly the paper's numbers; the alternation is optimal. The long-run ratio is
  ``2/(3 − 2ε)``, which tends to, but for ``ε > 0`` exceeds, the paper's "≤ 2/3".
- Figure 3 (docs/fidelity.md): ``g(1) = g(2) = 0.7``; alternating one cycle of ``π_2``
  with one cycle of ``π_1`` (the periodic schedule ``1, 2, 1``) earns ``(0.75 + 0.7 + 13/15)/3
  ≈ 0.772`` (Fact 1 and its proof, supplementary §2). The exact optimum is higher still:
  ``1.7·(1 + 13/15)/4 ≈ 0.793`` with the cycle ``1, 1, 2, 2``.

Theorem 2 (``G_T(π_ghost) ≥ (1 − f(r_0)) G_T(π*) + O(1)``) is false as stated
--------------------------------------------------------------------------------
The first half of its proof, ``g(r*) ≥ g(r_0) ≥ (1 − f(r_0))·(mu_1 + … + mu_{r_0})/r_0``, is
right. The second half claims no policy earns more than ``mu_1 + … + mu_{r_0}`` in ``r_0``
consecutive rounds, which fails when an arm with a short delay can be pulled twice at full
value within ``r_0`` rounds. Counterexample (``d_i ≥ 1``, ``f`` nonincreasing, distinct means):
``mu = (1, 5/6, 1/6)``, ``d = (2, 1, 1)``, ``f = (1, 1, 0, 0, …)``. Then ``r_0 = 3``,
``f(r_0) = 0``, ``r* = 3`` with ``g(3) = 2/3``, but the cycle ``1, 2, 3, 2`` earns
``(1 + 5/6 + 1/6 + 5/6)/4 = 17/24 > 2/3``. On random instances (``k ≤ 4``, ``d_i ≤ 3``) the bound
held for equal delays and whenever every one of the ``r_0`` best arms has ``d_i ≥ r_0 − 1``; it
failed on at most ~1 in 1,000 instances with mixed delays (``tests/test_delay_oracles.py``).

The 3-arm example (end of Section 5)
------------------------------------
``mu = (1, 2/3, 1/2)``, ``d_i = 2``, ``f(τ) = 2^-τ``: the paper claims ``g(2) < g(1) < g(3)``.
Under Eq. 1 we get ``g(1) = 1/2``, ``g(2) = (5/3)(3/4)/2 = 5/8``, ``g(3) = 13/18`` (``3 > d``),
i.e. ``g(1) < g(2) < g(3)``: here ``g`` *is* monotone. Counting ``τ`` from 0 (so ``π_m`` sees
``τ = m − 1``) or indexing ``f`` from 0 (``f(τ) = 2^-(τ-1)``) does not produce the claim either
(``g = (1, 5/12, 13/24)`` and ``(0, 5/12, 13/18)``). The claimed order is obtained when
``2^-τ`` is the *retained fraction* instead of the penalty, ``mu_i(τ) = 2^-τ·mu_i`` for
``0 < τ ≤ d_i`` — i.e. Eq. 1 with ``f(τ) = 1 − 2^-τ`` (nondecreasing, against the paper's
assumption): then ``g(1) = 1/2``, ``g(2) = 5/24``, ``g(3) = 13/18``. Within Eq. 1 and a
nonincreasing ``f``, this instance has ``g(2) < g(1) < g(3)`` exactly when ``f(1) > 5/18`` and
``f(2) > (6 f(1) − 1)/5``; ``f ≡ 1/2`` (the ``f`` of the Section-3 example) qualifies
(``g = (1/2, 5/12, 13/18)``), ``f(τ) = 2^-τ`` does not (``f(2) = 1/4 < 2/5``). So non-monotone
``g`` is real under Eq. 1, only not with the paper's ``f``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from impactbandits.errors import SpecError

# The names marked F401 moved to these modules; they are re-exported so that imports from
# ``impactbandits.oracles.delay`` keep working (and documented where they now live).
from impactbandits.oracles.delay_graph import (
    MAX_DELAY_EDGES,  # noqa: F401
    MAX_DELAY_STATES,  # noqa: F401
    _as_delays,
    delay_state_graph,
    delay_states,  # noqa: F401
)
from impactbandits.oracles.mean_cycle import (
    HOWARD_MAX_ITERATIONS,  # noqa: F401
    HOWARD_TOL,  # noqa: F401
    KARP_MAX_STATES,  # noqa: F401
    CycleGraph,
    max_mean_cycle,
)
from impactbandits.oracles.periodic_maintenance import (
    MAX_PMSP_PERIOD,  # noqa: F401
    pmsp_feasible,  # noqa: F401
    pmsp_instance,  # noqa: F401
    pmsp_schedule,  # noqa: F401
)

__all__ = [
    "MAX_BRUTE_FORCE_SCHEDULES",
    "OptimalPolicy",
    "best_periodic_schedule",
    "f_table",
    "ghost",
    "greedy_schedule",
    "greedy_value",
    "optimal_value",
    "payoff",
    "periodic_schedule_value",
    "r0",
    "ranking_order",
    "ranking_schedule",
    "ranking_value",
    "ranking_values",
]

FLike = Callable[[int], float] | Sequence[float] | np.ndarray
"""``f`` as a callable ``f(τ)`` or the array ``(f(1), …, f(L))`` (entry 0 is ``f(1)``)."""

MAX_BRUTE_FORCE_SCHEDULES = 5_000_000
"""Most schedules (Σ_P k^P) :func:`best_periodic_schedule` agrees to enumerate."""

TIE_TOL = 1e-12
"""Absolute tolerance for ties: ``g(m)`` in :func:`ghost`, payoffs in :func:`greedy_schedule`,
schedule values in :func:`best_periodic_schedule`."""

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
# Input checks
# ---------------------------------------------------------------------------------------------


def _as_mu(mu: Any) -> np.ndarray:
    array = np.asarray(mu, dtype=float)
    if array.ndim != 1 or array.size < 1:
        raise SpecError("mu", f"need a 1-D array with ≥ 1 arm, got shape {array.shape}")
    if not np.all(np.isfinite(array)) or np.any(array < 0) or np.any(array > 1):
        raise SpecError("mu", f"baseline means must lie in [0, 1]; got {array.tolist()}")
    return array


def f_table(f: FLike, max_tau: int) -> np.ndarray:
    """The table ``t`` with ``t[0] = 0`` and ``t[τ] = f(τ)`` for ``τ = 1..max_tau``.

    ``f`` is a callable ``f(τ)`` or an array-like ``(f(1), f(2), …)`` of length ≥ ``max_tau``
    (entry 0 is ``f(1)``; extra entries are ignored). Values must lie in [0, 1].
    """
    if max_tau < 0:
        raise SpecError("f", f"max_tau must be ≥ 0; got {max_tau}")
    if callable(f):
        values = np.array([float(f(tau)) for tau in range(1, max_tau + 1)], dtype=float)
    else:
        given = np.asarray(f, dtype=float)
        if given.ndim != 1:
            raise SpecError(
                "f", f"need a callable or a 1-D array (f(1), f(2), …); got {given.shape}"
            )
        if given.size < max_tau:
            raise SpecError(
                "f", f"need f(1..{max_tau}) (entry 0 is f(1)); got only {given.size} values"
            )
        values = given[:max_tau]
    if not np.all(np.isfinite(values)) or np.any(values < 0) or np.any(values > 1):
        raise SpecError("f", f"values must lie in [0, 1]; got f(1..{max_tau}) = {values.tolist()}")
    return np.concatenate(([0.0], values))


def _instance(mu: Any, delays: Any, f: FLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    means = _as_mu(mu)
    lags = _as_delays(delays, means.size)
    return means, lags, f_table(f, int(lags.max()))


def _arm_payoffs(
    mu: np.ndarray, delays: np.ndarray, table: np.ndarray, arms: np.ndarray, tau: np.ndarray
) -> np.ndarray:
    """Eq. 1 for arms ``arms`` at delays ``tau`` (same shape; any τ ≥ 0 allowed)."""
    tau = np.asarray(tau)
    penalised = (tau > 0) & (tau <= delays[arms])
    return mu[arms] * (1.0 - np.where(penalised, table[np.minimum(tau, table.size - 1)], 0.0))


# ---------------------------------------------------------------------------------------------
# Eq. 1 and ranking policies (Section 5)
# ---------------------------------------------------------------------------------------------


def payoff(mu: Any, delays: Any, f: FLike, tau: Any) -> np.ndarray:
    """Expected payoffs ``mu_i(τ_i)`` of Eq. 1, vectorised over leading axes.

    ``tau`` has shape ``(..., k)`` (one delay per arm; any integers ``≥ 0``: ``0`` means never
    pulled, values above ``d_i`` pay the full ``mu_i``). Returns an array of the same shape.
    """
    means, lags, table = _instance(mu, delays, f)
    taus = np.asarray(tau)
    if taus.shape[-1:] != means.shape or taus.dtype.kind not in "iu" or np.any(taus < 0):
        raise SpecError("tau", f"need nonnegative integers of shape (..., {means.size})")
    return _arm_payoffs(means, lags, table, np.arange(means.size), taus)


def ranking_order(mu: Any) -> np.ndarray:
    """Arm indices by decreasing baseline mean (stable: ties keep the smaller index first)."""
    return np.argsort(-_as_mu(mu), kind="stable")


def ranking_values(mu: Any, delays: Any, f: FLike) -> np.ndarray:
    """``[g(1), …, g(k)]`` with ``g(m) = (1/m) Σ_{j≤m} mu_(j)(m)`` (Section 5, before Eq. 3).

    ``mu_(1) ≥ … ≥ mu_(k)`` is the :func:`ranking_order`. ``g(m)`` is the *long-run* per-round
    reward of ``π_m``: in steady state every arm is met at delay ``m``; the first cycle (which
    pays ``Σ_{j≤m} mu_(j)``, all arms fresh) only adds ``O(1)`` to ``G_T`` (proof of Theorem 2).
    """
    means, lags, table = _instance(mu, delays, f)
    order = np.argsort(-means, kind="stable")
    k = means.size
    ms = np.arange(1, k + 1)
    arms = np.broadcast_to(order, (k, k))  # row m-1: all arms in rank order
    pay = _arm_payoffs(means, lags, table, arms, np.broadcast_to(ms[:, None], (k, k)))
    included = np.arange(k)[None, :] < ms[:, None]
    return np.where(included, pay, 0.0).sum(axis=1) / ms


def ranking_value(
    mu: Any, delays: Any, f: FLike, m: int | Sequence[int] | np.ndarray
) -> float | np.ndarray:
    """``g(m)`` (a float for an int ``m``, an array for an array of ``m``), ``1 ≤ m ≤ k``."""
    values = ranking_values(mu, delays, f)
    ms = np.asarray(m)
    if ms.dtype.kind not in "iu" or np.any(ms < 1) or np.any(ms > values.size):
        raise SpecError("m", f"must be integers in 1..{values.size}; got {ms.tolist()}")
    out = values[ms - 1]
    return float(out) if out.ndim == 0 else out


def ghost(mu: Any, delays: Any, f: FLike) -> tuple[int, float]:
    """``(r*, g(r*))`` of ``π_ghost`` (Eq. 3): the best ranking policy.

    Ties (``g(m)`` within :data:`TIE_TOL` of the maximum) go to the smallest ``m``.
    """
    values = ranking_values(mu, delays, f)
    best = int(np.flatnonzero(values >= values.max() - TIE_TOL)[0])
    return best + 1, float(values[best])


def r0(mu: Any, delays: Any, f: FLike) -> int:
    """``r_0`` of Theorem 2, on the :func:`ranking_order`.

    ``r_0`` is the largest ``r`` with ``mu_i > max_{j<i} mu_j(i − j)`` for all ``i = 2..r``
    (strict, exact float comparison), and ``r_0 = 1`` if ``mu_2 ≤ mu_1(1)`` or ``k = 1``. With
    distinct means it is the number of rounds during which ``π_greedy`` keeps pulling fresh arms
    in rank order (the remark after Theorem 2).
    """
    means, lags, table = _instance(mu, delays, f)
    order = np.argsort(-means, kind="stable")
    means, lags = means[order], lags[order]
    k = means.size
    i = np.arange(k)[:, None]
    j = np.arange(k)[None, :]
    gap = np.maximum(i - j, 0)
    earlier = _arm_payoffs(means, lags, table, np.broadcast_to(j, (k, k)), gap)
    best_earlier = np.where(j < i, earlier, -np.inf).max(axis=1)  # row 0: -inf
    ok = means[1:] > best_earlier[1:]
    return 1 + (int(np.argmin(ok)) if not ok.all() else k - 1)


def ranking_schedule(mu: Any, policies: Sequence[int]) -> tuple[int, ...]:
    """One period of the schedule playing ``π_{m_1}`` for one cycle, then ``π_{m_2}``, ….

    ``policies = (m_1, m_2, …)``; ``π_m`` cycles over the ``m`` best arms in rank order. Arm
    indices are the caller's. Fact 1 (Section 8): alternating two optimal ranking policies
    ``π_m, π_n`` — ``ranking_schedule(mu, (n, m))`` — beats playing either one.
    """
    order = ranking_order(mu)
    ms = [int(m) for m in policies]
    if not ms or any(m < 1 or m > order.size for m in ms):
        raise SpecError("policies", f"need ranking sizes in 1..{order.size}; got {list(policies)}")
    return tuple(int(arm) for m in ms for arm in order[:m])


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


# ---------------------------------------------------------------------------------------------
# The exact optimum: a maximum cycle mean on the delay-state graph
# ---------------------------------------------------------------------------------------------


def _delay_graph(means: np.ndarray, lags: np.ndarray, f_tab: np.ndarray) -> CycleGraph:
    """The delay-state graph (:func:`delay_state_graph`) with the Eq. 1 payoff on every edge."""
    states, succ, start = delay_state_graph(lags)
    reward = means[None, :] * (1.0 - f_tab[states])  # states ≤ d_i; f_tab[0] = 0
    return CycleGraph(succ=succ, reward=reward, start=start)


def optimal_value(mu: Any, delays: Any, f: FLike, *, method: str = "howard") -> OptimalPolicy:
    """The best long-run average expected reward over all policies, and a cycle achieving it.

    The expected reward of any policy (even randomised or history-dependent) at round ``t`` is a
    function of the arms pulled so far, so ``lim G_T/T`` is at most the maximum mean of a cycle
    in the delay-state graph (states: the reachable delay vectors, see :func:`delay_states`;
    edge ``a`` out of ``τ``: pay ``mu_a(τ_a)``, move as in the module docstring), and repeating
    that cycle attains it. Reachability: every state on a cycle is a function of the last
    ``max d_i`` pulls, and the all-fresh start reaches every such state, so the optimum from the
    start equals the maximum cycle mean of the whole graph; only reachable states are built.

    ``method``: ``"howard"`` (default; policy iteration) or ``"karp"`` (Karp's algorithm;
    ≤ :data:`KARP_MAX_STATES` states; the cross-check), both run by
    :func:`~impactbandits.oracles.mean_cycle.max_mean_cycle`. ``value`` is recomputed as the
    exact mean of the returned ``cycle`` (:func:`periodic_schedule_value`), so it is attained in
    floating point; Howard's stopping rule certifies optimality to within ~1e-12. ``cycle`` is
    the lexicographically smallest rotation, in the caller's arm indices.

    Limits: at most :data:`MAX_DELAY_STATES` reachable states and :data:`MAX_DELAY_EDGES`
    (state, arm) pairs, else ``ValueError`` (:class:`~impactbandits.errors.SpecError`); finding
    the optimum is NP-hard (Theorem 1). Peak memory is about 65 bytes per (state, arm) pair
    (~0.5 GB at the limits). Measured (one core; Howard needed 6–34 rounds):

    ============  ==========  =========================================
    arms × d_i    states      time
    ============  ==========  =========================================
    7 × 6         28,358      0.16 s (Figure-2 means, f(τ) = 0.999^τ)
    9 × 6         171,730     1.2 s
    8 × 7         301,065     2.0 s
    11 × 6        699,502     4.8 s
    6 × 12        636,577     10 s (optimal cycle of 143 pulls)
    9 × 8         > 10^6      refused (ValueError after ~2 s)
    ============  ==========  =========================================

    Karp: 1,433 states (4 × 8) in 0.12 s (Howard: 0.01 s).
    """
    means, lags, table = _instance(mu, delays, f)
    if method not in ("howard", "karp"):
        raise SpecError("method", f"must be 'howard' or 'karp'; got {method!r}")
    cycle = max_mean_cycle(_delay_graph(means, lags, table), method=method)
    return OptimalPolicy(value=periodic_schedule_value(means, lags, table[1:], cycle), cycle=cycle)
