"""Blocking bandits (Basu, Sen, Sanghavi & Shakkottai, "Blocking Bandits", NeurIPS 2019).

Stationary arms with means μ_i, and a delay D_i ≥ 1 per arm: an arm pulled in round t is
unavailable in rounds t+1, …, t+D_i−1 and available again from round t+D_i (D_i = 1: never
blocked). Abstract: "playing an arm makes it unavailable for a fixed number of time slots
thereafter"; the exact count is the public replication's (tombijaoui/Sequential-Decision-
Making-Project, ``simulations.py``: a pulled arm's countdown D is decremented at the end of the
same round, so it is playable again D rounds later) and agrees with the paper's K* =
min{k : Σ_{i≤k} 1/D_i ≥ 1} (arms by decreasing μ; an arm fills at most a 1/D_i share of the
rounds). The paper's learner chooses among the available arms; here a policy may pick any arm,
and a pick of a blocked arm is an **idle round**: realised and expected reward 0, no blocking
renewed, no reward draw used. (So every discrete policy of the library runs; a policy unaware of
blocking sees a 0 it cannot tell from a Bernoulli failure. When no arm is available every pick
idles, as the replication's learners do: reward 0.) :meth:`BlockingBandit.expected_rewards` is
μ_i for available arms and 0 for blocked ones.

Common random numbers: the reward of the m-th *real* pull of arm i in replication r is a fixed
function of (seed, r, i, m) (:class:`~impactbandits.core.random.CommonNoise`, as the stationary
bandits): ``1{U < μ_i}`` (Bernoulli, the replication's rewards and the default) or ``μ_i + σZ``
(Gaussian).

The learner is told the delays (``action_space.known["delays"]``): with its own past actions
they give the availability of every arm
(:class:`~impactbandits.oracles.blocking.BlockingClock`), which is what the paper's learner
needs to choose "the available arm". Means are not told.

Instances: give ``means`` and ``delays``, or draw them as the replication of the paper's
synthetic experiments does (its README: "Section V"; the paper's own text of it could not be
read): ``n_arms`` means 0 = μ_K < … < μ_1 whose consecutive gaps are sorted draws from
U(``gap_range``) (their [K/2000, K/400] = [0.01, 0.05] at K = 20), arm 0 the best;
``delay_range`` = [low, high] uniform integer delays (their "small" [1, T/1000] = [1, 10],
"large" [T/1000+1, T/500] = [11, 20] at T = 10⁴; "fixed": 10 for every arm). Drawn once from
``instance_seed``: the same instance in every replication (so the delays can be told to the
learner), as in the replication, whose 250 runs all re-seed with the same seed.

Compiled world (:mod:`~impactbandits.core.world`): :func:`blocking_init` and
:func:`blocking_step` play one replication's rounds as :meth:`BlockingBandit.step` plays them,
bit for bit (the same noise at the same (replication, arm, real pull)), so every policy with a
compiled step runs compiled here.

Regret: against Oracle Greedy (default oracle ``oracle_greedy``), the benchmark of the paper's
regret bound for UCB Greedy ("c log T + o(log T) cumulative regret against the greedy
algorithm", abstract); it can be negative, greedy not being optimal. ``blocking_optimum`` is
the optimum over all policies (exact on small instances, :mod:`impactbandits.oracles.blocking`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from impactbandits.core.compiled import kernel
from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.pull_model import BERNOULLI, NORMAL, outcome
from impactbandits.core.spaces import Discrete
from impactbandits.core.world import CompiledWorld, noise_words
from impactbandits.errors import SpecError
from impactbandits.oracles.blocking import BlockingClock
from impactbandits.params import ARMS, Delay, NoiseScale, OnlyWhen, Probability, RequiredWhen

__all__ = ["BlockingBandit", "blocking_init", "blocking_step", "replication_means"]

_Pair = Annotated[list[float], Field(min_length=2, max_length=2)]
_DelayPair = Annotated[list[Delay], Field(min_length=2, max_length=2)]


def replication_means(n_arms: int, gaps: np.ndarray) -> np.ndarray:
    """Means from ``n_arms − 1`` gap draws, as the replication builds them: sorted increasing,
    accumulated from 0, reversed (arm 0 the best, the last arm 0)."""
    return np.concatenate(([0.0], np.cumsum(np.sort(gaps))))[::-1].copy()


class BlockingBandit(Environment):
    """Blocking bandit (Basu et al. 2019): arm i blocked for the D_i − 1 rounds after a pull.

    ``means`` or ``n_arms`` (+ ``gap_range``); ``delays`` or ``delay_range`` (one positive
    integer per arm); ``instance_seed`` draws what is not given. ``distribution``:
    ``"bernoulli"`` (the replication's rewards) or ``"gaussian"`` with ``sigma`` (σ = 0: no
    noise, a deterministic environment). A pick of a blocked arm is an idle round (reward 0).
    """

    default_oracle = "oracle_greedy"

    def __init__(
        self,
        means: Annotated[
            Annotated[list[Probability], Field(min_length=1)] | None,
            RequiredWhen("n_arms", None),
        ] = None,
        delays: Annotated[
            Annotated[list[Delay], Field(min_length=1)] | None,
            RequiredWhen("delay_range", None),
        ] = None,
        n_arms: Annotated[int | None, Field(gt=0), ARMS, RequiredWhen("means", None)] = None,
        gap_range: _Pair = [0.01, 0.05],  # noqa: B006
        delay_range: Annotated[_DelayPair | None, RequiredWhen("delays", None)] = None,
        instance_seed: Annotated[int, Field(ge=0)] = 0,
        distribution: Literal["bernoulli", "gaussian"] = "bernoulli",
        sigma: Annotated[NoiseScale, OnlyWhen("distribution", "gaussian")] = 1.0,
    ) -> None:
        if (means is None) == (n_arms is None):
            raise SpecError("means", "give either 'means' or 'n_arms' (random instance)")
        if (delays is None) == (delay_range is None):
            raise SpecError("delays", "give either 'delays' or 'delay_range' (random delays)")
        k = len(means) if means is not None else int(n_arms)  # type: ignore[arg-type]
        low, high = float(gap_range[0]), float(gap_range[1])
        if not 0 <= low <= high or (means is None and (k - 1) * high > 1):
            raise SpecError(
                "gap_range", f"need 0 <= low <= high and (n_arms − 1)·high <= 1; got {gap_range}"
            )
        if delay_range is not None and delay_range[0] > delay_range[1]:
            raise SpecError("delay_range", "must be [low, high] with low <= high")
        if delays is not None and len(delays) != k:
            raise SpecError("delays", f"give one delay per arm ({k})")
        rng = np.random.default_rng(instance_seed)  # means first, then delays
        if means is None:
            self.means = replication_means(k, rng.uniform(low, high, size=k - 1))
        else:
            self.means = np.asarray(means, dtype=float)
        if delays is None:
            low_d, high_d = int(delay_range[0]), int(delay_range[1])  # type: ignore[index]
            self.delays = rng.integers(low_d, high_d + 1, size=k).astype(np.int64)
        else:
            self.delays = np.asarray(delays, dtype=np.int64)
        self.distribution = distribution
        self.sigma = float(sigma)
        self._space = Discrete(k, known={"delays": self.delays.copy()})
        self._mu = np.empty((0, k))

    @property
    def action_space(self) -> Discrete:
        return self._space

    @property
    def deterministic(self) -> bool:
        """Gaussian rewards with σ = 0: every real pull pays its mean (the instance is the same
        in every replication)."""
        return self.distribution == "gaussian" and self.sigma == 0

    def reset(self, random: EnvironmentRandom) -> None:
        size, k = random.size, self._space.n
        self._mu = np.tile(self.means, (size, 1))
        self._clock = BlockingClock(self.delays, size)
        self._pulls = np.zeros((size, k), dtype=np.int64)
        self._rows = np.arange(size)
        kind = "uniform" if self.distribution == "bernoulli" else "normal"
        self._noise = random.noise(k, kind)

    def expected_rewards(self) -> np.ndarray:
        """``(R, K)``: μ_i for the arms available in the coming round, 0 for blocked ones."""
        return np.where(self._clock.available(), self._mu, 0.0)

    def step(self, actions: np.ndarray) -> Outcome:
        rows = self._rows
        index = self._pulls[rows, actions]
        draw = self._noise.at(actions, index)  # looked up for every row, used where pulled
        pulled = self._clock.record(actions)
        mean = np.where(pulled, self._mu[rows, actions], 0.0)
        self._pulls[rows[pulled], actions[pulled]] += 1
        if self.distribution == "bernoulli":
            reward = (draw < mean).astype(float)
        else:
            reward = np.where(pulled, mean + self.sigma * draw, 0.0)
        return Outcome(Feedback(reward), mean)

    def compiled_world(self, rounds: int) -> CompiledWorld:
        """The compiled world of the replications reset (module docstring): ``params`` the
        noise model, σ and the delays (capped at ``rounds + 1``: a longer delay blocks the arm
        for the rest of the run all the same, and stays exact in a ``float64``), ``data`` the
        means."""
        code = BERNOULLI if self.distribution == "bernoulli" else NORMAL
        delays = np.minimum(self.delays, int(rounds) + 1).astype(np.float64)
        params = np.concatenate(([float(code), self.sigma], delays))
        words = noise_words(self._rows.size, self._noise)
        return CompiledWorld(blocking_init, blocking_step, params, self.means[None, :], words)

    @property
    def instance_pulls(self) -> np.ndarray:
        """``(R, K)`` real (non-idle) pulls of every arm so far."""
        return self._pulls.copy()


@kernel(inline=True)
def blocking_init(params: np.ndarray, means: np.ndarray, k: int, rounds: int,
                  noise: np.ndarray) -> tuple[Any, ...]:  # fmt: skip
    """One replication's state: the means, the first round each arm is available in, the real
    pulls of each arm, the noise words, the noise model and σ."""
    free_at = np.zeros(k, dtype=np.int64)
    pulls = np.zeros(k, dtype=np.int64)
    return means, free_at, pulls, noise, int(params[0]), params[1]


@kernel(inline=True)
def blocking_step(state: Any, params: np.ndarray, t: int, arm: int) -> tuple[float, float]:
    """Round ``t``'s pick of ``arm``: an idle round ``(0, 0)`` if it is blocked, else a real
    pull (its reward and mean), which blocks it until round ``t + D_arm``."""
    means, free_at, pulls, noise, code, sigma = state
    if free_at[arm] > t:
        return 0.0, 0.0
    m = pulls[arm]
    mean = means[arm]
    pulls[arm] = m + 1
    free_at[arm] = t + int(params[2 + arm])
    return outcome(code, sigma, noise, 0, arm, m, mean), mean
