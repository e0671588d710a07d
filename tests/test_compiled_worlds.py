"""Compiled worlds (:mod:`impactbandits.core.world`): every declared world gives its readable
class's numbers bit for bit, a user's world runs compiled, and a broken one is a one-line
error. The readable classes are the references (plain NumPy, checked against brute force and the
papers elsewhere)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from impactbandits import kernels
from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.core.compiled import kernel
from impactbandits.core.environment import Environment
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.philox import normals, uniforms
from impactbandits.core.spaces import Discrete
from impactbandits.core.streams import counter_normal, counter_uniform
from impactbandits.core.world import CompiledWorld, noise_words
from impactbandits.envs.blocking import BlockingBandit
from impactbandits.errors import SpecError
from impactbandits.kernels.dispatch import compiled_step, compiled_world, simulate_compiled
from impactbandits.registry import build_policy
from impactbandits.testing import check_compiled_step, check_compiled_world

pytestmark = pytest.mark.skipif(
    not kernels.available(), reason="no compiled loops (numba not installed)"
)

BLOCKING = [
    {"means": [0.9, 0.5, 0.3, 0.2], "delays": [3, 1, 2, 5]},
    {"means": [0.9, 0.5, 0.3], "delays": [4, 2, 10**18]},  # blocked for the rest of the run
    {"means": [0.9, 0.5, 0.3], "delays": [4, 2, 3], "distribution": "gaussian", "sigma": 0.5},
    {"means": [0.9, 0.5, 0.3], "delays": [4, 2, 3], "distribution": "gaussian", "sigma": 0.0},
    {"n_arms": 20, "delay_range": [1, 10], "instance_seed": 3},
]


@pytest.mark.parametrize("params", BLOCKING, ids=range(len(BLOCKING)))
def test_the_blocking_world_equals_the_readable_bandit(params):
    assert check_compiled_world(lambda: BlockingBandit(**params), rounds=400)


@pytest.mark.parametrize("params", BLOCKING, ids=range(len(BLOCKING)))
def test_ucb_greedy_runs_compiled_and_equals_its_readable_class(params):
    assert check_compiled_step(
        lambda: build_policy("ucb-greedy", {}), lambda: BlockingBandit(**params), rounds=400
    )


def test_counter_noise_equals_the_common_noise_tables():
    """The world's noise kernels read the values :class:`CommonNoise` gives (Philox at the same
    counter under the same key), for two tables of one replication."""
    random = EnvironmentRandom(7, 11, [5, 9])
    first, second = random.noise(3, "uniform"), random.noise(3, "normal", stream=1)
    words = noise_words(2, first, second)
    assert words.shape == (2, 5) and list(words[:, -1]) == [5, 9]
    for r, rep in enumerate((5, 9)):
        for arm in range(3):
            for index in (0, 1, 2, 7, 1000):
                u = uniforms(first.key, np.uint64(rep), np.uint64(arm), np.uint64(index))
                z = normals(second.key, np.uint64(rep), np.uint64(arm), np.uint64(index))
                assert counter_uniform.py_func(words[r], 0, arm, index) == float(u)
                assert counter_normal.py_func(words[r], 1, arm, index) == float(z)


# A user's environment with a world: arm i's m-th pull pays Bernoulli(μ_i / (1 + m)), written
# in NumPy for the batch and as two kernels for one replication (IEEE division both ways).


class Fading(Environment):
    """Bernoulli arms whose mean fades with every pull of the arm."""

    def __init__(self, means: list[float]) -> None:
        self.means = np.asarray(means, dtype=float)
        self._space = Discrete(len(means))

    @property
    def action_space(self) -> Discrete:
        return self._space

    def reset(self, random: EnvironmentRandom) -> None:
        self._noise = random.noise(self._space.n)
        self._pulls = np.zeros((random.size, self._space.n), dtype=np.int64)
        self._rows = np.arange(random.size)

    def expected_rewards(self) -> np.ndarray:
        return self.means / (1.0 + self._pulls)

    def step(self, actions: np.ndarray) -> Outcome:
        pulls = self._pulls[self._rows, actions]
        mean = self.means[actions] / (1.0 + pulls)
        u = self._noise.at(actions, pulls)
        self._pulls[self._rows, actions] += 1
        return Outcome(Feedback((u < mean).astype(float)), mean)

    def compiled_world(self, rounds: int) -> CompiledWorld:
        words = noise_words(self._rows.size, self._noise)
        params = np.zeros(0)
        return CompiledWorld(fading_init, fading_step, params, self.means[None, :], words)


@kernel
def fading_init(params, means, k, rounds, noise):  # type: ignore[no-untyped-def]
    return means, np.zeros(k, dtype=np.int64), noise


@kernel
def fading_step(state, params, t, arm):  # type: ignore[no-untyped-def]
    means, pulls, noise = state
    m = pulls[arm]
    mean = means[arm] / (1.0 + m)
    pulls[arm] = m + 1
    reward = 1.0 if counter_uniform(noise, 0, arm, m) < mean else 0.0
    return reward, mean


@kernel
def out_of_bounds_step(state, params, t, arm):  # type: ignore[no-untyped-def]
    return state[0][arm + 100], 0.0


def test_a_users_world_runs_compiled_bit_for_bit():
    assert check_compiled_world(lambda: Fading([0.9, 0.6, 0.4]), rounds=300)


def _run(env: Environment, name: str = "ucb1", rounds: int = 50) -> Any:
    reps = [0, 1]
    env.reset(EnvironmentRandom(1, 2, reps))
    policy = build_policy(name, {})
    rng = BatchRNG.from_key(1, (3,), reps)
    policy.reset(env.action_space, rounds, rng)
    return simulate_compiled(env, policy, rounds, np.array([rounds]), len(reps), rng)


def test_a_world_that_reads_out_of_bounds_is_a_one_line_error():
    class Broken(Fading):
        def compiled_world(self, rounds: int) -> CompiledWorld:
            world = super().compiled_world(rounds)
            return CompiledWorld(fading_init, out_of_bounds_step, world.params, world.data,
                                 world.noise)  # fmt: skip

    with pytest.raises(SpecError) as caught:
        _run(Broken([0.9, 0.6]))
    assert caught.value.field == "environment"
    assert "IndexError" in str(caught.value) and "\n" not in str(caught.value)


def test_a_declaration_that_returns_something_else_is_a_one_line_error():
    class Wrong(Fading):
        def compiled_world(self, rounds: int) -> Any:
            return (fading_init, fading_step)

    env = Wrong([0.9, 0.6])
    env.reset(EnvironmentRandom(1, 2, [0]))
    with pytest.raises(SpecError, match="returned tuple, not a CompiledWorld"):
        compiled_world(env, 10)


def test_a_subclass_that_changes_step_runs_its_own_readable_step():
    class Mine(Fading):
        def step(self, actions: np.ndarray) -> Outcome:
            return super().step(actions)

    env = Mine([0.9, 0.6])
    env.reset(EnvironmentRandom(1, 2, [0]))
    assert compiled_world(env, 10) is None
    assert _run(Mine([0.9, 0.6])) is None  # the readable loop plays it


def test_world_fields_are_checked():
    words = np.zeros((1, 3), dtype=np.uint64)
    with pytest.raises(TypeError, match="step"):
        CompiledWorld(fading_init, fading_step.py_func, np.zeros(1), np.zeros((1, 2)), words)
    with pytest.raises(ValueError, match="params"):
        CompiledWorld(fading_init, fading_step, np.zeros((1, 1)), np.zeros((1, 2)), words)
    with pytest.raises(ValueError, match="noise"):
        CompiledWorld(fading_init, fading_step, np.zeros(1), np.zeros((1, 2)), words[0])


def test_ucb_greedy_declares_a_step_on_a_blocking_bandit():
    env = BlockingBandit(means=[0.5, 0.4], delays=[2, 3])
    env.reset(EnvironmentRandom(1, 2, [0]))
    policy = build_policy("ucb-greedy", {})
    policy.reset(env.action_space, 100, BatchRNG.from_key(1, (3,), [0]))
    step = compiled_step(policy)
    assert step is not None and list(step.params) == [8.0, 2.0, 3.0]


REBOUNDING = [
    {"base": [1.0, 0.9, 0.8], "retention": [0.5, 0.7, 0.2], "influence": [0.3, 0.2, 0.5]},
    {"base": [1.0, 0.9], "retention": [0.5, 0.7], "influence": [0.3, 0.2], "sigma": 0.1,
     "sigma_z": 0.05},
    {"base": [1.0, 0.9], "retention": [0.0, 0.9], "influence": [0.3, 0.2], "sigma_z": 0.2,
     "count_current": True},
]  # fmt: skip


@pytest.mark.parametrize("params", REBOUNDING, ids=range(len(REBOUNDING)))
def test_the_rebounding_world_equals_the_readable_bandit(params):
    from impactbandits.envs.rebounding import ReboundingBandit

    assert check_compiled_world(lambda: ReboundingBandit(**params), rounds=400)


def _example() -> Any:
    examples = Path(__file__).resolve().parent.parent / "examples"
    sys.path.insert(0, str(examples))
    try:
        import fast_environment
    finally:
        sys.path.remove(str(examples))
    return fast_environment


def test_the_how_to_example_runs_compiled_and_equals_its_readable_form():
    example = _example()
    assert check_compiled_world(lambda: example.TiringArms([0.9, 0.7, 0.5]), rounds=300)


def test_the_how_to_page_shows_the_example_as_it_is():
    root = Path(__file__).resolve().parent.parent
    page = (root / "docs" / "how-to" / "fast-environment.md").read_text(encoding="utf-8")
    source = (root / "examples" / "fast_environment.py").read_text(encoding="utf-8")
    assert f"```python\n# fast_environment.py\n{source}```" in page


RECOVERING = [
    {"values": [[0.1, 0.5, 0.9, 1.0], [0.6, 0.6, 0.7, 0.7], [0.0, 0.2, 0.4, 0.95]]},
    {"values": [[0.1, 0.5, 0.9, 1.0], [0.6, 0.6, 0.7, 0.7]], "lookahead": 3, "sigma": 0.0},
    {"n_arms": 5, "z_max": 12, "lookahead": 2, "initial_z": 4},
    {"n_arms": 4, "sampler": "generator", "instance_seed": 3, "lookahead": 1, "sigma": 0.3},
]


@pytest.mark.parametrize("params", RECOVERING, ids=range(len(RECOVERING)))
def test_the_recovering_world_equals_the_readable_bandit(params):
    from impactbandits.envs.recovering import RecoveringBandit

    assert check_compiled_world(lambda: RecoveringBandit(**params), rounds=300)


@pytest.mark.parametrize("params", RECOVERING, ids=range(len(RECOVERING)))
def test_the_recovering_worlds_lookahead_regret_equals_the_readable_one(params):
    """The benchmark the world records at the checkpoints gives the readable path's metric."""
    from impactbandits.core.simulate import Trajectory
    from impactbandits.envs.recovering import RecoveringBandit

    reps, rounds = [0, 4], 200
    times = np.array([1, 2, 5, 37, 100, 199, 200])
    metrics = []
    for compiled in (True, False):
        env, policy = RecoveringBandit(**params), build_policy("ucb1", {})
        random, rng = EnvironmentRandom(3, 4, reps), BatchRNG.from_key(3, (5,), reps)
        trajectory = kernels.simulate(
            env, policy, rounds, None, times, random, rng, compiled=compiled
        )
        assert isinstance(trajectory, Trajectory)
        metrics.append(env.summary_metrics(trajectory)["lookahead_regret"])
    assert np.array_equal(metrics[0], metrics[1])
    assert np.all(np.isfinite(metrics[0]))


@pytest.mark.parametrize("w", [1, 2, 3])
@pytest.mark.parametrize("params", REBOUNDING, ids=range(len(REBOUNDING)))
def test_the_lookahead_planner_runs_compiled_and_equals_its_readable_class(params, w):
    from impactbandits.envs.rebounding import ReboundingBandit
    from impactbandits.policies.rebounding import ReboundingLookahead

    assert check_compiled_step(
        lambda: ReboundingLookahead(w),
        lambda: ReboundingBandit(**params, reveal_parameters=True),
        rounds=200,
    )
