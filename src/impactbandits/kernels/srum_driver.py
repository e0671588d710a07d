"""The Python side of SRUM's compiled loop (:mod:`impactbandits.kernels.srum`): which pairs it
takes and the arrays it is given. Importable without numba."""

from __future__ import annotations

from typing import Any

import numpy as np

from impactbandits.core.compiled import declared_step
from impactbandits.core.pull_model import PullModel

__all__ = ["simulate_srum", "srum_run"]


def srum_run(env: Any, policy: Any, rounds: int) -> tuple[Any, PullModel] | None:
    """``(run, model)``: what a reset SRUM declares for its compiled loop
    (:meth:`~impactbandits.policies.opportunity.SelfRegulatedUtilityMaximization.compiled_run`)
    and the environment's pull model, when both classes declare them for the rounds they play
    (:func:`~impactbandits.core.compiled.declared_step`); else ``None``."""
    from impactbandits.kernels.dispatch import pull_model

    declared = declared_step(policy, "compiled_run", ("reset", "select", "update"))
    if declared is None:
        return None
    run = declared()
    model = None if run is None else pull_model(env, rounds, arm_rewards=True)
    return None if model is None else (run, model)


def simulate_srum(
    run: Any,
    model: PullModel,
    n: int,
    phases: int,
    rounds: int,
    checkpoints: np.ndarray,
    replications: int,
) -> tuple[np.ndarray, ...] | None:
    """The run's ``(reward, expected, pulls, switches, phases, arm_rewards, phase_switches)``
    checkpoint arrays (:class:`~impactbandits.core.simulate.Trajectory`'s order) from SRUM's
    compiled loop for ``run`` (:class:`~impactbandits.policies.opportunity.SRUMRun`) on the
    pull model ``model`` of ``n`` arms (the policy reports ``phases`` phases); ``None`` if no
    loop is available (no module built ahead of time with it, and numba's JIT not allowed). A
    user's fairness kernels that fail give a one-line :class:`~impactbandits.errors.SpecError`."""
    from impactbandits import kernels
    from impactbandits.kernels import aot
    from impactbandits.kernels.dispatch import (
        checkpoint_outputs,
        noise_code,
        noise_key,
        user_errors,
    )
    from impactbandits.kernels.sources import builtin, srum_tag

    fairness = run.fairness
    users = not (builtin(fairness.value.py_func) and builtin(fairness.range.py_func))
    tag = srum_tag(fairness.value, fairness.range)
    loop = None
    if tag is not None and kernels.backend() == "aot":
        loop = aot.entry(f"run_srum_{tag}", aot.SRUM_ARGS)
    if loop is None:
        if not kernels.jit():
            return None
        from impactbandits.kernels.srum import srum_for

        loop = srum_for(fairness)
    n_cp = checkpoints.size
    # Trajectory's order: reward, expected, pulls, switches, phases, arm rewards, phase switches
    outputs = (
        *checkpoint_outputs(replications, n_cp, n),
        np.empty((replications, n_cp, phases), dtype=np.int64),
        np.empty((replications, n_cp, n)),
        np.empty((replications, n_cp), dtype=np.int64),
    )
    key, ids = noise_key(model, replications)
    with user_errors("fairness", "the compiled fairness function", users):
        kernels.call(
            loop,
            np.ascontiguousarray(model.values, dtype=np.float64),
            noise_code(model),
            float(model.sigma),
            key,
            ids,
            np.ascontiguousarray(fairness.params, dtype=np.float64),
            run.lam,
            run.alpha,
            run.beta,
            run.scale_log,
            run.horizon,
            run.ucb_c,
            int(run.authors),
            int(run.ucb_authors),
            run.phase,
            run.targets,
            rounds,
            np.ascontiguousarray(checkpoints, dtype=np.int64),
            *outputs,
            work=rounds * replications * n,
        )
    return outputs
