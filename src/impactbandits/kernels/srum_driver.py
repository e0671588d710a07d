"""The Python side of SRUM's compiled loop (:mod:`impactbandits.kernels.srum`): which pairs it
takes and the arrays it is given. Importable without numba."""

from __future__ import annotations

from typing import Any

import numpy as np

from impactbandits.kernels.codes import (
    BERNOULLI_REWARDS,
    BETA_REWARDS,
    CONSTANT,
    MONOTONE,
    SOFTMAX,
)

__all__ = ["fairness_kernel", "simulate_srum"]


def fairness_kernel(fairness: Any) -> tuple[int, np.ndarray, np.ndarray] | None:
    """``(kind, fp, gamma)`` of a built-in fairness function (exactly that class), or ``None``
    (a user-defined function: the readable loop runs)."""
    from impactbandits.oracles import opportunity_fairness as fair

    kind = type(fairness)
    if kind is fair.ConstantFairness:
        return CONSTANT, np.zeros(2), np.asarray(fairness.gamma, dtype=np.float64)
    if kind is fair.MonotoneCartesianFairness:
        if not all(isinstance(x, int | float) for x in (fairness.scale, fairness.power)):
            return None  # an array scale or exponent: NumPy's broadcasting, not a scalar's
        fp = np.array([fairness.scale, fairness.power], dtype=np.float64)
        return MONOTONE, fp, np.zeros(1)
    if kind is fair.SoftmaxFairness:
        return SOFTMAX, np.array([fairness.c, 0.0], dtype=np.float64), np.zeros(1)
    return None


def simulate_srum(
    env: Any, policy: Any, rounds: int, checkpoints: np.ndarray, replications: int
) -> tuple[np.ndarray, ...] | None:
    """The run's ``(reward, expected, pulls, switches, phases, arm_rewards, phase_switches)``
    checkpoint arrays (:class:`~impactbandits.core.simulate.Trajectory`'s order) for SRUM
    (paper variant, UCB1 as the black box) on the reward-opportunity bandit, or ``None`` if
    its fairness function has no compiled oracle. ``env`` and ``policy`` must have been reset."""
    found = fairness_kernel(policy.fairness)
    if found is None:
        return None
    kind, fp, gamma = found
    inner = policy._inner
    noise = env._noise  # the environment's common uniforms (its step draws them)
    n = env.action_space.n
    n_cp = checkpoints.size
    n_phases = len(policy.phases)
    # Trajectory's order: reward, expected, pulls, switches, phases, arm rewards, phase switches
    outputs = (
        np.empty((replications, n_cp)),
        np.empty((replications, n_cp)),
        np.empty((replications, n_cp, n)),
        np.empty((replications, n_cp), dtype=np.int64),
        np.empty((replications, n_cp, n_phases), dtype=np.int64),
        np.empty((replications, n_cp, n)),
        np.empty((replications, n_cp), dtype=np.int64),
    )
    from impactbandits import kernels
    from impactbandits.kernels import aot
    from impactbandits.kernels.sources import srum_tag
    from impactbandits.policies.opportunity import CONFIDENCE_SCALE

    loop = (
        aot.entry(f"run_srum_{srum_tag()}", aot.SRUM_ARGS) if kernels.backend() == "aot" else None
    )
    if loop is None:
        if not kernels.jit():
            return None
        from impactbandits.kernels.srum import run_srum

        loop = run_srum
    kernels.call(
        loop,
        np.ascontiguousarray(env.expected_rewards(), dtype=np.float64),
        BETA_REWARDS if env.distribution == "beta" else BERNOULLI_REWARDS,
        float(env.concentration),
        np.asarray(noise.key, dtype=np.uint64),
        np.ascontiguousarray(noise.replications, dtype=np.uint64),
        kind,
        fp,
        gamma,
        np.ascontiguousarray(np.broadcast_to(policy.lam, (n,)), dtype=np.float64),
        float(policy._alpha),
        float(policy._beta),
        CONFIDENCE_SCALE * policy.estimates.log_t,
        int(policy.T),
        float(inner.c),
        np.ascontiguousarray(policy.phase, dtype=np.int64),
        np.ascontiguousarray(policy.targets, dtype=np.float64),
        rounds,
        np.ascontiguousarray(checkpoints, dtype=np.int64),
        *outputs,
        work=rounds * replications * n,
    )
    return outputs
