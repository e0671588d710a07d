"""The Python side of the B2DEP loop (:mod:`impactbandits.kernels.b2dep`): which pairs it takes
and the arrays it is given. Importable without numba."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from impactbandits.core.compiled import CompiledStep, Kernel, declared_step, kernel
from impactbandits.core.policy import BatchedSimplePolicy

__all__ = [
    "B2DEP_ARGS",
    "b2dep_declared",
    "b2dep_run",
    "b2dep_tag",
    "built_in_b2dep",
    "simulate_b2dep",
]

#: The arguments of the B2DEP loop's entries (:func:`impactbandits.kernels.b2dep._template`), as
#: (dtype, ndim) — ndim 0 a scalar — all arrays C-contiguous (the ahead-of-time module's
#: convention, :mod:`impactbandits.kernels.aot`); the entries return an int64.
B2DEP_ARGS: tuple[tuple[str, int], ...] = (
    ("float64", 1),  # params
    ("float64", 1),  # env_params
    ("int64", 2),  # delays
    ("uint64", 2),  # noise
    ("float64", 2),  # uniforms
    ("uint64", 2),  # streams
    ("int64", 0),  # rounds
    ("int64", 1),  # checkpoints
    ("float64", 2),  # out_reward
    ("float64", 2),  # out_expected
    ("float64", 3),  # out_pulls
    ("int64", 2),  # out_switches
    ("int64", 3),  # out_phases
    ("int64", 2),  # out_phase_switches
    ("int64", 1),  # invalid
    ("int64", 1),  # stop
)


@kernel
def no_phase(state: Any, params: np.ndarray) -> int:
    """The phase kernel of a step without phases (never called: the loop records none)."""
    return 0


#: What the environment's and a phased policy's declarations stand for (:func:`~impactbandits.
#: core.compiled.declared_step`).
_ENV_METHODS = ("reset", "step", "_expected", "f")
_PHASED_METHODS = ("reset", "select", "update", "current_phase")


def _phased_declaration(policy: Any) -> Any:
    """``compiled_phased_step`` of a reset policy with phases (a single-replication policy's
    first copy's, every copy being reset alike), if its class declares it."""
    holder = policy
    if isinstance(policy, BatchedSimplePolicy):
        holder = policy.copies[0] if policy.copies else None
    if holder is None:
        return None
    return declared_step(holder, "compiled_phased_step", _PHASED_METHODS)


def b2dep_declared(env: Any, policy: Any) -> bool:
    """Whether the pair's classes declare the B2DEP loop's forms (``policy`` reset, ``env``
    not necessarily), without calling them: for the scheduler's cost estimates (the run
    decides, :func:`b2dep_run`)."""
    if declared_step(env, "compiled_delay", _ENV_METHODS) is None:
        return False
    if policy.phases:
        return _phased_declaration(policy) is not None
    return declared_step(policy) is not None


def b2dep_run(env: Any, policy: Any) -> tuple[CompiledStep, Kernel, Any] | None:
    """``(step, phase, model)``: a reset policy's compiled step and phase kernel (a policy with
    phases: its :class:`~impactbandits.policies.delay.PhasedStep`, a single-replication policy's
    first copy's, every copy being reset alike; without phases: its compiled step and
    :func:`no_phase`) and the environment's :class:`~impactbandits.envs.delay.CompiledDelay`,
    when their classes declare them for the rounds they play
    (:func:`~impactbandits.core.compiled.declared_step`); else ``None``."""
    declared = declared_step(env, "compiled_delay", _ENV_METHODS)
    if declared is None:  # not B2DEP: nothing imported
        return None
    from impactbandits.envs.delay import CompiledDelay
    from impactbandits.kernels.dispatch import compiled_step
    from impactbandits.policies.delay import PhasedStep

    model = declared()
    if not isinstance(model, CompiledDelay) or env.records_arm_rewards:
        return None
    if not policy.phases:
        step = compiled_step(policy)
        return None if step is None else (step, no_phase, model)
    declared = _phased_declaration(policy)
    phased = None if declared is None else declared()
    if not isinstance(phased, PhasedStep):
        return None
    wrapped = isinstance(policy, BatchedSimplePolicy)
    if wrapped and (phased.step.draws or phased.step.stream):  # a copy draws from NumPy's
        return None
    return phased.step, phased.phase, model


def b2dep_tag(kernels: Sequence[Kernel], stream: bool) -> str | None:
    """The name of the B2DEP loop of ``kernels`` (the policy step's three, its phase kernel and
    the environment's two): a hash of their names and of every source file its machine code
    comes from (:func:`~impactbandits.kernels.sources.files_tag`), this loop's module
    included."""
    from impactbandits.kernels.sources import files_tag

    names = ["b2dep", *(f"{k.py_func.__module__}:{k.py_func.__qualname__}" for k in kernels)]
    extra = [str(Path(__file__).with_name("b2dep.py"))]
    return files_tag([*names, "stream"] if stream else names, [k.py_func for k in kernels], extra)


def _kernels(step: CompiledStep, phase: Kernel, model: Any) -> list[Kernel]:
    """The kernels of a B2DEP loop, in the order of its tag (:func:`b2dep_tag`)."""
    return [step.init, step.select, step.update, phase, model.init, model.step]


def built_in_b2dep() -> dict[str, tuple[CompiledStep, Kernel, Kernel, Kernel]]:
    """``b2dep_<tag>`` → ``(step, phase, env_init, env_step)`` (the arguments of
    :func:`impactbandits.kernels.b2dep.b2dep_for`), for the learners Cella & Cesa-Bianchi's
    figures run on B2DEP: π_low, π_ucb and UCB1 over the arms (for the ahead-of-time build)."""
    from impactbandits.core.environment import EnvironmentRandom
    from impactbandits.core.random import BatchRNG
    from impactbandits.envs.delay import DelayedPayoffBandit
    from impactbandits.policies.names import build_policy

    env = DelayedPayoffBandit([0.5, 0.25, 0.75])
    env.reset(EnvironmentRandom(1, 2, [0]))
    entries: dict[str, tuple[CompiledStep, Kernel, Kernel, Kernel]] = {}
    for name in ("pi-low", "pi-ucb", "ucb1"):
        policy = build_policy(name, {})
        policy.reset(env.action_space, 100, BatchRNG.from_key(1, (2,), [0]))
        run = b2dep_run(env, policy)
        if run is None:
            continue
        step, phase, model = run
        tag = b2dep_tag(_kernels(step, phase, model), step.stream)
        if tag is not None:
            entries[f"b2dep_{tag}"] = (step, phase, model.init, model.step)
    return entries


def simulate_b2dep(
    step: CompiledStep,
    phase: Kernel,
    model: Any,
    n: int,
    phases: int,
    rounds: int,
    checkpoints: np.ndarray,
    replications: int,
    policy_rng: Any,
) -> tuple[Any, ...] | None:
    """The run's ``(reward, expected, pulls, switches)`` checkpoint arrays from the B2DEP loop of
    ``step`` on ``model`` (:class:`~impactbandits.envs.delay.CompiledDelay`) with ``n`` arms,
    followed for a policy with ``phases`` phases by ``(phases, None, phase_switches)``
    (:class:`~impactbandits.core.simulate.Trajectory`'s order; no per-arm rewards); ``None`` if
    no loop is available (not built ahead of time, and numba's JIT not allowed). The policy's
    random streams must be untouched: its draws are taken here, all at once."""
    from impactbandits import kernels
    from impactbandits.kernels import aot
    from impactbandits.kernels.dispatch import (
        checkpoint_outputs,
        policy_draws,
        refuse_invalid,
        user_errors,
    )
    from impactbandits.kernels.sources import builtin

    found = _kernels(step, phase, model)
    users = not all(builtin(k.py_func) for k in found)
    loop = None
    if kernels.backend() == "aot":
        tag = b2dep_tag(found, step.stream)
        loop = None if tag is None else aot.entry(f"b2dep_{tag}", B2DEP_ARGS)
    if loop is None:
        if not kernels.jit():
            return None
        from impactbandits.kernels.b2dep import b2dep_for

        with user_errors("policy", "the compiled step", users):
            loop = b2dep_for(step, phase, model.init, model.step)
    uniforms, streams = policy_draws(step, policy_rng, rounds, replications)
    n_cp = checkpoints.size
    outputs = (
        *checkpoint_outputs(replications, n_cp, n),
        np.empty((replications, n_cp, phases), dtype=np.int64),
        np.empty((replications, n_cp), dtype=np.int64),
    )
    invalid = np.zeros(3, dtype=np.int64)
    with user_errors("policy", "the compiled step", users):
        status = kernels.call(
            loop,
            step.params,
            np.ascontiguousarray(model.params, dtype=np.float64),
            np.ascontiguousarray(model.delays, dtype=np.int64),
            np.ascontiguousarray(model.noise, dtype=np.uint64),
            uniforms,
            streams,
            rounds,
            np.ascontiguousarray(checkpoints, dtype=np.int64),
            *outputs,
            invalid,
            work=rounds * replications * n,
        )
    refuse_invalid(status, invalid, n)
    reward, expected, pulls, switches, out_phases, phase_switches = outputs
    if not phases:
        return reward, expected, pulls, switches
    return reward, expected, pulls, switches, out_phases, None, phase_switches
