"""The simulation loop: ``select → step → update`` for a batch of replications.

The loop records, at each checkpoint round, the cumulative realised reward, the cumulative
expected reward of the chosen actions, the pulls of every arm, the number of switches and the
rounds spent in each phase. Everything else (regret, competitive ratio, utility, …) is computed
afterwards from these summaries. Per-round work is O(R·n) NumPy
operations, independent of the history length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import InvalidAction
from impactbandits.errors import SpecError

__all__ = ["Trajectory", "checked_checkpoints", "play", "simulate"]


@dataclass(frozen=True)
class Trajectory:
    """Summaries of ``R`` replications at ``C`` checkpoint rounds."""

    times: np.ndarray
    """``(C,)`` checkpoint rounds (1-based, increasing)."""
    reward: np.ndarray
    """``(R, C)`` cumulative realised reward."""
    expected: np.ndarray
    """``(R, C)`` cumulative expected reward of the actions taken."""
    pulls: np.ndarray
    """``(R, C, n)`` cumulative pulls (or activation probability mass) per arm."""
    switches: np.ndarray
    """``(R, C)`` number of rounds whose action differed from the previous round's."""
    phases: np.ndarray | None = None
    """``(R, C, P)`` rounds spent in each phase, if the policy has phases."""
    arm_rewards: np.ndarray | None = None
    """``(R, C, n)`` cumulative realised reward per arm, if the environment asks for it
    (``records_arm_rewards = True``)."""
    phase_switches: np.ndarray | None = None
    """``(R, C)`` rounds whose phase differed from the previous round's (for learners over
    ranking policies, whose phase is the policy being played: switches between policies)."""


def simulate(
    env: Environment,
    policy: Policy,
    rounds: int,
    horizon: int | None,
    checkpoints: np.ndarray,
    env_random: EnvironmentRandom,
    policy_rng: BatchRNG,
    check_actions: bool = True,
) -> Trajectory:
    """Run ``rounds`` rounds; ``horizon`` is what the policy is told (``None`` = anytime).

    ``checkpoints`` must be increasing rounds in ``1 .. rounds``. With ``check_actions`` (the
    default) every round's actions are validated against the action space on a cheap path; an
    invalid action raises :class:`~impactbandits.errors.SpecError` (field ``action``) naming the
    round. ``check_actions=False`` validates the first round only: for policies that cannot
    emit an invalid action by construction (the built-ins, whose actions are arg-maxima or
    draws over the arms; the contract tests check every round of each).

    This is the readable loop, always; :func:`impactbandits.kernels.simulate` takes the same
    arguments and runs the pairs that have a compiled loop there, with identical numbers. Ctrl-C
    (``KeyboardInterrupt``) and the runner's SIGTERM handler act at once: the loop runs Python
    code every round.
    """
    checkpoints = checked_checkpoints(checkpoints, rounds)
    env.reset(env_random)
    policy.reset(env.action_space, horizon, policy_rng)
    return play(env, policy, rounds, checkpoints, env_random.size, check_actions)


def checked_checkpoints(checkpoints: np.ndarray, rounds: int) -> np.ndarray:
    """``checkpoints`` as ``int64``; a :class:`~impactbandits.errors.SpecError` unless they are
    increasing rounds within ``1 .. rounds``."""
    checkpoints = np.asarray(checkpoints, dtype=np.int64)
    if checkpoints.size == 0 or checkpoints[-1] > rounds or checkpoints[0] < 1:
        raise SpecError("checkpoints", f"must be increasing rounds within 1..{rounds}")
    return checkpoints


def play(
    env: Environment,
    policy: Policy,
    rounds: int,
    checkpoints: np.ndarray,
    replications: int,
    check_actions: bool = True,
) -> Trajectory:
    """:func:`simulate`'s loop on an environment and a policy that have just been reset."""
    checkpoints = checked_checkpoints(checkpoints, rounds)
    space = env.action_space
    rows = np.arange(replications)
    offsets = rows * space.n
    n_phases = len(policy.phases)

    reward = np.zeros(replications)
    expected = np.zeros(replications)
    pulls = np.zeros((replications, space.n))
    switches = np.zeros(replications, dtype=np.int64)
    phase_counts = np.zeros((replications, n_phases), dtype=np.int64) if n_phases else None
    arm_rewards = np.zeros((replications, space.n)) if env.records_arm_rewards else None
    phase_switches = np.zeros(replications, dtype=np.int64) if n_phases else None
    previous_phase: np.ndarray | None = None
    previous: np.ndarray | None = None

    n_cp = checkpoints.size
    out_reward = np.empty((replications, n_cp))
    out_expected = np.empty((replications, n_cp))
    out_pulls = np.empty((replications, n_cp, space.n))
    out_switches = np.empty((replications, n_cp), dtype=np.int64)
    out_phases = np.empty((replications, n_cp, n_phases), dtype=np.int64) if n_phases else None
    out_arm_rewards = None if arm_rewards is None else np.empty((replications, n_cp, space.n))
    out_phase_switches = np.empty((replications, n_cp), dtype=np.int64) if n_phases else None

    next_index = 0
    next_checkpoint = int(checkpoints[0])
    for t in range(1, rounds + 1):
        actions = policy.select()
        if check_actions or t == 1:
            try:
                actions = space.check(actions, replications)
            except InvalidAction as exc:
                raise InvalidAction(f"round {t}: {exc.message}", exc.row) from None
            except SpecError as exc:
                raise InvalidAction(f"round {t}: {exc.message}") from None
        if phase_counts is not None:
            phase = policy.current_phase()
            phase_counts[rows, phase] += 1
            if previous_phase is not None:
                phase_switches += phase != previous_phase
            previous_phase = phase
        outcome = env.step(actions)
        policy.update(actions, outcome.feedback)
        reward += outcome.feedback.reward
        expected += outcome.expected
        space.accumulate(pulls, actions, offsets)
        if arm_rewards is not None:
            arm_rewards.reshape(-1)[offsets + actions] += outcome.feedback.reward
        if previous is not None:
            switches += space.changed(actions, previous)
        previous = actions
        if t == next_checkpoint:
            out_reward[:, next_index] = reward
            out_expected[:, next_index] = expected
            out_pulls[:, next_index] = pulls
            out_switches[:, next_index] = switches
            if out_phases is not None and phase_counts is not None:
                out_phases[:, next_index] = phase_counts
            if out_arm_rewards is not None:
                out_arm_rewards[:, next_index] = arm_rewards
            if out_phase_switches is not None and phase_switches is not None:
                out_phase_switches[:, next_index] = phase_switches
            next_index += 1
            next_checkpoint = int(checkpoints[next_index]) if next_index < n_cp else -1
    return Trajectory(
        checkpoints,
        out_reward,
        out_expected,
        out_pulls,
        out_switches,
        out_phases,
        out_arm_rewards,
        out_phase_switches,
    )
