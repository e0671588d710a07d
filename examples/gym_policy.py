"""A library policy played through the Gymnasium interface gives the native runner's numbers.

    .venv/bin/python examples/gym_policy.py

UCB1 on a noisy single-peaked rested bandit (Lindner et al.'s instance 1, σ = 0.05), 2,000
rounds, seed 7: once through ``impactbandits.gym`` (reset, step, the observation turned back
into the library's feedback), once through ``impactbandits.core.simulate``.
"""

from __future__ import annotations

import numpy as np

from impactbandits.core import BatchRNG, EnvironmentRandom, simulate
from impactbandits.gym import make
from impactbandits.policies.classic import UCB1
from impactbandits.registry import build_environment

SEED, ROUNDS = 7, 2000
PARAMS = {"instance": 1, "noise": "gaussian", "sigma": 0.05, "length": ROUNDS}


def through_gymnasium() -> tuple[float, float]:
    env = make("single-peaked", **PARAMS)
    policy = UCB1()
    observation, _ = env.reset(seed=SEED)
    policy.reset(env.env.action_space, None, BatchRNG.from_key(SEED, (1,), [0]))
    reward = expected = 0.0
    for _ in range(ROUNDS):
        action = policy.select()
        observation, r, _, _, info = env.step(int(action[0]))
        policy.update(action, env.feedback(observation))
        reward += r
        expected += info["expected_reward"]
    return reward, expected


def natively() -> tuple[float, float]:
    env = build_environment("single-peaked", PARAMS)
    run = simulate(
        env, UCB1(), ROUNDS, None, np.array([ROUNDS]),
        EnvironmentRandom(SEED, 0, [0]), BatchRNG.from_key(SEED, (1,), [0]),
    )  # fmt: skip
    return float(run.reward[0, -1]), float(run.expected[0, -1])


if __name__ == "__main__":
    gym_reward, gym_expected = through_gymnasium()
    native_reward, native_expected = natively()
    print(f"Gymnasium: reward {gym_reward:.6f}, expected reward {gym_expected:.6f}")
    print(f"native:    reward {native_reward:.6f}, expected reward {native_expected:.6f}")
    assert np.isclose(gym_reward, native_reward, rtol=0, atol=1e-9)
    assert np.isclose(gym_expected, native_expected, rtol=0, atol=1e-9)
    print("identical")
