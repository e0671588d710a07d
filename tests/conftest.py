"""Shared fixtures: small specs and helpers to run them."""

from __future__ import annotations

import numpy as np
import pytest

from impactbandits import ExperimentSpec
from impactbandits.core import BatchRNG, EnvironmentRandom, simulate
from impactbandits.registry import build_environment, build_policy


def small_spec(**changes) -> ExperimentSpec:
    data = dict(
        name="small",
        environments=[
            {"kind": "bernoulli", "label": "b2", "means": [0.3, 0.7]},
            {"kind": "gaussian", "label": "g3", "n_arms": 3, "sigma": 0.5},
        ],
        policies=[
            {"kind": "ucb1"},
            {"kind": "exp3"},
            {"kind": "etc"},
            {"kind": "epsilon-greedy"},
        ],
        horizons=[20, 50, 120],
        seeds=6,
        checkpoints=8,
    )
    data.update(changes)
    return ExperimentSpec.create(**data)


def run_component(
    env_kind,
    env_params,
    policy_kind,
    policy_params,
    reps,
    rounds=60,
    horizon=None,
    seed=3,
    check_actions=True,
):
    """Simulate replications ``reps`` of a policy on an environment (keys fixed)."""
    env = build_environment(env_kind, env_params)
    policy = build_policy(policy_kind, policy_params)
    return simulate(
        env,
        policy,
        rounds,
        horizon,
        np.arange(1, rounds + 1),
        EnvironmentRandom(seed, 11, reps),
        BatchRNG.from_key(seed, (12, 2), reps),
        check_actions=check_actions,
    )


@pytest.fixture
def spec() -> ExperimentSpec:
    return small_spec()
