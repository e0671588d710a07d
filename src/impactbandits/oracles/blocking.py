"""Exact oracles and the availability clock for blocking bandits.

Paper: Basu, Sen, Sanghavi & Shakkottai, "Blocking Bandits", NeurIPS 2019 (Basu et al. 2019).
Model (the paper's setting as ported in :mod:`impactbandits.envs.blocking`, which gives the
sources of the blocking count): ``K`` arms with means ``mu_i`` and integer delays
``D_i ≥ 1``; an arm pulled in round ``t`` is unavailable in rounds ``t+1, …, t+D_i−1`` and
available again from ``t+D_i`` (``D_i = 1``: never blocked). A round in which the learner
picks a blocked arm (or has none available) is idle: it pays 0 and renews no blocking
(:class:`~impactbandits.envs.blocking.BlockingBandit`).

Blocking state and graph
------------------------
The state before a round is ``r = (r_1, …, r_K)``, ``r_i ∈ {0, …, D_i−1}`` the rounds arm ``i``
is still blocked (0: available); the start is all zeros. Pulling arm ``a`` pays ``mu_a`` and
moves to ``r'_a = D_a − 1``, ``r'_j = max(r_j − 1, 0)`` (``j ≠ a``) when ``r_a = 0``; otherwise
it is an idle round: it pays 0 and every ``r_j`` decreases. Expected rewards depend on the arm
sequence only, so the expected-reward problem is a deterministic walk on this finite graph
(:func:`blocking_graph`; at most ``Π D_i`` states, only reachable ones are built, at most
:data:`MAX_BLOCKING_STATES`). Idling from any state leads back to the start, so the graph is
strongly connected: one optimal long-run average for every state.

Delays beyond the horizon
-------------------------
Over ``T`` rounds, a delay ``D_i ≥ T`` acts exactly as ``D_i = T``: an arm pulled in round
``t ≥ 1`` is available again from ``t + D_i``, and both ``t + D_i`` and ``t + T`` exceed ``T``, so
under either delay the arm stays blocked for the rest of the run; every other arm's
availability does not depend on ``D_i``. Hence every arm sequence has the same real pulls and
idle rounds, and the same rewards, under ``D`` and ``min(D, T)`` — the same holds for any cap
``C ≥ T`` — so the optimum and Oracle Greedy's reward over ``T`` rounds are unchanged when every
delay is capped at the largest horizon asked for (:func:`capped`). The work of
:func:`optimal_values` and :func:`greedy_values` then follows the horizon, not the delays
(``delays = [10¹⁸, 2]`` at ``T = 20``: a graph of 40 states, not 2·10¹⁸), and their values stay
exact; the tests compare them with brute force on the capped instance.

What is computed
----------------
- :func:`optimal_values`: the exact optimum ``OPT(T)`` for every horizon ``T``, by dynamic
  programming ``V_t(s) = max_a r(s, a) + V_{t−1}(s')``; since ``V_{t+L} = V_t + L·λ`` (all
  states) implies the same for every later ``t``, the recursion stops as soon as that holds
  (checked Brent-style against a saved ``V`` at powers of two) and extrapolates exactly.
- :func:`long_run_optimum`: the optimal long-run average ``λ`` and a cycle attaining it, the
  maximum-mean cycle of the graph (:func:`~impactbandits.oracles.mean_cycle.max_mean_cycle`).
- :func:`greedy_values` / :func:`greedy_long_run`: Oracle Greedy (abstract: "a simple greedy
  algorithm that plays the available arm with the highest reward"; ties to the lowest index;
  idle when none is available), simulated until its state repeats. The paper shows it is
  "asymptotically (1 − 1/e) optimal" (abstract; a (1 − 1/e − O(1/T)) approximation over T
  rounds per the arXiv 1907.11975 summary read, the theorem's own text was not).
- :func:`lp_upper_bound` / :func:`lp_long_run`: certified upper bounds at any size. Two pulls of
  arm ``i`` are at least ``D_i`` rounds apart, so ``T`` rounds hold at most ``⌈T/D_i⌉`` of them
  and at most ``T`` pulls in all: ``OPT(T) ≤ max Σ mu_i n_i`` over ``n_i ≤ ⌈T/D_i⌉``,
  ``Σ n_i ≤ T`` (filled by decreasing ``mu``); per round ``x_i ≤ 1/D_i``, ``Σ x_i ≤ 1``.
- Oracles (``oracle(env, times)``): :func:`oracle_greedy` — the paper's regret benchmark (UCB
  Greedy has "c log T + o(log T) cumulative regret against the greedy algorithm", abstract);
  :func:`blocking_optimum` — the exact optimum when the graph and the recursion fit the
  limits, else the LP upper bound (a :class:`~impactbandits.errors.SpecWarning` says so;
  regret against it over-states the regret against the unknown optimum, never under-states
  it).
- :class:`BlockingClock`: the availability mask of every replication computed from its own
  past actions and the delays; shared by the environment and the policies.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from impactbandits.core.environment import Environment
from impactbandits.errors import SpecError, SpecWarning
from impactbandits.oracles.mean_cycle import CycleGraph, max_mean_cycle

__all__ = [
    "MAX_BLOCKING_STATES",
    "MAX_DP_WORK",
    "BlockingClock",
    "blocking_graph",
    "blocking_optimum",
    "capped",
    "greedy_long_run",
    "greedy_values",
    "long_run_optimum",
    "lp_long_run",
    "lp_upper_bound",
    "optimal_values",
    "oracle_greedy",
]

MAX_BLOCKING_STATES = 200_000
"""Most reachable blocking states :func:`blocking_graph` builds (measured: 94,828 states of
8 arms with D = 3…10 in 0.14 s, refusal of 20 arms with D = 8 in 0.5 s)."""

MAX_DP_WORK = 300_000_000
"""Most (state, arm) updates :func:`optimal_values` spends before the recursion turns periodic
(measured: ~6.6·10⁷ a second on one core, so about 5 s; the 8-arm instance above turns
periodic after ~330 rounds, 3.8 s)."""


class BlockingClock:
    """Which arms are available in each of ``replications`` replications, from the actions
    played so far: ``free_at[r, i]`` is the first round (1-based) in which arm ``i`` is
    available; :meth:`record` a round's actions, :meth:`available` the mask of the next round."""

    def __init__(self, delays: Any, replications: int) -> None:
        self.delays = _as_delays(delays)
        self.free_at = np.zeros((replications, self.delays.size), dtype=np.int64)
        self.t = 0
        self._rows = np.arange(replications)

    def available(self) -> np.ndarray:
        """``(R, K)`` boolean: the arms available in the coming round ``t + 1``."""
        return self.free_at <= self.t + 1

    def record(self, actions: np.ndarray) -> np.ndarray:
        """Play round ``t + 1``; return ``(R,)`` where the pulled arm was available (a real
        pull, which blocks it for ``D − 1`` rounds) rather than blocked (an idle round)."""
        self.t += 1
        actions = np.asarray(actions, dtype=np.int64)
        pulled = self.free_at[self._rows, actions] <= self.t
        arms = actions[pulled]
        self.free_at[self._rows[pulled], arms] = self.t + self.delays[arms]
        return pulled


def _as_delays(delays: Any, k: int | None = None) -> np.ndarray:
    raw = np.asarray(delays)
    array = raw.astype(np.int64) if raw.dtype.kind in "iuf" else None
    if array is None or raw.ndim != 1 or raw.size < 1 or np.any(array != raw) or array.min() < 1:
        raise SpecError("delays", f"need one positive integer per arm; got {raw.tolist()}")
    if k is not None and array.size != k:
        raise SpecError("delays", f"need one delay per arm ({k}); got {array.size}")
    return array


def _instance(means: Any, delays: Any) -> tuple[np.ndarray, np.ndarray]:
    mu = np.asarray(means, dtype=float)
    if mu.ndim != 1 or mu.size < 1 or not np.all(np.isfinite(mu)):
        raise SpecError("means", f"need one finite mean per arm; got {mu.tolist()}")
    return mu, _as_delays(delays, mu.size)


def _horizons(horizons: Any) -> np.ndarray:
    times = np.atleast_1d(np.asarray(horizons))
    if times.dtype.kind not in "iu" or np.any(times < 0):
        raise SpecError("times", "horizons must be nonnegative integers")
    return times.astype(np.int64)


def capped(delays: np.ndarray, horizon: int) -> np.ndarray:
    """The delays capped at ``horizon`` (at least 1): the same optimum and the same Oracle
    Greedy over every ``T ≤ horizon`` rounds (module docstring, "Delays beyond the horizon")."""
    return np.minimum(delays, max(int(horizon), 1))


# ---------------------------------------------------------------------------------------------
# The blocking-state graph, the exact optimum and the long-run optimum
# ---------------------------------------------------------------------------------------------


def blocking_graph(means: Any, delays: Any) -> tuple[np.ndarray, CycleGraph]:
    """``(states, graph)``: the reachable blocking states ``(S, K)`` (sorted by mixed-radix
    code; the all-available start is row 0) and their :class:`CycleGraph` (edge ``a`` out of a
    state: pull ``a``, or idle if it is blocked). A :class:`SpecError` beyond
    :data:`MAX_BLOCKING_STATES` states."""
    mu, d = _instance(means, delays)
    k = d.size
    if math.prod(int(x) for x in d) > 1 << 62:
        raise SpecError("delays", f"too many blocking states (Π D_i = {math.prod(map(int, d))})")
    strides = np.cumprod(np.concatenate(([1], d[:-1]))).astype(np.int64)

    def moves(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Successor codes and rewards ``(F, K)`` of every (state, arm)."""
        aged = np.maximum(states - 1, 0)
        free = states == 0
        renew = np.where(free, (d - 1 - aged) * strides, 0)  # the pulled arm's coordinate
        return (aged @ strides)[:, None] + renew, np.where(free, mu, 0.0)

    known = np.zeros(1, dtype=np.int64)
    frontier = np.zeros((1, k), dtype=np.int64)
    while frontier.size:
        fresh = np.sort(moves(frontier)[0], axis=None)  # sorting: NumPy's hashed unique
        fresh = fresh[np.concatenate(([True], fresh[1:] != fresh[:-1]))]  # is slow on these
        fresh = fresh[known[np.minimum(np.searchsorted(known, fresh), known.size - 1)] != fresh]
        if known.size + fresh.size > MAX_BLOCKING_STATES:
            raise SpecError(
                "delays", f"more than {MAX_BLOCKING_STATES:,} blocking states: too large to solve"
            )
        known = np.sort(np.concatenate((known, fresh)))
        frontier = (fresh[:, None] // strides) % d
    states = (known[:, None] // strides) % d
    codes, reward = moves(states)
    succ = np.searchsorted(known, codes)
    return states, CycleGraph(succ=succ, reward=reward, start=0)


def long_run_optimum(means: Any, delays: Any) -> tuple[float, tuple[int, ...]]:
    """The best long-run average expected reward over all policies, and the arm labels of a
    cycle attaining it (pulls of blocked arms in it are idle rounds): the maximum-mean cycle of
    :func:`blocking_graph` (Howard's policy iteration, optimal to ~1e-12)."""
    _, graph = blocking_graph(means, delays)
    cycle = max_mean_cycle(graph)
    return _cycle_mean(graph, cycle), cycle


def _cycle_mean(graph: CycleGraph, cycle: tuple[int, ...]) -> float:
    """The best mean of ``cycle``'s labels walked from any state that they bring back to itself
    (its true start among them: labels determine the edges)."""
    node = np.arange(graph.succ.shape[0])
    rewards = []
    for arm in cycle:
        rewards.append(graph.reward[node, arm])
        node = graph.succ[node, arm]
    closed = np.flatnonzero(node == np.arange(node.size))
    return max(math.fsum(r[s] for r in rewards) for s in closed) / len(cycle)


def optimal_values(
    means: Any, delays: Any, horizons: Any, *, max_work: int = MAX_DP_WORK
) -> np.ndarray:
    """``OPT(T)`` for each ``T`` in ``horizons``: the best expected cumulative reward over
    ``T`` rounds from the all-available start, exactly (dynamic programming on
    :func:`blocking_graph`, extrapolated once ``V_t`` is periodic up to ``λ``; agreement to
    ``1e-9`` relative). A :class:`SpecError` if the graph is too large or the recursion needs
    more than ``max_work`` (state, arm) updates."""
    times = _horizons(horizons)
    need = int(times.max(initial=0))
    mu, d = _instance(means, delays)
    _, graph = blocking_graph(mu, capped(d, need))  # the same OPT(T) for every T <= need
    lam = _cycle_mean(graph, max_mean_cycle(graph))
    size = graph.succ.size
    values = [0.0]
    value = np.zeros(graph.succ.shape[0])
    saved, saved_at, period = value.copy(), 0, 0
    for t in range(1, need + 1):
        if t * size > max_work:
            raise SpecError(
                "times",
                f"the exact optimum needs more than {max_work:,} state-arm updates "
                f"({graph.succ.shape[0]:,} states): use lp_upper_bound or greedy_values",
            )
        value = (graph.reward + value[graph.succ]).max(axis=1)
        values.append(float(value[0]))
        lag = t - saved_at
        if np.abs(value - saved - lag * lam).max() <= 1e-9 * max(1.0, np.abs(value).max()):
            period = lag
            break
        if lag == max(saved_at, 1):  # Brent: save at t = 1, 2, 4, 8, …
            saved, saved_at = value.copy(), t
    table = np.asarray(values)
    out = np.empty(times.size)
    early = times < table.size
    out[early] = table[times[early]]
    if np.any(~early):  # V_{s+m} = V_{s + m mod L} + (m − m mod L)·λ_L, s = saved_at
        slope = (table[saved_at + period] - table[saved_at]) / period
        m = times[~early] - saved_at
        rest = m % period
        out[~early] = table[saved_at + rest] + (m - rest) * slope
    return out


# ---------------------------------------------------------------------------------------------
# Oracle Greedy and the LP upper bounds
# ---------------------------------------------------------------------------------------------


def _greedy_path(
    mu: np.ndarray, d: np.ndarray, limit: int | None = None
) -> tuple[list[int], list[float], int | None]:
    """Oracle Greedy's arms (−1: idle) and rewards from the start until its state repeats, and
    the index where the repeating cycle begins (it is deterministic in the state); or, when
    ``limit`` rounds come first, those rounds and ``None``."""
    order = [int(i) for i in np.argsort(-mu, kind="stable")]
    blocked = [0] * d.size
    seen: dict[tuple[int, ...], int] = {}
    arms: list[int] = []
    rewards: list[float] = []
    while (state := tuple(blocked)) not in seen:
        if limit is not None and len(arms) >= limit:
            return arms, rewards, None
        seen[state] = len(arms)
        arm = next((i for i in order if blocked[i] == 0), -1)
        blocked = [max(b - 1, 0) for b in blocked]
        if arm >= 0:
            blocked[arm] = int(d[arm]) - 1
        arms.append(arm)
        rewards.append(float(mu[arm]) if arm >= 0 else 0.0)
    return arms, rewards, seen[state]


def greedy_values(means: Any, delays: Any, horizons: Any) -> np.ndarray:
    """Oracle Greedy's expected cumulative reward after each ``T`` in ``horizons``: simulated
    until its state repeats or the largest ``T`` is reached, whichever comes first, with the
    delays capped at that ``T`` (module docstring: the same rewards)."""
    mu, d = _instance(means, delays)
    times = _horizons(horizons)
    need = int(times.max(initial=0))
    _, rewards, start = _greedy_path(mu, capped(d, need), limit=need)
    prefix = np.concatenate(([0.0], np.cumsum(rewards)))
    if start is None:  # every round up to the largest horizon simulated
        return prefix[times]
    period = len(rewards) - start
    cycle = prefix[-1] - prefix[start]
    m = np.maximum(times - start, 0)
    within = np.where(times <= start, times, start + m % period)
    return prefix[within] + (m // period) * cycle


def greedy_long_run(means: Any, delays: Any) -> tuple[float, tuple[int, ...]]:
    """Oracle Greedy's long-run average expected reward and its cycle of arms (−1: idle)."""
    mu, d = _instance(means, delays)
    arms, rewards, start = _greedy_path(mu, d)
    assert start is not None  # (no limit: it ends when the state repeats)
    return math.fsum(rewards[start:]) / (len(rewards) - start), tuple(arms[start:])


def lp_upper_bound(means: Any, delays: Any, horizons: Any) -> np.ndarray:
    """``max Σ mu_i n_i`` over ``0 ≤ n_i ≤ ⌈T/D_i⌉``, ``Σ n_i ≤ T``: a certified upper bound on
    ``OPT(T)`` for each ``T`` in ``horizons`` (module docstring), any instance size."""
    mu, d = _instance(means, delays)
    times = _horizons(horizons)
    left = times.astype(float)
    out = np.zeros(times.size)
    for i in np.argsort(-mu, kind="stable"):
        if mu[i] <= 0:
            break
        n = np.minimum(-(-times // d[i]), left)
        out += mu[i] * n
        left -= n
    return out


def lp_long_run(means: Any, delays: Any) -> float:
    """``max Σ mu_i x_i`` over ``0 ≤ x_i ≤ 1/D_i``, ``Σ x_i ≤ 1``: a certified upper bound on
    the long-run average of every policy."""
    mu, d = _instance(means, delays)
    left, total = 1.0, 0.0
    for i in np.argsort(-mu, kind="stable"):
        if mu[i] <= 0 or left <= 0:
            break
        x = min(1.0 / d[i], left)
        total, left = total + mu[i] * x, left - x
    return total


# ---------------------------------------------------------------------------------------------
# Oracle functions (``oracle(env, times)`` → ``(R, len(times))``)
# ---------------------------------------------------------------------------------------------


def _env_instance(env: Environment) -> tuple[np.ndarray, np.ndarray, int]:
    blocking: Any = env  # a BlockingBandit: its instance is the same in every replication
    mu = np.asarray(blocking.means, dtype=np.float64)
    d = np.asarray(blocking.delays, dtype=np.int64)
    return mu, d, env.expected_rewards().shape[0]


def oracle_greedy(env: Environment, times: np.ndarray) -> np.ndarray:
    """Oracle Greedy's expected cumulative reward, the benchmark of UCB Greedy's regret in the
    paper, for a freshly reset :class:`~impactbandits.envs.blocking.BlockingBandit`: exact at
    any size; ``(R, len(times))``."""
    mu, d, replications = _env_instance(env)
    return np.tile(greedy_values(mu, d, times), (replications, 1))


def blocking_optimum(env: Environment, times: np.ndarray) -> np.ndarray:
    """The optimal expected cumulative reward over all policies, ``(R, len(times))``: exact
    (:func:`optimal_values`) within :data:`MAX_BLOCKING_STATES` and :data:`MAX_DP_WORK`, else
    the certified upper bound :func:`lp_upper_bound` with a :class:`SpecWarning`."""
    mu, d, replications = _env_instance(env)
    try:
        values = optimal_values(mu, d, times)
    except SpecError as exc:
        warnings.warn(
            f"blocking_optimum: {exc.message}; using the LP upper bound instead",
            SpecWarning,
            stacklevel=2,
        )
        values = lp_upper_bound(mu, d, times)
    return np.tile(values, (replications, 1))
