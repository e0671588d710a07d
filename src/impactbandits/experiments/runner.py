"""The sweep runner: cells × seeds on a backend, streamed into the store.

Backends all take :func:`~impactbandits.experiments.worker.run_task`
through a :class:`concurrent.futures.Executor`-like interface:

* ``serial`` — in this process, one task after the other;
* ``process`` (default) — a local process pool with ``workers`` processes;
* ``dask`` — ``distributed.Client(scheduler).get_executor()``, or a ``LocalCluster`` with
  ``workers`` single-threaded worker processes when no scheduler address is given.

Only a bounded number of tasks is in flight, and results are written to the store as they arrive
and then dropped, so memory does not grow with the number of cells. Ctrl-C cancels what has not
finished and keeps what has: a re-run resumes. SIGTERM does the same (:class:`Terminated`).

Processes (:mod:`~impactbandits.experiments.processes`): on a stop or an error the pool's
workers are terminated rather than awaited, and workers exit by themselves when the runner dies
(even by SIGKILL). One run at a time writes a run directory
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
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from impactbandits import kernels
from impactbandits.errors import ImpactBanditsError, SpecError
from impactbandits.experiments.cells import Cell, Task, batches, expand
from impactbandits.experiments.lock import LOCK_FILE, run_dir_lock
from impactbandits.experiments.processes import (
    Lifeline,
    TerminateRequest,
    sigterm_stops,
    terminate_workers,
)
from impactbandits.experiments.provenance import SessionClock
from impactbandits.experiments.spec import ExperimentSpec
from impactbandits.experiments.store import STORE_FILE, DiskFullError, Store, check_run_dir
from impactbandits.experiments.store_repair import remove_database
from impactbandits.experiments.worker import Record, run_task

__all__ = [
    "BACKENDS",
    "DEDUP_ENV",
    "Interrupted",
    "RunSummary",
    "Terminated",
    "default_run_dir",
    "plan",
    "run_experiment",
]

BACKENDS = ("serial", "process", "dask")
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
#: At most this many extra splits are tried when planning (bounds the planning time).
MAX_SPLITS = 512
#: Set to ``0`` to simulate every seed of deterministic cells (see the module docstring).
DEDUP_ENV = "IMPACTBANDITS_DEDUP"
#: Modules the process backend's fork server imports once, so that every worker forked from it
#: starts with them (each worker imported them itself before: ~0.9 s of CPU per worker): the
#: task runner and the compiled loops when they are used (:data:`KERNELS_PRELOAD`).
FORKSERVER_PRELOAD = ("impactbandits.experiments.worker",)
#: What the fork server imports for the compiled loops, by :func:`impactbandits.kernels.backend`.
KERNELS_PRELOAD = {"aot": "impactbandits.kernels._aot", "jit": "impactbandits.kernels.loops"}


class Interrupted(ImpactBanditsError):
    """The sweep was stopped (Ctrl-C); finished results are in the store."""

    #: The command line's exit status (128 + SIGINT).
    exit_status = 130


class Terminated(Interrupted):
    """The sweep was stopped by SIGTERM; finished results are in the store."""

    exit_status = 143


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


def _default_workers() -> int:
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


def _cost(task: Task) -> float:
    """Estimated cost of a task: rounds × (simulated replications + :data:`TASK_OVERHEAD`, or
    :data:`LOOP_TASK_OVERHEAD` for a policy that loops over the replications)."""
    overhead = TASK_OVERHEAD if task.cell.vectorised else LOOP_TASK_OVERHEAD
    return float(task.cell.rounds * (len(task.replications) + overhead))


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
            trial = _pieces(cell, seeds, len(split[i]) + 1)
            while len(trial) == len(split[i]):  # e.g. 30 seeds: 5 pieces of 6 = 6 pieces of 5
                trial = _pieces(cell, seeds, len(trial) + 1)
            candidate = [*split[:i], trial, *split[i + 1 :]]
            span = makespan(candidate)
            if span >= best * (1 - 1e-9):
                break
            split, best = candidate, span
    tasks = fixed + [t for tasks in split for t in tasks]
    return sorted(tasks, key=_cost, reverse=True)  # stable: ties keep the cells' order


def _dedup_default() -> bool:
    return os.environ.get(DEDUP_ENV, "1").strip() != "0"


def _preload() -> list[str]:
    """:data:`FORKSERVER_PRELOAD`, with the compiled loops if they would be used (the module
    built ahead of time, or numba's; checked without importing either here)."""
    planned = kernels.planned()
    return [*FORKSERVER_PRELOAD, *([KERNELS_PRELOAD[planned]] if planned else [])]


def _process_context() -> multiprocessing.context.BaseContext:
    """The process backend's start method: on Linux a fork server that has imported
    :func:`_preload`'s modules (workers are forked from it with them; the preload is ignored
    if this process's fork server already runs), elsewhere spawn."""
    if not sys.platform.startswith("linux"):
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", *_preload()])
    return context


def _start_fork_server() -> None:
    """Start the process backend's fork server now, without waiting for it: it imports its
    preload (~0.5 s) while this process expands the cells, opens the store and plans, instead
    of when the first task is submitted. No effect off Linux or if it already runs."""
    if _process_context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


@contextlib.contextmanager
def _executor(backend: str, workers: int, scheduler: str | None) -> Iterator[Executor | None]:
    if backend == "serial":
        yield None
    elif backend == "process":
        context = _process_context()
        with Lifeline(context) as lifeline:  # workers exit when this process dies
            pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=context,
                initializer=lifeline.initializer,
                initargs=lifeline.initargs,
            )
            try:
                yield pool
            except BaseException:
                terminate_workers(pool)  # stop now: do not wait for running tasks
                raise
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
    else:
        try:
            from distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover - depends on the installation
            raise SpecError(
                "backend", "'dask' needs the extra: pip install 'impactbandits[dask]'"
            ) from None
        cluster = None
        if scheduler is None:
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=40,
            )
            client = Client(cluster)
        else:
            try:
                client = Client(scheduler, timeout=10)
            except OSError as exc:
                raise SpecError("scheduler", f"cannot reach {scheduler!r} ({exc})") from None
        try:
            yield client.get_executor(pure=False)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def _execute(
    tasks: list[Task],
    executor: Executor | None,
    limit: int,
    on_records: Callable[[list[Record]], None],
) -> None:
    if executor is None:
        for task in tasks:
            on_records(run_task(task))
        return
    # On an exception, what is pending is dropped by the executor's context (`_executor`), not
    # cancelled here: on Python 3.11, a future cancelled before the pool's workers are
    # terminated makes the pool's manager thread fail (InvalidStateError, printed to stderr).
    pending: set[Future[list[Record]]] = set()
    queue = iter(tasks)
    for task in queue:
        pending.add(executor.submit(run_task, task))
        if len(pending) >= limit:
            break
    while pending:
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            on_records(future.result())
        for task in queue:
            pending.add(executor.submit(run_task, task))
            if len(pending) >= limit:
                break


def run_experiment(
    spec: ExperimentSpec,
    run_dir: str | Path | None = None,
    backend: str = "process",
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
    if backend not in BACKENDS:
        raise SpecError("backend", f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise SpecError("workers", f"must be a positive integer, got {workers!r}")
    if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
        raise SpecError("batch_size", f"must be a positive integer, got {batch_size!r}")
    if scheduler is not None and backend != "dask":
        raise SpecError("scheduler", "only used with --backend dask")
    kernels.planned()  # a bad IMPACTBANDITS_KERNELS is a SpecError here, not in a worker
    n_workers = 1 if backend == "serial" else (workers or _default_workers())
    path = Path(run_dir) if run_dir is not None else default_run_dir(spec)
    check_run_dir(path)
    if backend == "process":
        _start_fork_server()  # it imports its preload while the cells are expanded
    cells = expand(spec)  # validates every component before the store is touched
    if dedup is None:
        dedup = _dedup_default()
    computed = 0
    reused = 0
    simulated = 0
    fresh = not path.exists()
    clock = SessionClock(backend, n_workers)
    total = 0
    try:
        # connect to the backend first: an unreachable scheduler leaves no trace on disk
        with (
            sigterm_stops(),
            _executor(backend, n_workers, scheduler) as executor,
            run_dir_lock(path),  # one writer per run directory
            Store.create(path, spec, cells) as store,
        ):
            finished = store.finished()
            missing = [
                [s for s in range(spec.seeds) if (cell.key, s) not in finished] for cell in cells
            ]
            tasks = plan(cells, missing, n_workers, batch_size, dedup)
            total = sum(t.seeds for t in tasks)
            copies = sum(len(t.copies) for t in tasks)
            simulated = total - copies
            reused = len(cells) * spec.seeds - total
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
                _execute(tasks, executor, IN_FLIGHT_PER_WORKER * n_workers, on_records)
            finally:
                bar(None)
    except (KeyboardInterrupt, TerminateRequest) as stop:
        _record_session(path, clock, total, computed, "interrupted")
        error = Terminated if isinstance(stop, TerminateRequest) else Interrupted
        raise error(
            f"{'terminated' if error is Terminated else 'interrupted'}: {computed + reused} of "
            f"{len(cells) * spec.seeds} results are stored in {path}; run the same command "
            "again to resume"
        ) from None
    except ImpactBanditsError:
        if fresh and computed == 0:
            _discard(path)  # e.g. user code that raised in the first task: leave no trace
        else:
            _record_session(path, clock, total, computed, "failed")
        raise
    _record_session(path, clock, total, computed, "finished")
    return RunSummary(path, len(cells), spec.seeds, computed, reused, simulated)


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
