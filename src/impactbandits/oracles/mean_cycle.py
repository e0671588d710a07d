"""Maximum cycle mean of a finite deterministic graph: the best long-run average reward.

A :class:`CycleGraph` has ``n`` nodes, each with ``k`` labelled out-edges: edge ``a`` out of
node ``s`` leads to ``succ[s, a]`` and pays ``reward[s, a]``. Walking the graph forever from
``start``, the best long-run average reward per step is the largest mean reward of a cycle
reachable from ``start``, attained by repeating that cycle; :func:`max_mean_cycle` returns the
edge labels of such a cycle. The module knows nothing of what nodes and labels stand for: the
delay-dependent-payoff oracle (:func:`impactbandits.oracles.delay.optimal_value`) builds its
graph from delay vectors (:mod:`impactbandits.oracles.delay_graph`) and labels edges by arms.

Nodes are called *states* and edge labels *arms* below (the bandit reading: every state has
one edge per arm).

Algorithms (moved unchanged from ``impactbandits.oracles.delay``):

- Howard's policy iteration for the maximum cycle mean (Cochet-Terrasson, Cohen, Gaubert,
  McGettrick & Quadrat 1998; Puterman 1994, §9.2), the default: :func:`_howard`, with every
  policy evaluated by pointer doubling (:func:`_evaluate`).
- Karp's (1978) algorithm, exact and ``O(n²)`` in memory (at most :data:`KARP_MAX_STATES`
  nodes), the cross-check: :func:`_karp`.

Sizes, limits and timings on delay-state graphs: see
:func:`impactbandits.oracles.delay.optimal_value`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from impactbandits.errors import SpecError

__all__ = [
    "HOWARD_MAX_ITERATIONS",
    "HOWARD_TOL",
    "KARP_MAX_STATES",
    "CycleGraph",
    "max_mean_cycle",
]

KARP_MAX_STATES = 3_000
"""Karp's algorithm keeps an (n+1) × n table: refused beyond this many states."""

HOWARD_MAX_ITERATIONS = 10_000
"""Safety cap on policy-iteration rounds (a few dozen are typical)."""

HOWARD_TOL = 1e-12
"""Improvement threshold of policy iteration: gains within this are equal; a bias change is
taken only if it exceeds ``HOWARD_TOL·max(1, max|bias|)``."""


@dataclass(frozen=True)
class CycleGraph:
    """``succ (n, k)`` the node reached by each edge (``s``, ``a``), ``reward (n, k)`` what the
    edge pays, ``start`` the index of the node the walk starts from."""

    succ: np.ndarray
    reward: np.ndarray
    start: int


def max_mean_cycle(graph: CycleGraph, *, method: str = "howard") -> tuple[int, ...]:
    """The edge labels of a maximum-mean cycle reachable from ``graph.start``.

    ``method``: ``"howard"`` (default; policy iteration, see :func:`_howard`; optimal to within
    ~1e-12) or ``"karp"`` (Karp's algorithm; ≤ :data:`KARP_MAX_STATES` nodes; the cross-check).
    With Howard's optimal policy the walk from the start ends on a cycle of the best reachable
    mean; Karp returns the best cycle on an optimal walk. The cycle is returned as its
    lexicographically smallest rotation (a periodic schedule has no start).
    """
    if method not in ("howard", "karp"):
        raise SpecError("method", f"must be 'howard' or 'karp'; got {method!r}")
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
    return _canonical(arms)


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


def _howard(graph: CycleGraph) -> tuple[np.ndarray, np.ndarray]:
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


def _karp(graph: CycleGraph) -> tuple[float, list[int]]:
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
