"""The compiled loop over probability vectors (a :attr:`~impactbandits.core.compiled.
CompiledStep.simplex` step in the delayed-impact world) gives the readable loop's numbers bit
for bit on Tang et al.'s delayed-impact bandit: every Trajectory array (rewards, expected
rewards, pulls = probability mass per group, switches) for AD-UCB, HD-UCB (table scan and
pinning DP), CUCB (three bonuses), EXP3 over meta-arms and one-hot base-arm policies, in the
three feedback modes, for several γ, K, grids, families, impact functions, seeds and
checkpoints; the kernels it is made of equal the NumPy functions they transcribe; pairs without
a compiled form fall back to the readable loop."""

from __future__ import annotations

import math

import numpy as np
import pytest

import impactbandits.policies.impact as impact_policies
from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.core.simulate import Trajectory
from impactbandits.core.simulate import simulate as simulate_readable
from impactbandits.envs.impact_functions import DiscountedAverage
from impactbandits.kernels import available, simulate, simulate_compiled
from impactbandits.kernels.dispatch import compiled_step
from impactbandits.oracles.simplex import (
    best_fixed_policy,
    composition_table,
    compositions,
    lex_first_maximiser,
    numpy_sum,
)
from impactbandits.policies.impact import ActionDependentUCB
from impactbandits.policies.impact_argmax import pinning_argmax, table_argmax
from impactbandits.policies.impact_index import enumerate_index, maximise_index
from impactbandits.registry import build_environment, build_policy

pytestmark = [
    pytest.mark.skipif(not available(), reason="no compiled loops (numba not installed)"),
    pytest.mark.usefixtures("kernel_backend"),
]

FIELDS = ("reward", "expected", "pulls", "switches")
FEEDBACKS = ("independent", "single", "allocation")
GAMMAS = (0.0, 0.2, 0.6)
#: K → the learners' 1/ε (table path; the pinning DP is forced with TABLE_LIMIT = 0)
RESOLUTIONS = {2: 9, 3: 7, 5: 6}


def police(k: int, **changes: object) -> dict[str, object]:
    high = [0.9, 0.8] if k == 2 else np.round(np.linspace(0.9, 0.6, k), 4).tolist()
    low = [0.3, 0.4] if k == 2 else np.round(np.linspace(0.3, 0.45, k), 4).tolist()
    return {"high": high, "low": low, **changes}


def both(env_params, kind, params, rounds=150, reps=(0, 3, 7), checkpoints=None, horizon=None):
    """The readable and the compiled Trajectory of one pair (same seeds and streams)."""
    times = np.arange(1, rounds + 1) if checkpoints is None else np.asarray(checkpoints)

    def made():
        env, policy = build_environment("impact", env_params), build_policy(kind, params)
        told = horizon if horizon is not None else (rounds if policy.requires_horizon else None)
        return (
            env,
            policy,
            told,
            EnvironmentRandom(5, 101, reps),
            BatchRNG.from_key(5, (202,), reps),
        )

    env, policy, told, env_random, rng = made()
    env.reset(env_random)
    policy.reset(env.action_space, told, rng)
    done = simulate_compiled(env, policy, rounds, times, len(reps), rng)
    if done is None:
        from impactbandits import kernels

        if kernels.backend() == "aot":
            pytest.skip("this simplex loop is not in the ahead-of-time module")
        pytest.fail("the pair ran no compiled loop")
    env, policy, told, env_random, rng = made()
    slow = simulate_readable(env, policy, rounds, told, times, env_random, rng)
    return slow, Trajectory(times, *done)


def assert_same(env_params, kind, params, **options):
    slow, fast = both(env_params, kind, params, **options)
    for name in FIELDS:
        a, b = getattr(fast, name), getattr(slow, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        if not np.array_equal(a, b):
            where = tuple(int(i) for i in np.argwhere(a != b)[0])
            pytest.fail(f"{name} differs at {where}: compiled {a[where]!r}, readable {b[where]!r}")


@pytest.mark.parametrize("path", ["table", "pinning"])
@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("feedback", FEEDBACKS)
@pytest.mark.parametrize("kind", ["ad-ucb", "hd-ucb"])
def test_ucb_learners(kind, feedback, gamma, k, path, monkeypatch):
    if path == "pinning":  # every grid through maximise_index's DP
        monkeypatch.setattr(impact_policies, "TABLE_LIMIT", 0)
    env = police(k, gamma=gamma, feedback=feedback)
    assert_same(env, kind, {"resolution": RESOLUTIONS[k]})


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("feedback", FEEDBACKS)
@pytest.mark.parametrize("bonus", ["range-scaled", "weighted", "triggered"])
def test_cucb(bonus, feedback, gamma, k):
    env = police(k, gamma=gamma, feedback=feedback)
    assert_same(env, "cucb", {"resolution": RESOLUTIONS[k], "bonus": bonus})


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("feedback", FEEDBACKS)
def test_exp3_over_meta_arms(feedback, gamma, k):
    assert_same(police(k, gamma=gamma, feedback=feedback), "exp3-meta", {})


@pytest.mark.parametrize("k", [2, 5])
@pytest.mark.parametrize("gamma", [0.0, 0.6])
@pytest.mark.parametrize("feedback", FEEDBACKS)
@pytest.mark.parametrize("base", ["ucb1", "exp3", "d-ucb", "sw-ucb", "thompson"])
def test_one_hot_bases(base, feedback, gamma, k):
    """The base's own compiled step (its draws, its stream) on one-hot meta-arms."""
    assert_same(police(k, gamma=gamma, feedback=feedback), "one-hot", {"base": base}, rounds=200)


@pytest.mark.parametrize(
    ("kind", "params"),
    [
        ("ad-ucb", {}),  # the theory's 1/ε from the horizon
        ("hd-ucb", {"eta": 0.2}),
        ("hd-ucb", {"eta": 0.8, "gamma": 0.5}),
        ("cucb", {}),
        ("exp3-meta", {"resolution": 8}),
    ],
)
@pytest.mark.parametrize(
    ("reps", "checkpoints"),
    [((0, 3, 7), None), ((1, 2, 11, 19), [1, 2, 50, 133, 400]), ((4,), [399, 400])],
)
def test_theory_grids_seeds_and_checkpoints(kind, params, reps, checkpoints):
    env = police(3, gamma=0.4)
    assert_same(env, kind, params, rounds=400, reps=reps, checkpoints=checkpoints, horizon=400)


@pytest.mark.parametrize(
    "env",
    [
        police(2, gamma=0.3, start=[0.2, 0.1], stop=[0.7, 0.9]),  # saturating police model
        {"family": "linear", "intercept": [0.2, 0.9, 0.5], "slope": [0.7, -0.8, 0.1]},
        {"family": "concave", "intercept": [0.1, 0.3], "slope": [0.8, 0.6], "gamma": 0.6},
        police(3, gamma=0.5, impact="smoothed"),
        police(2, gamma=0.3, impact="smoothed", impact_params={"power": 2.0}),
        police(3, gamma=0.7, impact="smoothed", impact_params={"power": 0.5}),
        police(2, gamma=0.2, resolution=18),  # the environment's grid
        police(2, feedback="single", gamma=0.6, impact="smoothed"),
    ],
    ids=[
        "saturating",
        "linear",
        "concave",
        "smoothed",
        "smoothed-2",
        "smoothed-half",
        "env-grid",
        "single-smoothed",
    ],
)
@pytest.mark.parametrize(
    ("kind", "params"),
    [
        ("hd-ucb", {"resolution": 6}),
        ("cucb", {"resolution": 6, "bonus": "triggered"}),
        ("exp3-meta", {"resolution": 6}),
        ("one-hot", {"base": "exp3"}),
    ],
)
def test_families_and_impact_functions(env, kind, params):
    assert_same(env, kind, params, rounds=200)


@pytest.mark.parametrize("kind", ["ad-ucb", "hd-ucb"])
@pytest.mark.parametrize(("k", "resolution"), [(3, 102), (5, 22)])
def test_grids_beyond_the_table(kind, k, resolution):
    """The pinning DP of grids with more than TABLE_LIMIT·ENUMERATION_LIMIT meta-arms."""
    assert math.comb(resolution - 1, k - 1) > impact_policies.TABLE_LIMIT * 1000
    env = police(k, gamma=0.2, feedback="allocation")
    assert_same(env, kind, {"resolution": resolution}, rounds=60)


@pytest.mark.parametrize("kind", ["ad-ucb", "exp3-meta"])
def test_nine_groups_sum_pairwise(kind):
    """K ≥ 8: NumPy sums rows of eight or more values with eight accumulators."""
    env = police(9, gamma=0.2, feedback="allocation")
    assert_same(env, kind, {"resolution": 10}, rounds=120)


def test_the_runner_takes_the_compiled_loop_and_gets_the_same_numbers():
    reps, times = [0, 5], np.array([10, 100, 250])
    got = {}
    for compiled in (True, False):
        env = build_environment("impact", police(2, gamma=0.4))
        policy = build_policy("hd-ucb", {})
        got[compiled] = simulate(
            env,
            policy,
            250,
            250,
            times,
            EnvironmentRandom(3, 9, reps),
            BatchRNG.from_key(3, (4,), reps),
            compiled=compiled,
        )
    for name in FIELDS:
        assert np.array_equal(getattr(got[True], name), getattr(got[False], name)), name


class OwnAdvance(DiscountedAverage):
    """A user's subclass of Eq. (2) with an advance of its own: no compiled form."""

    def advance(self, state, actions):
        return super().advance(state, actions)


class OwnSelect(ActionDependentUCB):
    """A user's subclass with its own select: its rounds are not the compiled step's."""

    def select(self) -> np.ndarray:
        return super().select()


@pytest.mark.parametrize(
    ("env", "policy"),
    [
        ({"family": "fico", "groups": 2}, build_policy("ad-ucb", {"resolution": 5})),
        (police(2, impact="smoothed", impact_params={"power": 1.5}), build_policy("ad-ucb", {})),
        (police(2, impact="tests.impact_plugins:LastTwoRounds"), build_policy("ad-ucb", {})),
        (police(2, gamma=0.3, impact="own"), build_policy("ad-ucb", {})),
        (police(2), impact_policies.OneHot("epsilon-greedy")),  # a base without a step
        (police(2), None),
    ],
    ids=["fico", "pow-1.5", "user-impact", "own-advance", "no-base-step", "own-select"],
)
def test_pairs_without_a_compiled_form_run_readable(env, policy):
    """No compiled form: the runner's simulate plays the readable loop (same numbers as it)."""
    from impactbandits.core.policy import BatchedSimplePolicy

    policy = policy if policy is not None else BatchedSimplePolicy(OwnSelect(5))
    own = env.get("impact") == "own"
    environment = build_environment("impact", {**env, "impact": "discounted"} if own else env)
    if own:
        environment.impact = OwnAdvance(0.3)
    reps = [0, 1]
    environment.reset(EnvironmentRandom(1, 2, reps))
    policy.reset(environment.action_space, 50, BatchRNG.from_key(1, (2,), reps))
    rng = BatchRNG.from_key(1, (2,), reps)
    assert simulate_compiled(environment, policy, 50, np.array([50]), len(reps), rng) is None
    times = np.array([10, 50])
    again = simulate(
        environment,
        policy,
        50,
        50,
        times,
        EnvironmentRandom(1, 2, reps),
        BatchRNG.from_key(1, (2,), reps),
    )
    assert np.all(np.isfinite(again.reward))


def test_loops_of_different_steps_have_names_of_their_own():
    """numba names machine code by qualified name: each one-hot base's loop and its copies of
    the one-hot kernels must be named apart (else a cached loop could call another's code)."""
    from impactbandits.kernels import backend
    from impactbandits.kernels.loop import loop_for

    if backend() != "jit":
        pytest.skip("names of the JIT's copies")
    names = set()
    env = build_environment("impact", police(2))
    env.reset(EnvironmentRandom(1, 2, [0]))
    for base in ("ucb1", "exp3"):
        policy = impact_policies.OneHot(base)
        policy.reset(env.action_space, 100, BatchRNG.from_key(1, (2,), [0]))
        step, world = compiled_step(policy), env.compiled_world(100)
        assert step.simplex and step.bound and world.simplex
        loop = loop_for(step, world)
        names.add(loop.py_func.__qualname__)
        names |= {loop.py_func.__globals__[n].py_func.__qualname__ for n in ("select", "update")}
    assert len(names) == 6


# --- the kernels against the NumPy functions they transcribe ----------------------------------


def _compiled(function):
    from impactbandits.kernels.loop import compile_kernel

    return compile_kernel(function)


@pytest.mark.parametrize("n", [1, 3, 7, 8, 9, 16, 31, 127, 128, 129, 255, 256, 1000, 5000, 50000])
def test_numpy_sum_adds_as_numpy_does(n):
    rng = np.random.default_rng(n)
    for _ in range(5):
        values = rng.standard_normal(n) * 10.0 ** rng.integers(-9, 9, n)
        assert _compiled(numpy_sum)(values, 0, n) == np.sum(values)
        rows = values[: n - n % 4].reshape(-1, 4) if n >= 4 else values[None]
        sums = rows.sum(axis=1)
        for i, row in enumerate(rows):
            assert _compiled(numpy_sum)(np.ascontiguousarray(row), 0, row.size) == sums[i]


def test_composition_table_and_the_fixed_policy_dp():
    rng = np.random.default_rng(1)
    for k in range(1, 6):
        for m in range(k, 13):
            assert np.array_equal(_compiled(composition_table)(k, m), compositions(k, m))
            for values in (rng.random((k, m)), rng.integers(0, 3, (k, m)) * 0.25):
                levels = np.empty(k, dtype=np.int64)
                _compiled(lex_first_maximiser)(values, np.empty((k + 1, m + 1)), levels)
                assert np.array_equal(levels, best_fixed_policy(values)[0])


@pytest.mark.parametrize("ties", [False, True])
def test_index_argmax_kernels_equal_enumerate_and_maximise_index(ties):
    """Ties (dyadic scores, few distinct counts) and unplayed arms (count 0: bonus +∞)."""
    rng = np.random.default_rng(7 + ties)
    for trial in range(300):
        k = int(rng.integers(1, 6))
        m = int(rng.integers(k, 10))
        scores = rng.integers(0, 3, (k, m)) * 0.125 if ties else rng.random((k, m))
        counts = rng.integers(0, 3 if ties else 6, (k, m)).astype(float)
        if trial % 3 == 0:
            counts[counts == 0] = 1.0
        err, scale, log_t = (0.0, float(k), math.log(7)) if trial % 2 else (0.4, 3.0 * k, 4.2)

        def bonus(c, err=err, scale=scale, log_t=log_t):
            return err + np.sqrt(scale * log_t / np.asarray(c, dtype=float))

        table = compositions(k, m)
        levels = np.empty(k, dtype=np.int64)
        _compiled(table_argmax)(table, scores, counts, err, scale, log_t, np.empty(k), levels)
        assert np.array_equal(levels, enumerate_index(table, scores, counts, bonus)[0])
        work = (np.empty((3, k, m)), np.zeros((k, m), dtype=np.bool_), np.empty((5, k + 1, m + 1)))
        _compiled(pinning_argmax)(
            scores, counts, err, scale, log_t, *work, np.empty(k, dtype=np.int64), levels
        )
        assert np.array_equal(levels, maximise_index(scores, counts, bonus)[0])
