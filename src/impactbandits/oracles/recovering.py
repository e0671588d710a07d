"""Planning oracles and the recovery clock for recovering bandits.

Paper: Pike-Burke & Grünewälder, "Recovering Bandits", NeurIPS 2019 (arXiv 1910.14354); the
authors' code is github.com/ciarapb/recovering_bandits. Model as ported in
:mod:`impactbandits.envs.recovering` (which gives the sources): arm ``i`` pays ``f_i(z_i)`` in
expectation, ``z_i ∈ {0, …, z_max}`` the rounds since its last pull as the authors count them
(``functs/gen_functs.py``, ``UpdateZs``: after every round each ``z`` becomes ``min(z + 1,
z_max)`` and the played arm's becomes 0). Here ``values`` is the table ``F[i, z] = f_i(z)``,
shape ``(K, z_max + 1)``, and ``initial_z`` the ``z`` of every arm before round 1.

Expected rewards depend on the arm sequence only, so everything here is noise-free planning:

- :class:`RecoveryClock`: the ``z`` of every arm in every replication, from the actions played;
  shared by the environment and the policies.
- :func:`plan_table` / :func:`plan_positions`: the ``d``-arm sequences a lookahead compares
  (``K^d`` of them with repeated arms, the authors' ``GetBestSeqRep``; ``K!/(K−d)!`` without,
  ``GetBestSeq``), in lexicographic order, and the ``z`` each planned pull meets (an arm not yet
  pulled in the plan has aged ``l`` rounds at step ``l``, one pulled at step ``m`` has
  ``z = l − m − 1``; both capped at ``z_max``), the authors' ``ZPlayedSeq``.
- :func:`lookahead_values`: the oracle d-step lookahead policy, which every ``d`` rounds from
  round 1 plays the sequence of highest total true expected reward (ties: the lexicographically
  first; the authors' ``max`` over a dict breaks them arbitrarily), ``d = 1`` being greedy.
- :func:`optimal_values`: the exact optimum ``OPT(T)`` over all arm sequences, by dynamic
  programming ``V_t(s) = max_a f_a(z_a) + V_{t−1}(s')`` over the reachable ``z``-vectors
  (:func:`recovery_graph`, at most :data:`MAX_STATES`), stopped once ``V`` is periodic up to
  the optimal long-run average (then extrapolated exactly); a one-line
  :class:`~impactbandits.errors.SpecError` beyond :data:`MAX_STATES` or :data:`MAX_DP_WORK`.
- :func:`long_run_optimum`: the best long-run average, the maximum-mean cycle of the same graph
  (:func:`~impactbandits.oracles.mean_cycle.max_mean_cycle`).
- Oracles (``oracle(env, times) -> (R, len(times))``): :func:`recovering_lookahead` (the
  d-step lookahead oracle policy from the start, ``d`` = the environment's ``lookahead``; exact
  at any size) and :func:`recovering_optimum` (:func:`optimal_values`).

The paper's own regret, "d-step lookahead regret", is measured from the *learner's* state at
the start of each block (the authors' ``RGPUCBds``: ``reg2 = ErewSeq(GetBestSeqRep(...)) −
ErewSeq(myseq)``), so it is not a fixed benchmark; the environment reports it as a metric
(:meth:`~impactbandits.envs.recovering.RecoveringBandit.summary_metrics`) using
:func:`block_optimum`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from impactbandits.core.environment import Environment
from impactbandits.errors import SpecError
from impactbandits.oracles.mean_cycle import CycleGraph, max_mean_cycle

__all__ = [
    "CHUNK",
    "MAX_DP_WORK",
    "MAX_PLANS",
    "MAX_STATES",
    "RecoveryClock",
    "best_plans",
    "block_optimum",
    "long_run_optimum",
    "lookahead_actions",
    "lookahead_values",
    "optimal_values",
    "plan_gaps",
    "plan_positions",
    "plan_table",
    "plan_totals",
    "recovering_lookahead",
    "recovering_optimum",
    "recovery_graph",
    "row_chunks",
    "se_kernel",
    "sequence_rewards",
]

MAX_STATES = 200_000
"""Most reachable ``z``-vectors :func:`recovery_graph` builds."""

MAX_DP_WORK = 300_000_000
"""Most (state, arm) updates :func:`optimal_values` spends before ``V`` turns periodic."""

MAX_PLANS = 1_000_000
"""Most ``d``-arm sequences a lookahead compares per block."""

CHUNK = 4_000_000
"""Most (replication, plan, step) entries a lookahead evaluates at once (bounds memory)."""


def se_kernel(z_max: int, lengthscale: float, variance: float) -> np.ndarray:
    """The squared-exponential covariance ``v·exp(−(z − z')² / (2ℓ²))`` on ``0 … z_max``,
    ``(G, G)``, ``G = z_max + 1``: GPy's ``RBF(input_dim=1, variance=v, lengthscale=ℓ)``, the
    kernel of every setup of the authors' code (``setups/rgp_gp_l5_setup.py`` and the others)."""
    z = np.arange(int(z_max) + 1, dtype=np.float64)
    r = (z[:, None] - z[None, :]) / float(lengthscale)
    return float(variance) * np.exp(-0.5 * r * r)


def advance(z: np.ndarray, actions: np.ndarray, z_max: int) -> None:
    """One round in place on ``z (R, K)``: every ``z`` ages by one (capped), the played arm's
    becomes 0 (the authors' ``UpdateZs``)."""
    np.minimum(z + 1, z_max, out=z)
    z[np.arange(z.shape[0]), actions] = 0


class RecoveryClock:
    """The ``z`` of every arm in each of ``replications`` replications, from the actions played
    so far: :attr:`z` before the coming round, :meth:`record` a round's actions."""

    def __init__(self, initial_z: Any, z_max: int, replications: int) -> None:
        start = np.asarray(initial_z, dtype=np.int64).reshape(-1)
        self.z_max = int(z_max)
        self.z = np.tile(start, (replications, 1))
        self._rows = np.arange(replications)

    def record(self, actions: np.ndarray) -> np.ndarray:
        """Play a round; return ``(R,)`` the ``z`` at which each played arm was pulled."""
        actions = np.asarray(actions, dtype=np.int64)
        pulled_at = self.z[self._rows, actions].copy()
        advance(self.z, actions, self.z_max)
        return pulled_at


def _instance(values: Any, initial_z: Any) -> tuple[np.ndarray, np.ndarray]:
    table = np.asarray(values, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] < 1 or table.shape[1] < 2:
        raise SpecError("values", "need a table f_i(z), one row of z_max + 1 >= 2 values per arm")
    if not np.all(np.isfinite(table)):
        raise SpecError("values", "every f_i(z) must be finite")
    start = np.broadcast_to(np.asarray(initial_z, dtype=np.int64), (table.shape[0],)).copy()
    if np.any((start < 0) | (start > table.shape[1] - 1)):
        raise SpecError("initial_z", f"need 0 <= z <= z_max = {table.shape[1] - 1}")
    return table, start


def _horizons(horizons: Any) -> np.ndarray:
    times = np.atleast_1d(np.asarray(horizons))
    if times.dtype.kind not in "iu" or np.any(times < 0):
        raise SpecError("times", "horizons must be nonnegative integers")
    return times.astype(np.int64)


def sequence_rewards(values: Any, initial_z: Any, arms: Sequence[int]) -> np.ndarray:
    """Expected reward of every round along ``arms`` from ``initial_z``."""
    table, start = _instance(values, initial_z)
    clock = RecoveryClock(start, table.shape[1] - 1, 1)
    out = np.empty(len(arms))
    for t, arm in enumerate(arms):
        out[t] = table[arm, clock.record(np.array([arm]))[0]]
    return out


# ---------------------------------------------------------------------------------------------
# d-step lookahead
# ---------------------------------------------------------------------------------------------


def plan_table(k: int, d: int, repetitions: bool = True) -> np.ndarray:
    """The ``d``-arm sequences over ``k`` arms, ``(P, d)``, lexicographic: all ``k^d`` (arms
    may repeat) or the ``k!/(k−d)!`` without repeats; a SpecError beyond :data:`MAX_PLANS`."""
    count = k**d if repetitions else (math.perm(k, d) if d <= k else 0)
    if count == 0:
        raise SpecError("lookahead", f"need lookahead <= K = {k} without repeated arms")
    if count > MAX_PLANS:
        raise SpecError("lookahead", f"{count} sequences of {d} arms exceed {MAX_PLANS}")
    source = (
        itertools.product(range(k), repeat=d)
        if repetitions
        else itertools.permutations(range(k), d)
    )
    return np.array(list(source), dtype=np.int64).reshape(-1, d)


def plan_gaps(plans: np.ndarray) -> np.ndarray:
    """``(P, d)``: ``l − m − 1`` if the arm of step ``l`` was last planned at step ``m < l``,
    else −1."""
    gaps = np.full(plans.shape, -1, dtype=np.int64)
    for step in range(1, plans.shape[1]):
        for earlier in range(step):  # the last earlier occurrence wins
            same = plans[:, earlier] == plans[:, step]
            gaps[same, step] = step - earlier - 1
    return gaps


def plan_positions(z: np.ndarray, plans: np.ndarray, z_max: int) -> np.ndarray:
    """``(R, P, d)``: the ``z`` each planned pull meets, from ``z (R, K)`` at the block start."""
    gaps = plan_gaps(plans)
    steps = np.arange(plans.shape[1], dtype=np.int64)
    aged = np.minimum(z[:, plans] + steps, z_max)  # (R, P, d): not yet pulled in the plan
    return np.where(gaps >= 0, np.minimum(gaps, z_max), aged)


def plan_totals(values: np.ndarray, z: np.ndarray, plans: np.ndarray) -> np.ndarray:
    """``(R, P)`` total expected reward of every plan from ``z (R, K)``, accumulated step by
    step in plain order; ``values`` is ``(K, G)`` or per row ``(R, K, G)``."""
    table = values if values.ndim == 3 else values[None]
    where = plan_positions(z, plans, table.shape[2] - 1)
    rows = np.arange(z.shape[0])[:, None] if values.ndim == 3 else np.zeros((1, 1), np.int64)
    total = np.zeros(where.shape[:2])
    for step in range(plans.shape[1]):
        total = total + table[rows, plans[None, :, step], where[:, :, step]]
    return total


def row_chunks(rows: int, plans: np.ndarray) -> list[slice]:
    """Slices of the ``rows`` replications that keep a block's ``(rows, P, d)`` arrays within
    :data:`CHUNK` entries."""
    size = max(1, CHUNK // max(plans.size, 1))
    return [slice(i, min(i + size, rows)) for i in range(0, rows, size)]


def best_plans(values: np.ndarray, z: np.ndarray, plans: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(R,)`` the index of the plan of highest total from ``z (R, K)`` (the first on ties)
    and ``(R,)`` that total (:func:`plan_totals`, evaluated a chunk of rows at a time)."""
    index = np.zeros(z.shape[0], dtype=np.int64)
    value = np.zeros(z.shape[0])
    for part in row_chunks(z.shape[0], plans):
        totals = plan_totals(values[part] if values.ndim == 3 else values, z[part], plans)
        index[part] = np.argmax(totals, axis=1)
        value[part] = totals[np.arange(totals.shape[0]), index[part]]
    return index, value


def block_optimum(values: Any, z: np.ndarray, plans: np.ndarray) -> np.ndarray:
    """``(R,)``: the best total true expected reward of the next ``d`` rounds from ``z (R, K)``
    over ``plans`` (the oracle's value of a block, the authors' ``GetBestSeqRep``)."""
    return best_plans(np.asarray(values, dtype=np.float64), z, plans)[1]


def lookahead_actions(
    values: Any, initial_z: Any, d: int, rounds: int, repetitions: bool = True
) -> list[int]:
    """The oracle d-step lookahead policy's arms over ``rounds`` rounds (blocks of ``d`` from
    round 1; each block the plan of highest true total, the first in order on ties)."""
    table, start = _instance(values, initial_z)
    plans = plan_table(table.shape[0], int(d), repetitions)
    clock = RecoveryClock(start, table.shape[1] - 1, 1)
    arms: list[int] = []
    while len(arms) < rounds:
        best = plans[int(best_plans(table, clock.z, plans)[0][0])]
        for arm in best[: rounds - len(arms)]:
            arms.append(int(arm))
            clock.record(np.array([arm]))
    return arms


def lookahead_values(
    values: Any, initial_z: Any, d: int, horizons: Any, repetitions: bool = True
) -> np.ndarray:
    """The oracle d-step lookahead policy's expected cumulative reward at every ``T`` in
    ``horizons``."""
    times = _horizons(horizons)
    arms = lookahead_actions(values, initial_z, d, int(times.max(initial=0)), repetitions)
    rewards = sequence_rewards(values, initial_z, arms)
    return np.concatenate(([0.0], np.cumsum(rewards)))[times]


# ---------------------------------------------------------------------------------------------
# The exact optimum: dynamic programming over the reachable z-vectors
# ---------------------------------------------------------------------------------------------


def recovery_graph(values: Any, initial_z: Any) -> tuple[np.ndarray, CycleGraph]:
    """``(states, graph)``: the ``z``-vectors ``(S, K)`` reachable from ``initial_z`` (sorted by
    their base-``(z_max + 1)`` code) and their :class:`CycleGraph` (edge ``a``: pull arm ``a``,
    paying ``f_a(z_a)``). A :class:`SpecError` beyond :data:`MAX_STATES` states."""
    table, start = _instance(values, initial_z)
    k, size = table.shape
    if size**k >= 1 << 62:
        raise SpecError("values", f"(z_max + 1)^K = {size}^{k} z-vectors: too many to index")
    weights = size ** np.arange(k, dtype=np.int64)

    def successors(states: np.ndarray) -> np.ndarray:
        aged = np.minimum(states + 1, size - 1)
        return (aged @ weights)[:, None] - aged * weights[None, :]  # arm a's coordinate → 0

    known = np.array([int(start @ weights)], dtype=np.int64)
    frontier = start[None, :]
    while frontier.shape[0]:
        fresh = np.unique(successors(frontier))
        fresh = fresh[~np.isin(fresh, known, assume_unique=True)]
        if known.size + fresh.size > MAX_STATES:
            raise SpecError("values", f"more than {MAX_STATES:,} reachable z-vectors: too large")
        known = np.sort(np.concatenate((known, fresh)))
        frontier = (fresh[:, None] // weights) % size
    states = (known[:, None] // weights) % size
    succ = np.searchsorted(known, successors(states))
    reward = table[np.arange(k)[None, :], states]
    start_index = int(np.searchsorted(known, int(start @ weights)))
    return states, CycleGraph(succ=succ, reward=reward, start=start_index)


def _cycle_mean(graph: CycleGraph, cycle: tuple[int, ...]) -> float:
    """The mean reward of ``cycle``'s arms walked from a state they bring back to itself (the
    best such state; every closed walk is a cycle of the graph)."""
    node = np.arange(graph.succ.shape[0])
    total = np.zeros(node.size)
    for arm in cycle:
        total = total + graph.reward[node, arm]
        node = graph.succ[node, arm]
    closed = node == np.arange(node.size)
    return float(total[closed].max()) / len(cycle)


def long_run_optimum(values: Any, initial_z: Any) -> tuple[float, tuple[int, ...]]:
    """The best long-run average expected reward over all arm sequences and a cycle of arms
    attaining it: the maximum-mean cycle of :func:`recovery_graph`."""
    _, graph = recovery_graph(values, initial_z)
    cycle = max_mean_cycle(graph)
    return _cycle_mean(graph, cycle), cycle


def optimal_values(
    values: Any, initial_z: Any, horizons: Any, *, max_work: int = MAX_DP_WORK
) -> np.ndarray:
    """``OPT(T)`` for every ``T`` in ``horizons``: the best expected cumulative reward of ``T``
    rounds from ``initial_z`` over all arm sequences, exactly (agreement to ``1e-9`` relative
    where the periodic tail is extrapolated)."""
    times = _horizons(horizons)
    need = int(times.max(initial=0))
    if need == 0:
        return np.zeros(times.size)
    _, graph = recovery_graph(values, initial_z)
    gain = _cycle_mean(graph, max_mean_cycle(graph))
    value = np.zeros(graph.succ.shape[0])
    table = [0.0]
    anchor, anchor_at, period = value, 0, 0
    for t in range(1, need + 1):
        if t * graph.succ.size > max_work:
            raise SpecError("times", f"the exact optimum needs over {max_work:,} state-arm updates")
        value = (graph.reward + value[graph.succ]).max(axis=1)
        table.append(float(value[graph.start]))
        drift = value - anchor - (t - anchor_at) * gain
        if np.abs(drift).max() <= 1e-9 * max(1.0, float(np.abs(value).max())):
            period = t - anchor_at  # V_{anchor + m + period} = V_{anchor + m} + period·gain
            break
        if (t & (t - 1)) == 0:  # keep V at t = 1, 2, 4, 8, … (Brent's cycle detection)
            anchor, anchor_at = value, t
    done = np.asarray(table)
    out = np.empty(times.size)
    early = times < done.size
    out[early] = done[times[early]]
    if np.any(~early):
        m = times[~early] - anchor_at
        slope = (done[anchor_at + period] - done[anchor_at]) / period
        out[~early] = done[anchor_at + m % period] + (m - m % period) * slope
    return out


# ---------------------------------------------------------------------------------------------
# Oracle functions (``oracle(env, times)`` → ``(R, len(times))``)
# ---------------------------------------------------------------------------------------------


def _env_instance(env: Environment) -> tuple[np.ndarray, np.ndarray, int]:
    recovering: Any = env  # a RecoveringBandit: the same instance in every replication
    table = np.asarray(recovering.values, dtype=np.float64)
    start = np.asarray(recovering.initial_z, dtype=np.int64)
    return table, start, env.expected_rewards().shape[0]


def recovering_lookahead(env: Environment, times: np.ndarray) -> np.ndarray:
    """Expected cumulative reward of the oracle d-step lookahead policy with the true ``f``
    (``d = env.lookahead``; 1: greedy) from the start, for a freshly reset
    :class:`~impactbandits.envs.recovering.RecoveringBandit`: exact; ``(R, len(times))``."""
    table, start, replications = _env_instance(env)
    d = int(getattr(env, "lookahead", 1))
    return np.tile(lookahead_values(table, start, d, times), (replications, 1))


def recovering_optimum(env: Environment, times: np.ndarray) -> np.ndarray:
    """The optimal expected cumulative reward over all arm sequences, ``(R, len(times))``:
    exact (:func:`optimal_values`) within :data:`MAX_STATES` and :data:`MAX_DP_WORK`, else a
    one-line SpecError."""
    table, start, replications = _env_instance(env)
    return np.tile(optimal_values(table, start, times), (replications, 1))
