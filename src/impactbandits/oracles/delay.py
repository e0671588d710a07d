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
  reachable delay vectors (see :func:`optimal_value` for sizes, limits and timings).
- :func:`periodic_schedule_value` and :func:`best_periodic_schedule` (brute force over all
  periodic schedules up to a period; the test reference).
- :func:`pmsp_instance`, :func:`pmsp_schedule`, :func:`pmsp_feasible`: the reduction from the
  Periodic Maintenance Scheduling Problem in the proof of Theorem 1 (supplementary §1).

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
from fractions import Fraction
from typing import Any

import numpy as np

from impactbandits.errors import SpecError

__all__ = [
    "KARP_MAX_STATES",
    "MAX_BRUTE_FORCE_SCHEDULES",
    "MAX_DELAY_EDGES",
    "MAX_DELAY_STATES",
    "OptimalPolicy",
    "best_periodic_schedule",
    "delay_states",
    "f_table",
    "ghost",
    "greedy_schedule",
    "greedy_value",
    "optimal_value",
    "payoff",
    "periodic_schedule_value",
    "pmsp_feasible",
    "pmsp_instance",
    "pmsp_schedule",
    "r0",
    "ranking_order",
    "ranking_schedule",
    "ranking_value",
    "ranking_values",
]

FLike = Callable[[int], float] | Sequence[float] | np.ndarray
"""``f`` as a callable ``f(τ)`` or the array ``(f(1), …, f(L))`` (entry 0 is ``f(1)``)."""

MAX_DELAY_STATES = 1_000_000
"""Most reachable delay vectors :func:`optimal_value` agrees to build."""

MAX_DELAY_EDGES = 10_000_000
"""Most (state, arm) pairs :func:`optimal_value` agrees to build (peak memory ~65 bytes each)."""

KARP_MAX_STATES = 3_000
"""Karp's algorithm keeps an (n+1) × n table: refused beyond this many states."""

MAX_BRUTE_FORCE_SCHEDULES = 5_000_000
"""Most schedules (Σ_P k^P) :func:`best_periodic_schedule` agrees to enumerate."""

MAX_PMSP_PERIOD = 1_000_000
"""Longest common period (lcm of the service intervals) :func:`pmsp_schedule` agrees to build."""

HOWARD_MAX_ITERATIONS = 10_000
"""Safety cap on policy-iteration rounds (a few dozen are typical)."""

HOWARD_TOL = 1e-12
"""Improvement threshold of policy iteration: gains within this are equal; a bias change is
taken only if it exceeds ``HOWARD_TOL·max(1, max|bias|)``."""

TIE_TOL = 1e-12
"""Absolute tolerance for ties: ``g(m)`` in :func:`ghost`, payoffs in :func:`greedy_schedule`,
schedule values in :func:`best_periodic_schedule`."""

_BRUTE_FORCE_CHUNK = 1 << 20
"""Schedules evaluated at once by :func:`best_periodic_schedule` (memory ~ chunk × period)."""

_MAX_CODE = 1 << 62
"""State codes are int64 sums; encodings whose largest code exceeds this are not used."""


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


def _as_delays(delays: Any, n_arms: int | None = None) -> np.ndarray:
    raw = np.asarray(delays)
    if raw.ndim != 1 or raw.size < 1:
        raise SpecError("delays", f"need a 1-D array with ≥ 1 arm, got shape {raw.shape}")
    if raw.dtype.kind not in "iuf" or (raw.dtype.kind == "f" and not np.all(np.isfinite(raw))):
        raise SpecError("delays", f"must be nonnegative integers; got {raw.tolist()}")
    array = raw.astype(np.int64)
    if np.any(array != raw) or np.any(array < 0):
        raise SpecError("delays", f"must be nonnegative integers; got {raw.tolist()}")
    if n_arms is not None and array.size != n_arms:
        raise SpecError("delays", f"need one delay per arm ({n_arms}); got {array.size}")
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
    best_value, best_cycle = -np.inf, (0,)
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
# The delay-state graph
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _DelayGraph:
    """Reachable delay vectors ``states (n, k)`` sorted by code, ``succ (n, k)`` the state
    index after pulling each arm, ``reward (n, k)`` its expected payoff, ``start`` the index of
    the all-zero state."""

    states: np.ndarray
    succ: np.ndarray
    reward: np.ndarray
    start: int


def _code_table(delays: np.ndarray) -> np.ndarray:
    """``C (k, D+1)`` with ``code(τ) = Σ_i C[i, τ_i]``, injective on reachable delay vectors.

    Mixed radix (``C[i, τ] = τ·Π_{j<i}(d_j+1)``) when ``Π(d_i+1)`` fits, else "slots"
    (``C[i, τ] = (i+1)(k+1)^(τ−1)``: arms with ``τ_i > 0`` have distinct ``τ_i`` in any reachable
    state, since one arm is pulled per round).
    """
    k, depth = delays.size, int(delays.max())
    taus = np.arange(depth + 1, dtype=np.int64)
    if math.prod(int(d) + 1 for d in delays) <= _MAX_CODE:
        strides = np.cumprod(np.concatenate(([1], delays[:-1] + 1)))
        return strides[:, None] * taus[None, :]
    if (k + 1) ** depth <= _MAX_CODE:
        powers = np.concatenate(([0], (k + 1) ** np.arange(depth, dtype=np.int64)))
        return np.arange(1, k + 1, dtype=np.int64)[:, None] * powers[None, :]
    raise SpecError("delays", "too many arms and too long delays to enumerate delay states")


def _advance(states: np.ndarray, delays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(aged, fresh)``: every non-pulled arm's next delay, and the pulled arm's (1 or 0)."""
    aged = np.where((states > 0) & (states < delays), states + 1, 0).astype(states.dtype)
    fresh = (delays >= 1).astype(states.dtype)
    return aged, fresh


def _successor_codes(
    states: np.ndarray, delays: np.ndarray, table: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Codes of the successors ``(n, k)`` of ``states`` (pulled arm on axis 1), by updating
    the pulled arm's term of the code; also returns :func:`_advance`'s ``(aged, fresh)``."""
    aged, fresh = _advance(states, delays)
    arms = np.arange(delays.size)
    aged_codes = table[arms, aged].sum(axis=1)
    succ = aged_codes[:, None] - table[arms, aged] + table[arms, fresh][None, :]
    return succ, aged, fresh


def delay_states(delays: Any) -> np.ndarray:
    """All delay vectors reachable from the all-zero state, shape ``(n, k)``.

    Breadth-first search; after ``max_i d_i`` rounds a state is a function of the last
    ``max_i d_i`` pulls, so there are at most ``max_i d_i + 1`` levels. Much smaller than
    ``Π(d_i + 1)``: nonzero entries of a reachable state are distinct, so there are at most
    ``Σ_j C(D, j)·k!/(k−j)!`` of them (``D = max d_i``); e.g. 7 arms with ``d_i = 6``: 28,358
    states (bound 37,633) instead of 823,543.
    Refused beyond :data:`MAX_DELAY_STATES` states.
    """
    return _delay_graph_states(_as_delays(delays))[0]


def _delay_graph_states(delays: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k = delays.size
    table = _code_table(delays)
    dtype = np.int16 if delays.max() < np.iinfo(np.int16).max else np.int32
    frontier = np.zeros((1, k), dtype=dtype)
    frontier_codes = np.zeros(1, dtype=np.int64)
    blocks, code_blocks = [frontier], [frontier_codes]
    seen = frontier_codes.copy()
    total = 1
    while frontier.shape[0]:
        succ, aged, fresh = _successor_codes(frontier, delays, table)
        flat = succ.ravel()
        new_codes, first = np.unique(flat, return_index=True)
        keep = ~np.isin(new_codes, seen, assume_unique=True)
        new_codes, first = new_codes[keep], first[keep]
        rows, arms = np.divmod(first, k)
        frontier = aged[rows]
        frontier[np.arange(rows.size), arms] = fresh[arms]
        frontier_codes = new_codes
        total += rows.size
        if total > MAX_DELAY_STATES or total * k > MAX_DELAY_EDGES:
            raise SpecError(
                "delays",
                f"more than {min(MAX_DELAY_STATES, MAX_DELAY_EDGES // k)} reachable delay "
                f"states with {k} arms (limits: {MAX_DELAY_STATES} states, {MAX_DELAY_EDGES} "
                "state-arm pairs); the exact optimum is NP-hard (Theorem 1)",
            )
        blocks.append(frontier)
        code_blocks.append(frontier_codes)
        seen = np.union1d(seen, new_codes)
    codes = np.concatenate(code_blocks)
    order = np.argsort(codes)
    return np.concatenate(blocks)[order], codes[order], table


def _delay_graph(means: np.ndarray, lags: np.ndarray, f_tab: np.ndarray) -> _DelayGraph:
    states, codes, table = _delay_graph_states(lags)
    succ_codes, _, _ = _successor_codes(states, lags, table)
    succ = np.searchsorted(codes, succ_codes).astype(np.int32)  # n ≤ MAX_DELAY_STATES < 2^31
    reward = means[None, :] * (1.0 - f_tab[states])  # states ≤ d_i; f_tab[0] = 0
    start = int(np.searchsorted(codes, 0))
    return _DelayGraph(states=states, succ=succ, reward=reward, start=start)


# ---------------------------------------------------------------------------------------------
# Maximum cycle mean: Howard's policy iteration and Karp's algorithm
# ---------------------------------------------------------------------------------------------


def _evaluate(nxt: np.ndarray, rew: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gain, bias and cycle entry of the functional graph ``s → nxt[s]`` with rewards ``rew``.

    By pointer doubling (``L = ⌈log2 n⌉ + 1`` squarings, all vectorised): ``f^(2^L)(s)`` lies on
    the cycle ``s`` falls into; each cycle is labelled by its smallest node (its root); the gain
    is the cycle's mean reward; the bias solves ``h(s) = rew(s) − g(s) + h(nxt(s))`` with
    ``h(root) = 0`` (summing ``rew − g`` along the path to the root, made absorbing).
    """
    n = nxt.size
    rounds = max(1, int(n).bit_length() + 1)
    jump, low = nxt.copy(), np.arange(n)
    for _ in range(rounds):
        low = np.minimum(low, low[jump])
        jump = jump[jump]
    on_cycle = jump  # f^(2^rounds)(s), 2^rounds > n: on the cycle of s
    cyc = np.zeros(n, dtype=bool)
    cyc[on_cycle] = True
    label = low[on_cycle]  # root (smallest node) of the cycle s falls into
    cyc_nodes = np.flatnonzero(cyc)
    sums = np.bincount(low[cyc_nodes], weights=rew[cyc_nodes], minlength=n)
    sizes = np.bincount(low[cyc_nodes], minlength=n)
    roots = np.flatnonzero(sizes)
    mean = np.zeros(n)
    mean[roots] = sums[roots] / sizes[roots]
    gain = mean[label]
    step = rew - gain
    ahead = nxt.copy()
    step[roots] = 0.0
    ahead[roots] = roots
    for _ in range(rounds):
        step = step + step[ahead]
        ahead = ahead[ahead]
    return gain, step, label


def _cycle_from(nxt: np.ndarray, action: np.ndarray, node: int) -> list[int]:
    """The arms along the cycle of the functional graph that contains ``node``."""
    arms, current = [], node
    while True:
        arms.append(int(action[current]))
        current = int(nxt[current])
        if current == node:
            return arms


def _canonical(arms: Sequence[int]) -> tuple[int, ...]:
    """The lexicographically smallest rotation (a periodic schedule has no start)."""
    rotations = [tuple(arms[i:]) + tuple(arms[:i]) for i in range(len(arms))]
    return min(rotations)


def _howard(graph: _DelayGraph) -> tuple[np.ndarray, np.ndarray]:
    """Optimal policy (one arm per state) and its gain, by multichain policy iteration.

    Howard's algorithm for the maximum cycle mean (Cochet-Terrasson, Cohen, Gaubert, McGettrick
    & Quadrat 1998; Puterman 1994, §9.2): evaluate the current policy (a functional graph), then
    in every state switch to an arm whose successor has strictly larger gain, or, where no gain
    improves, to an arm with the same gain and strictly larger ``reward + bias(successor)``.
    Each switch strictly increases (gain, bias) lexicographically, so no policy repeats and the
    iteration ends after finitely many rounds (a few dozen in practice). At the end no arm
    improves anywhere, which certifies that no cycle has mean above the policy's gain (up to the
    tolerance :data:`HOWARD_TOL`).
    """
    n = graph.succ.shape[0]
    rows = np.arange(n)
    policy = np.argmax(graph.reward, axis=1)  # start from the myopic policy
    for _ in range(HOWARD_MAX_ITERATIONS):
        nxt = graph.succ[rows, policy]
        gain, bias, _ = _evaluate(nxt, graph.reward[rows, policy])
        succ_gain = gain[graph.succ]
        best_gain = succ_gain.max(axis=1)
        raise_gain = best_gain > gain + HOWARD_TOL
        tol = HOWARD_TOL * max(1.0, float(np.abs(bias).max()))
        same_gain = np.abs(succ_gain - gain[:, None]) <= HOWARD_TOL
        score = np.where(same_gain, graph.reward + bias[graph.succ], -np.inf)
        raise_bias = ~raise_gain & (score.max(axis=1) > bias + gain + tol)
        if not (raise_gain.any() or raise_bias.any()):
            return policy, gain
        policy = policy.copy()
        policy[raise_gain] = np.argmax(
            succ_gain[raise_gain] >= best_gain[raise_gain, None] - HOWARD_TOL, axis=1
        )
        policy[raise_bias] = np.argmax(score[raise_bias], axis=1)
    raise RuntimeError(f"policy iteration did not converge in {HOWARD_MAX_ITERATIONS} rounds")


def _karp(graph: _DelayGraph) -> tuple[float, list[int]]:
    """Maximum cycle mean reachable from the start by Karp's (1978) algorithm, and a cycle.

    ``D_j(v)`` = best reward of a ``j``-edge walk from the start to ``v``;
    ``λ* = max_v min_{j<n} (D_n(v) − D_j(v))/(n − j)``. Exact (finitely many additions and
    comparisons). Every cycle on an optimal ``n``-edge walk to a maximising ``v`` has mean
    ``λ*``; the best one found on that walk is returned. O(n²) memory and O(n² k) time.
    """
    n, k = graph.succ.shape
    if n > KARP_MAX_STATES:
        raise SpecError("method", f"karp is limited to {KARP_MAX_STATES} states; got {n}")
    best = np.full((n + 1, n), -np.inf)
    parent = np.zeros((n + 1, n), dtype=np.int64)  # flat edge index s*k + a
    best[0, graph.start] = 0.0
    targets = graph.succ.ravel()
    for j in range(1, n + 1):
        cand = (best[j - 1][:, None] + graph.reward).ravel()
        np.maximum.at(best[j], targets, cand)
        hit = np.flatnonzero(np.isfinite(cand) & (cand == best[j][targets]))
        parent[j, targets[hit]] = hit
    with np.errstate(invalid="ignore"):
        ratios = (best[n][None, :] - best[:n]) / (n - np.arange(n))[:, None]
    ratios = np.where(np.isfinite(best[:n]), ratios, np.inf)
    worst = np.where(np.isfinite(best[n]), ratios.min(axis=0), -np.inf)
    node = int(np.argmax(worst))
    walk_states, walk_arms = [node], []
    for j in range(n, 0, -1):
        edge = int(parent[j, walk_states[-1]])
        walk_states.append(edge // k)
        walk_arms.append(edge % k)
    walk_states.reverse()
    walk_arms.reverse()
    last_seen: dict[int, int] = {}
    best_mean, best_arms = -np.inf, [0]
    for position, state in enumerate(walk_states):
        if state in last_seen:
            i = last_seen[state]
            arms = walk_arms[i:position]
            mean = math.fsum(graph.reward[walk_states[i + t], a] for t, a in enumerate(arms))
            if mean / len(arms) > best_mean:
                best_mean, best_arms = mean / len(arms), arms
        last_seen[state] = position
    return float(worst[node]), best_arms


def optimal_value(mu: Any, delays: Any, f: FLike, *, method: str = "howard") -> OptimalPolicy:
    """The best long-run average expected reward over all policies, and a cycle achieving it.

    The expected reward of any policy (even randomised or history-dependent) at round ``t`` is a
    function of the arms pulled so far, so ``lim G_T/T`` is at most the maximum mean of a cycle
    in the delay-state graph (states: the reachable delay vectors, see :func:`delay_states`;
    edge ``a`` out of ``τ``: pay ``mu_a(τ_a)``, move as in the module docstring), and repeating
    that cycle attains it. Reachability: every state on a cycle is a function of the last
    ``max d_i`` pulls, and the all-fresh start reaches every such state, so the optimum from the
    start equals the maximum cycle mean of the whole graph; only reachable states are built.

    ``method``: ``"howard"`` (default; policy iteration, see :func:`_howard`) or ``"karp"``
    (Karp's algorithm; ≤ :data:`KARP_MAX_STATES` states; the cross-check). ``value`` is
    recomputed as the exact mean of the returned ``cycle`` (:func:`periodic_schedule_value`), so
    it is attained in floating point; Howard's stopping rule certifies optimality to within
    ~1e-12. ``cycle`` is the lexicographically smallest rotation, in the caller's arm indices.

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
    graph = _delay_graph(means, lags, table)
    if method == "karp":
        _, arms = _karp(graph)
    else:
        policy, _ = _howard(graph)
        rows = np.arange(graph.succ.shape[0])
        nxt = graph.succ[rows, policy]
        node, visited = graph.start, set()
        while node not in visited:  # walk onto the cycle the start falls into
            visited.add(node)
            node = int(nxt[node])
        arms = _cycle_from(nxt, policy, node)
    cycle = _canonical(arms)
    return OptimalPolicy(value=periodic_schedule_value(means, lags, table[1:], cycle), cycle=cycle)


# ---------------------------------------------------------------------------------------------
# Theorem 1: the reduction from the Periodic Maintenance Scheduling Problem
# ---------------------------------------------------------------------------------------------


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
