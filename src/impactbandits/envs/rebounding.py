"""Rebounding bandits: satiation (Leqi, Kılınç-Karzan, Lipton & Montgomery, "Rebounding Bandits
for Modeling Satiation Effects", NeurIPS 2021; arXiv 2011.06741).

"Satiation dynamics are modeled as time-invariant linear dynamical systems. Expected rewards for
each arm decline monotonically with consecutive exposures and rebound towards the initial reward
whenever that arm is not pulled" (abstract, papers.nips.cc/paper/2021/hash/
2109737282d2c2de4fc5534be26c9bb6-Abstract.html). Arm ``k`` has a base reward ``b_k``, a
satiation retention ``γ_k ∈ [0, 1)`` and an exposure influence ``λ_k ≥ 0``. Its satiation starts
at ``s_{k,1} = 0`` and, after round ``t``,

    s_{k,t+1} = γ_k (s_{k,t} + 1{a_t = k}) + σ_z z_{k,t},       z_{k,t} ~ N(0, 1),

for every arm, pulled or not; pulling ``k`` in round ``t`` pays

    r_t = b_k − λ_k (s_{k,t} + c) + σ ε_t,                      ε_t ~ N(0, 1).

The section-2 equations themselves could not be read here (only the abstracts and the appendix
passage quoted in :mod:`impactbandits.oracles.rebounding`); the model below is our reading, which
agrees with everything read: expected rewards fall with consecutive pulls and rebound
geometrically towards ``b_k`` while the arm rests; "identical deterministic dynamics" (σ_z = 0)
is the case where greedy is optimal. Choices, each an option:

- ``count_current`` (``c``): ``False`` (default) — a pull raises satiation from the *next* round
  on (the reward at ``t`` sees only earlier pulls, the first pull of an arm pays ``b_k``);
  ``True`` — the current pull is counted before its reward. It only shifts the base to
  ``b_k − λ_k``.
- ``sigma_z`` (satiation noise) and ``sigma`` (reward noise), both 0 by default: the paper's
  experimental constants were not readable. ``deterministic`` when both are 0.

Common random numbers: the satiation shock ``z_{k,t}`` is indexed by (arm, round) — every arm's
satiation moves every round whatever is played, so all policies face the same shocks (stream 1,
:meth:`CommonNoise.row`); the reward noise of the ``m``-th pull of arm ``k`` by (arm, ``m``)
(stream 0), as in the stationary bandits: two policies pulling an arm for the ``m``-th time see
the same ``ε``.

What the learner is told (``action_space.known``): by default nothing — the paper's EEP learner
estimates ``b, γ, λ`` ("model-based methods rely on estimating the parameters of the satiation
dynamics", abstract). ``reveal_parameters = True`` tells ``base`` (effective, ``b − cλ``),
``retention`` and ``influence``: the paper's planning setting, where greedy and the w-lookahead
policy know the dynamics (:mod:`impactbandits.policies.rebounding`).

Compiled world (:mod:`~impactbandits.core.world`): :func:`rebounding_init` and
:func:`rebounding_step` play one replication's rounds as :meth:`ReboundingBandit.step` does, bit
for bit (the same shocks and reward noise at the same positions).

Regret: against the w-lookahead policy with the true parameters (default oracle
``rebounding_lookahead``, ``w = lookahead``, default 1: greedy), the benchmark of EEP's
"w-step lookahead regret"; ``rebounding_optimum`` is the exact optimum over arm sequences.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import Field

from impactbandits.core.compiled import kernel
from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.spaces import Discrete
from impactbandits.core.streams import counter_normal
from impactbandits.core.world import CompiledWorld, noise_words
from impactbandits.errors import SpecError
from impactbandits.params import Lookahead, NoiseScale, NonNegativeFloat

__all__ = ["ReboundingBandit", "rebounding_init", "rebounding_step"]

_Retention = Annotated[float, Field(ge=0.0, lt=1.0, allow_inf_nan=False)]
_Base = Annotated[float, Field(allow_inf_nan=False)]


class ReboundingBandit(Environment):
    """Rebounding bandit (Leqi et al. 2021): arm ``k`` pays ``b_k − λ_k s_{k,t}`` (+ noise σ),
    its satiation ``s_{k,t+1} = γ_k (s_{k,t} + 1{pulled}) + σ_z z`` starting at 0.

    ``base``, ``retention`` (γ ∈ [0, 1)), ``influence`` (λ ≥ 0): one per arm. ``sigma_z``,
    ``sigma``: Gaussian satiation and reward noise (0: none). ``count_current``: count the
    current pull before its reward. ``reveal_parameters``: tell the learner ``b, γ, λ``.
    ``lookahead``: the ``w`` of the regret benchmark (the w-lookahead policy; 1: greedy).
    """

    default_oracle = "rebounding_lookahead"

    def __init__(
        self,
        base: Annotated[list[_Base], Field(min_length=1)],
        retention: Annotated[list[_Retention], Field(min_length=1)],
        influence: Annotated[list[NonNegativeFloat], Field(min_length=1)],
        sigma_z: NoiseScale = 0.0,
        sigma: NoiseScale = 0.0,
        count_current: bool = False,
        reveal_parameters: bool = False,
        lookahead: Lookahead = 1,
    ) -> None:
        k = len(base)
        if len(retention) != k or len(influence) != k:
            raise SpecError("retention", f"give one retention and one influence per arm ({k})")
        self.base = np.asarray(base, dtype=float)
        self.retention = np.asarray(retention, dtype=float)
        self.influence = np.asarray(influence, dtype=float)
        if np.any((self.retention < 0) | (self.retention >= 1)):
            raise SpecError("retention", "need 0 <= γ < 1 for every arm")
        if np.any(self.influence < 0):
            raise SpecError("influence", "need λ >= 0 for every arm")
        if int(lookahead) < 1 or min(sigma_z, sigma) < 0:
            raise SpecError("lookahead", "need lookahead >= 1 and sigma_z, sigma >= 0")
        self.sigma_z = float(sigma_z)
        self.sigma = float(sigma)
        self.count_current = int(bool(count_current))
        self.lookahead = int(lookahead)
        self._effective = self.base - self.count_current * self.influence
        known = (
            {
                "base": self._effective.copy(),
                "retention": self.retention.copy(),
                "influence": self.influence.copy(),
            }
            if reveal_parameters
            else {}
        )
        self._space = Discrete(k, known=known)
        self._s = np.zeros((0, k))

    @property
    def action_space(self) -> Discrete:
        return self._space

    @property
    def deterministic(self) -> bool:
        """No satiation and no reward noise: rewards are a function of the arm sequence."""
        return self.sigma == 0 and self.sigma_z == 0

    def reset(self, random: EnvironmentRandom) -> None:
        size, k = random.size, self._space.n
        self._s = np.zeros((size, k))
        self._pulls = np.zeros((size, k), dtype=np.int64)
        self._rows = np.arange(size)
        self._t = 0
        self._reward_noise = random.noise(k, "normal", stream=0)
        self._satiation_noise = random.noise(k, "normal", stream=1)

    @property
    def satiation(self) -> np.ndarray:
        """``(R, K)`` satiation levels before the coming round."""
        return self._s.copy()

    def expected_rewards(self) -> np.ndarray:
        """``(R, K)``: ``b_k − λ_k (s_{k,t} + c)`` in the current state."""
        return self._effective[None, :] - self.influence[None, :] * self._s

    def step(self, actions: np.ndarray) -> Outcome:
        rows = self._rows
        mean = self._effective[actions] - self.influence[actions] * self._s[rows, actions]
        if self.sigma > 0:
            reward = mean + self.sigma * self._reward_noise.at(actions, self._pulls[rows, actions])
        else:
            reward = mean.copy()
        self._pulls[rows, actions] += 1
        self._s[rows, actions] += 1.0
        self._s *= self.retention[None, :]
        if self.sigma_z > 0:
            self._s += self.sigma_z * self._satiation_noise.row(self._t)
        self._t += 1
        return Outcome(Feedback(reward), mean)

    def compiled_world(self, rounds: int) -> CompiledWorld:
        """The compiled world of the replications reset (module docstring): ``params`` σ and
        σ_z, ``data`` the effective bases, the influences and the retentions; the reward noise's
        table, then the shocks'."""
        params = np.array([self.sigma, self.sigma_z])
        data = np.stack([self._effective, self.influence, self.retention])[None]
        words = noise_words(self._rows.size, self._reward_noise, self._satiation_noise)
        return CompiledWorld(rebounding_init, rebounding_step, params, data, words)


@kernel(inline=True)
def rebounding_init(params: np.ndarray, arms: np.ndarray, k: int, rounds: int,
                    noise: np.ndarray) -> tuple[Any, ...]:  # fmt: skip
    """One replication's state: the arms' (effective base, influence, retention) rows, the
    satiation levels, the pulls per arm and the noise words."""
    return arms, np.zeros(k), np.zeros(k, dtype=np.int64), noise


@kernel(inline=True)
def rebounding_step(state: Any, params: np.ndarray, t: int, arm: int) -> tuple[float, float]:
    """Round ``t``'s pull of ``arm``: its reward and expected reward, then every arm's
    satiation moves (retention, the pull, the round's shock)."""
    arms, satiation, pulls, noise = state
    mean = arms[0, arm] - arms[1, arm] * satiation[arm]
    reward = mean
    if params[0] > 0.0:
        reward = mean + params[0] * counter_normal(noise, 0, arm, pulls[arm])
    pulls[arm] += 1
    satiation[arm] += 1.0
    for i in range(satiation.size):
        satiation[i] *= arms[2, i]
    if params[1] > 0.0:
        for i in range(satiation.size):
            satiation[i] += params[1] * counter_normal(noise, 1, i, t - 1)
    return reward, mean
