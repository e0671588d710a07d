"""From a spec to cells: (environment, policy, horizon) runs, and seed batches of them (tasks).

An *anytime* policy (``requires_horizon`` false) gets one cell that runs to the largest horizon
and is measured at every horizon of the grid; a horizon-aware policy gets one cell per horizon.
Each run also records ``spec.checkpoints`` trajectory points (half log-spaced, half linear) for
regret-vs-time plots.

Random streams are keyed so that common random numbers hold: the
environment's streams depend only on (root seed, environment content, replication), the
policy's on (root seed, environment, policy, replication) — never on the horizon, the batch, the
backend or the worker count.

A cell whose environment and policy both declare themselves deterministic
(:attr:`Cell.deterministic`) gives the same result for every seed: the runner simulates one
replication and records it for the others (:attr:`Task.copies`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from impactbandits.core.policy import BatchedSimplePolicy, Policy
from impactbandits.core.random import POLICY, BatchRNG, stable_key
from impactbandits.core.spaces import ActionSpace
from impactbandits.errors import SpecError, SpecWarning
from impactbandits.experiments.spec import ComponentSpec, ExperimentSpec, canonical_json
from impactbandits.registry import build_environment, build_policy
from impactbandits.usercode import reporting

__all__ = ["Bundle", "Cell", "Task", "batches", "cell_count", "expand"]


@dataclass(frozen=True)
class Cell:
    """One (environment, policy, horizon) run shape; ``horizon`` is ``None`` for anytime runs."""

    key: str
    environment: ComponentSpec
    policy: ComponentSpec
    horizon: int | None
    rounds: int
    grid: tuple[int, ...]
    """Horizons measured by this cell (all of the spec's for anytime cells, else ``(T,)``)."""
    checkpoints: tuple[int, ...]
    """Every recorded round: the grid plus trajectory points."""
    n_arms: int
    seed: int
    env_key: int
    policy_key: int
    env_field: str = "environments[0]"
    """Where the environment is in the spec (``environments[i]``), for error messages."""
    policy_field: str = "policies[0]"
    deterministic: bool = False
    """Both the environment and the policy declare themselves deterministic
    (:attr:`~impactbandits.core.environment.Environment.deterministic`,
    :attr:`~impactbandits.core.policy.Policy.deterministic`): every replication is the same
    run. Not part of :attr:`key` (it changes how results are computed, not what they are)."""
    vectorised: bool = True
    """The policy is written over the batch (not a wrapped single-replication policy): its
    per-round cost hardly grows with the batch (for the scheduler's cost estimates)."""
    compiled: bool = False
    """The pair declares a compiled loop (:func:`runs_compiled`): a round costs about one pull
    of machine code per replication (for the scheduler's cost estimates)."""


@dataclass(frozen=True)
class Task:
    """A batch of replications of one cell: the unit of work sent to a backend.

    ``copies``: further seeds of a :attr:`Cell.deterministic` cell that get the result of
    ``replications[0]`` as their own (identical to what simulating them would give)."""

    cell: Cell
    replications: tuple[int, ...]
    copies: tuple[int, ...] = ()

    @property
    def seeds(self) -> int:
        """Results this task produces (simulated replications and copies)."""
        return len(self.replications) + len(self.copies)

    def describe(self) -> str:
        """``environments[0] (b2) x policies[1] (exp3), horizon 1,000, seeds 0..5``."""
        cell = self.cell
        horizon = "anytime" if cell.horizon is None else f"horizon {cell.horizon:,}"
        reps = self.replications
        seeds = f"seed {reps[0]}" if len(reps) == 1 else f"seeds {reps[0]}..{reps[-1]}"
        return (
            f"{cell.env_field} ({cell.environment.label}) x {cell.policy_field} "
            f"({cell.policy.label}), {horizon}, {seeds}"
        )


@dataclass(frozen=True)
class Bundle:
    """Tasks submitted to a backend as one unit (Dask: fewer, larger submissions, whose
    scheduling and serialisation cost is shared); its records are theirs, in order."""

    tasks: tuple[Task, ...]

    @property
    def seeds(self) -> int:
        return sum(task.seeds for task in self.tasks)

    def describe(self) -> str:
        """The first task's :meth:`Task.describe`, and how many more the bundle holds."""
        first = self.tasks[0].describe()
        more = len(self.tasks) - 1
        return first if not more else f"{first} (and {more} more task{'s' * (more > 1)})"


def trajectory_points(rounds: int, count: int) -> np.ndarray:
    """About ``count`` rounds in 1..rounds: half geometric, half linear, always ``rounds``."""
    half = max(count // 2, 1)
    geo = np.floor(np.geomspace(1, rounds, half)).astype(np.int64)
    lin = np.floor(np.linspace(rounds / half, rounds, half)).astype(np.int64)
    return np.unique(np.clip(np.concatenate([geo, lin, [rounds]]), 1, rounds))


def expand(spec: ExperimentSpec) -> list[Cell]:
    """All cells of ``spec`` in a deterministic order (environment, policy, horizon)."""
    cells = []
    for e, env_spec in enumerate(spec.environments):
        env_field = f"environments[{e}]"
        env_parts = {env_field: (env_spec.kind, env_spec.params)}
        with reporting(env_parts, f"checking {env_field}", env_field):
            env = build_environment(env_spec.kind, env_spec.params)
            env.check_horizon(max(spec.horizons))
        space = env.action_space
        env_key = env_spec.content_key()
        env_deterministic = bool(env.deterministic)
        for p, pol_spec in enumerate(spec.policies):
            if not pol_spec.runs_on(env_spec.label):
                continue
            policy = build_policy(pol_spec.kind, pol_spec.params)
            if space.kind not in policy.action_kinds:
                raise SpecError(
                    f"policies[{p}].kind",
                    f"{pol_spec.kind!r} plays {', '.join(policy.action_kinds)} actions but "
                    f"environments[{e}] ({env_spec.kind!r}) has {space.kind} actions",
                )
            caution = policy.caution(env)
            if caution:
                warnings.warn(
                    f"policies[{p}] ({pol_spec.label}) on environments[{e}] "
                    f"({env_spec.label}): {caution}",
                    SpecWarning,
                    stacklevel=2,
                )
            policy_key = stable_key(canonical_json([env_spec.content(), pol_spec.content()]))
            horizons: Iterable[int | None] = spec.horizons if policy.requires_horizon else [None]
            for horizon in horizons:
                _preflight(policy, space, horizon, spec.seed, policy_key, p, env_parts, pol_spec)
                compiled = runs_compiled(env, policy)
                rounds = horizon if horizon is not None else max(spec.horizons)
                grid = (horizon,) if horizon is not None else spec.horizons
                points = trajectory_points(rounds, spec.checkpoints)
                checkpoints = tuple(int(x) for x in np.union1d(points, grid))
                content = {
                    "environment": env_spec.content(),
                    "policy": pol_spec.content(),
                    "horizon": horizon,
                    "grid": list(grid),
                    "checkpoints": spec.checkpoints,
                    "seed": spec.seed,
                    "format": 1,
                }
                key = f"{stable_key(canonical_json(content)):016x}"
                cells.append(
                    Cell(
                        key,
                        env_spec,
                        pol_spec,
                        horizon,
                        rounds,
                        grid,
                        checkpoints,
                        space.n,
                        spec.seed,
                        env_key,
                        policy_key,
                        f"environments[{e}]",
                        f"policies[{p}]",
                        env_deterministic and bool(policy.deterministic),
                        not isinstance(policy, BatchedSimplePolicy),
                        compiled,
                    )
                )
    return cells


def runs_compiled(env: Any, policy: Policy) -> bool:
    """Whether the pair would take a compiled loop, judged from what their classes declare
    (``policy`` reset; :func:`~impactbandits.core.compiled.declared_step`) and whether compiled
    loops are planned in this process (:func:`impactbandits.kernels.planned`, found without
    importing numba). An estimate for the scheduler: the worker decides."""
    from impactbandits import kernels
    from impactbandits.core.compiled import declared_step

    if kernels.planned() is None:
        return False
    world = declared_step(env, "compiled_world", ("reset", "step"))
    if world is None and declared_step(env, "pull_model", ("reset", "step")) is None:
        return False
    step = declared_step(policy)
    try:
        return step is not None and step() is not None
    except Exception:  # a user's declaration that fails: the worker reports it
        return False


def cell_count(spec: ExperimentSpec) -> tuple[int, int]:
    """``(cells, rounds of one seed)`` of :func:`expand`'s cells, counted without building an
    environment or resetting a policy (each policy is built once to ask whether it needs the
    horizon): what ``describe`` prints about a figure's size."""
    cells = rounds = 0
    longest = max(spec.horizons)
    for pol_spec in spec.policies:
        policy = build_policy(pol_spec.kind, pol_spec.params)
        runs = [h for h in spec.horizons] if policy.requires_horizon else [longest]
        for env_spec in spec.environments:
            if pol_spec.runs_on(env_spec.label):
                cells += len(runs)
                rounds += sum(runs)
    return cells, rounds


def _preflight(
    policy: Policy,
    space: ActionSpace,
    horizon: int | None,
    seed: int,
    policy_key: int,
    p: int,
    env_parts: dict[str, tuple[str, dict[str, Any]]],
    pol_spec: ComponentSpec,
) -> None:
    """Reset the policy for one replication, so that what it checks at set-up (e.g. that its
    1/ε divides the environment's grid) fails before a store is created, not in a worker."""
    field = f"policies[{p}]"
    parts = {**env_parts, field: (pol_spec.kind, pol_spec.params)}
    with reporting(parts, f"setting up {field}", field):
        policy.reset(space, horizon, BatchRNG.from_key(seed, (policy_key, POLICY), [0]))


def batches(cell: Cell, replications: Iterable[int], size: int) -> Iterator[Task]:
    """Split the replications of ``cell`` into tasks of at most ``size``."""
    reps = sorted(replications)
    for start in range(0, len(reps), size):
        yield Task(cell, tuple(reps[start : start + size]))
