"""Gymnasium adapters: every registered environment passes Gymnasium's checker; seeding; the
same numbers as the native simulation for library policies (expected values from
impactbandits.core.simulate, not from the adapter)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from impactbandits.core import BatchRNG, EnvironmentRandom, simulate  # noqa: E402
from impactbandits.core.policy import BatchedSimplePolicy  # noqa: E402
from impactbandits.errors import SpecError  # noqa: E402
from impactbandits.gym import BanditEnv, make, register_envs  # noqa: E402
from impactbandits.policies.classic import UCB1  # noqa: E402
from impactbandits.policies.impact import ActionDependentUCB  # noqa: E402
from impactbandits.policies.opportunity import FairnessAwareETC  # noqa: E402
from impactbandits.registry import ENVIRONMENTS, resolve  # noqa: E402

from .test_contracts import ENV_FACTORIES  # one small instance of every registered kind  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("kind", sorted(ENVIRONMENTS))
def test_every_family_passes_the_gymnasium_checker(kind):
    env = BanditEnv(ENV_FACTORIES[kind](), horizon=50)
    check_env(env, skip_render_check=True)
    observation, info = env.reset(seed=3)
    assert observation in env.observation_space and info["round"] == 0
    for _ in range(5):
        observation, reward, terminated, _, info = env.step(env.action_space.sample())
        assert observation in env.observation_space and not terminated
        assert np.isfinite(reward) and "expected_reward" in info


def _trajectory(env, seed, rounds=60):
    env.reset(seed=seed)
    env.action_space.seed(0)
    return [env.step(env.action_space.sample())[1] for _ in range(rounds)]


def test_seeds_reproduce_and_differ():
    env = make("single-peaked", instance=1, noise="gaussian", sigma=0.1, length=100)
    assert _trajectory(env, 5) == _trajectory(env, 5)
    assert _trajectory(env, 5) != _trajectory(env, 6)
    # reset() without a seed continues a deterministic sequence from the last seed
    env.reset(seed=9)
    first = _trajectory(env, None)
    env.reset(seed=9)
    assert first == _trajectory(env, None)


def _through_gym(genv, policy, seed, rounds, policy_key=(1,)):
    observation, _ = genv.reset(seed=seed)
    policy.reset(genv.env.action_space, rounds if policy.requires_horizon else None,
                 BatchRNG.from_key(seed, policy_key, [0]))  # fmt: skip
    reward = expected = 0.0
    for _ in range(rounds):
        action = policy.select()
        act = int(action[0]) if action.ndim == 1 else action[0]
        observation, r, _, _, info = genv.step(act)
        policy.update(action, genv.feedback(observation))
        reward += r
        expected += info["expected_reward"]
    return reward, expected


def _natively(env, policy, seed, rounds, policy_key=(1,)):
    run = simulate(
        env, policy, rounds, rounds if policy.requires_horizon else None, np.array([rounds]),
        EnvironmentRandom(seed, 0, [0]), BatchRNG.from_key(seed, policy_key, [0]),
    )  # fmt: skip
    return float(run.reward[0, -1]), float(run.expected[0, -1])


@pytest.mark.parametrize(
    ("kind", "policy"),
    [
        ("rested", lambda: UCB1()),
        ("rising", lambda: resolve("policy", "r-ed-ucb", "kind")()),
        ("opportunity", lambda: FairnessAwareETC()),
        ("impact", lambda: BatchedSimplePolicy(ActionDependentUCB(resolution=4))),
    ],
)
def test_library_policy_through_gymnasium_equals_native_run(kind, policy):
    rounds = 300
    native = _natively(ENV_FACTORIES[kind](), policy(), 11, rounds)
    gym = _through_gym(BanditEnv(ENV_FACTORIES[kind]()), policy(), 11, rounds)
    np.testing.assert_allclose(gym, native, rtol=0, atol=1e-9)


def test_simplex_actions_are_projected_or_refused():
    env = BanditEnv(ENV_FACTORIES["impact"]())
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.array([2.0, 0.0, 2.0]))
    np.testing.assert_allclose(info["action"], [0.5, 0.0, 0.5])
    strict = BanditEnv(ENV_FACTORIES["impact"](), strict=True)
    strict.reset(seed=0)
    with pytest.raises(SpecError, match="sum to 1"):
        strict.step(np.array([0.2, 0.2, 0.2]))


def test_bad_actions_and_order_give_clear_errors():
    env = make("bernoulli", means=[0.2, 0.8])
    with pytest.raises(SpecError, match="reset"):
        env.step(0)
    env.reset(seed=1)
    with pytest.raises(SpecError, match=r"action: must be an arm in 0\.\.1, got 5"):
        env.step(5)
    with pytest.raises(SpecError, match="integer arm"):
        env.step(0.5)


def test_registered_ids_build_through_gymnasium_make():
    ids = register_envs()
    assert len(ids) == len(ENVIRONMENTS)
    env = gymnasium.make("impactbandits/bernoulli-v0", means=[0.1, 0.9], horizon=3)
    env.reset(seed=0)
    *_, truncated, _ = env.step(1)
    assert not truncated
    env.step(1)
    *_, truncated, _ = env.step(1)
    assert truncated


def test_example_runs_and_matches():
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "gym_policy.py")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("identical")
