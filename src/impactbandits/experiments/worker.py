"""What a backend executes: one :class:`~impactbandits.experiments.cells.Task` → result records.

A pure function of its argument (no global state), so the serial, process and Dask backends give
bit-identical results.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from impactbandits.core.environment import EnvironmentRandom
from impactbandits.core.random import POLICY, BatchRNG
from impactbandits.core.simulate import simulate
from impactbandits.core.spaces import InvalidAction
from impactbandits.errors import SpecError
from impactbandits.experiments.cells import Task
from impactbandits.experiments.spec import ComponentSpec
from impactbandits.registry import POLICIES, build_environment, build_policy, resolve_oracle
from impactbandits.usercode import Components, import_paths, reporting

__all__ = ["Record", "run_task"]


@dataclass(frozen=True)
class Record:
    """The finished (cell, seed): its checkpoint summaries as JSON-ready lists."""

    cell: str
    seed: int
    payload: dict[str, Any]
    seconds: float


def run_task(task: Task) -> list[Record]:
    """Simulate one batch of replications and evaluate the cell's oracle.

    A failure is raised as a picklable one-line error (so it crosses process boundaries with
    its traceback text): :class:`~impactbandits.usercode.UserCodeError` naming the spec field
    when code the spec names raised, :class:`~impactbandits.usercode.InternalError` otherwise.
    """
    cell = task.cell
    env_field, policy_field = cell.env_field, cell.policy_field
    parts: Components = {
        env_field: (cell.environment.kind, cell.environment.params),
        policy_field: (cell.policy.kind, cell.policy.params),
    }
    if cell.environment.oracle is not None:
        parts[f"{env_field}.oracle"] = (cell.environment.oracle, None)
    context = f"in {env_field} ({cell.environment.label}) x {policy_field} ({cell.policy.label})"
    with reporting(parts, context):
        return _run_task(task)


def built_in(component: ComponentSpec) -> bool:
    """A registered component that names no user code: its actions are valid by construction
    (checked in round 1; every round in the contract tests), so the loop skips the per-round
    check it runs for user code."""
    return component.kind in POLICIES and not any(import_paths(component.params))


def _run_task(task: Task) -> list[Record]:
    start = time.perf_counter()
    cell = task.cell
    env_random = EnvironmentRandom(cell.seed, cell.env_key, task.replications)
    env = build_environment(cell.environment.kind, cell.environment.params)
    policy = build_policy(cell.policy.kind, cell.policy.params)
    policy_rng = BatchRNG.from_key(cell.seed, (cell.policy_key, POLICY), task.replications)
    times = np.asarray(cell.checkpoints, dtype=np.int64)
    try:
        trajectory = simulate(
            env,
            policy,
            cell.rounds,
            cell.horizon,
            times,
            env_random,
            policy_rng,
            check_actions=not built_in(cell.policy),
        )
    except InvalidAction as exc:
        reps = task.replications
        where = (
            f"replication {reps[exc.row]}"
            if exc.row is not None
            else f"replications {reps[0]}..{reps[-1]}"
        )
        raise SpecError(
            f"{cell.policy_field}.kind",
            f"{cell.policy.kind} returned an invalid action in {where}, {exc.message}",
        ) from None

    optimum = None
    if cell.environment.oracle is not None:
        oracle = resolve_oracle(cell.environment.oracle, "oracle")
        fresh = build_environment(cell.environment.kind, cell.environment.params)
        fresh.reset(EnvironmentRandom(cell.seed, cell.env_key, task.replications))
        optimum = np.asarray(oracle(fresh, times), dtype=float)

    extras = {
        name: np.asarray(values, dtype=float)
        for name, values in env.summary_metrics(trajectory).items()
    }
    seconds = (time.perf_counter() - start) / len(task.replications)
    records = []
    for i, rep in enumerate(task.replications):
        payload: dict[str, Any] = {
            "times": times.tolist(),
            "reward": trajectory.reward[i].tolist(),
            "expected": trajectory.expected[i].tolist(),
            "optimum": None if optimum is None else optimum[i].tolist(),
            "pulls": trajectory.pulls[i].tolist(),
            "switches": trajectory.switches[i].tolist(),
            "phases": None if trajectory.phases is None else trajectory.phases[i].tolist(),
            "phase_names": list(policy.phases),
            "phase_switches": None
            if trajectory.phase_switches is None
            else trajectory.phase_switches[i].tolist(),
            "extras": {name: (v[i] if v.ndim == 2 else v).tolist() for name, v in extras.items()},
            "regret_on": env.regret_on,
            "realised_on": env.realised_on,
        }
        records.append(Record(cell.key, int(rep), payload, seconds))
    return records
