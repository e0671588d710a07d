"""One way for the tests to simulate a batch of replications directly (no runner, no store)."""

from __future__ import annotations

import numpy as np

from impactbandits.core import BatchRNG, EnvironmentRandom, simulate
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy


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


def actions_of(trajectory) -> np.ndarray:
    """``(R, T)`` arm of every round, from the per-round cumulative pulls (every round a
    checkpoint)."""
    return np.argmax(np.diff(trajectory.pulls, axis=1, prepend=0.0), axis=2)


class PerReplication(Policy):
    """A plain single-replication reference per replication (``factory(stream)``), each handed
    its own counter-based stream (its row of the batch's stream words): the references of the
    sampling and randomised policies read the same stream positions as the batched forms."""

    def __init__(self, factory):
        self.factory = factory

    def reset(self, space, horizon, rng):
        words = rng.stream.words()
        self.copies = [self.factory(words[r]) for r in range(rng.size)]
        for copy in self.copies:
            copy.reset(space, horizon, None)

    def select(self):
        return np.array([c.select() for c in self.copies], dtype=np.int64)

    def update(self, actions, feedback):
        for r, c in enumerate(self.copies):
            c.update(int(actions[r]), Feedback(feedback.reward[r]))
