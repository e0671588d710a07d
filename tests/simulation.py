"""One way for the tests to simulate a batch of replications directly (no runner, no store)."""

from __future__ import annotations

import numpy as np

from impactbandits.core import BatchRNG, EnvironmentRandom, simulate


def run_batch(
    policy,
    env,
    rounds,
    *,
    reps,
    seed,
    env_key,
    policy_key,
    horizon=None,
    checkpoints=None,
):
    """Every round as a checkpoint unless ``checkpoints`` is given; ``env_key`` and
    ``policy_key`` name the environment-noise and policy random streams (each test module keeps
    its own, so its fixed-seed statistics stay the same)."""
    reps = list(reps)
    times = np.arange(1, rounds + 1) if checkpoints is None else np.asarray(checkpoints)
    return simulate(
        env,
        policy,
        rounds,
        horizon,
        times,
        EnvironmentRandom(seed, env_key, reps),
        BatchRNG.from_key(seed, (policy_key,), reps),
    )
