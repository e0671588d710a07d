"""No replayed work (issue 13, items 5–6): deterministic declarations are true, a sweep that
computes one replication of a deterministic cell stores exactly what simulating every seed
stores, the scheduler splits cells only where it helps, and the per-process oracle cache
returns what recomputing gives."""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np
import pandas as pd
import pytest

from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.policy import BatchedSimplePolicy, Policy, SimplePolicy
from impactbandits.core.random import BatchRNG
from impactbandits.core.simulate import Trajectory, simulate
from impactbandits.core.spaces import Discrete
from impactbandits.envs.rested_families import ConstantBandit
from impactbandits.experiments.cells import Task, expand
from impactbandits.experiments.runner import DEDUP_ENV, _cost, plan, run_experiment
from impactbandits.experiments.spec import ExperimentSpec
from impactbandits.experiments.tidy import tidy_table
from impactbandits.experiments.worker import ORACLE_CACHE, OracleCache, run_task
from impactbandits.registry import (
    ENVIRONMENTS,
    POLICIES,
    build_environment,
    build_policy,
    resolve_oracle,
)

from .test_contracts import ENV_FACTORIES, POLICY_ENVS, POLICY_PARAMS, _const_opportunity

# --------------------------------------------------------------------------- declarations

#: Policies that draw random numbers (with their default parameters).
RANDOMISED = {
    "exp3", "epsilon-greedy", "r-exp3", "exp3-meta", "thompson", "thompson-gaussian", "d-ts",
    "sw-ts", "exp3s", "ser4", "cusum-ucb", "rgp-ts",
}  # fmt: skip
#: Composite policies whose declaration follows the policy they run.
COMPOSITE_CASES = [
    ("srum", {}, True),
    ("srum", {"black_box": "exp3", "black_box_params": {"gamma": 0.1}}, False),
    ("const-elimination", {}, True),
    ("const-elimination", {"black_box": "greedy"}, True),
    ("one-hot", {}, True),
    ("one-hot", {"base": "exp3", "base_params": {"gamma": 0.1}}, False),
]


class _NoDraws:
    """A stand-in for a NumPy generator that fails on any use but ``spawn`` (what composite
    policies do to give their black box its own streams)."""

    def spawn(self, n: int) -> list[_NoDraws]:
        return [_NoDraws() for _ in range(n)]

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a deterministic policy used its random generator ({name})")

    def __deepcopy__(self, memo: dict[int, Any]) -> _NoDraws:
        return self


class _NoDrawsBatch(BatchRNG):
    """A :class:`BatchRNG` whose every draw fails."""

    def __init__(self, size: int) -> None:
        super().__init__([_NoDraws() for _ in range(size)])  # type: ignore[list-item]

    def _refill(self, need: int) -> None:
        raise AssertionError("a deterministic policy drew from its BatchRNG")


def _tied_rested() -> Environment:
    """Noise-free arms with equal values everywhere: any randomised tie-breaking shows."""
    return ConstantBandit([0.5, 0.5, 0.5], length=1000)


def _policy_envs(name: str) -> list[Any]:
    envs = POLICY_ENVS.get(name)
    if envs is None:
        return [_tied_rested, ENV_FACTORIES["bernoulli"]]
    return [ENV_FACTORIES[e] for e in envs] or [_const_opportunity]


def _simulate(
    env: Environment,
    policy: Policy,
    rounds: int,
    horizon: int | None,
    env_random: EnvironmentRandom,
    rng: BatchRNG,
) -> Trajectory:
    return simulate(
        env, policy, rounds, horizon, np.arange(1, rounds + 1), env_random, rng, check_actions=True
    )


def _rows_equal(a: Trajectory, i: int, b: Trajectory, j: int) -> bool:
    fields = ("reward", "expected", "pulls", "switches")
    return all(np.array_equal(getattr(a, f)[i], getattr(b, f)[j]) for f in fields)


def _policy_cases() -> list[tuple[str, dict[str, Any]]]:
    cases = [(n, p) for n in sorted(POLICIES) for p in POLICY_PARAMS.get(n, [{}])]
    return cases + [(n, p) for n, p, _ in COMPOSITE_CASES]


def test_declarations_of_registered_policies():
    for name in POLICIES:
        declared = build_policy(name, POLICY_PARAMS.get(name, [{}])[0]).deterministic
        assert declared is (name not in RANDOMISED), name
    for name, params, expected in COMPOSITE_CASES:
        assert build_policy(name, params).deterministic is expected, (name, params)


@pytest.mark.parametrize(("name", "params"), _policy_cases())
def test_deterministic_policy_draws_nothing_and_replications_agree(name, params):
    """A policy declared deterministic never touches its random streams, and two different
    replications (different streams, same environment replication) play the same run."""
    policy = build_policy(name, params)
    if not policy.deterministic:
        pytest.skip("declared randomised")
    rounds = 60
    horizon = rounds if policy.requires_horizon else None
    for make_env in _policy_envs(name):
        env_random = EnvironmentRandom(3, 11, [4, 4, 4])
        poisoned = _simulate(
            make_env(), build_policy(name, params), rounds, horizon, env_random, _NoDrawsBatch(3)
        )
        a = _simulate(
            make_env(),
            build_policy(name, params),
            rounds,
            horizon,
            env_random,
            BatchRNG.from_key(5, (202,), [0, 1, 7]),
        )
        b = _simulate(
            make_env(),
            build_policy(name, params),
            rounds,
            horizon,
            EnvironmentRandom(3, 11, [4]),
            BatchRNG.from_key(99, (303,), [12]),
        )
        for row in range(3):
            assert _rows_equal(a, row, poisoned, row), (name, make_env, row)
            assert _rows_equal(a, row, b, 0), (name, make_env, row)


def test_the_policy_check_catches_a_wrong_declaration():
    """EXP3 declared deterministic would fail both parts of the check."""
    with pytest.raises(AssertionError, match="BatchRNG"):
        _simulate(
            _tied_rested(),
            build_policy("exp3", {"gamma": 0.1}),
            20,
            None,
            EnvironmentRandom(3, 11, [0]),
            _NoDrawsBatch(1),
        )
    a = _simulate(
        _tied_rested(),
        build_policy("exp3", {"gamma": 0.1}),
        60,
        None,
        EnvironmentRandom(3, 11, [4, 4]),
        BatchRNG.from_key(5, (202,), [0, 1]),
    )
    assert not _rows_equal(a, 0, a, 1)


class _Coin(SimplePolicy):
    """A user policy that draws: never assumed deterministic."""

    def reset(self, space: Any, horizon: int | None, rng: np.random.Generator) -> None:
        self.rng, self.n = rng, space.n

    def select(self) -> int:
        return int(self.rng.integers(self.n))

    def update(self, action: Any, feedback: Any) -> None:
        return None


def test_user_components_default_to_randomised():
    assert BatchedSimplePolicy(_Coin()).deterministic is False
    assert Policy.deterministic.fget is not None  # a property on the base class
    assert Environment.deterministic.fget(None) is False  # type: ignore[attr-defined]


#: Parameters of every registered environment, noise-free and noisy where it has a choice.
ENV_CASES: list[tuple[str, dict[str, Any] | None, bool]] = [
    ("rebounding", {"base": [1.0, 0.8], "retention": [0.5, 0.7], "influence": [0.4, 0.2]}, True),
    (
        "rebounding",
        {
            "base": [1.0, 0.8],
            "retention": [0.5, 0.7],
            "influence": [0.4, 0.2],
            "sigma_z": 0.1,
            "sigma": 0.2,
        },
        False,
    ),
    ("recovering", {"values": [[0.1, 0.5, 0.9], [0.6, 0.6, 0.7]], "sigma": 0.0}, True),
    ("recovering", {"n_arms": 3, "z_max": 5, "lookahead": 2}, False),
    ("blocking", {"means": [0.9, 0.5, 0.3], "delays": [3, 2, 1]}, False),
    (
        "blocking",
        {"means": [0.9, 0.5, 0.3], "delays": [3, 2, 1], "distribution": "gaussian", "sigma": 0.0},
        True,
    ),
    ("bernoulli", {"means": [0.2, 0.8]}, False),
    ("gaussian", {"n_arms": 3, "sigma": 0.0}, False),
    ("gaussian", {"means": [0.2, 0.8], "sigma": 0.3}, False),
    ("gaussian", {"means": [0.2, 0.8], "sigma": 0.0}, True),
    ("rested", {"curves": [[0.1, 0.5, 0.9] * 100, [0.4] * 300]}, True),
    (
        "rested",
        {"curves": [[0.1, 0.5, 0.9] * 100, [0.4] * 300], "noise": "beta", "sigma": 0.1},
        False,
    ),
    ("rested", {"curves": ["numpy:sign", [0.4] * 50], "length": 50}, False),
    ("single-peaked", {"instance": 1, "length": 500}, True),
    ("single-peaked", {"instance": 3, "length": 500, "noise": "gaussian", "sigma": 0.05}, False),
    ("increasing", {"family": "inc_2", "alpha": 0.4, "length": 500}, True),
    ("increasing", {"family": "inc_1", "length": 500, "noise": "gaussian", "sigma": 0.1}, False),
    ("constant", {"means": [0.2, 0.6], "length": 500}, True),
    (
        "decreasing",
        {"start": [0.9, 0.7], "end": [0.1, 0.5], "rate": [0.01, 0.001], "length": 500},
        True,
    ),
    ("fico", {"length": 300}, True),
    ("fico", {"length": 300, "noise": "gaussian", "sigma": 0.05}, False),
    ("recommender", {"instance": "B", "length": 300}, True),
    (
        "recommender",
        {
            "instance": "B",
            "length": 300,
            "noise": "gaussian",
            "sigma": 0.05,
            "noise_draws": "per-evaluation",
        },
        False,
    ),
    ("imab", {"family": "random", "k": 4, "length": 300}, True),
    ("imab", {"family": "random", "k": 4, "length": 300, "noise": "beta", "sigma": 0.05}, False),
    ("restless", {"curves": [[0.1, 0.2, 0.3] * 100, [0.3, 0.2, 0.1] * 100]}, True),
    ("restless", {"curves": [[0.1, 0.2], [0.3, 0.2]], "noise": "beta-mean"}, False),
    ("rising", {"instance": "2-arms", "length": 300, "noise": "none"}, True),
    ("rising", {"instance": "2-arms", "length": 300}, False),  # Beta observations by default
    ("rising-restless", {"instance": "random", "length": 300, "noise": "none"}, True),
    ("rising-restless", {"instance": "15-arms", "length": 300}, False),
    ("rotting", {"instance": "two-arms", "length": 300, "noise": "none"}, True),
    ("rotting", {"instance": "ten-arms", "length": 300}, False),
    (
        "piecewise",
        {"means": [[0.3, 0.9], [0.8, 0.2]], "change_points": [0, 9], "length": 300},
        False,
    ),
    (
        "piecewise",
        {
            "means": [[0.3, 0.9], [0.8, 0.2]],
            "change_points": [0, 9],
            "length": 300,
            "noise": "gaussian",
            "sigma": 0.0,
        },
        True,
    ),
    ("opportunity", None, False),  # None: the contract tests' instance
    ("impact", None, False),
    ("delayed", None, False),
]


def test_every_registered_environment_has_a_case():
    assert {kind for kind, _, _ in ENV_CASES} == set(ENVIRONMENTS)


def _build_case(kind: str, params: dict[str, Any] | None) -> Environment:
    return ENV_FACTORIES[kind]() if params is None else build_environment(kind, params)


@pytest.mark.parametrize(("kind", "params", "expected"), ENV_CASES)
def test_environment_declaration(kind, params, expected):
    assert _build_case(kind, params).deterministic is expected


def _play(env: Environment, random: EnvironmentRandom, actions: np.ndarray) -> np.ndarray:
    """Rewards, expected rewards and every arm's expected reward, round by round."""
    env.reset(random)
    out = []
    for a in actions:
        values = env.expected_rewards()
        outcome = env.step(np.full(random.size, a))
        out.append(np.column_stack([outcome.feedback.reward, outcome.expected, values]))
    return np.stack(out, axis=1)


@pytest.mark.parametrize(("kind", "params"), [(k, p) for k, p, d in ENV_CASES if d])
def test_deterministic_environment_replications_agree(kind, params):
    """Different replications (and root seeds) of an environment declared deterministic see
    the same rewards for the same actions, and the same oracle values."""
    env = build_environment(kind, params)
    assert env.deterministic
    space = env.action_space
    assert isinstance(space, Discrete)
    actions = np.random.default_rng(0).integers(space.n, size=150)
    a = _play(env, EnvironmentRandom(1, 7, [0, 3, 8]), actions)
    b = _play(build_environment(kind, params), EnvironmentRandom(42, 99, [5]), actions)
    for row in range(3):
        np.testing.assert_array_equal(a[row], b[0])
    oracle = resolve_oracle(env.default_oracle, "oracle")
    times = np.array([1, 10, 100])
    fresh = build_environment(kind, params)
    fresh.reset(EnvironmentRandom(1, 7, [0, 3]))
    values = np.asarray(oracle(fresh, times))
    np.testing.assert_array_equal(values[0], values[1])


def test_the_environment_check_catches_a_wrong_declaration():
    kind, params = (
        "increasing",
        {"family": "inc_1", "length": 500, "noise": "gaussian", "sigma": 0.1},
    )
    actions = np.zeros(20, dtype=np.int64)
    a = _play(build_environment(kind, params), EnvironmentRandom(1, 7, [0, 3]), actions)
    assert not np.array_equal(a[0], a[1])


# --------------------------------------------------------------------------- end to end


def _spec(seeds: int = 5) -> ExperimentSpec:
    return ExperimentSpec.create(
        name="dedup",
        environments=[
            {"kind": "single-peaked", "label": "sp", "instance": 1, "length": 300},
            {"kind": "increasing", "label": "inc", "family": "inc_2", "alpha": 0.4, "length": 300},
            {
                "kind": "increasing",
                "label": "noisy",
                "family": "inc_1",
                "length": 300,
                "noise": "gaussian",
                "sigma": 0.1,
            },
            {"kind": "gaussian", "label": "g0", "means": [0.3, 0.6], "sigma": 0.0},
        ],
        policies=[
            {"kind": "spo"},
            {"kind": "ucb1"},
            {"kind": "last-reward-greedy"},
            {"kind": "hkr", "environments": ["inc", "noisy"]},
            {"kind": "exp3"},
            {"kind": "epsilon-greedy"},
        ],
        horizons=[40, 150, 300],
        seeds=seeds,
        checkpoints=8,
    )


def _payloads(path) -> list[tuple[str, int, str]]:
    with sqlite3.connect(path / "results.sqlite") as conn:
        return conn.execute(
            "SELECT cell, seed, payload FROM results ORDER BY cell, seed"
        ).fetchall()


def test_dedup_stores_exactly_what_simulating_every_seed_stores(tmp_path):
    spec = _spec()
    full = run_experiment(spec, tmp_path / "full", backend="serial", dedup=False)
    assert full.simulated == full.computed
    reference = tidy_table(tmp_path / "full", trajectories=True)
    cells = expand(spec)
    deterministic = sum(c.deterministic for c in cells)
    assert 0 < deterministic < len(cells)
    variants = {
        "serial": dict(backend="serial"),
        "serial-batch2": dict(backend="serial", batch_size=2),
        "process-2": dict(backend="process", workers=2),
    }
    for name, kwargs in variants.items():
        summary = run_experiment(spec, tmp_path / name, dedup=True, **kwargs)
        assert summary.computed == full.computed
        assert summary.simulated == full.computed - deterministic * (spec.seeds - 1), name
        table = tidy_table(tmp_path / name, trajectories=True)
        pd.testing.assert_frame_equal(reference, table, check_exact=True, obj=name)
        assert _payloads(tmp_path / name) == _payloads(tmp_path / "full"), name


def test_environment_variable_disables_dedup(tmp_path, monkeypatch):
    monkeypatch.setenv(DEDUP_ENV, "0")
    spec = _spec(seeds=3)
    summary = run_experiment(spec, tmp_path, backend="serial")
    assert summary.simulated == summary.computed


def test_resume_of_a_partially_stored_deterministic_cell(tmp_path):
    spec = _spec(seeds=2)
    run_experiment(spec, tmp_path / "grown", backend="serial")
    grown = run_experiment(spec.replace(seeds=6), tmp_path / "grown", backend="serial")
    cells = expand(spec)
    deterministic = sum(c.deterministic for c in cells)
    assert grown.reused == len(cells) * 2
    assert grown.simulated == len(cells) * 4 - deterministic * 3
    run_experiment(spec.replace(seeds=6), tmp_path / "fresh", backend="serial", dedup=False)
    assert _payloads(tmp_path / "grown") == _payloads(tmp_path / "fresh")


# --------------------------------------------------------------------------- scheduling


def _one_cell_spec(seeds: int, cells: int = 1) -> ExperimentSpec:
    return ExperimentSpec.create(
        name="plan",
        environments=[
            {"kind": "bernoulli", "label": f"b{i}", "means": [0.1 * i, 0.8]} for i in range(cells)
        ],
        policies=[{"kind": "exp3"}],
        horizons=[1000],
        seeds=seeds,
    )


def test_one_cell_is_split_in_two_for_two_workers():
    cells = expand(_one_cell_spec(30))
    tasks = plan(cells, [list(range(30))], workers=2)
    assert sorted(len(t.replications) for t in tasks) == [15, 15]
    assert plan(cells, [list(range(30))], workers=1) == [Task(cells[0], tuple(range(30)))]


def test_equal_cells_are_not_split_when_the_workers_are_balanced():
    cells = expand(_one_cell_spec(30, cells=4))
    tasks = plan(cells, [list(range(30))] * 4, workers=2)
    assert len(tasks) == 4 and all(len(t.replications) == 30 for t in tasks)


def test_three_equal_cells_on_two_workers_split_one():
    cells = expand(_one_cell_spec(30, cells=3))
    tasks = plan(cells, [list(range(30))] * 3, workers=2)
    assert sum(len(t.replications) for t in tasks) == 90
    assert len(tasks) > 3


def test_tasks_are_longest_first_and_cover_every_missing_seed():
    spec = _spec(seeds=7)
    cells = expand(spec)
    missing = [[s for s in range(7) if (s + i) % 3] for i in range(len(cells))]
    for workers, batch_size in [(1, None), (2, None), (2, 3)]:
        tasks = plan(cells, missing, workers, batch_size)
        costs = [_cost(t) for t in tasks]
        assert costs == sorted(costs, reverse=True)
        covered = sorted((t.cell.key, s) for t in tasks for s in (*t.replications, *t.copies))
        expected = sorted((c.key, s) for c, m in zip(cells, missing, strict=True) for s in m)
        assert covered == expected
        for t in tasks:
            if t.cell.deterministic:
                assert len(t.replications) == 1
            else:
                assert not t.copies
                if batch_size:
                    assert len(t.replications) <= batch_size
    no_dedup = plan(cells, missing, 2, None, dedup=False)
    assert not any(t.copies for t in no_dedup)


# --------------------------------------------------------------------------- oracle cache


def test_oracle_cache_returns_what_recomputing_gives():
    spec = _spec(seeds=3)
    cell = next(c for c in expand(spec) if c.environment.label == "noisy")
    task = Task(cell, (0, 1, 2))
    ORACLE_CACHE.clear()
    first = run_task(task)
    assert ORACLE_CACHE.misses == 1 and ORACLE_CACHE.hits == 0
    again = run_task(task)
    assert ORACLE_CACHE.hits == 1
    assert [r.payload for r in first] == [r.payload for r in again]
    ORACLE_CACHE.clear()
    assert [r.payload for r in run_task(task)] == [r.payload for r in first]


def test_oracle_cache_is_bounded():
    cache = OracleCache(max_entries=3, max_bytes=1000)
    for i in range(5):
        cache.put((i,), np.zeros(10))
    assert cache.get((0,)) is None and cache.get((4,)) is not None
    assert len(cache._values) == 3
    cache.put(("big",), np.zeros(1000))  # larger than the budget: not kept
    assert cache.get(("big",)) is None
    value = cache.get((4,))
    assert value is not None and not value.flags.writeable
