"""Which runs the compiled loop takes, and the arrays it is given: :func:`simulate` (compiled
when it can, else readable) and :func:`simulate_compiled`. Importable without numba (numba is
imported only for a pair the compiled loop can run)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np

from impactbandits import settings
from impactbandits.core.compiled import CompiledStep, declared_step
from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.policy import Policy
from impactbandits.core.pull_model import PullModel, table_world
from impactbandits.core.random import BatchRNG
from impactbandits.core.simulate import Trajectory, checked_checkpoints, play
from impactbandits.core.simulate import simulate as simulate_readable
from impactbandits.core.spaces import InvalidAction
from impactbandits.core.world import CompiledWorld
from impactbandits.errors import SpecError, SpecWarning
from impactbandits.kernels import codes
from impactbandits.kernels.sources import builtin, loop_tag

__all__ = [
    "NOTICE_WORK",
    "ReadableLoopsWarning",
    "checkpoint_outputs",
    "compiled_step",
    "compiled_world",
    "numba_notice",
    "policy_draws",
    "pull_model",
    "reevaluates",
    "refuse_invalid",
    "simulate",
    "simulate_compiled",
    "world_for",
]

#: Whose compiled code an error names, by the field it is reported on.
_WHAT = {"policy": "the compiled step", "environment": "the compiled world"}
_OTHER = "the compiled code"  # a bound kernel's (CompiledStep.blame)


def simulate(
    env: Environment,
    policy: Policy,
    rounds: int,
    horizon: int | None,
    checkpoints: np.ndarray,
    env_random: EnvironmentRandom,
    policy_rng: BatchRNG,
    check_actions: bool = True,
    compiled: bool = True,
) -> Trajectory:
    """:func:`impactbandits.core.simulate.simulate` (same arguments, same numbers) on the
    compiled loop when ``compiled`` and the pair has one (:mod:`impactbandits.kernels`), else on
    the readable loop. On the compiled loop every action is checked (an arm in ``0 .. K − 1``)
    whatever ``check_actions`` says: the check costs nothing there."""
    if not compiled:
        return simulate_readable(
            env, policy, rounds, horizon, checkpoints, env_random, policy_rng, check_actions
        )
    checkpoints = checked_checkpoints(checkpoints, rounds)
    env.reset(env_random)
    policy.reset(env.action_space, horizon, policy_rng)
    done = simulate_compiled(env, policy, rounds, checkpoints, env_random.size, policy_rng)
    if done is not None:
        return Trajectory(checkpoints, *done)
    return play(env, policy, rounds, checkpoints, env_random.size, check_actions)


#: A sweep whose planned work (the runner's estimate, in pulls of the compiled loop) reaches
#: this runs for several CPU seconds on the readable loops: without numba it says so
#: (:func:`numba_notice`). Lindner et al.'s Figure 1 at ``--quick`` scale plans 3.5 × 10⁷ and
#: takes 15 CPU s on the readable loops, 4 CPU s compiled (measured on 2 cores).
NOTICE_WORK = 10**7


class ReadableLoopsWarning(SpecWarning):
    """A large sweep runs on the readable loops because numba is not installed
    (:func:`numba_notice`); the command line prints it as one ``warning:`` line."""


def numba_notice(work: float) -> str | None:
    """The line a sweep of planned ``work`` (pulls of the compiled loop) prints when it will
    run on the readable loops because numba is not installed: ``None`` for a small sweep (below
    :data:`NOTICE_WORK`), with numba installed, with the loops built ahead of time in use, or
    with the compiled loops switched off on purpose (``IMPACTBANDITS_KERNELS=0``). Found
    without importing numba."""
    from impactbandits import kernels

    if work < NOTICE_WORK or settings.kernels() == "0" or kernels.planned() is not None:
        return None
    return (
        "numba is not installed: this sweep runs on the readable NumPy loops, with the same "
        "numbers at about 3x the CPU time of the compiled ones (pip install numba; "
        f"{settings.KERNELS}=0 says the readable loops are meant)"
    )


def compiled_step(policy: Policy) -> CompiledStep | None:
    """``policy``'s compiled step (it has been reset), if its class declares one for the rounds
    it plays (:func:`~impactbandits.core.compiled.declared_step`); a one-line
    :class:`~impactbandits.errors.SpecError` if the declaration fails or returns something
    else."""
    declared = declared_step(policy)
    if declared is None:
        return None
    name = type(policy).__name__
    try:
        step = declared()
    except Exception as error:  # a user's declaration that fails
        raise SpecError("policy", f"{name}.compiled_step() failed: {error}") from None
    if step is not None and not isinstance(step, CompiledStep):
        raise SpecError(
            "policy", f"{name}.compiled_step() returned {type(step).__name__}, not a CompiledStep"
        )
    return step


def pull_model(env: Environment, rounds: int) -> PullModel | None:
    """``env``'s pull model for ``rounds`` rounds, if its class declares one for the ``step`` it
    plays."""
    declared = declared_step(env, "pull_model", ("reset", "step"))
    if declared is None:
        return None
    model = declared(rounds)
    return model if isinstance(model, PullModel) else None


def simulate_compiled(
    env: Any,
    policy: Any,
    rounds: int,
    checkpoints: np.ndarray,
    replications: int,
    policy_rng: Any,
) -> tuple[Any, ...] | None:
    """The run's ``(reward, expected, pulls, switches)`` checkpoint arrays from the compiled
    loop, or ``None`` if this pair has none. ``env`` and ``policy`` must have been reset (the
    policy's random streams untouched). For a learner with phases or an environment that
    reports each arm's rewards the tuple goes on with ``(phases, arm_rewards,
    phase_switches)`` (:class:`~impactbandits.core.simulate.Trajectory`'s order; ``None`` for
    what the run does not keep)."""
    from impactbandits import kernels

    if not kernels.available():
        return None
    step = compiled_step(policy)
    if step is None:
        return None
    if policy.phases and step.phase is None:  # its phases have no compiled form
        return None
    if not policy.phases and step.phase is not None:
        step = dataclasses.replace(step, phase=None)
    own = (step.init, step.select, step.update, step.reevaluate, step.phase)
    users = not all(builtin(k.py_func) for k in own if k is not None)
    theirs = [name for name, k in step.bound if not builtin(k.py_func)]  # users' bound kernels
    found = world_for(env, step, builtin(type(policy)) and not users, rounds, replications)
    if found is None:
        return None
    world, reevaluating = found
    if world.simplex != step.simplex:  # vectors in a world of arms, or arms in one of vectors
        return None
    field = "policy"
    if not users and theirs:
        field = dict(step.blame).get(theirs[0], "policy")
    elif not users and not _builtin_world(world):
        field = "environment"
    users = users or bool(theirs) or field == "environment"
    arm_rewards = bool(env.records_arm_rewards)
    loop = _loop(step, world, users, reevaluating, arm_rewards, field)
    if loop is None:
        return None
    space = env.action_space
    tolerance = float(getattr(space, "tolerance", 0.0)) if step.simplex else 0.0
    kept = _Kept(len(policy.phases), arm_rewards, tolerance)
    return _run(loop, users, step, world, space.n, kept, rounds, checkpoints, replications,
                policy_rng, field)  # fmt: skip


def compiled_world(env: Environment, rounds: int) -> CompiledWorld | None:
    """``env``'s compiled world for ``rounds`` rounds (it has been reset), if its class declares
    one for the rounds it plays (:func:`~impactbandits.core.compiled.declared_step` of
    ``compiled_world`` against ``reset`` and ``step``); a one-line
    :class:`~impactbandits.errors.SpecError` if the declaration fails or returns something
    else."""
    declared = declared_step(env, "compiled_world", ("reset", "step"))
    if declared is None:
        return None
    name = type(env).__name__
    try:
        world = declared(rounds)
    except Exception as error:  # a user's declaration that fails
        raise SpecError("environment", f"{name}.compiled_world() failed: {error}") from None
    if world is not None and not isinstance(world, CompiledWorld):
        raise SpecError(
            "environment",
            f"{name}.compiled_world() returned {type(world).__name__}, not a CompiledWorld",
        )
    return world


def world_for(
    env: Environment, step: CompiledStep, ours: bool, rounds: int, replications: int
) -> tuple[CompiledWorld, bool] | None:
    """The world the step plays in and whether the loop makes its re-evaluations, or ``None``
    if the pair cannot run compiled: ``env``'s declared world (:func:`compiled_world`), or its
    pull model as the pull-table world (:func:`~impactbandits.core.pull_model.table_world`).
    ``ours``: the policy and its step are this library's (:func:`reevaluates`)."""
    world = compiled_world(env, rounds)
    if world is not None:
        if world.replications != replications:
            raise SpecError("environment", "compiled_world() was set up for other replications")
        if world.reevaluate is None:
            return world, False
        if step.reevaluate is None:
            return (world, False) if ours else None
        return world, True
    model = pull_model(env, rounds)
    if model is None:
        return None
    reevaluating = reevaluates(model, step, ours)
    if reevaluating is None:
        return None
    return table_world(model, replications, reevaluating), reevaluating


def _builtin_world(world: CompiledWorld) -> bool:
    kernels = (world.init, world.step, world.reevaluate)
    return all(builtin(k.py_func) for k in kernels if k is not None)


def reevaluates(model: PullModel, step: CompiledStep, ours: bool) -> bool | None:
    """Whether the step's loop makes the pull model's re-evaluations
    (:attr:`~impactbandits.core.compiled.CompiledStep.reevaluate`), or ``None`` if it cannot
    run compiled on them: a step that reads them on a model whose re-evaluations the loop does
    not make (other noise, by round, another batch of replications), or a user's step that
    does not declare them (its readable form may read them; ``ours``: the policy and its step
    are this library's)."""
    again = model.reevaluation
    if again is None:
        return False
    if step.reevaluate is None:
        return False if ours else None
    table = model.table
    if model.noise not in ("normal", "beta") or model.by_round or table is None:
        return None
    return True if np.array_equal(table.replications, again.replications) else None


def _loop(
    step: CompiledStep,
    world: CompiledWorld,
    users: bool,
    reevaluating: bool,
    arm_rewards: bool,
    field: str,
) -> Any:
    """The loop of ``step`` in ``world`` (``reevaluating``: the one that makes and reads
    re-evaluations; ``arm_rewards``: the one that keeps each arm's rewards): built ahead of time
    if the module has it (no numba imported), else numba's JIT if allowed, else ``None``.
    ``field``: whose kernels a compile error blames (``"environment"`` for a user's world, else
    ``"policy"``)."""
    from impactbandits import kernels
    from impactbandits.kernels import aot

    tag = loop_tag(step, world, reevaluating, arm_rewards)
    if tag is not None and kernels.backend() == "aot":
        built = aot.entry(f"loop_{tag}", aot.loop_args(world.data.ndim))
        if built is not None:
            return built
    if not kernels.jit():
        return None
    from impactbandits.kernels.loop import loop_for

    try:
        return loop_for(step, world, reevaluating, arm_rewards)
    except Exception as error:  # numba cannot read a user's kernels
        if not users:
            raise
        message = f"{_WHAT.get(field, _OTHER)} does not compile: {_first_line(error)}"
        raise SpecError(field, message) from None


def _run(
    loop: Any,
    users: bool,
    step: CompiledStep,
    world: CompiledWorld,
    n: int,
    kept: _Kept,
    rounds: int,
    checkpoints: np.ndarray,
    replications: int,
    policy_rng: Any,
    field: str,
) -> tuple[Any, ...]:
    """The loop's outputs (:func:`simulate_compiled`)."""
    from impactbandits import kernels

    uniforms, streams = policy_draws(step, policy_rng, rounds, replications)
    n_cp = checkpoints.size
    outputs = checkpoint_outputs(replications, n_cp, n)
    recorded = np.zeros((replications, n_cp, world.recorded))
    out_phases = np.zeros((replications, n_cp, kept.phases), dtype=np.int64)
    arm_rewards = np.zeros((replications, n_cp, n if kept.arm_rewards else 0))
    phase_switches = np.zeros((replications, n_cp if kept.phases else 0), dtype=np.int64)
    invalid = np.zeros(3, dtype=np.int64)
    with user_errors(field, _WHAT.get(field, _OTHER), users):
        status = kernels.call(
            loop,
            step.params,
            world.params,
            world.data,
            world.noise,
            kept.tolerance,
            uniforms,
            streams,
            rounds,
            np.ascontiguousarray(checkpoints, dtype=np.int64),
            *outputs,
            recorded,
            out_phases,
            arm_rewards,
            phase_switches,
            invalid,
            # a simplex round can cost ~10 µs: always the helper thread (kernels.call)
            work=kernels.THREAD_WORK if step.simplex else rounds * replications * n,
        )
    refuse_invalid(status, invalid, n)
    if world.receive is not None and world.recorded:
        world.receive(recorded)
    if not kept.phases and not kept.arm_rewards:
        return outputs
    if not kept.phases:
        return (*outputs, None, arm_rewards, None)
    return (*outputs, out_phases, arm_rewards if kept.arm_rewards else None, phase_switches)


@dataclasses.dataclass(frozen=True)
class _Kept:
    """What a run keeps beside the rewards, and the simplex tolerance it counts switches by."""

    phases: int
    """The policy's phases (0: none)."""
    arm_rewards: bool
    tolerance: float


def policy_draws(
    step: CompiledStep, policy_rng: Any, rounds: int, replications: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(uniforms, streams)`` for a step's loop: the draws its readable form takes round by
    round, all at once from the same stream (``(R, 1)`` zeros for a step that draws none), and
    each replication's counter-based stream (zeros for a step without one). The draws of a
    step with a later :attr:`~impactbandits.core.compiled.CompiledStep.first_draw` start at
    that round (zeros before it)."""
    if not step.draws:
        uniforms = np.zeros((replications, 1))
    elif step.first_draw == 1:
        uniforms = policy_rng.random(rounds)
    else:
        uniforms = np.zeros((replications, rounds))
        skipped = min(step.first_draw - 1, rounds)
        if rounds > skipped:
            uniforms[:, skipped:] = policy_rng.random(rounds - skipped)
    if step.stream:
        streams = policy_rng.stream.words()
    else:
        streams = np.zeros((replications, 3), dtype=np.uint64)
    return (
        np.ascontiguousarray(uniforms, dtype=np.float64),
        np.ascontiguousarray(streams, dtype=np.uint64),
    )


def checkpoint_outputs(replications: int, n_cp: int, n: int) -> tuple[np.ndarray, ...]:
    """The ``(reward, expected, pulls, switches)`` arrays every loop fills at its ``n_cp``
    checkpoints (:class:`~impactbandits.core.simulate.Trajectory`'s first four)."""
    return (
        np.empty((replications, n_cp)),
        np.empty((replications, n_cp)),
        np.empty((replications, n_cp, n)),
        np.empty((replications, n_cp), dtype=np.int64),
    )


def refuse_invalid(status: int, invalid: np.ndarray, n: int) -> None:
    """:class:`~impactbandits.core.spaces.InvalidAction` when a loop returned
    :data:`~impactbandits.kernels.codes.INVALID` (``invalid = (replication, round, arm)``)."""
    if status == codes.INVALID:
        row, t, arm = (int(x) for x in invalid)
        raise InvalidAction(
            f"round {t}: the compiled select() returned {arm}; it must return an arm index, an "
            f"integer in 0..{n - 1}",
            row,
        )


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else type(error).__name__
    return f"{type(error).__name__}: {text}" if not text.startswith(type(error).__name__) else text


@contextlib.contextmanager
def user_errors(field: str, what: str, users: bool) -> Iterator[None]:
    """A user's kernels that do not compile or that fail become a one-line
    :class:`~impactbandits.errors.SpecError` on ``field``; the built-ins' errors pass as they
    are (a bug of ours must show its traceback)."""
    try:
        yield
    except Exception as error:
        if not users:
            raise
        if type(error).__module__.startswith("numba"):
            raise SpecError(field, f"{what} does not compile: {_first_line(error)}") from None
        raise SpecError(field, f"{what} failed: {_first_line(error)}") from None
