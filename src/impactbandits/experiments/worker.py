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
from impactbandits.experiments.cells import Task
from impactbandits.registry import build_environment, build_policy, resolve_oracle

__all__ = ["Record", "run_task"]


@dataclass(frozen=True)
class Record:
    """The finished (cell, seed): its checkpoint summaries as JSON-ready lists."""

    cell: str
    seed: int
    payload: dict[str, Any]
    seconds: float


def run_task(task: Task) -> list[Record]:
    """Simulate one batch of replications and evaluate the cell's oracle."""
    start = time.perf_counter()
    cell = task.cell
    env_random = EnvironmentRandom(cell.seed, cell.env_key, task.replications)
    env = build_environment(cell.environment.kind, cell.environment.params)
    policy = build_policy(cell.policy.kind, cell.policy.params)
    policy_rng = BatchRNG.from_key(cell.seed, (cell.policy_key, POLICY), task.replications)
    times = np.asarray(cell.checkpoints, dtype=np.int64)
    trajectory = simulate(env, policy, cell.rounds, cell.horizon, times, env_random, policy_rng)

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
