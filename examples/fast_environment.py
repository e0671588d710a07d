"""An environment of your own that runs compiled: arms that tire with use, written twice.

    python fast_environment.py

The class is the readable form (batched NumPy, the reference); the two ``@kernel`` functions are
its compiled world, one replication at a time, which the library's generic round loop compiles
with numba together with any policy's compiled step. Name it in a spec as ``kind =
"fast_environment:TiringArms"`` with this directory on ``PYTHONPATH``.

The m-th pull of arm i pays 1 with probability μ_i / (1 + ρ m) (Bernoulli), ρ the fatigue: the
more an arm is used, the less it pays, and the common noise of the pull (the uniform at (arm, m))
decides it, so both forms see the same draws.
"""

from __future__ import annotations

import time

import numpy as np

from impactbandits import CompiledWorld, Environment, EnvironmentRandom, kernel
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.spaces import Discrete
from impactbandits.core.streams import counter_uniform
from impactbandits.core.world import noise_words


class TiringArms(Environment):
    """Bernoulli arms with means ``means[i] / (1 + fatigue · pulls_i)``."""

    default_oracle = None  # no exact benchmark: report rewards, not regret

    def __init__(self, means: list[float], fatigue: float = 0.01) -> None:
        self.means = np.asarray(means, dtype=float)
        self.fatigue = float(fatigue)
        self._space = Discrete(len(means))

    @property
    def action_space(self) -> Discrete:
        return self._space

    def reset(self, random: EnvironmentRandom) -> None:
        self._noise = random.noise(self._space.n)  # uniforms by (replication, arm, pull)
        self._pulls = np.zeros((random.size, self._space.n), dtype=np.int64)
        self._rows = np.arange(random.size)

    def expected_rewards(self) -> np.ndarray:
        return self.means / (1.0 + self.fatigue * self._pulls)

    def step(self, actions: np.ndarray) -> Outcome:
        pulls = self._pulls[self._rows, actions]
        mean = self.means[actions] / (1.0 + self.fatigue * pulls)
        u = self._noise.at(actions, pulls)
        self._pulls[self._rows, actions] += 1
        return Outcome(Feedback((u < mean).astype(float)), mean)

    def compiled_world(self, rounds: int) -> CompiledWorld:
        """The same rounds for one replication at a time (called after ``reset``)."""
        return CompiledWorld(
            init,
            step,
            np.array([self.fatigue]),  # params
            self.means[None, :],  # data: one row, shared by every replication
            noise_words(self._rows.size, self._noise),  # the noise table's key, per replication
        )


@kernel
def init(params, means, k, rounds, noise):  # -> the state of one replication
    return means, np.zeros(k, dtype=np.int64), noise


@kernel
def step(state, params, t, arm):  # -> (reward, expected reward) of round t's pull of arm
    means, pulls, noise = state
    m = pulls[arm]
    mean = means[arm] / (1.0 + params[0] * m)
    pulls[arm] = m + 1
    reward = 1.0 if counter_uniform(noise, 0, arm, m) < mean else 0.0
    return reward, mean


if __name__ == "__main__":
    from impactbandits import BatchRNG
    from impactbandits.kernels import simulate
    from impactbandits.policies.thompson import ThompsonSampling
    from impactbandits.testing import check_compiled_world

    print("compiled world equals the readable class:", check_compiled_world(
        lambda: TiringArms([0.9, 0.7, 0.5])))  # fmt: skip
    seeds = list(range(100))
    for compiled in (True, False):
        start = time.process_time()
        trajectory = simulate(TiringArms([0.9, 0.7, 0.5]), ThompsonSampling(), 10_000, None,
                              np.array([10_000]), EnvironmentRandom(1, 2, seeds),
                              BatchRNG.from_key(1, (3,), seeds), compiled=compiled)  # fmt: skip
        spent = time.process_time() - start
        mean = trajectory.reward[:, -1].mean()
        loop = "compiled" if compiled else "readable"
        print(f"{loop}: mean reward {mean:.1f}, CPU time {spent:.1f}")
