"""Gymnasium adapters (impactbandits.gym): every registered environment family passes
Gymnasium's checker; seeding reproduces the runner's noise; library policies played through the
adapter give the native runner's numbers (read from the runner's own results, not from the
adapter); bad actions are refused with clear errors; the example runs."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from impactbandits.core import BatchRNG, EnvironmentRandom, simulate  # noqa: E402
from impactbandits.core.random import POLICY  # noqa: E402
from impactbandits.errors import SpecError  # noqa: E402
from impactbandits.experiments.runner import run_experiment  # noqa: E402
from impactbandits.experiments.spec import ExperimentSpec  # noqa: E402
from impactbandits.experiments.tidy import tidy_table  # noqa: E402
from impactbandits.gym import (  # noqa: E402
    BanditEnv,
    LibraryAgent,
    SimplexBox,
    make,
    project_to_simplex,
    register_envs,
)
from impactbandits.policies.classic import UCB1  # noqa: E402
from impactbandits.registry import ENVIRONMENTS, build_environment  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

#: Small, noisy instances (spec parameters) where the defaults are heavy or noise-free; a kind
#: missing here is built with its defaults, so a new registered family is checked as well.
SMALL: dict[str, dict[str, Any]] = {
    "rebounding": {
        "base": [1.0, 0.8, 0.6],
        "retention": [0.5, 0.7, 0.3],
        "influence": [0.4, 0.2, 0.5],
        "sigma_z": 0.05,
        "sigma": 0.1,
    },
    "blocking": {"means": [0.9, 0.5, 0.3], "delays": [3, 2, 1]},
    "recovering": {"n_arms": 3, "z_max": 6, "lengthscale": 2.0},
    "bernoulli": {"means": [0.1, 0.9, 0.5]},
    "gaussian": {"n_arms": 4, "sigma": 0.3},
    "rested": {"curves": [[0.1, 0.5, 0.9] * 20, [0.4] * 60], "noise": "beta", "sigma": 0.1},
    "single-peaked": {"instance": 1, "length": 200, "noise": "gaussian", "sigma": 0.05},
    "increasing": {
        "family": "inc_2",
        "alpha": 0.4,
        "length": 200,
        "noise": "gaussian",
        "sigma": 0.1,
    },
    "constant": {"means": [0.2, 0.6], "length": 200, "noise": "gaussian", "sigma": 0.1},
    "decreasing": {
        "start": [0.9, 0.7],
        "end": [0.1, 0.5],
        "rate": [0.01, 0.001],
        "length": 200,
        "noise": "gaussian",
        "sigma": 0.1,
    },
    "fico": {"length": 200, "n_applicants": 300, "noise": "gaussian", "sigma": 0.05},
    "recommender": {"instance": "B", "length": 200, "noise": "gaussian", "sigma": 0.05},
    "imab": {"family": "random", "k": 4, "length": 200, "noise": "gaussian", "sigma": 0.05},
    "opportunity": {"means": [0.2, 0.5, 0.8], "fairness": "softmax", "transfer_cost": 0.4},
    "delayed": {"means": [0.1, 0.5, 0.7, 0.9], "delay_range": [1, 3], "decay": 0.9},
    "impact": {"high": [0.9, 0.8, 0.7], "low": [0.3, 0.4, 0.5], "gamma": 0.3},
    "restless": {"curves": [[0.1, 0.5, 0.9] * 20, [0.4] * 60], "noise": "gaussian", "sigma": 0.1},
    "rising": {"instance": "random", "length": 200, "seed": 3, "scale": 400},
    "rising-restless": {"instance": "2-arms", "length": 200},
    "rotting": {"instance": "ten-arms", "length": 300, "breakpoint": 100},
    "piecewise": {"means": [[0.3, 0.9], [0.8, 0.2]], "change_points": [0, 100], "length": 300},
}


def small(kind: str, **extra: Any) -> BanditEnv:
    return make(kind, **{**SMALL.get(kind, {}), **extra})


def _play(
    env: BanditEnv, rounds: int, seed: int | None, options: dict[str, Any] | None = None
) -> list[Any]:
    """Observations, rewards and expected rewards of ``rounds`` random actions (the actions'
    own generator seeded with 0)."""
    out: list[Any] = [env.reset(seed=seed, options=options)[0]]
    env.action_space.seed(0)
    for _ in range(rounds):
        observation, reward, _, _, info = env.step(env.action_space.sample())
        out += [observation, reward, info["expected_reward"]]
    return out


def _same(a: list[Any], b: list[Any]) -> bool:
    def flat(items: list[Any]) -> np.ndarray:
        parts = [
            np.concatenate([np.ravel(v) for v in x.values()])
            if isinstance(x, dict)
            else np.ravel(x)
            for x in items
        ]
        return np.concatenate(parts).astype(float)

    return bool(np.array_equal(flat(a), flat(b)))


# ---- every family is a valid Gymnasium environment -------------------------------------------


@pytest.mark.parametrize("kind", sorted(ENVIRONMENTS))
def test_every_family_passes_the_gymnasium_checker(kind):
    env = small(kind)
    # make() sets the spec as gymnasium.make does: the checker runs every check (the render
    # and close checks build a second environment from it), with no warning
    assert env.spec is not None and env.spec.id == f"impactbandits/{kind}-v0"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    assert not [str(w.message) for w in caught], kind
    observation, info = env.reset(seed=3)
    assert observation in env.observation_space
    assert info["round"] == 0 and info["seed"] == 3 and info["replication"] == 0
    discrete = isinstance(env.action_space, gymnasium.spaces.Discrete)
    for t in range(1, 6):
        action = env.action_space.sample()
        observation, reward, terminated, truncated, info = env.step(action)
        assert observation in env.observation_space, kind
        assert not terminated and not truncated and info["round"] == t
        assert np.isfinite(reward) and observation["reward"][0] == reward
        if discrete:  # the expected value of the action is that arm's, before the round
            assert info["expected_reward"] == info["expected_rewards"][action]
        else:
            np.testing.assert_array_equal(info["action"], action)


def test_observations_carry_what_the_family_feeds_back():
    assert set(small("delayed").observation_space.spaces) == {"reward"}
    assert set(small("opportunity").observation_space.spaces) == {"reward"}
    impact = small("impact")
    assert set(impact.observation_space.spaces) == {"reward", "observed", "observed_mask"}
    impact.reset(seed=0)
    seen = 0
    for _ in range(20):
        observation, reward, *_ = impact.step(np.array([0.2, 0.3, 0.5]))
        mask = observation["observed_mask"].astype(bool)
        assert reward == observation["observed"][mask].sum()  # independent feedback: the sum
        seen += mask.sum()
    assert seen > 0
    evaluated = small("single-peaked", noise_draws="per-evaluation")
    shape = evaluated.observation_space["reevaluated"].shape
    assert shape == (2, 5) and evaluated.observation_space["reevaluated_mask"].shape == shape
    assert "fairness" in small("opportunity").known and "ranking" in small("delayed").known


@pytest.mark.parametrize(
    ("kind", "extra"), [("impact", {}), ("single-peaked", {"noise_draws": "per-evaluation"})]
)
def test_observations_decode_to_the_library_feedback_exactly(kind, extra):
    """In lockstep with the library environment under the runner's random sources: the
    observation turned back into Feedback equals the environment's, NaN (unobserved) included."""
    env = small(kind, **extra)
    assert env.component is not None
    native = build_environment(env.component.kind, env.component.params)
    native.reset(EnvironmentRandom(21, env.component.content_key(), [3]))
    env.reset(seed=21, options={"replication": 3})
    env.action_space.seed(1)
    unobserved = 0
    for _ in range(25):
        action = env.action_space.sample()
        observation, reward, _, _, info = env.step(action)
        outcome = native.step(np.asarray(action)[None])
        mine, theirs = env.feedback(observation), outcome.feedback
        np.testing.assert_array_equal(mine.reward, theirs.reward)
        assert reward == theirs.reward[0] and info["expected_reward"] == outcome.expected[0]
        for name in ("observed", "reevaluated"):
            a, b = getattr(mine, name), getattr(theirs, name)
            assert (a is None) == (b is None)
            if b is not None:
                np.testing.assert_array_equal(a, b)  # NaN where NaN
                unobserved += int(np.isnan(b).sum())
    assert unobserved > 0


# ---- seeding ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(ENVIRONMENTS))
def test_seeds_reproduce_and_noisy_families_differ(kind):
    env = small(kind)
    first = _play(env, 40, seed=5)
    assert _same(first, _play(env, 40, seed=5))
    assert _same(first, _play(small(kind), 40, seed=5))  # a fresh adapter: the same
    assert not env.bandit.deterministic or kind not in SMALL  # SMALL instances are noisy
    if not env.bandit.deterministic:
        assert not _same(first, _play(env, 40, seed=6))
        assert not _same(first, _play(env, 40, seed=None))  # the next replication of seed 5


def test_reset_without_seed_continues_with_the_next_replication():
    env = small("single-peaked")
    env.reset(seed=9)
    _, info = env.reset()
    assert (info["seed"], info["replication"]) == (9, 1)
    sequence = [_play(env, 30, seed=None) for _ in range(2)]  # replications 2 and 3
    for replication, played in zip((2, 3), sequence, strict=True):
        assert _same(played, _play(env, 30, seed=9, options={"replication": replication}))
    # never seeded: the root comes from Gymnasium's np_random, then the same continuation
    fresh = small("single-peaked")
    _, info = fresh.reset()
    _, info2 = fresh.reset()
    assert info2["seed"] == info["seed"] and info2["replication"] == 1


def test_a_bare_environment_replays_simulate_with_its_key():
    """BanditEnv(env, key=k): reset(seed=s) draws EnvironmentRandom(s, k, [r]); an agent with
    stream key q draws BatchRNG.from_key(s, (q, POLICY), [r])."""
    rounds, params = 200, {"n_arms": 3, "sigma": 0.5}
    native = simulate(
        build_environment("gaussian", params),
        UCB1(),
        rounds,
        None,
        np.array([rounds]),
        EnvironmentRandom(4, 77, [2]),
        BatchRNG.from_key(4, (5, POLICY), [2]),
    )
    env = BanditEnv(build_environment("gaussian", params), key=77)
    assert env.component is None and env.oracle == "best_fixed_arm"
    with pytest.raises(SpecError, match="not built from a spec"):
        LibraryAgent(env, "ucb1")
    agent = LibraryAgent(env, "ucb1", key=5)
    env.reset(seed=4, options={"replication": 2})
    agent.reset()
    reward = expected = 0.0
    for _ in range(rounds):
        observation, r, _, _, info = env.step(agent.act())
        agent.observe(observation)
        reward += r
        expected += info["expected_reward"]
    assert (reward, expected) == (native.reward[0, -1], native.expected[0, -1])


# ---- the native runner's numbers -------------------------------------------------------------

HORIZON, SEEDS, ROOT_SEED = 300, 2, 11
#: (environment table, policy table): rested with noise (per pull, and per evaluation with the
#: re-evaluations in the observation), rising (Beta observations), delayed, opportunity, impact
#: with simplex actions and semi-bandit feedback.
PAIRS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (
        {**SMALL["single-peaked"], "kind": "single-peaked", "length": 400, "label": "sp"},
        {"kind": "ucb1", "label": "ucb1"},
    ),
    (
        {**SMALL["single-peaked"], "kind": "single-peaked", "length": 400, "label": "sp-spo"},
        {"kind": "spo", "noise_bound": 0.1, "label": "spo"},
    ),
    (
        {
            **SMALL["single-peaked"],
            "kind": "single-peaked",
            "length": 400,
            "label": "sp-eval",
            "noise_draws": "per-evaluation",
        },
        {"kind": "last-reward-greedy", "variant": "authors-code", "label": "greedy"},
    ),
    (
        {**SMALL["rising"], "kind": "rising", "length": 400, "label": "rising"},
        {"kind": "r-ed-ucb", "label": "r-ed-ucb"},
    ),
    (
        {**SMALL["delayed"], "kind": "delayed", "label": "delayed"},
        {"kind": "pi-ucb", "label": "pi-ucb"},
    ),
    (
        {**SMALL["opportunity"], "kind": "opportunity", "label": "opportunity"},
        {"kind": "fa-etc", "label": "fa-etc"},
    ),
    (
        {**SMALL["impact"], "kind": "impact", "label": "impact"},
        {"kind": "ad-ucb", "resolution": 4, "label": "ad-ucb"},
    ),
]


@pytest.fixture(scope="module")
def native_results(tmp_path_factory):
    """The runner's rows at the horizon: (environment, policy, seed) → the row."""
    spec = ExperimentSpec.create(
        name="gym-equality",
        environments=[env for env, _ in PAIRS],
        policies=[{**policy, "environments": [env["label"]]} for env, policy in PAIRS],
        horizons=[HORIZON],
        seeds=SEEDS,
        seed=ROOT_SEED,
    )
    run_dir = tmp_path_factory.mktemp("native") / "run"
    run_experiment(spec, run_dir, backend="serial")
    table = tidy_table(run_dir)
    table = table[table["time"] == HORIZON]
    return {(str(r.environment), str(r.policy), int(r.seed)): r for r in table.itertuples()}


@pytest.mark.parametrize(("environment", "policy"), PAIRS, ids=[p["label"] for _, p in PAIRS])
def test_library_policy_through_gymnasium_equals_the_native_runner(
    native_results, environment, policy
):
    env = make(horizon=HORIZON, **environment)
    agent = LibraryAgent(env, policy)
    for replication in range(SEEDS):
        _, info = env.reset(seed=ROOT_SEED) if replication == 0 else env.reset()
        assert info["replication"] == replication
        agent.reset()
        reward = expected = 0.0
        truncated, rounds = False, 0
        while not truncated:
            observation, r, terminated, truncated, info = env.step(agent.act())
            assert not terminated
            agent.observe(observation)
            reward += r
            expected += info["expected_reward"]
            rounds += 1
        assert rounds == HORIZON
        row = native_results[(environment["label"], policy["label"], replication)]
        assert reward == row.reward and expected == row.expected_reward  # bit for bit
        if env.bandit.regret_on is None:  # regret on the expected reward itself
            assert env.optimum(HORIZON)[0] - expected == row.regret


# ---- errors ----------------------------------------------------------------------------------


def test_bad_discrete_actions_are_refused_clearly():
    env = make("bernoulli", means=[0.2, 0.8])
    with pytest.raises(SpecError, match=r"reset: call reset\(\) before step\(\)"):
        env.step(0)
    env.reset(seed=1)
    with pytest.raises(SpecError, match=r"action: arm 5 does not exist; arms are 0\.\.1"):
        env.step(5)
    with pytest.raises(SpecError, match=r"arm -1 does not exist"):
        env.step(-1)
    for bad in (0.5, True, "1", [0, 1], np.array([[1]])):
        with pytest.raises(SpecError, match=r"action: must be one integer arm index in 0\.\.1"):
            env.step(bad)
    assert env.step(np.int32(1))[4]["round"] == 1  # integer types and 1-element arrays are fine
    assert env.step(np.array([1]))[4]["round"] == 2


def test_simplex_actions_are_validated_or_projected():
    env = small("impact", resolution=4)
    assert isinstance(env.action_space, SimplexBox)
    assert isinstance(env.action_space, gymnasium.spaces.Box)
    assert env.action_space.shape == (3,) and env.action_space.resolution == 4
    env.reset(seed=0)
    with pytest.raises(
        SpecError,
        match=r"action: .* is not a point of the simplex on the grid"
        r" of 1/4 \(probability vectors must sum to 1\)",
    ):
        env.step(np.array([0.25, 0.25, 0.25]))
    with pytest.raises(SpecError, match="multiples of ε = 1/4"):
        env.step(np.array([0.1, 0.4, 0.5]))
    with pytest.raises(SpecError, match="non-negative"):
        env.step(np.array([-0.25, 0.75, 0.5]))
    with pytest.raises(SpecError, match=r"probability vector of length 3, got shape \(2,\)"):
        env.step(np.array([0.5, 0.5]))
    with pytest.raises(SpecError, match="probability vector of length 3"):
        env.step("half")
    info = env.step(np.array([0.25, 0.25, 0.5]))[4]
    np.testing.assert_array_equal(info["action"], [0.25, 0.25, 0.5])

    space = env.action_space
    space.seed(1)
    for _ in range(50):
        sample = space.sample()
        assert sample in space and np.isclose(sample.sum(), 1) and np.all(sample * 4 % 1 == 0)
    assert np.array([0.2, 0.3, 0.5]) not in space and np.array([0.25, 0.25, 0.5]) in space
    continuous = small("impact").action_space
    continuous.seed(2)
    assert all(continuous.sample() in continuous for _ in range(50))
    assert np.array([0.5, 0.5, 0.5]) not in continuous

    projecting = small("impact", resolution=4, project_actions=True)
    assert type(projecting.action_space) is SimplexBox  # still the simplex: any box point goes
    projecting.reset(seed=0)
    info = projecting.step(np.array([1.0, 0.0, 1.0]))[4]
    np.testing.assert_array_equal(info["action"], [0.5, 0.0, 0.5])
    np.testing.assert_array_equal(project_to_simplex([0.0, 0.0], 2), [0.5, 0.5])
    np.testing.assert_array_equal(project_to_simplex([0.1, 0.1, 0.8], 3, 2), [0.0, 0.0, 1.0])
    np.testing.assert_allclose(project_to_simplex([1, 1, 1], 3, 3), [1 / 3] * 3)


def test_construction_and_episode_errors_are_spec_errors():
    with pytest.raises(SpecError, match=r"environment\.kind: unknown environment 'nope'"):
        make("nope")
    with pytest.raises(SpecError, match=r"environment\.means\[1\]"):
        make("bernoulli", means=[0.2, 1.5])
    with pytest.raises(SpecError, match=r"environment\.colour: unknown key"):
        make("bernoulli", means=[0.2], colour="red")
    with pytest.raises(SpecError, match="at least 500 values"):
        make("single-peaked", instance=1, length=400, horizon=500)
    with pytest.raises(SpecError, match="horizon: must be a positive integer"):
        make("bernoulli", means=[0.5], horizon=2.5)
    # an environment parameter named like an adapter argument goes under params, as in a spec
    imab = make("imab", family="lower-bound", k=3, length=200, params={"horizon": 100})
    assert imab.component is not None and imab.component.params["horizon"] == 100
    assert imab.horizon == 200  # the adapter's horizon: the curves' length
    env = make("bernoulli", means=[0.5], horizon=2)
    with pytest.raises(SpecError, match="seed: must be an integer"):
        env.reset(seed=-1)
    with pytest.raises(SpecError, match="options: unknown option 'colour'"):
        env.reset(options={"colour": 1})
    with pytest.raises(SpecError, match=r"options\.replication: must be a non-negative integer"):
        env.reset(options={"replication": -2})
    env.reset(seed=0)
    assert env.step(0)[3] is False and env.step(0)[3] is True  # truncated after the horizon
    with pytest.raises(SpecError, match="truncated after 2 rounds; call reset"):
        env.step(0)
    with pytest.raises(SpecError, match="plays discrete actions but the environment has simplex"):
        LibraryAgent(small("impact"), "ucb1")


def test_horizon_defaults_to_what_the_environment_allows():
    assert small("single-peaked").horizon == 200
    assert small("restless").horizon == 60
    assert small("bernoulli").horizon is None
    assert make("single-peaked", instance=1, length=400, horizon=300).horizon == 300


# ---- registration ------------------------------------------------------------------------------


def test_importing_the_library_registers_nothing_and_its_gym_package_every_id():
    # a fresh interpreter: ids this process registered cannot make it pass
    code = (
        "import gymnasium, impactbandits\n"
        "from impactbandits.registry import ENVIRONMENTS\n"
        "def ours():\n"
        "    return sorted(i for i in gymnasium.registry if i.startswith('impactbandits'))\n"
        "assert ours() == [], ours()\n"
        "import impactbandits.gym\n"
        "assert ours() == sorted(f'impactbandits/{k}-v0' for k in ENVIRONMENTS), ours()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_registered_ids_build_through_gymnasium_make():
    ids = register_envs()
    assert ids == [f"impactbandits/{kind}-v0" for kind in ENVIRONMENTS]
    assert register_envs() == ids  # idempotent
    assert register_envs(["bernoulli"]) == ["impactbandits/bernoulli-v0"]
    with pytest.raises(SpecError, match="unknown environment 'nope'"):
        register_envs(["nope"])
    env = gymnasium.make("impactbandits/bernoulli-v0", means=[0.1, 0.9], horizon=3)
    check_env(env.unwrapped, skip_render_check=True)
    env.reset(seed=0)
    assert [env.step(1)[3] for _ in range(3)] == [False, False, True]
    single = gymnasium.make(
        "impactbandits/single-peaked-v0", instance=1, noise="gaussian", sigma=0.05, length=100
    )
    assert single.unwrapped.horizon == 100
    assert _same(_play(single, 20, seed=4), _play(small("single-peaked", length=100), 20, seed=4))


# ---- the example -----------------------------------------------------------------------------


def test_example_runs_and_matches_the_runner():
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "gym_policy.py")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("identical")
    assert "Gymnasium:" in result.stdout and "runner:" in result.stdout
