"""Rested bandits with ``noise_draws = "per-evaluation"`` run on the compiled loop.

Their pull model carries the table of the fresh re-evaluations
(:attr:`~impactbandits.core.pull_model.PullModel.reevaluation`); a compiled step whose readable
form reads ``Feedback.reevaluated`` declares :attr:`~impactbandits.core.compiled.CompiledStep.
reevaluate` (greedy's and one-step-optimistic's ``authors-code`` variants), every other step of
the library runs its loop as on noise drawn once per pull. The expected numbers come from the
readable forms (:func:`impactbandits.testing.check_compiled_step`, the environment's own
``step``), never from the compiled code.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from impactbandits import kernels
from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.pull_model import PullModel, table_world
from impactbandits.envs import rested
from impactbandits.kernels.dispatch import compiled_step, reevaluates, simulate_compiled
from impactbandits.kernels.sources import loop_tag
from impactbandits.registry import build_environment, build_policy
from impactbandits.testing import check_compiled_step

pytestmark = pytest.mark.skipif(
    not kernels.available(), reason="no compiled loops (numba not installed)"
)

AUTHORS = {"variant": "authors-code"}
READERS = [
    ("last-reward-greedy", AUTHORS),
    ("one-step-optimistic", {**AUTHORS, "noise_bound": 0.1}),
    ("one-step-optimistic", {**AUTHORS, "noise_bound": 0.0}),
]
#: Figures whose authors-code spec has environments with per-evaluation noise.
FIGURES = [
    "lindner-fig1",
    "lindner-single-peaked",
    "lindner-increasing",
    "lindner-fico",
    "lindner-recommender",
]


def _evaluating(kind: str, **params: Any) -> tuple[str, dict[str, Any]]:
    return kind, {**params, "noise_draws": "per-evaluation"}


SP3 = _evaluating("single-peaked", instance=3, length=3000, noise="gaussian", sigma=0.05)
SP1_BETA = _evaluating("single-peaked", instance=1, length=3000, noise="beta", sigma=0.1)
#: Mostly negative observations: greedy's variant compares them with 0.
LOW = _evaluating("constant", means=[0.05, 0.02, 0.1], length=3000, noise="gaussian", sigma=0.3)
#: Six arms, bounded noise.
MANY = _evaluating(
    "constant", means=[0.2, 0.5, 0.45, 0.1, 0.48, 0.3], length=3000, noise="beta", sigma=0.2
)
ENVIRONMENTS = [SP3, SP1_BETA, LOW, MANY]
ENV_IDS = ["sp3-gaussian", "sp1-beta", "low", "six-arms-beta"]


def _per_pull(env: tuple[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    return env[0], {**env[1], "noise_draws": "per-pull"}


def _compiled(kind: str, params: dict[str, Any], env_spec: Any, rounds: int, reps=(0, 1, 2)):
    """The compiled loop's (reward, expected, pulls, switches), every round a checkpoint."""
    env, policy = build_environment(*env_spec), build_policy(kind, params)
    env.reset(EnvironmentRandom(5, 101, list(reps)))
    rng = BatchRNG.from_key(5, (202,), list(reps))
    policy.reset(env.action_space, rounds, rng)
    done = simulate_compiled(env, policy, rounds, np.arange(1, rounds + 1), len(reps), rng)
    assert done is not None, f"{kind} {params} did not run compiled"
    return done


def figure_pairs(name: str, noise: str) -> list[tuple[str, dict[str, Any], Any]]:
    """The authors-code pairs of the figure's quick spec on its per-evaluation environments,
    with their noise kind set to ``noise`` (the figures use Gaussian noise)."""
    from impactbandits.experiments.figures import get_figure

    spec = get_figure(name).spec(True, "authors-code")
    pairs = []
    for policy in spec.policies:
        if policy.params.get("variant") != "authors-code":
            continue
        for env in spec.environments:
            if env.params.get("noise_draws") != "per-evaluation":
                continue
            if policy.environments is not None and env.label not in policy.environments:
                continue
            pairs.append(
                (policy.kind, dict(policy.params), (env.kind, {**env.params, "noise": noise}))
            )
    return pairs


@pytest.mark.usefixtures("jit_backend")
@pytest.mark.parametrize("noise", ["gaussian", "beta"])
@pytest.mark.parametrize("name", FIGURES)
def test_every_authors_code_pair_with_per_evaluation_noise_runs_compiled_bit_for_bit(name, noise):
    pairs = figure_pairs(name, noise)
    assert pairs
    assert any(kind in ("last-reward-greedy", "one-step-optimistic") for kind, _, _ in pairs)
    for kind, params, env in pairs:
        assert check_compiled_step(
            lambda kind=kind, params=params: build_policy(kind, params),
            lambda env=env: build_environment(*env),
            rounds=400,
            replications=(0, 3, 7, 12),
        ), f"{kind} {params} on {env} did not run compiled"


@pytest.mark.usefixtures("jit_backend")
@pytest.mark.parametrize("env", ENVIRONMENTS, ids=ENV_IDS)
@pytest.mark.parametrize(("kind", "params"), READERS, ids=lambda v: str(v))
def test_greedy_and_one_step_optimistic_read_the_fresh_evaluations(kind, params, env):
    """Bit for bit with the readable class at a short and a long horizon; and the
    re-evaluations change the run (the same step on the same noise drawn per pull differs)."""
    for rounds, replications in ((60, (0, 1, 2, 5, 9)), (3000, (1, 4))):
        assert check_compiled_step(
            lambda: build_policy(kind, params),
            lambda: build_environment(*env),
            rounds=rounds,
            replications=replications,
        )
    fresh = _compiled(kind, params, env, 1000)
    once = _compiled(kind, params, _per_pull(env), 1000)
    assert not np.array_equal(fresh[2], once[2]), "the re-evaluations changed nothing"


#: Policies that read no re-evaluations (authors-code variants and paper forms).
NON_READERS = [
    ("ucb1", {}),
    ("ucb1", AUTHORS),
    ("spo", {**AUTHORS, "noise_bound": 0.1}),
    ("spo", AUTHORS),
    ("exp3", {**AUTHORS, "gamma": 0.01}),
    ("d-ucb", AUTHORS),
    ("sw-ucb", AUTHORS),
    ("last-reward-greedy", {}),
    ("one-step-optimistic", {"noise_bound": 0.1}),
]


@pytest.mark.usefixtures("jit_backend")
@pytest.mark.parametrize("env", ENVIRONMENTS[:2], ids=ENV_IDS[:2])
@pytest.mark.parametrize(("kind", "params"), NON_READERS, ids=lambda v: str(v))
def test_a_policy_that_reads_no_reevaluations_plays_as_on_noise_per_pull(kind, params, env):
    """Compiled on both environments, the same numbers (the rewards are unchanged), and the
    readable class's on the re-evaluating one."""
    fresh = _compiled(kind, params, env, 800)
    once = _compiled(kind, params, _per_pull(env), 800)
    for a, b in zip(fresh, once, strict=True):
        np.testing.assert_array_equal(a, b)
    assert check_compiled_step(
        lambda: build_policy(kind, params), lambda: build_environment(*env), rounds=800
    )


def test_the_pull_model_carries_the_reevaluation_table():
    """Per evaluation: the per-pull model (same rewards) and the environment's second table;
    no re-evaluations without noise."""
    random = EnvironmentRandom(3, 4, [0, 5])
    models = {}
    for draws in ("per-pull", "per-evaluation"):
        env = build_environment(SP3[0], {**SP3[1], "noise_draws": draws})
        env.reset(random)
        models[draws] = env.pull_model(3000)
    once, fresh = models["per-pull"], models["per-evaluation"]
    assert once.reevaluation is None and fresh.reevaluation is not None
    np.testing.assert_array_equal(once.values, fresh.values)
    assert (once.noise, once.sigma, once.table.key) == (fresh.noise, fresh.sigma, fresh.table.key)
    assert fresh.reevaluation.key != fresh.table.key
    np.testing.assert_array_equal(fresh.reevaluation.replications, [0, 5])
    quiet = build_environment("single-peaked", {"instance": 3, "noise_draws": "per-evaluation"})
    quiet.reset(random)
    assert quiet.pull_model(100).reevaluation is None
    assert quiet.pull_model(10**6) is None  # curves shorter than the run


@pytest.mark.parametrize("env_spec", [SP3, SP1_BETA, MANY], ids=["gaussian", "beta", "six-arms"])
def test_the_compiled_reevaluations_are_the_environments(env_spec):
    """The pull-table world's re-evaluations (:func:`impactbandits.core.pull_model.
    table_reevaluate`, compiled), called from Python with the pull model's table, equal
    ``Feedback.reevaluated`` of the environment's ``step``, every round (NaN where the pull does
    not exist)."""
    from impactbandits.core import pull_model
    from impactbandits.kernels.loop import compile_kernel

    last, previous = rested.REEVALUATIONS
    assert (last, last + previous) == (pull_model._REEVALUATED_LAST, pull_model._REEVALUATED)
    reevaluate = compile_kernel(pull_model.table_reevaluate)
    reps = [0, 7, 2**31 + 5]
    env = build_environment(*env_spec)
    env.reset(EnvironmentRandom(9, 8, reps))
    model = env.pull_model(400)
    world = pull_model.table_world(model, len(reps), reevaluating=True)
    k = env.action_space.n
    rng = np.random.default_rng(1)
    fresh = np.empty((k, 5))
    for t in range(1, 401):
        actions = rng.integers(0, k, len(reps)) if t > 3 else np.zeros(len(reps), dtype=np.int64)
        expected = env.step(actions).feedback.reevaluated
        for r in range(len(reps)):
            row = world.data[r if world.data.shape[0] > 1 else 0]
            state = (row, env.counts[r].astype(np.int64), world.noise[r], int(world.params[0]),
                     world.params[1], False, row.shape[1] > 1)  # fmt: skip
            reevaluate(state, world.params, t, fresh)
            np.testing.assert_array_equal(fresh, expected[r])


# a user's policy: greedy on a fresh evaluation of each arm where the environment makes them


class FreshGreedy(Policy):
    """Round-robin over the arms, then the arm with the highest latest evaluation: the fresh
    f(n) (second copy) of ``reevaluated`` where there is one, else the last reward."""

    deterministic = True

    def reset(self, space, horizon, rng):  # type: ignore[no-untyped-def]
        self.n, self.t = space.n, 0
        self.seen = np.zeros((rng.size, space.n))

    def select(self) -> np.ndarray:
        self.t += 1
        if self.t <= self.n:
            return np.full(self.seen.shape[0], self.t - 1, dtype=np.int64)
        return np.argmax(self.seen, axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self.seen[np.arange(actions.size), actions] = feedback.reward
        if feedback.reevaluated is not None:
            self.seen = feedback.reevaluated[:, :, 1].copy()

    def compiled_step(self) -> CompiledStep:
        return CompiledStep(_init, _select, _update, np.zeros(0), reevaluate=_reevaluate)


class FreshGreedyWithoutReevaluate(FreshGreedy):
    """The same readable form, its step written as if for noise per pull only."""

    def compiled_step(self) -> CompiledStep:
        return CompiledStep(_init, _select, _update, np.zeros(0))


@kernel
def _init(params, k, rounds):  # type: ignore[no-untyped-def]
    return np.zeros(k)


@kernel
def _select(state, params, t, u):  # type: ignore[no-untyped-def]
    if t <= state.size:
        return t - 1
    best = 0
    for i in range(state.size):
        if state[i] > state[best]:
            best = i
    return best


@kernel
def _update(state, params, t, arm, reward):  # type: ignore[no-untyped-def]
    state[arm] = reward


@kernel
def _reevaluate(state, params, t, fresh):  # type: ignore[no-untyped-def]
    for i in range(state.size):
        state[i] = fresh[i, 1]


@pytest.mark.usefixtures("jit_backend")
@pytest.mark.parametrize("env", [SP3, SP1_BETA, MANY], ids=["gaussian", "beta", "six-arms"])
def test_a_users_step_that_declares_reevaluate_runs_compiled_bit_for_bit(env):
    for spec in (env, _per_pull(env)):
        assert check_compiled_step(FreshGreedy, lambda spec=spec: build_environment(*spec),
                                   rounds=700, replications=(0, 3, 8))  # fmt: skip


@pytest.mark.usefixtures("jit_backend")
def test_a_users_step_without_the_field_still_runs():
    """Compiled on noise per pull; on a re-evaluating environment its readable form runs (it
    may read the re-evaluations, as this one does), with the readable numbers."""
    assert check_compiled_step(
        FreshGreedyWithoutReevaluate, lambda: build_environment(*_per_pull(SP3)), rounds=300
    )
    env = build_environment(*SP3)
    random, rng = EnvironmentRandom(1, 2, [0, 1]), BatchRNG.from_key(1, (3,), [0, 1])
    env.reset(random)
    policy = FreshGreedyWithoutReevaluate()
    policy.reset(env.action_space, None, rng)
    assert simulate_compiled(env, policy, 300, np.array([300]), 2, rng) is None
    times = np.arange(1, 301)
    runs = []
    for compiled in (True, False):
        random, rng = EnvironmentRandom(1, 2, [0, 1]), BatchRNG.from_key(1, (3,), [0, 1])
        env, policy = build_environment(*SP3), FreshGreedyWithoutReevaluate()
        runs.append(kernels.simulate(env, policy, 300, None, times, random, rng, compiled=compiled))
    for name in ("reward", "pulls"):
        np.testing.assert_array_equal(getattr(runs[0], name), getattr(runs[1], name))


def _model(**changes: Any) -> PullModel:
    env = build_environment(*SP3)
    env.reset(EnvironmentRandom(1, 2, [0, 1]))
    model = env.pull_model(100)
    fields = {name: getattr(model, name) for name in model.__dataclass_fields__}
    return PullModel(**{**fields, **changes})


def test_a_step_that_reads_reevaluations_the_loop_cannot_make_falls_back():
    """``reevaluates``: ``None`` (the readable form) when the loop cannot make the model's
    re-evaluations for a step that reads them, or for a user's step that does not declare
    them; the plain loop (``False``) for the library's steps that do not read them and on
    models without re-evaluations."""
    reads = CompiledStep(_init, _select, _update, np.zeros(0), reevaluate=_reevaluate)
    plain = CompiledStep(_init, _select, _update, np.zeros(0))
    model = _model()
    assert reevaluates(model, reads, True) is True and reevaluates(model, reads, False) is True
    assert reevaluates(model, plain, True) is False
    assert reevaluates(model, plain, False) is None
    for other in (
        _model(by_round=True),
        _model(noise="bernoulli"),
        _model(table=None),
        _model(reevaluation=_model_on([3, 4]).reevaluation),
    ):
        assert reevaluates(other, reads, True) is None
    once = _model(reevaluation=None)
    assert reevaluates(once, reads, False) is False and reevaluates(once, plain, False) is False


def _model_on(replications: list[int]) -> PullModel:
    env = build_environment(*SP3)
    env.reset(EnvironmentRandom(1, 2, replications))
    return env.pull_model(100)


def test_a_reevaluate_that_is_not_a_kernel_is_refused():
    with pytest.raises(TypeError, match="reevaluate"):
        CompiledStep(_init, _select, _update, np.zeros(0), reevaluate=_reevaluate.py_func)


def test_the_reevaluating_loop_has_a_name_of_its_own():
    """The loop without re-evaluations has the name of its step and world, the same whatever
    the step declares; the one that makes them covers both ``reevaluate`` kernels too."""
    greedy = build_policy("last-reward-greedy", AUTHORS)
    greedy.reset(build_environment(*SP3).action_space, 100, BatchRNG.from_key(1, (2,), [0]))
    step = compiled_step(greedy)
    assert step is not None and step.reevaluate is not None
    model = _model_on([0])
    world, again = table_world(model, 1), table_world(model, 1, reevaluating=True)
    plain = CompiledStep(step.init, step.select, step.update, step.params)
    assert loop_tag(step, world) == loop_tag(step, again, False) == loop_tag(plain, again, True)
    assert loop_tag(step, world) is not None
    assert loop_tag(step, again, True) not in (None, loop_tag(step, world))
