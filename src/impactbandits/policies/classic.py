"""Classic stationary-bandit policies: the library's first citizens.

All are batched over replications; ties in an ``argmax`` go to the lowest arm index, which keeps
them deterministic (randomised policies draw from their
:class:`~impactbandits.core.random.BatchRNG`).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from impactbandits.core import ops
from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.core.variants import Variant
from impactbandits.errors import SpecError
from impactbandits.params import ROUNDS, PositiveFloat, Probability
from impactbandits.policies.statistics import ArmStatistics
from impactbandits.policies.ucb_buckets import (
    UCB1_GROUP_ARMS,
    bucket_pulled,
    bucket_select,
    bucket_state,
    full_argmax,
)

__all__ = [
    "EXP3",
    "UCB1",
    "EpsilonGreedy",
    "ExploreThenCommit",
    "Greedy",
    "RoundRobin",
    "exp3_authors_init",
    "exp3_authors_update",
]

#: UCB1's exploration constant: index = mean + sqrt(UCB1_C · ln t / n) (Auer et al. 2002, Fig. 1).
UCB1_C = 2.0
#: ε of ε-greedy when no schedule is given.
EPSILON_DEFAULT = 0.1


class _Counting(Policy):
    """Common state: action space size, round counter, per-arm statistics."""

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.n = space.n
        self.horizon = horizon
        self.rng = rng
        self.rounds = np.zeros(rng.size, dtype=np.int64)
        self.stats = ArmStatistics(rng.size, space.n)

    def _next_round(self) -> np.ndarray:
        """Advance every replication's round counter; return it (``(R,)``)."""
        self.rounds += 1
        return self.rounds

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self.stats.add(actions, feedback.reward)

    def reset_rows(self, rows: np.ndarray) -> None:
        self.rounds[rows] = 0
        self.stats.counts[rows] = 0.0
        self.stats.sums[rows] = 0.0


class UCB1(_Counting):
    """UCB1 (Auer, Cesa-Bianchi & Fischer 2002, Fig. 1).

    Pull every arm once, then the arm maximising ``x̄_i + sqrt(c · ln t / n_i)`` with ``t`` the
    current round and ``c = 2`` (:data:`UCB1_C`). Anytime. Rewards are assumed in [0, 1].

    ``variant = "authors-code"`` reproduces the UCB1 of Ron et al.'s code (tomron/CSRviaMAB,
    ``SimulationRun.update_arm`` and ``BlackBoxAlgorithm.ucb1``): index
    ``min(1, x̄_i + sqrt(c · ln T / n_i))`` with ``T`` the horizon (so it needs one), ties
    between capped indices going to the lowest arm index. Arms never pulled still come first.
    """

    deterministic = True

    def __init__(
        self, c: PositiveFloat = UCB1_C, variant: Literal["paper", "authors-code"] = "paper"
    ) -> None:
        self.c = float(c)
        self.variant = variant

    @property
    def requires_horizon(self) -> bool:
        return self.variant == "authors-code"

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        super().reset(space, horizon, rng)
        if self.variant == "authors-code" and horizon is None:
            raise SpecError("variant", "UCB1's authors-code variant needs the horizon (ln T)")
        self._unpulled = True  # some replication still has an arm never pulled

    def reset_rows(self, rows: np.ndarray) -> None:
        super().reset_rows(rows)
        self._unpulled = True

    def _index(self, t: np.ndarray, counts: np.ndarray) -> np.ndarray:
        if self.variant == "authors-code":
            bonus = np.sqrt(self.c * math.log(self.horizon) / counts)  # type: ignore[arg-type]
            return np.minimum(1.0, self.stats.sums / counts + bonus)
        return self.stats.sums / counts + np.sqrt((self.c * ops.log(t))[:, None] / counts)

    def select(self) -> np.ndarray:
        t = self._next_round()
        counts = self.stats.counts
        if not self._unpulled:
            return np.argmax(self._index(t, counts), axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            index = self._index(t, counts)
        # arms never pulled first, in index order: the initial sweep of rounds 1..K
        actions = np.argmax(np.where(counts > 0, index, np.inf), axis=1)
        # the guarded path stays on until every arm of every replication has been pulled (a
        # meta-policy such as SRUM may play another action this round, leaving this one unpulled)
        self._unpulled = bool((counts == 0).any())
        return actions

    def compiled_step(self) -> CompiledStep | None:
        """The rounds, one replication at a time; in the paper variant, with
        :data:`~impactbandits.policies.ucb_buckets.UCB1_GROUP_ARMS` arms or more the argmax goes
        through buckets of equal (count, mean) (:mod:`impactbandits.policies.ucb_buckets`). The
        authors-code variant's ``params``: c · ln T, as :meth:`_index` computes it."""
        if self.variant == "authors-code":
            params = np.array([self.c * math.log(self.horizon)])  # type: ignore[arg-type]
            return CompiledStep(counts_init, _ucb1_authors_select, counts_update, params)
        return CompiledStep(_ucb1_init, _ucb1_select, _ucb1_update, np.array([self.c]))


@kernel
def _ucb1_init(params: np.ndarray, k: int, rounds: int) -> Any:
    return np.zeros(k), np.zeros(k), bucket_state(k if k >= UCB1_GROUP_ARMS else 0, rounds)


@kernel
def _ucb1_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    counts, sums, buckets = state
    if counts.size >= UCB1_GROUP_ARMS:
        return bucket_select(buckets, counts, sums, params[0], t)
    return full_argmax(counts, sums, params[0] * math.log(t))


@kernel
def _ucb1_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    counts, sums, buckets = state
    counts[arm] += 1.0
    sums[arm] += reward
    bucket_pulled(buckets, arm)


@kernel
def _ucb1_authors_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`UCB1.select` of the authors-code variant: ``argmax min(1, x̄_i + sqrt(c ln T /
    n_i))`` (``params[0]``: c ln T), arms never pulled first, ties to the lowest index."""
    counts, sums = state
    best = 0
    best_value = -math.inf
    for i in range(counts.size):
        if counts[i] > 0:
            value = min(1.0, sums[i] / counts[i] + math.sqrt(params[0] / counts[i]))
        else:
            value = math.inf
        if value > best_value:
            best, best_value = i, value
    return best


class EXP3(Policy):
    """EXP3 (Auer, Cesa-Bianchi, Freund & Schapire 2002b, Fig. 1).

    ``p_i = (1-γ) w_i / Σ_j w_j + γ/K``; after pulling arm i with reward x in [0, 1],
    ``w_i ← w_i · exp(γ x / (p_i K))``. Weights are kept as logarithms shifted by their maximum,
    so nothing overflows at any horizon.

    ``gamma = None`` (default) uses the tuning of Corollary 3.2 with g = T:
    ``γ = min(1, sqrt(K ln K / ((e − 1) T)))``, which makes the policy horizon-aware; a fixed
    ``gamma`` (Lindner et al. use 0.01) makes it anytime.

    ``variant = "authors-code"`` reproduces the EXP3 of Lindner et al.'s code
    (single-peaked-bandits@8e1dd52, ``Exp3Solver``): its loop evaluates the arm at its pull
    count *before* incrementing it, so each pull is credited with the value of the arm's
    previous pull — the m-th pull of arm i with f_i(m − 1) — and an arm's first pull with
    ``first_pull_credit[i]`` (their f_i(0), the curve's formula at t = 0; default 0, which is
    their value for Heidari et al.'s increasing families). Regret is unaffected (it counts
    pulls); what the learner sees lags one pull behind.
    """

    def __init__(
        self,
        gamma: Annotated[float | None, Field(gt=0.0, le=1.0)] = None,
        variant: Variant = "paper",
        first_pull_credit: list[float] | None = None,
    ) -> None:
        if gamma is not None and gamma <= 0:
            raise SpecError("gamma", "must be in (0, 1]")
        if first_pull_credit is not None and variant != "authors-code":
            raise SpecError("first_pull_credit", "only used with variant = 'authors-code'")
        self.gamma = gamma
        self.variant = variant
        self.first_pull_credit = first_pull_credit

    @property
    def requires_horizon(self) -> bool:
        return self.gamma is None

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.n = space.n
        self.rng = rng
        if self.gamma is None:
            if horizon is None:
                raise SpecError("gamma", "EXP3 without a fixed gamma needs the horizon")
            k = self.n
            g = math.sqrt(k * math.log(k) / ((math.e - 1) * horizon)) if k > 1 else 1.0
            self._gamma = min(1.0, g)
        else:
            self._gamma = float(self.gamma)
        self.log_w = np.zeros((rng.size, self.n))
        self.rows = np.arange(rng.size)
        self.p = np.full((rng.size, self.n), 1.0 / self.n)
        self._held: np.ndarray | None = None
        if self.variant == "authors-code":
            credit = np.zeros(self.n) if self.first_pull_credit is None else self.first_pull_credit
            if len(credit) != self.n:
                raise SpecError(
                    "first_pull_credit", f"needs one value per arm ({self.n}), got {len(credit)}"
                )
            self._credit = np.asarray(credit, dtype=float)
            self._held = np.tile(self._credit, (rng.size, 1))

    def select(self) -> np.ndarray:
        w = ops.exp(self.log_w - self.log_w.max(axis=1, keepdims=True))
        # the total as a left-to-right sum (cumsum), not NumPy's pairwise sum, whose order
        # depends on the array's layout: the compiled loop (impactbandits.kernels) adds in the
        # same order and so gives the same bits
        total = np.cumsum(w, axis=1)[:, -1:]
        self.p = (1.0 - self._gamma) * w / total + self._gamma / self.n
        return self.rng.categorical(self.p)

    def reset_rows(self, rows: np.ndarray) -> None:
        self.log_w[rows] = 0.0
        if self._held is not None:
            credit = 0.0 if self.first_pull_credit is None else np.asarray(self.first_pull_credit)
            self._held[rows] = credit

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        p_chosen = self.p[self.rows, actions]
        reward = feedback.reward
        if self._held is not None:  # authors' code: credit the arm's previous pull
            reward = self._held[self.rows, actions].copy()
            self._held[self.rows, actions] = feedback.reward
        self.log_w[self.rows, actions] += self._gamma * reward / (p_chosen * self.n)
        # Re-centre so the largest log-weight is 0: exp() of the others never overflows.
        self.log_w -= self.log_w.max(axis=1, keepdims=True)

    def compiled_step(self) -> CompiledStep | None:
        """The rounds, one replication at a time (one uniform per round, the one
        :meth:`~impactbandits.core.random.BatchRNG.categorical` takes; ``params``: γ, and for
        the authors-code variant the first-pull credit of every arm)."""
        if self.variant == "authors-code":
            params = np.concatenate([[self._gamma], self._credit])
            return CompiledStep(exp3_authors_init, _exp3_select, exp3_authors_update, params, 1)
        return CompiledStep(_exp3_init, _exp3_select, exp3_update, np.array([self._gamma]), 1)


@kernel
def _exp3_init(params: np.ndarray, k: int, rounds: int) -> Any:
    return np.zeros(k), np.empty(k)


@kernel(inline=True)
def exp3_draw(log_w: np.ndarray, p: np.ndarray, gamma: float, u: float) -> int:
    """:meth:`EXP3.select` for one replication with the uniform ``u``, and
    :meth:`~impactbandits.core.random.BatchRNG.categorical` (the inverse CDF at ``u``); fills
    ``p`` with the probabilities used."""
    k = log_w.size
    top = log_w.max()
    total = 0.0
    for i in range(k):
        p[i] = math.exp(log_w[i] - top)
        total += p[i]
    cdf_last = 0.0
    for i in range(k):
        p[i] = (1.0 - gamma) * p[i] / total + gamma / k
        cdf_last += p[i]
    threshold = u * cdf_last
    index = 0
    cdf = 0.0
    for i in range(k):
        cdf += p[i]
        if cdf < threshold:
            index += 1
    return min(index, k - 1)


@kernel
def _exp3_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    return exp3_draw(state[0], state[1], params[0], u)


@kernel
def exp3_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`EXP3.update` for one replication (``params[0]``: γ; ``state``'s first two
    arrays: the log-weights and the probabilities drawn from)."""
    log_w, p = state[0], state[1]
    k = log_w.size
    log_w[arm] += params[0] * reward / (p[arm] * k)
    top = log_w.max()
    for i in range(k):
        log_w[i] -= top


@kernel
def exp3_authors_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """EXP3's state and the value each arm's next pull is credited with, at first the
    first-pull credit (``params``' last ``k`` values): the authors-code variant."""
    return np.zeros(k), np.empty(k), params[params.size - k :].copy()


@kernel
def exp3_authors_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`EXP3.update` of the authors-code variant: the pull is credited with the value of
    the arm's previous pull (``state[2]``), and this reward is held for its next."""
    held = state[2]
    credit = held[arm]
    held[arm] = reward
    exp3_update(state, params, t, arm, credit)


class Greedy(_Counting):
    """Greedy: pull every arm once, then always the highest empirical mean. Anytime."""

    deterministic = True

    def select(self) -> np.ndarray:
        self._next_round()
        return np.argmax(self.stats.means(), axis=1)  # unpulled arms (mean +inf) first

    def compiled_step(self) -> CompiledStep | None:
        return CompiledStep(counts_init, _greedy_select, counts_update, np.zeros(0))


@kernel
def counts_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """One replication's pull counts and reward sums, as floats (:class:`ArmStatistics`)."""
    return np.zeros(k), np.zeros(k)


@kernel
def counts_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`ArmStatistics.add` for one replication (``state``'s first two arrays)."""
    state[0][arm] += 1.0
    state[1][arm] += reward


@kernel
def _greedy_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """``argmax`` of the empirical means, unpulled arms (+inf) first, ties to the lowest index."""
    counts, sums = state
    best = 0
    best_value = -math.inf
    for i in range(counts.size):
        value = sums[i] / counts[i] if counts[i] > 0 else math.inf
        if value > best_value:
            best, best_value = i, value
    return best


class EpsilonGreedy(_Counting):
    """ε-greedy: with probability ε a uniformly random arm, otherwise the greedy arm.

    Constant ``epsilon`` (default 0.1) or, when ``c`` is given, the ε_t-greedy schedule of Auer
    et al. (2002, Section 3): ``ε_t = min(1, c K / (d² t))`` with ``d`` (default 0.1) a lower
    bound on the gap. Arms never pulled count as having mean +∞. Two uniforms are drawn per
    round for every replication. Anytime.
    """

    def __init__(
        self,
        epsilon: Probability = EPSILON_DEFAULT,
        c: Annotated[float | None, Field(gt=0.0)] = None,
        d: Annotated[float, Field(gt=0.0, le=1.0)] = 0.1,
    ) -> None:
        self.epsilon = float(epsilon)
        self.c = c
        self.d = float(d)

    def select(self) -> np.ndarray:
        t = self._next_round()
        u = self.rng.random(2)
        eps = (
            self.epsilon
            if self.c is None
            else np.minimum(1.0, self.c * self.n / (self.d**2 * np.maximum(t, 1)))
        )
        explore = u[:, 0] < eps
        random_arm = np.minimum((u[:, 1] * self.n).astype(np.int64), self.n - 1)
        greedy = np.argmax(self.stats.means(), axis=1)
        return np.where(explore, random_arm, greedy)


class ExploreThenCommit(_Counting):
    """Explore-then-commit (Lattimore & Szepesvári 2020, Algorithm 1).

    Pull the arms in turn until each has ``m`` pulls, then commit to the best empirical mean.
    ``m = None`` (default) uses the gap-free tuning ``m = ⌈(T/K)^{2/3} (ln T)^{1/3}⌉`` capped at
    ``⌊T/K⌋`` (horizon-aware); a fixed ``m`` makes it anytime.
    """

    deterministic = True

    def __init__(self, m: Annotated[int | None, Field(gt=0), ROUNDS] = None) -> None:
        self.m = m

    @property
    def requires_horizon(self) -> bool:
        return self.m is None

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        super().reset(space, horizon, rng)
        if self.m is not None:
            self._m = int(self.m)
        else:
            if horizon is None:
                raise SpecError("m", "ExploreThenCommit without a fixed m needs the horizon")
            k = space.n
            tuned = math.ceil((horizon / k) ** (2 / 3) * max(math.log(horizon), 1.0) ** (1 / 3))
            self._m = max(1, min(tuned, horizon // k))
        self._commit: np.ndarray | None = None
        self.t = 0

    def reset_rows(self, rows: np.ndarray) -> None:
        raise NotImplementedError("ExploreThenCommit cannot restart single replications")

    def select(self) -> np.ndarray:
        self.t += 1
        t = self.t
        if t <= self._m * self.n:
            return np.full(self.rng.size, (t - 1) % self.n, dtype=np.int64)
        if self._commit is None:
            self._commit = np.argmax(self.stats.sums / self.stats.counts, axis=1)
        return self._commit


class RoundRobin(Policy):
    """Round robin: arm ``(t − 1) mod K`` in round t. Deterministic and anytime."""

    deterministic = True

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.n = space.n
        self.rounds = np.zeros(rng.size, dtype=np.int64)

    def reset_rows(self, rows: np.ndarray) -> None:
        self.rounds[rows] = 0

    def select(self) -> np.ndarray:
        self.rounds += 1
        return (self.rounds - 1) % self.n

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        return None
