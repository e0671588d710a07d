"""The sweep runner: cells × seeds on a backend (serial, process pool or Dask:
:mod:`~impactbandits.experiments.backends`), streamed into the store. The default backend,
``"auto"``, runs small sweeps serially (:data:`SERIAL_WORK`) and the others on the process pool.

Only a bounded number of tasks is in flight, and results are written to the store as they arrive
and then dropped, so memory does not grow with the number of cells. Ctrl-C cancels what has not
finished and keeps what has: a re-run resumes. SIGTERM does the same (:class:`Terminated`).

Processes (:mod:`~impactbandits.experiments.processes`): on a stop or an error the pool's
workers are terminated rather than awaited, and workers exit by themselves when the runner dies
(even by SIGKILL); a worker killed from outside stops the run with one line naming the task it
was running (:class:`WorkerLost`). One run at a time writes a run directory
(:mod:`~impactbandits.experiments.lock`).

No replayed work: a :attr:`~impactbandits.experiments.cells.Cell.deterministic` cell (a
deterministic policy on a deterministic environment) gives the same result for every seed, so
one replication is simulated and its result recorded for every missing seed (the records are
identical to what simulating each seed gives). ``run_experiment(dedup=False)``, or the
environment variable ``IMPACTBANDITS_DEDUP=0`` (:data:`DEDUP_ENV`), simulates every seed
instead: tests and benchmarks use it to check and measure what this saves.

Scheduling (:func:`plan`): each task's cost is estimated as rounds × (replications +
:data:`TASK_OVERHEAD`); cells are split by seed ranges only where that shortens the estimated
finishing time of the whole sweep on the workers (splitting costs the per-round overhead once
more), and tasks are submitted longest first.
"""

from __future__ import annotations

import contextlib
import heapq
import math
import os
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from impactbandits import kernels, settings
from impactbandits.errors import ImpactBanditsError, SpecError
from impactbandits.experiments import backends
from impactbandits.experiments.cells import Bundle, Cell, Task, batches, expand
from impactbandits.experiments.lock import LOCK_FILE, run_dir_lock
from impactbandits.experiments.processes import (
    TaskBoard,
    TerminateRequest,
    sigterm_stops,
)
from impactbandits.experiments.provenance import SessionClock
from impactbandits.experiments.spec import ExperimentSpec, SpecRecord, load_spec, spec_from_mapping
from impactbandits.experiments.store import STORE_FILE, DiskFullError, Store, check_run_dir
from impactbandits.experiments.store_files import remove_database
from impactbandits.experiments.worker import Record

__all__ = [
    "BACKENDS",
    "DEDUP_ENV",
    "Interrupted",
    "RunSummary",
    "Terminated",
    "WorkerLost",
    "default_run_dir",
    "plan",
    "run_experiment",
]

BACKENDS = backends.BACKENDS
#: ``backend="auto"`` (the default) runs a sweep in this process when its planned work
#: (:func:`planned_work`) is at most this many pulls of the compiled loop: at the compiled loops'
#: 10^7-10^8 pulls per CPU second that is a fraction of a second, less than starting a process
#: pool costs (about 1 CPU second and 0.5 s of wall time measured on a 2-core machine); larger
#: sweeps use the process pool on every core.
SERIAL_WORK = 5_000_000
#: Largest batch of replications simulated together (bounds memory per task).
MAX_BATCH = 256
#: Tasks in flight per worker (keeps workers busy while bounding memory).
IN_FLIGHT_PER_WORKER = 4
#: Fixed cost of a task per round, in replications: the per-round overhead a batch shares.
#: Measured on full-scale Lindner cells (benchmarks/dedup.py --estimate): a batch of 30 costs
#: about as much as one replication for policies written over the batch, ~8x one for wrapped
#: single-replication policies (HKR).
TASK_OVERHEAD = 256
LOOP_TASK_OVERHEAD = 2
#: A round of one replication of a wrapped single-replication policy (readable: Python calls),
#: in pulls of the compiled loop (a few µs against a few tens of ns).
WRAPPED_PULL = 64
#: The Dask backend submits the tasks in about this many bundles per worker (:func:`bundle`):
#: each submission costs scheduling and serialisation in the client, the scheduler and the
#: worker, which on 400 small tasks added half the CPU the sweep itself took; 16 bundles a
#: worker leave the last one at about 3 % of a worker's share.
BUNDLES_PER_WORKER = 16
#: At most this many extra splits are tried when planning (bounds the planning time).
MAX_SPLITS = 512
#: Set to ``0`` to simulate every seed of deterministic cells (see the module docstring).
DEDUP_ENV = settings.DEDUP


class Interrupted(ImpactBanditsError):
    """The sweep was stopped (Ctrl-C); finished results are in the store."""

    #: The command line's exit status (128 + SIGINT).
    exit_status = 130


class Terminated(Interrupted):
    """The sweep was stopped by SIGTERM; finished results are in the store."""

    exit_status = 143


class WorkerLost(ImpactBanditsError):
    """A worker process or Dask worker died under a task (killed from outside, e.g. by the
    out-of-memory killer); finished results are in the store."""


@dataclass(frozen=True)
class RunSummary:
    run_dir: Path
    cells: int
    seeds: int
    computed: int
    reused: int
    simulated: int = 0
    """Replications actually simulated (``computed`` minus the results of deterministic
    cells recorded from one simulated replication)."""


def default_run_dir(spec: ExperimentSpec) -> Path:
    """``spec.output`` or ``runs/<name>-<key prefix>``."""
    if spec.output:
        return Path(spec.output)
    return Path("runs") / f"{spec.name}-{spec.store_key()[:8]}"


def _cost(task: Task) -> float:
    """Estimated cost of a task, in pulls of the compiled loop: rounds × (simulated
    replications + :data:`TASK_OVERHEAD`) for a policy written over the batch, rounds ×
    (replications + :data:`LOOP_TASK_OVERHEAD`) on the compiled loop, and rounds ×
    (:data:`WRAPPED_PULL` × replications + :data:`LOOP_TASK_OVERHEAD`) for a wrapped
    single-replication policy that runs readable (a Python call per replication and round)."""
    cell = task.cell
    replications = len(task.replications)
    if cell.compiled:
        return float(cell.rounds * (replications + LOOP_TASK_OVERHEAD))
    if cell.vectorised:
        return float(cell.rounds * (replications + TASK_OVERHEAD))
    return float(cell.rounds * (WRAPPED_PULL * replications + LOOP_TASK_OVERHEAD))


def _pieces(cell: Cell, missing: list[int], count: int) -> list[Task]:
    """``missing`` in about ``count`` equal seed ranges (each at most :data:`MAX_BATCH`)."""
    size = max(1, min(MAX_BATCH, math.ceil(len(missing) / count)))
    return list(batches(cell, missing, size))


def _makespan(costs: list[float], workers: int) -> float:
    """When the last of ``workers`` finishes, tasks taken longest first by the first free."""
    loads = [0.0] * workers
    for cost in sorted(costs, reverse=True):
        heapq.heapreplace(loads, loads[0] + cost)
    return max(loads)


def plan(
    cells: list[Cell],
    missing: list[list[int]],
    workers: int,
    batch_size: int | None = None,
    dedup: bool = True,
) -> list[Task]:
    """The tasks that compute the ``missing[i]`` seeds of ``cells[i]``, longest first.

    A deterministic cell (with ``dedup``) is one task: one simulated replication, copied to
    the other seeds. With ``batch_size``, other cells are cut into batches of that size.
    Otherwise large batches are fastest (the per-round overhead is shared by the batch), so a
    cell is split by seed ranges only while splitting the largest task shortens the estimated
    makespan on ``workers`` workers (e.g. one cell on two workers: two halves; many similar
    cells: none). Which seeds go together never changes a result."""
    fixed: list[Task] = []
    work: list[tuple[Cell, list[int]]] = []
    for cell, seeds in zip(cells, missing, strict=True):
        if not seeds:
            continue
        if dedup and cell.deterministic:
            fixed.append(Task(cell, (seeds[0],), tuple(seeds[1:])))
        elif batch_size is not None:
            fixed.extend(batches(cell, seeds, batch_size))
        else:
            work.append((cell, seeds))
    counts = [math.ceil(len(seeds) / MAX_BATCH) for _, seeds in work]
    split = [_pieces(cell, seeds, n) for (cell, seeds), n in zip(work, counts, strict=True)]
    if workers > 1 and work:
        fixed_costs = [_cost(t) for t in fixed]

        def makespan(parts: list[list[Task]]) -> float:
            return _makespan(fixed_costs + [_cost(t) for tasks in parts for t in tasks], workers)

        best = makespan(split)
        for _ in range(MAX_SPLITS):
            # the cell whose largest piece is the largest task that can still be split
            candidates = [
                (max(_cost(t) for t in tasks), -i)
                for i, tasks in enumerate(split)
                if max(len(t.replications) for t in tasks) > 1
            ]
            if not candidates:
                break
            i = -max(candidates)[1]
            cell, seeds = work[i]
            count = len(split[i]) + 1
            trial = _pieces(cell, seeds, count)
            while len(trial) == len(split[i]):  # e.g. 30 seeds: 5 pieces of 6 = 6 pieces of 5
                count += 1  # (not len(trial) + 1: 4 seeds in 3 pieces are 2 pieces of 2)
                trial = _pieces(cell, seeds, count)
            candidate = [*split[:i], trial, *split[i + 1 :]]
            span = makespan(candidate)
            if span >= best * (1 - 1e-9):
                break
            split, best = candidate, span
    tasks = fixed + [t for tasks in split for t in tasks]
    return sorted(tasks, key=_cost, reverse=True)  # stable: ties keep the cells' order


def _dedup_default() -> bool:
    return settings.dedup()


def run_experiment(
    spec: ExperimentSpec | Mapping[str, Any] | str | Path,
    run_dir: str | Path | None = None,
    backend: str = "auto",
    workers: int | None = None,
    scheduler: str | None = None,
    batch_size: int | None = None,
    progress: bool = False,
    log: Callable[[str], Any] | None = None,
    dedup: bool | None = None,
) -> RunSummary:
    """Run every missing (cell, seed) of ``spec`` into the store in ``run_dir``.

    ``dedup``: simulate one replication of a deterministic cell and record it for every seed
    (default: on, unless the environment variable :data:`DEDUP_ENV` is ``0``); the stored
    results are the same either way.

    Raises :class:`~impactbandits.errors.SpecError` / ``StoreError`` on bad input before
    anything is written (also if another run is writing ``run_dir``), :class:`Interrupted`
    on Ctrl-C and :class:`Terminated` on SIGTERM (finished rows are kept; called from the main
    thread, SIGTERM is handled while the sweep runs, then the previous handler restored). A
    damaged store is copied aside and rebuilt from its intact rows first (a ``StoreWarning``
    says so); a full disk raises :class:`~impactbandits.experiments.store.DiskFullError`
    (a ``StoreError``; what was stored is kept).
    """
    spec = _as_spec(spec)
    if run_dir is not None and not isinstance(run_dir, str | os.PathLike):
        raise SpecError(
            "run_dir", f"must be a path (str or pathlib.Path), got {type(run_dir).__name__}"
        )
    for name, value in (("progress", progress), ("dedup", dedup)):
        if value is not None and not isinstance(value, bool):
            raise SpecError(name, f"must be True or False, got {value!r}")
    if log is not None and not callable(log):
        raise SpecError("log", f"must be a function taking one line, got {log!r}")
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise SpecError("backend", f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
    if workers is not None and (
        not isinstance(workers, int) or isinstance(workers, bool) or workers < 1
    ):
        raise SpecError("workers", f"must be a positive integer, got {workers!r}")
    if batch_size is not None and (
        not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1
    ):
        raise SpecError("batch_size", f"must be a positive integer, got {batch_size!r}")
    if scheduler is not None and backend != "dask":
        raise SpecError("scheduler", "only used with --backend dask")
    if scheduler is not None and not isinstance(scheduler, str):
        raise SpecError("scheduler", "must be an address such as 'tcp://host:8786'")
    kernels.planned()  # a bad IMPACTBANDITS_KERNELS is a SpecError here, not in a worker
    n_workers = 1 if backend == "serial" else (workers or backends.default_workers())
    path = Path(run_dir) if run_dir is not None else default_run_dir(spec)
    check_run_dir(path)
    if backend == "process":
        backends.start_fork_server()  # it imports its preload while the cells are expanded
    cells = expand(spec)  # validates every component before the store is touched
    if dedup is None:
        dedup = _dedup_default()
    computed = 0
    reused: int | None = None  # until the store is read
    simulated = 0
    fresh = not path.exists()
    clock = SessionClock(backend, n_workers)
    total = 0
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(sigterm_stops())
            board: TaskBoard | None = None
            executor = None
            if backend != "auto":
                # connect to the backend first: an unreachable scheduler leaves no trace on disk
                board, executor = _enter_backend(stack, backend, n_workers, scheduler)
            stack.enter_context(run_dir_lock(path))  # one writer per run directory
            store = stack.enter_context(Store.create(path, spec, cells))
            finished = store.finished()
            missing = [
                [s for s in range(spec.seeds) if (cell.key, s) not in finished] for cell in cells
            ]
            reused = len(cells) * spec.seeds - sum(map(len, missing))
            tasks = plan(cells, missing, n_workers, batch_size, dedup)
            if backend == "auto":
                backend = choose_backend(tasks, n_workers)
                if backend == "serial":
                    n_workers = 1
                    tasks = plan(cells, missing, n_workers, batch_size, dedup)
                clock.backend, clock.workers = backend, n_workers
                board, executor = _enter_backend(stack, backend, n_workers, scheduler)
            notice = kernels.dispatch.numba_notice(planned_work(tasks))
            if notice is not None:  # a large sweep on the readable loops for want of numba
                warnings.warn(notice, kernels.dispatch.ReadableLoopsWarning, stacklevel=2)
            total = sum(t.seeds for t in tasks)
            copies = sum(len(t.copies) for t in tasks)
            simulated = total - copies
            if log is not None:
                log(
                    f"{len(cells)} cells x {spec.seeds} seeds: {total} to run, "
                    f"{reused} already stored"
                    + (f" ({copies} copied from identical deterministic runs)" if copies else "")
                )
            bar = _progress(progress, total)

            def on_records(records: list[Record]) -> None:
                nonlocal computed
                try:
                    store.add(records)
                except DiskFullError:  # the failed batch is rolled back: the store is consistent
                    raise DiskFullError(
                        f"output: disk full while storing results in {path} "
                        f"({computed + reused} of {len(cells) * spec.seeds} stored); "
                        "free space and run the same command again"
                    ) from None
                computed += len(records)
                clock.add_task_cpu(sum(r.cpu for r in records), in_main=executor is None)
                bar(len(records))

            try:
                planned = board.path if board is not None else None
                units = bundle(tasks, n_workers) if backend == "dask" else tasks
                backends.execute(
                    units, executor, IN_FLIGHT_PER_WORKER * n_workers, on_records, planned
                )
            except backends.Lost as lost:
                kept = computed + reused
                stored = (
                    f"{kept} of {len(cells) * spec.seeds} results are stored in {path}"
                    if kept
                    else "no result was stored yet"
                )
                raise WorkerLost(backends.lost_message(lost, executor, board, stored)) from None
            finally:
                bar(None)
    except (KeyboardInterrupt, TerminateRequest) as stop:
        _record_session(path, clock, total, computed, "interrupted")
        error = Terminated if isinstance(stop, TerminateRequest) else Interrupted
        word = "terminated" if error is Terminated else "interrupted"
        if reused is None:  # before the store was read: say nothing of what it holds
            done = "nothing was computed" + (f"; what {path} holds is kept" * (not fresh))
            raise error(f"{word} before the run began: {done}") from None
        raise error(
            f"{word}: {computed + reused} of {len(cells) * spec.seeds} results are stored in "
            f"{path}; run the same command again to resume"
        ) from None
    except ImpactBanditsError:
        if fresh and computed == 0:
            _discard(path)  # e.g. user code that raised in the first task: leave no trace
        else:
            _record_session(path, clock, total, computed, "failed")
        raise
    _record_session(path, clock, total, computed, "finished")
    return RunSummary(path, len(cells), spec.seeds, computed, reused, simulated)


def _enter_backend(
    stack: contextlib.ExitStack, backend: str, workers: int, scheduler: str | None
) -> tuple[TaskBoard | None, Any]:
    """Enter ``backend``'s task board (the process backend's: which task each worker runs)
    and executor on ``stack``; ``(board, executor)`` (``None``, ``None`` for serial)."""
    board = stack.enter_context(TaskBoard()) if backend == "process" else None
    executor = stack.enter_context(backends.executor(backend, workers, scheduler))
    return board, executor


def planned_work(tasks: list[Task]) -> float:
    """The tasks' estimated cost in pulls of the compiled loop (:func:`_cost`)."""
    return sum(_cost(task) for task in tasks)


def bundle(tasks: list[Task], workers: int) -> list[Bundle]:
    """``tasks`` (longest first) in about :data:`BUNDLES_PER_WORKER` × ``workers`` bundles of
    similar estimated cost (:func:`_cost`): consecutive tasks are added to a bundle until it
    reaches its share of the total; a task larger than that share is a bundle of its own. The
    order of the tasks, and so the results, are unchanged."""
    share = planned_work(tasks) / max(1, BUNDLES_PER_WORKER * workers)
    bundles: list[Bundle] = []
    current: list[Task] = []
    cost = 0.0
    for task in tasks:
        current.append(task)
        cost += _cost(task)
        if cost >= share:
            bundles.append(Bundle(tuple(current)))
            current, cost = [], 0.0
    if current:
        bundles.append(Bundle(tuple(current)))
    return bundles


def choose_backend(tasks: list[Task], workers: int) -> str:
    """``backend="auto"``: ``"serial"`` when the planned work is at most :data:`SERIAL_WORK`
    (or there is one worker), else ``"process"``."""
    if workers <= 1 or planned_work(tasks) <= SERIAL_WORK:
        return "serial"
    return "process"


def _as_spec(spec: Any) -> ExperimentSpec:
    """``run_experiment``'s first argument as a validated spec: an :class:`ExperimentSpec`, a
    mapping of its fields, or the path of a TOML file; anything else is a one-line error."""
    if isinstance(spec, ExperimentSpec):
        return spec
    if isinstance(spec, SpecRecord):
        raise SpecError(
            "spec",
            "a spec read from a run directory is data; to run it, validate it first with "
            "ExperimentSpec.create(**record.to_dict()) (that imports the code it names: only "
            "for specs you trust)",
        )
    if isinstance(spec, Mapping):
        return spec_from_mapping(spec)
    if isinstance(spec, str | os.PathLike):
        return load_spec(spec)
    raise SpecError(
        "spec",
        f"must be an ExperimentSpec, a mapping of its fields or the path of a TOML spec, got "
        f"{type(spec).__name__}",
    )


def _record_session(
    path: Path, clock: SessionClock, planned: int, computed: int, outcome: str
) -> None:
    """Append the session to the store, after the workers have exited (so that their CPU time
    is counted); a session that had nothing to do, or stored nothing before it stopped, is not
    recorded. Never raises: the run's own outcome matters more."""
    if not planned or (not computed and outcome != "finished"):
        return
    session = clock.stop(computed, outcome)
    with contextlib.suppress(Exception), Store.open_existing(path) as store:
        store.append_session(session.to_json())


def _discard(path: Path) -> None:
    """Remove a run directory this call created and stored nothing in (only its own files)."""
    remove_database(path / STORE_FILE)
    (path / LOCK_FILE).unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        path.rmdir()  # only if empty: never anything else


def _progress(enabled: bool, total: int) -> Callable[[int | None], None]:
    """A progress callback: ``advance(n)``; ``advance(None)`` closes the bar."""
    if not enabled or total == 0:
        return lambda n: None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        transient=False,
    )
    bar.start()
    task = bar.add_task("simulating", total=total)

    def advance(n: int | None) -> None:
        if n is None:
            bar.stop()
        else:
            bar.advance(task, n)

    return advance
