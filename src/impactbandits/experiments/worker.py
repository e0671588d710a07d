"""What a backend executes: one :class:`~impactbandits.experiments.cells.Task` → result records.

A pure function of its argument, so the serial, process and Dask backends give bit-identical
results. The one piece of state is a per-process cache of oracle values (:class:`OracleCache`):
the oracle of an environment is the same for every cell of it that measures the same
replications at the same checkpoints, and a cached value is exactly what recomputing it gives.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from impactbandits.core.environment import EnvironmentRandom
from impactbandits.core.random import POLICY, BatchRNG
from impactbandits.core.spaces import InvalidAction
from impactbandits.errors import SpecError
from impactbandits.experiments.cells import Bundle, Task
from impactbandits.experiments.payload import encode
from impactbandits.experiments.processes import claim
from impactbandits.experiments.spec import ComponentSpec
from impactbandits.kernels import simulate
from impactbandits.registry import (
    ENVIRONMENTS,
    ORACLES,
    POLICIES,
    build_environment,
    build_policy,
    resolve_oracle,
)
from impactbandits.usercode import import_paths, reporting

__all__ = ["ORACLE_CACHE", "OracleCache", "Record", "run_claimed", "run_task"]


@dataclass(frozen=True)
class Record:
    """The finished (cell, seed): its checkpoint summaries, encoded for the store
    (:func:`~impactbandits.experiments.payload.encode`: one compact bytes object, cheap to
    send between processes and stored as it is)."""

    cell: str
    seed: int
    payload: bytes
    seconds: float
    cpu: float = 0.0
    """CPU seconds of the process that simulated it, this record's share (0 for the copies of
    a deterministic run)."""


def run_task(task: Task) -> list[Record]:
    """Simulate one batch of replications and evaluate the cell's oracle.

    A failure is raised as a picklable one-line error (so it crosses process boundaries with
    its traceback text): :class:`~impactbandits.usercode.UserCodeError` naming the spec field
    when code the spec names raised, :class:`~impactbandits.usercode.InternalError` otherwise.
    """
    cell = task.cell
    env_field, policy_field = cell.env_field, cell.policy_field
    parts: dict[str, tuple[str, Mapping[str, Any] | None]] = {  # usercode.Components
        env_field: (cell.environment.kind, cell.environment.params),
        policy_field: (cell.policy.kind, cell.policy.params),
    }
    if cell.environment.oracle is not None:
        parts[f"{env_field}.oracle"] = (cell.environment.oracle, None)
    context = f"in {env_field} ({cell.environment.label}) x {policy_field} ({cell.policy.label})"
    with reporting(parts, context):
        records = _run_task(task)
    if not task.copies:
        return records
    # a deterministic cell: every seed's run is the one just simulated; the time it took is
    # shared by all the records it stands for
    seconds = records[0].seconds * len(records) / task.seeds
    first = records[0]
    return [replace(r, seconds=seconds) for r in records] + [
        Record(first.cell, int(seed), first.payload, seconds) for seed in task.copies
    ]


def run_claimed(task: Task | Bundle, board: str | None) -> list[Record]:
    """:func:`run_task` with the task claimed on a
    :class:`~impactbandits.experiments.processes.TaskBoard` (``board``: its directory; the
    process backend), so that the runner can say which task a worker that died was running;
    the tasks of a :class:`~impactbandits.experiments.cells.Bundle` one after the other."""
    if isinstance(task, Bundle):
        return [record for one in task.tasks for record in run_claimed(one, board)]
    with claim(board, task.describe()):
        return run_task(task)


def built_in(component: ComponentSpec, table: Mapping[str, str] = POLICIES) -> bool:
    """A component registered in ``table`` that names no user code. Built-in policies' actions
    are valid by construction (checked in round 1; every round in the contract tests), so the
    loop skips the per-round check it runs for user code; built-in environments' oracle values
    may be cached."""
    return component.kind in table and not any(import_paths(component.params))


def _run_task(task: Task) -> list[Record]:
    start = time.perf_counter()
    cpu_start = time.process_time()
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

    optimum = _optimum(task, times)

    extras = {
        name: np.asarray(values, dtype=float)
        for name, values in env.summary_metrics(trajectory).items()
    }
    seconds = (time.perf_counter() - start) / len(task.replications)
    cpu = (time.process_time() - cpu_start) / len(task.replications)
    records = []
    for i, rep in enumerate(task.replications):
        payload = encode(
            {
                "times": times,
                "reward": trajectory.reward[i],
                "expected": trajectory.expected[i],
                "optimum": None if optimum is None else optimum[i],
                "pulls": trajectory.pulls[i],
                "switches": trajectory.switches[i],
                "phases": None if trajectory.phases is None else trajectory.phases[i],
                "phase_names": list(policy.phases),
                "phase_switches": None
                if trajectory.phase_switches is None
                else trajectory.phase_switches[i],
                "extras": {name: v[i] if v.ndim == 2 else v for name, v in extras.items()},
                "regret_on": env.regret_on,
                "realised_on": env.realised_on,
            }
        )
        records.append(Record(cell.key, int(rep), payload, seconds, cpu))
    return records


def _optimum(task: Task, times: np.ndarray) -> np.ndarray | None:
    """``(R, C)`` oracle values of the task's replications (``None``: no oracle), through the
    per-process :data:`ORACLE_CACHE` when the oracle and the environment are built-in."""
    cell = task.cell
    name = cell.environment.oracle
    if name is None:
        return None
    key = None
    if name in ORACLES and built_in(cell.environment, ENVIRONMENTS):
        key = (cell.seed, cell.env_key, task.replications, times.tobytes())
        cached = ORACLE_CACHE.get(key)
        if cached is not None:
            return cached
    oracle = resolve_oracle(name, "oracle")
    fresh = build_environment(cell.environment.kind, cell.environment.params)
    fresh.reset(EnvironmentRandom(cell.seed, cell.env_key, task.replications))
    optimum = np.asarray(oracle(fresh, times), dtype=float)
    if key is not None:
        ORACLE_CACHE.put(key, optimum)
    return optimum


class OracleCache:
    """A small LRU of oracle values, keyed by (root seed, environment content key,
    replications, checkpoint times): everything the value depends on. Values are stored
    read-only; at most ``max_entries`` of them and ``max_bytes`` in all (a value larger than
    that is not kept)."""

    def __init__(self, max_entries: int = 64, max_bytes: int = 64 * 2**20) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._values: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[Any, ...]) -> np.ndarray | None:
        value = self._values.get(key)
        if value is None:
            self.misses += 1
            return None
        self._values.move_to_end(key)
        self.hits += 1
        return value

    def put(self, key: tuple[Any, ...], value: np.ndarray) -> None:
        if value.nbytes > self.max_bytes or key in self._values:
            return
        value = value.copy()
        value.setflags(write=False)
        self._values[key] = value
        self._bytes += value.nbytes
        while len(self._values) > self.max_entries or self._bytes > self.max_bytes:
            _, dropped = self._values.popitem(last=False)
            self._bytes -= dropped.nbytes

    def clear(self) -> None:
        self._values.clear()
        self._bytes = 0
        self.hits = self.misses = 0


#: The per-process oracle cache (each worker process has its own; a few MB at most).
ORACLE_CACHE = OracleCache()
