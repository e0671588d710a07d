"""Exact oracles for bandits with delay-dependent payoffs (B2DEP).

Paper: Cella & Cesa-Bianchi, "Stochastic Bandits with Delay-Dependent Payoffs", AISTATS 2020
(Cella & Cesa-Bianchi 2020); instance facts in the fidelity ledger
(https://impactbandits.readthedocs.io/en/latest/fidelity/).

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
  :func:`ranking_schedule` (playing ranking policies one cycle each; Fact 1), in
  :mod:`impactbandits.oracles.delay_payoffs`.
- :func:`greedy_schedule` / :func:`greedy_value`: ``π_greedy`` (Eq. 2) simulated on the delay
  state until the state repeats (it is a deterministic function of the state, so its path is
  "rho-shaped": a transient, then a cycle), in :mod:`impactbandits.oracles.delay_schedules`.
- :func:`optimal_value`: the best long-run average expected reward over **all** policies, a
  maximum cycle mean on the delay-state graph (Howard's policy iteration, or Karp's algorithm as
  a cross-check). Finding it is NP-hard (Theorem 1), so the cost grows with the number of
  reachable delay vectors (see :func:`optimal_value` for sizes, limits and timings). The states
  and transitions live in :mod:`impactbandits.oracles.delay_graph` (:func:`delay_states`), the
  generic maximum-cycle-mean solver in :mod:`impactbandits.oracles.mean_cycle`.
- :func:`periodic_schedule_value` and :func:`best_periodic_schedule` (brute force over all
  periodic schedules up to a period; the test reference), in
  :mod:`impactbandits.oracles.delay_schedules`.
- :func:`pmsp_instance`, :func:`pmsp_schedule`, :func:`pmsp_feasible`: the reduction from the
  Periodic Maintenance Scheduling Problem in the proof of Theorem 1 (supplementary §1), in
  :mod:`impactbandits.oracles.periodic_maintenance`.

Only :func:`optimal_value` is defined here; the names that moved to the other modules are
re-exported here, so imports from ``impactbandits.oracles.delay`` keep working.

Ranking order. Ranking policies are defined on arms sorted by decreasing ``mu`` (the paper
assumes ``mu_1 > … > mu_k``). The ranking functions accept any order and sort internally with a
stable sort (:func:`ranking_order`: ties keep the smaller index first); ``m`` and ``r*`` count
arms in that order, and schedules are returned in the caller's arm indices. The other functions
never reorder arms.

Conventions checked against the paper's examples
------------------------------------------------
- Section 3 greedy example (``f ≡ 1/2``, ``mu = (1, 1/2 − ε)``, ``d = (1, 1)``): greedy earns
  ``1 + (T−1)/2`` and alternation ``1 + (T−1)(3/2 − ε)/2`` over ``T`` rounds (odd ``T``),
  exactly the paper's numbers; the alternation is optimal. The long-run ratio is
  ``2/(3 − 2ε)``, which tends to, but for ``ε > 0`` exceeds, the paper's "≤ 2/3".
- Figure 3 (fidelity ledger): ``g(1) = g(2) = 0.7``; alternating one cycle of ``π_2``
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
failed on at most ~1 in 1,000 instances with mixed delays.

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

from typing import Any

import numpy as np

from impactbandits.errors import SpecError

# Names that moved from here to these modules, re-exported so that imports from
# ``impactbandits.oracles.delay`` keep working: those in ``__all__`` are exported and documented
# here as before (TIE_TOL and FLike were defined here), those marked F401 where they now live.
from impactbandits.oracles.delay_graph import (
    MAX_DELAY_EDGES,  # noqa: F401
    MAX_DELAY_STATES,  # noqa: F401
    delay_state_graph,
    delay_states,  # noqa: F401
)
from impactbandits.oracles.delay_payoffs import (
    TIE_TOL,
    FLike,
    _instance,
    f_table,
    ghost,
    payoff,
    r0,
    ranking_order,
    ranking_schedule,
    ranking_value,
    ranking_values,
)
from impactbandits.oracles.delay_schedules import (
    MAX_BRUTE_FORCE_SCHEDULES,
    OptimalPolicy,
    best_periodic_schedule,
    greedy_schedule,
    greedy_value,
    periodic_schedule_value,
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
    "TIE_TOL",
    "FLike",
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

# tests/test_delay_oracles.py checks the conventions of the module docstring against the paper's
# examples, and the counterexample to Theorem 2 and its frequency on random instances.

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
