"""A lightweight loop for one replication of a :class:`~impactbandits.core.policy.SimplePolicy`
on noise-free rested curves.

Noise-free rested bandits are deterministic: the m-th pull of arm i yields ``curves[i, m−1]``.
This loop drives the policy with plain Python floats (no per-round NumPy, no batching), which
is what long single runs and property tests over thousands of instances need (Patil et al.'s
Algorithm 1 at T = 10⁶). It is a simulation loop, not a second implementation of any policy:
the policy object is the same one the batched runner uses.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import SimplePolicy
from impactbandits.core.spaces import Discrete

__all__ = ["play_deterministic"]


def play_deterministic(
    policy: SimplePolicy,
    curves: np.ndarray,
    rounds: int,
    horizon: int | None = None,
    checkpoints: Sequence[int] | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Play ``rounds`` rounds; return the pull counts ``(len(checkpoints), n_arms)`` after each
    checkpoint round (default: every round 1..rounds)."""
    curves = np.asarray(curves, dtype=float)
    n_arms, length = curves.shape
    if rounds > length:
        raise ValueError(f"curves have {length} values per arm, {rounds} rounds requested")
    rows = [row.tolist() for row in curves]
    marks = list(range(1, rounds + 1)) if checkpoints is None else sorted(set(checkpoints))
    out = np.empty((len(marks), n_arms), dtype=np.int64)
    policy.reset(Discrete(n_arms), horizon, np.random.default_rng(seed))
    pulls = [0] * n_arms
    next_mark, index = marks[0], 0
    select, update = policy.select, policy.update
    for t in range(1, rounds + 1):
        arm = select()
        reward = rows[arm][pulls[arm]]
        pulls[arm] += 1
        update(arm, Feedback(reward))
        if t == next_mark:
            out[index] = pulls
            index += 1
            if index == len(marks):
                break
            next_mark = marks[index]
    return out
