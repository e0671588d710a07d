"""The Python side of the simplex loop (:mod:`impactbandits.kernels.simplex`): which pairs it
takes and the arrays it is given. Importable without numba."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from impactbandits.core.compiled import Kernel, declared_step
from impactbandits.core.policy import BatchedSimplePolicy

__all__ = [
    "SIMPLEX_ARGS",
    "built_in_simplex_steps",
    "simplex_run",
    "simplex_tag",
    "simulate_simplex",
]

#: The arguments of the simplex loop's entries (:func:`impactbandits.kernels.simplex.
#: _template`), as (dtype, ndim) — ndim 0 a scalar — all arrays C-contiguous (the ahead-of-time
#: module's convention, :mod:`impactbandits.kernels.aot`); the entries return an int64.
SIMPLEX_ARGS: tuple[tuple[str, int], ...] = (
    ("float64", 1),  # params
    ("float64", 1),  # env_params
    ("uint64", 3),  # env_noise
    ("float64", 0),  # tolerance
    ("float64", 2),  # uniforms
    ("uint64", 2),  # streams
    ("int64", 0),  # rounds
    ("int64", 1),  # checkpoints
    ("float64", 2),  # out_reward
    ("float64", 2),  # out_expected
    ("float64", 3),  # out_pulls
    ("int64", 2),  # out_switches
    ("int64", 1),  # invalid
    ("int64", 1),  # stop
)


def simplex_run(env: Any, policy: Any) -> tuple[Any, Any] | None:
    """``(step, model)``: a reset policy's :class:`~impactbandits.policies.impact.SimplexStep`
    (a single-replication policy's: its first copy's, every copy being reset alike) and the
    environment's :class:`~impactbandits.envs.impact.CompiledImpact`, when both classes
    declare them (``compiled_simplex``) for the rounds they play
    (:func:`~impactbandits.core.compiled.declared_step`); else ``None``."""
    from impactbandits.envs.impact import CompiledImpact
    from impactbandits.policies.impact import SimplexStep

    declared = declared_step(env, "compiled_simplex", ("reset", "step", "reward_function"))
    model = None if declared is None else declared()
    if not isinstance(model, CompiledImpact) or policy.phases:
        return None
    holder = policy
    if isinstance(policy, BatchedSimplePolicy):
        holder = policy.copies[0] if policy.copies else None
    declared = None if holder is None else declared_step(holder, "compiled_simplex")
    step = None if declared is None else declared()
    return (step, model) if isinstance(step, SimplexStep) else None


def built_in_simplex_steps(bases: Sequence[str] | None = None) -> dict[str, tuple[Any, Any]]:
    """``simplex_<tag>`` → ``(step, model)`` (:func:`simplex_run`) for every built-in simplex
    policy with its defaults, and the one-hot policy over every registered base (or those in
    ``bases``) whose defaults declare a step, on the police instance (K = 2, horizon 100): the
    simplex loops an ahead-of-time build can hold
    (:func:`impactbandits.kernels.simplex.simplex_for`)."""
    from impactbandits.core.environment import EnvironmentRandom
    from impactbandits.core.random import BatchRNG
    from impactbandits.envs.impact import ImpactBandit
    from impactbandits.errors import SpecError
    from impactbandits.policies.names import POLICIES, build_policy

    env = ImpactBandit(high=[0.9, 0.8], low=[0.3, 0.4])
    env.reset(EnvironmentRandom(1, 2, [0]))
    kinds: list[tuple[str, dict[str, Any]]] = [(k, {}) for k in ("ad-ucb", "cucb", "exp3-meta")]
    kinds += [("one-hot", {"base": name}) for name in sorted(bases or POLICIES)]
    steps: dict[str, tuple[Any, Any]] = {}
    for kind, params in kinds:
        try:
            policy = build_policy(kind, params)
            policy.reset(env.action_space, 100, BatchRNG.from_key(1, (2,), [0]))
            found = simplex_run(env, policy)
        except (SpecError, TypeError, ValueError):
            continue  # a base that needs parameters, or plays no discrete arms
        if found is None:
            continue
        step, model = found
        kernels = [step.step.init, step.step.select, step.step.update]
        kernels += [] if step.inner is None else [step.inner.select, step.inner.update]
        tag = simplex_tag([*kernels, model.init, model.step], step.step.stream)
        if tag is not None:
            steps[f"simplex_{tag}"] = found
    return steps


def simplex_tag(kernels: Sequence[Kernel], stream: bool) -> str | None:
    """The name of the simplex loop of ``kernels`` (the policy step's, the inner step's and
    the environment's): a hash of their names and of every source file its machine code comes
    from (:func:`~impactbandits.kernels.sources.files_tag`), this loop's module included."""
    from impactbandits.kernels.sources import files_tag

    names = ["simplex", *(f"{k.py_func.__module__}:{k.py_func.__qualname__}" for k in kernels)]
    extra = [str(Path(__file__).with_name("simplex.py"))]
    return files_tag([*names, "stream"] if stream else names, [k.py_func for k in kernels], extra)


def simulate_simplex(
    step: Any,
    model: Any,
    n: int,
    tolerance: float,
    rounds: int,
    checkpoints: np.ndarray,
    replications: int,
    policy_rng: Any,
) -> tuple[np.ndarray, ...] | None:
    """The run's ``(reward, expected, pulls, switches)`` checkpoint arrays from the simplex
    loop of ``step`` (:class:`~impactbandits.policies.impact.SimplexStep`) on ``model``
    (:class:`~impactbandits.envs.impact.CompiledImpact`) with ``n`` groups, or ``None`` if no
    loop is available (not built ahead of time, and numba's JIT not allowed). The policy's
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

    policy, inner = step.step, step.inner
    found = [policy.init, policy.select, policy.update]
    found += [] if inner is None else [inner.select, inner.update]
    found += [model.init, model.step]  # the order of simplex.simplex_for's tag
    users = not all(builtin(k.py_func) for k in found)
    loop = None
    if kernels.backend() == "aot":
        tag = simplex_tag(found, policy.stream)
        loop = None if tag is None else aot.entry(f"simplex_{tag}", SIMPLEX_ARGS)
    if loop is None:
        if not kernels.jit():
            return None
        from impactbandits.kernels.simplex import simplex_for

        with user_errors("policy", "the compiled step", users):
            loop = simplex_for(policy, inner, model.init, model.step)
    uniforms, streams = policy_draws(policy, policy_rng, rounds, replications)
    outputs = checkpoint_outputs(replications, checkpoints.size, n)
    invalid = np.zeros(3, dtype=np.int64)
    with user_errors("policy", "the compiled step", users):
        status = kernels.call(
            loop,
            policy.params,
            np.ascontiguousarray(model.params, dtype=np.float64),
            np.ascontiguousarray(model.noise, dtype=np.uint64),
            float(tolerance),
            uniforms,
            streams,
            rounds,
            np.ascontiguousarray(checkpoints, dtype=np.int64),
            *outputs,
            invalid,
            work=kernels.THREAD_WORK,  # always the helper thread: a round can cost ~10 µs
        )
    refuse_invalid(status, invalid, n)
    return outputs
