"""The §5 baselines of Lindner, Heidari & Krause (2021), "Addressing the Long-term Impact of
ML Decisions via Policy Regret", for single-peaked rested bandits, and the last-two-observations
state they share with SPO.

* :class:`OneStepOptimistic` — the "one-step-optimistic" baseline of §5;
* :class:`LastRewardGreedy` — the "greedy" baseline of §5 (highest reward at the last pull).

The paper's own algorithm, SPO and its δ-interval variant, is in
:mod:`impactbandits.policies.spo`; it keeps the same per-arm state (``_LastTwo`` and its
compiled kernels, defined here). All are batched over replications. Ties go to the lowest arm
index.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.core.variants import (
    Variant,
    kept_argmax,
    refresh_stale,
    stale_arms,
    stale_init,
)
from impactbandits.params import NoiseScale

__all__ = ["LastRewardGreedy", "OneStepOptimistic"]


class _LastTwo(Policy):
    """Keeps, per replication and arm, the pull count and the last two observations (and, on
    environments with ``noise_draws = "per-evaluation"``, the latest fresh re-evaluations)."""

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.n, self.size, self.horizon = space.n, rng.size, horizon
        self.pulls = np.zeros((rng.size, space.n), dtype=np.int64)
        self.last = np.full((rng.size, space.n), np.nan)
        self.previous = np.full((rng.size, space.n), np.nan)
        self._offsets = np.arange(rng.size) * space.n
        self.t = 0
        self._reevaluated: np.ndarray | None = None
        self._pulled: np.ndarray | None = None

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        flat = self._offsets + actions
        last, previous = self.last.reshape(-1), self.previous.reshape(-1)
        previous[flat] = last[flat]
        last[flat] = feedback.reward
        self.pulls.reshape(-1)[flat] += 1
        self._reevaluated = feedback.reevaluated
        self._pulled = actions

    def _evaluations(self) -> tuple[np.ndarray, ...]:
        """The authors' code's evaluations f(n), f(n−1), f(n), f(n), f(n−1) of every arm: fresh
        noisy draws where the environment provides them, else the stored observations."""
        if self._reevaluated is None:
            return self.last, self.previous, self.last, self.last, self.previous
        e = self._reevaluated
        return e[:, :, 0], e[:, :, 3], e[:, :, 1], e[:, :, 2], e[:, :, 4]


@kernel
def _last_two_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """One replication's pull counts and last two observations per arm."""
    return np.zeros(k, dtype=np.int64), np.full(k, np.nan), np.full(k, np.nan)


@kernel(inline=True)
def _last_two_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`_LastTwo.update` for one replication (``state``'s first three arrays)."""
    pulls, last, previous = state[0], state[1], state[2]
    previous[arm] = last[arm]
    last[arm] = reward
    pulls[arm] += 1


@kernel
def _last_two_stale_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """:func:`_last_two_init`, the kept indices and the arm pulled last round (the
    authors-code variants' stale indices, :func:`~impactbandits.core.variants.refresh_stale`),
    and :meth:`_LastTwo._evaluations` ``(K, 5)``: f(n) thrice, f(n−1) twice (``reevaluated``)."""
    pulls, last, previous = _last_two_init(params, k, rounds)
    kept, pulled = stale_init(k)
    return pulls, last, previous, kept, pulled, np.full((k, 5), np.nan)


@kernel
def _last_two_stale_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:func:`_last_two_update`, the arm pulled (``state[4]``) and its stored evaluations."""
    _last_two_update(state, params, t, arm, reward)
    state[4][0] = arm
    for j in range(5):
        state[5][arm, j] = state[1][arm] if j < 3 else state[2][arm]


@kernel
def _last_two_reevaluate(state: Any, params: np.ndarray, t: int, fresh: np.ndarray) -> None:
    """Every arm's evaluations: the environment's fresh ones (``Feedback.reevaluated``)."""
    state[5][:] = fresh


class LastRewardGreedy(_LastTwo):
    """ "Greedy" of Lindner et al. (2021, §5): pull every arm once, then the arm whose last
    pull gave the highest reward. Optimal for decreasing curves (Heidari et al. 2016). Anytime.

    ``variant = "authors-code"`` (single-peaked-bandits@8e1dd52, ``GreedySolver``): the
    comparison starts from 0 with a strict ">" (arm 0 when no value is positive), and on an
    environment with ``noise_draws = "per-evaluation"`` each arm's last value is re-evaluated
    with fresh noise every round, as their noisy arms do; otherwise identical."""

    deterministic = True

    def __init__(self, variant: Variant = "paper") -> None:
        self.variant = variant

    def select(self) -> np.ndarray:
        self.t += 1
        if self.variant == "authors-code" and self.t > self.n:
            return np.argmax(np.maximum(self._evaluations()[0], 0.0), axis=1)
        return np.argmax(np.where(self.pulls > 0, self.last, np.inf), axis=1)

    def compiled_step(self) -> CompiledStep | None:
        """The rounds, one replication at a time."""
        if self.variant == "authors-code":
            return CompiledStep(_last_two_stale_init, _last_greedy_authors_select,
                                _last_two_stale_update, np.zeros(0),
                                reevaluate=_last_two_reevaluate)  # fmt: skip
        return CompiledStep(_last_two_init, _last_greedy_select, _last_two_update, np.zeros(0))


@kernel
def _last_greedy_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """``argmax`` of the last reward, unpulled arms first, ties to the lowest index."""
    pulls, last = state[0], state[1]
    best = 0
    best_value = -math.inf
    for i in range(pulls.size):
        value = last[i] if pulls[i] > 0 else math.inf
        if value > best_value:
            best, best_value = i, value
    return best


@kernel
def _last_greedy_authors_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """The authors-code variant: after the first K rounds, ``argmax max(f(n), 0)`` of the
    evaluations (ties, and no positive value, to the lowest index)."""
    pulls, evaluations = state[0], state[5]
    if t <= pulls.size:
        return _last_greedy_select(state, params, t, u)
    best = 0
    best_value = max(evaluations[0, 0], 0.0)
    for i in range(1, pulls.size):
        value = max(evaluations[i, 0], 0.0)
        if value > best_value:
            best, best_value = i, value
    return best


class OneStepOptimistic(_LastTwo):
    """ "One-step-optimistic" of Lindner et al. (2021, §5): an upper bound on the *next* reward.

    With u = ŷ(n) + ε̄ (upper end of the last observation's interval) and l = ŷ(n−1) − ε̄ (lower
    end of the one before), the index is ``min(1, 2u − l)`` if u ≥ l (the arm may be rising,
    and concavity caps the next increment) and ``u`` otherwise. ``noise_bound`` ε̄ = 0 (default)
    is the noise-free rule ``min(1, 2f(n) − f(n−1))``. Arms with fewer than two pulls go first.
    Anytime.

    ``variant = "authors-code"`` (``OneStepOptimisticSolver``): the rising test is on the raw
    observations, ``f(n) − f(n−1) > 0`` (not on the interval ends); only the pulled arm's index
    is refreshed; and on an environment with ``noise_draws = "per-evaluation"`` each of the five
    evaluations of f in that update draws fresh noise, as their noisy arms do.
    """

    deterministic = True

    def __init__(self, noise_bound: NoiseScale = 0.0, variant: Variant = "paper") -> None:
        self.noise_bound = float(noise_bound)
        self.variant = variant

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        super().reset(space, horizon, rng)
        self._index = np.zeros((rng.size, space.n))

    def select(self) -> np.ndarray:
        self.t += 1
        if self.variant == "authors-code" and self.t > 2 * self.n:
            return np.argmax(self._authors_index(), axis=1)
        upper = self.last + self.noise_bound
        lower = self.previous - self.noise_bound
        index = np.where(upper >= lower, np.minimum(1.0, 2.0 * upper - lower), upper)
        return np.argmax(np.where(self.pulls >= 2, index, np.inf), axis=1)

    def _authors_index(self) -> np.ndarray:
        test_n, test_p, value_n, again_n, value_p = self._evaluations()
        b = self.noise_bound
        rising = np.minimum(1.0, (value_n + b) + ((again_n + b) - (value_p - b)))
        fresh = np.where(test_n - test_p > 0, rising, value_n + b)
        first = self.t == 2 * self.n + 1
        return refresh_stale(self._index, fresh, None if first else self._pulled)

    def compiled_step(self) -> CompiledStep | None:
        """The rounds, one replication at a time (``params``: ε̄). The authors-code variant
        keeps its stale indices and its evaluations in the state."""
        params = np.array([self.noise_bound])
        if self.variant == "authors-code":
            return CompiledStep(_last_two_stale_init, _one_step_authors_select,
                                _last_two_stale_update, params,
                                reevaluate=_last_two_reevaluate)  # fmt: skip
        return CompiledStep(_last_two_init, _one_step_select, _last_two_update, params)


@kernel
def _one_step_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """Index ``min(1, 2u − l)`` if ``u ≥ l`` else ``u`` (``u = last + ε̄``,
    ``l = previous − ε̄``), arms with fewer than two pulls first, ties to the lowest index."""
    pulls, last, previous = state[0], state[1], state[2]
    b = params[0]
    best = 0
    best_value = -math.inf
    for i in range(pulls.size):
        if pulls[i] >= 2:
            upper = last[i] + b
            lower = previous[i] - b
            value = min(1.0, 2.0 * upper - lower) if upper >= lower else upper
        else:
            value = math.inf
        if value > best_value:
            best, best_value = i, value
    return best


@kernel
def _one_step_authors_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`OneStepOptimistic._authors_index` after the first 2K rounds: every index once,
    then only the pulled arm's; the rising test on the raw evaluations."""
    kept, pulled, e = state[3], state[4], state[5]
    k = kept.size
    if t <= 2 * k:
        return _one_step_select(state, params, t, u)
    b = params[0]
    first, stop = stale_arms(kept, pulled, t == 2 * k + 1)
    for i in range(first, stop):  # e[i]: test_n, value_n, again_n, test_p, value_p
        if e[i, 0] - e[i, 3] > 0:
            kept[i] = min(1.0, (e[i, 1] + b) + ((e[i, 2] + b) - (e[i, 4] - b)))
        else:
            kept[i] = e[i, 1] + b
    return kept_argmax(kept)
