"""Planning oracles for rebounding bandits (satiation).

Paper: Leqi, Kılınç-Karzan, Lipton & Montgomery, "Rebounding Bandits for Modeling Satiation
Effects", NeurIPS 2021 (arXiv 2011.06741). Model as ported in
:mod:`impactbandits.envs.rebounding` (which gives the sources and the choices): arm ``k`` has a
base reward ``b_k``, a satiation retention ``γ_k ∈ [0, 1)`` and an exposure influence
``λ_k ≥ 0``; its satiation starts at 0 and evolves as ``s_{k,t+1} = γ_k (s_{k,t} + 1{a_t = k})``
(+ zero-mean noise), and pulling it in round ``t`` has expected reward
``b_k − λ_k (s_{k,t} + c)`` (``c = 0``: the current pull is not counted before its reward, the
default; ``c = 1``: it is). ``c`` only shifts the base (``b_k − c λ_k``), so every function here
takes the *effective* base ``b − cλ``.

Noise-free planning
-------------------
Satiation noise is zero-mean and enters linearly, so for a plan fixed in advance (a function of
the arm sequence only) the expected reward of every round is the noise-free one. Everything here
is computed on the noise-free system:

- :func:`sequence_rewards`: the expected reward of every round along an arm sequence.
- :func:`optimal_values`: the exact optimum ``OPT(T)`` over all arm sequences, for every horizon
  ``T``, by forward dynamic programming over the reachable satiation vectors (layer ``t`` keeps,
  for each distinct vector, the best reward of reaching it; future rewards depend on the vector
  only). At most ``K^T`` vectors per layer (fewer when they coincide, e.g. ``γ = 0``); beyond
  :data:`MAX_STATES` a one-line :class:`~impactbandits.errors.SpecError`.
- :func:`greedy_values`: the greedy policy (the arm of highest current expected reward, ties to
  the lowest index, as in the paper's proof of its optimality: "the arm with the lowest index
  will be chosen", appendix, as quoted by aitopics.org/tag/satiation%20level). The paper proves
  it optimal when the arms have identical deterministic dynamics (abstract); tests check it
  against brute force, and find it suboptimal for non-identical arms.
- :func:`plan_block` / :func:`lookahead_values`: the w-lookahead policy: at rounds
  ``1, w+1, 2w+1, …`` it plays the ``w``-arm sequence maximising the total expected reward of
  the next ``w`` rounds from the current satiation (ties: the lexicographically first sequence),
  ``w = 1`` being greedy. Blockwise (not receding-horizon) planning is our reading of the
  paper's summary ("a lookahead policy that generalizes the greedy policy", arXiv v2 abstract);
  the algorithm box could not be read. Anytime: the value at ``T`` is that of the first ``T``
  rounds of the block plan.
- Oracles (``oracle(env, times) -> (R, len(times))``): :func:`rebounding_lookahead`, the
  paper's regret benchmark for EEP (its "w-step lookahead regret", per the liner.com review of
  the paper; ``w`` = the environment's ``lookahead``), exact at any size and any noise level
  (the plan does not look at rewards); :func:`rebounding_optimum`, the exact optimum of the
  noise-free system when it fits :data:`MAX_STATES` (a SpecError otherwise). With satiation
  noise it is the best *fixed* arm sequence: an adaptive policy, which sees the shocks through
  its rewards, may beat it in expectation.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from impactbandits.core.environment import Environment
from impactbandits.errors import SpecError

__all__ = [
    "MAX_PLANS",
    "MAX_STATES",
    "greedy_values",
    "lookahead_values",
    "optimal_values",
    "plan_block",
    "rebounding_lookahead",
    "rebounding_optimum",
    "sequence_rewards",
]

MAX_STATES = 2_000_000
"""Most satiation vectors :func:`optimal_values` keeps in one layer (≈ 3^13)."""

MAX_PLANS = 1_000_000
"""Most arm sequences (``K^w``) :func:`plan_block` compares per block."""


def _instance(base: Any, retention: Any, influence: Any) -> tuple[np.ndarray, ...]:
    b = np.asarray(base, dtype=np.float64).reshape(-1)
    g = np.asarray(retention, dtype=np.float64).reshape(-1)
    lam = np.asarray(influence, dtype=np.float64).reshape(-1)
    if not (b.size == g.size == lam.size) or b.size == 0:
        raise SpecError("base", "need one base, retention and influence per arm")
    if np.any((g < 0) | (g >= 1)) or np.any(lam < 0) or not np.all(np.isfinite(b)):
        raise SpecError("retention", "need 0 <= γ < 1, λ >= 0 and finite bases")
    return b, g, lam


def _horizons(horizons: Any) -> np.ndarray:
    t = np.asarray(horizons, dtype=np.int64).reshape(-1)
    if np.any(t < 0):
        raise SpecError("times", "horizons must be nonnegative integers")
    return t


def sequence_rewards(base: Any, retention: Any, influence: Any, arms: Sequence[int]) -> np.ndarray:
    """Expected reward of every round along ``arms`` from zero satiation (noise-free)."""
    b, g, lam = _instance(base, retention, influence)
    s = np.zeros_like(b)
    out = np.empty(len(arms))
    for t, a in enumerate(arms):
        out[t] = b[a] - lam[a] * s[a]
        s[a] += 1.0
        s *= g
    return out


def optimal_values(base: Any, retention: Any, influence: Any, horizons: Any) -> np.ndarray:
    """Exact ``OPT(T)`` (best total expected reward over all arm sequences) for every ``T`` in
    ``horizons``, by forward DP over the distinct reachable satiation vectors."""
    b, g, lam = _instance(base, retention, influence)
    t = _horizons(horizons)
    k, top = b.size, int(t.max(initial=0))
    best = np.zeros(top + 1)
    states = np.zeros((1, k))  # distinct satiation vectors of this layer
    values = np.zeros(1)  # best reward of reaching each
    for depth in range(1, top + 1):
        reward = b[None, :] - lam[None, :] * states  # (S, K)
        totals = (values[:, None] + reward).reshape(-1)
        nxt = np.repeat(states, k, axis=0)  # row i*K + a: state i then arm a
        nxt[np.arange(nxt.shape[0]), np.tile(np.arange(k), states.shape[0])] += 1.0
        nxt *= g[None, :]
        best[depth] = totals.max()
        if depth == top:
            break
        uniq, inverse = np.unique(nxt, axis=0, return_inverse=True)
        if uniq.shape[0] * k > MAX_STATES:
            raise SpecError(
                "times", f"rebounding optimum: over {MAX_STATES} satiation states at T = {depth}"
            )
        values = np.full(uniq.shape[0], -np.inf)
        np.maximum.at(values, inverse.reshape(-1), totals)
        states = uniq
    return best[t]


def greedy_actions(base: Any, retention: Any, influence: Any, rounds: int) -> list[int]:
    """The greedy policy's arms over ``rounds`` rounds (ties to the lowest index)."""
    b, g, lam = _instance(base, retention, influence)
    s = np.zeros_like(b)
    arms = []
    for _ in range(rounds):
        a = int(np.argmax(b - lam * s))
        arms.append(a)
        s[a] += 1.0
        s *= g
    return arms


def greedy_values(base: Any, retention: Any, influence: Any, horizons: Any) -> np.ndarray:
    """The greedy policy's expected cumulative reward at every ``T`` in ``horizons``."""
    t = _horizons(horizons)
    arms = greedy_actions(base, retention, influence, int(t.max(initial=0)))
    cum = np.concatenate(([0.0], np.cumsum(sequence_rewards(base, retention, influence, arms))))
    return cum[t]


def _plans(k: int, w: int) -> np.ndarray:
    if k**w > MAX_PLANS:
        raise SpecError("lookahead", f"K^w = {k}^{w} plans exceed {MAX_PLANS}")
    return np.array(list(itertools.product(range(k), repeat=w)), dtype=np.int64).reshape(-1, w)


def plan_block(
    base: np.ndarray, retention: np.ndarray, influence: np.ndarray, state: np.ndarray, w: int
) -> np.ndarray:
    """Best ``w``-arm sequence from satiation ``state`` for every row: all arguments ``(R, K)``
    (per-row parameters, e.g. estimates); returns ``(R, w)``. Totals are accumulated round by
    round in plain order; ties go to the lexicographically first sequence."""
    rows, k = state.shape
    plans = _plans(k, w)  # (P, w)
    s = np.repeat(state[:, None, :], plans.shape[0], axis=1)  # (R, P, K)
    g = retention[:, None, :]
    total = np.zeros((rows, plans.shape[0]))
    r_idx, p_idx = np.arange(rows)[:, None], np.arange(plans.shape[0])[None, :]
    for j in range(w):
        arm = np.broadcast_to(plans[:, j][None, :], (rows, plans.shape[0]))
        total = total + (base[r_idx, arm] - influence[r_idx, arm] * s[r_idx, p_idx, arm])
        s[r_idx, p_idx, arm] += 1.0
        s = s * g
    return plans[np.argmax(total, axis=1)]


def lookahead_actions(base: Any, retention: Any, influence: Any, w: int, rounds: int) -> list[int]:
    """The w-lookahead policy's arms over ``rounds`` rounds (blocks of ``w`` from round 1)."""
    b, g, lam = _instance(base, retention, influence)
    s = np.zeros_like(b)
    arms: list[int] = []
    while len(arms) < rounds:
        block = plan_block(b[None, :], g[None, :], lam[None, :], s[None, :], int(w))[0]
        for a in block[: rounds - len(arms)]:
            arms.append(int(a))
            s[a] += 1.0
            s *= g
    return arms


def lookahead_values(
    base: Any, retention: Any, influence: Any, w: int, horizons: Any
) -> np.ndarray:
    """The w-lookahead policy's expected cumulative reward at every ``T`` in ``horizons``."""
    t = _horizons(horizons)
    arms = lookahead_actions(base, retention, influence, w, int(t.max(initial=0)))
    cum = np.concatenate(([0.0], np.cumsum(sequence_rewards(base, retention, influence, arms))))
    return cum[t]


# ---------------------------------------------------------------------------------------------
# Oracle functions (``oracle(env, times)`` → ``(R, len(times))``)
# ---------------------------------------------------------------------------------------------


def _env_instance(env: Environment) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    rebounding: Any = env  # a ReboundingBandit: the same instance in every replication
    lam = np.asarray(rebounding.influence, dtype=np.float64)
    b = np.asarray(rebounding.base, dtype=np.float64) - rebounding.count_current * lam
    g = np.asarray(rebounding.retention, dtype=np.float64)
    return b, g, lam, env.expected_rewards().shape[0]


def rebounding_lookahead(env: Environment, times: np.ndarray) -> np.ndarray:
    """Expected cumulative reward of the w-lookahead policy with the true parameters
    (``w = env.lookahead``; 1: greedy), the paper's regret benchmark, for a freshly reset
    :class:`~impactbandits.envs.rebounding.ReboundingBandit`: exact; ``(R, len(times))``."""
    b, g, lam, replications = _env_instance(env)
    w = int(getattr(env, "lookahead", 1))
    return np.tile(lookahead_values(b, g, lam, w, times), (replications, 1))


def rebounding_optimum(env: Environment, times: np.ndarray) -> np.ndarray:
    """The optimal expected cumulative reward over all arm sequences, ``(R, len(times))``:
    exact (:func:`optimal_values`) within :data:`MAX_STATES`, else a one-line SpecError."""
    b, g, lam, replications = _env_instance(env)
    return np.tile(optimal_values(b, g, lam, times), (replications, 1))
