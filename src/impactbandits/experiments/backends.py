"""Where a sweep's tasks run: the serial, process and Dask backends behind one
:class:`concurrent.futures.Executor`-like interface, and what happens when a worker dies.

* ``auto`` (default) — ``serial`` for a small sweep, else ``process``
  (:func:`impactbandits.experiments.runner.choose_backend`);
* ``serial`` — in the calling process, one task after the other;
* ``process`` — a local process pool with ``workers`` processes, forked from a fork
  server that has imported the task runner (and the compiled loops) once
  (:func:`process_context`); its workers die with the runner
  (:class:`~impactbandits.experiments.processes.Lifeline`);
* ``dask`` — ``distributed.Client(scheduler).get_executor()``, or a ``LocalCluster`` with
  ``workers`` single-threaded worker processes when no scheduler address is given.

:func:`execute` keeps a bounded number of tasks in flight and hands each one's records on as
they arrive. A worker killed from outside (the out-of-memory killer) raises :class:`Lost`;
:func:`lost_message` says which task it was running (the process backend's workers claim their
tasks on a :class:`~impactbandits.experiments.processes.TaskBoard`; Dask names the task).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from impactbandits import kernels
from impactbandits.errors import SpecError
from impactbandits.experiments.cells import Bundle, Task
from impactbandits.experiments.processes import (
    Lifeline,
    TaskBoard,
    exit_reason,
    terminate_workers,
)
from impactbandits.experiments.worker import Record, run_claimed

__all__ = [
    "BACKENDS",
    "FORKSERVER_PRELOAD",
    "Lost",
    "check_address",
    "close_local_cluster",
    "default_workers",
    "execute",
    "executor",
    "lost_message",
    "preload",
    "process_context",
    "start_fork_server",
]

BACKENDS = ("auto", "serial", "process", "dask")
#: Modules the process backend's fork server imports once, so that every worker forked from it
#: starts with them (each worker imported them itself before: ~0.9 s of CPU per worker): the
#: task runner and the compiled loops when they are used (:data:`KERNELS_PRELOAD`).
FORKSERVER_PRELOAD = ("impactbandits.experiments.worker",)
#: What the fork server imports for the compiled loops, by :func:`impactbandits.kernels.
#: planned`: the module built ahead of time, or numba and the generic loop (each worker then
#: loads only the machine code of its loops from numba's cache).
KERNELS_PRELOAD = {"aot": "impactbandits.kernels._aot", "jit": "impactbandits.kernels.loop"}
#: Seconds each worker of a local Dask cluster gets to exit after a finished sweep before it is
#: killed (:func:`close_local_cluster`). distributed's own close waits 4 s, then kills the
#: process and logs "Worker process still alive after 4.0 seconds, killing": too short for a
#: worker that imported SciPy and the compiled loops to exit on a busy machine.
WORKER_CLOSE_TIMEOUT = 30.0


def default_workers() -> int:
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


class Lost(Exception):
    """Raised by :func:`execute` when a task's worker died: ``task`` if known (Dask names
    the task; a broken process pool does not: the :class:`TaskBoard` tells)."""

    def __init__(self, task: Task | Bundle | None, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.task, self.cause = task, cause


def preload() -> list[str]:
    """:data:`FORKSERVER_PRELOAD`, with the compiled loops if they would be used (the module
    built ahead of time, or numba's; checked without importing either here)."""
    planned = kernels.planned()
    return [*FORKSERVER_PRELOAD, *([KERNELS_PRELOAD[planned]] if planned else [])]


def process_context() -> multiprocessing.context.BaseContext:
    """The process backend's start method: on Linux a fork server that has imported
    :func:`preload`'s modules (workers are forked from it with them; the preload is ignored
    if this process's fork server already runs), elsewhere spawn."""
    if not sys.platform.startswith("linux"):
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", *preload()])
    return context


def start_fork_server() -> None:
    """Start the process backend's fork server now, without waiting for it: it imports its
    preload (~0.5 s) while this process expands the cells, opens the store and plans, instead
    of when the first task is submitted. No effect off Linux or if it already runs."""
    if process_context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


@contextlib.contextmanager
def executor(backend: str, workers: int, scheduler: str | None) -> Iterator[Executor | None]:
    if backend == "serial":
        yield None
    elif backend == "process":
        context = process_context()
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
            check_address(scheduler)
            try:
                client = Client(scheduler, timeout=10)
            except (OSError, ValueError) as exc:  # unreachable (timeout), or refused
                raise SpecError("scheduler", f"cannot reach {scheduler!r} ({exc})") from None
        finished = False
        try:
            yield client.get_executor(pure=False)
            finished = True
        finally:
            with _quiet("distributed"):
                client.close()
                if cluster is not None:
                    close_local_cluster(cluster, graceful=finished)


def close_local_cluster(cluster: Any, graceful: bool) -> None:
    """Close a Dask ``LocalCluster`` this process started. After a finished sweep
    (``graceful``) each worker gets :data:`WORKER_CLOSE_TIMEOUT` seconds to exit on its own
    before it is killed; otherwise (an error, Ctrl-C, SIGTERM: a worker may still be computing
    a task it cannot interrupt) distributed's own short wait, then the kill."""
    if graceful:
        nannies = list(getattr(cluster, "workers", {}).values())

        async def close_workers() -> None:
            await asyncio.gather(
                *(nanny.close(timeout=WORKER_CLOSE_TIMEOUT) for nanny in nannies),
                return_exceptions=True,
            )

        with contextlib.suppress(Exception):  # the cluster's own close below still runs
            cluster.sync(close_workers)
    cluster.close()


@contextlib.contextmanager
def _quiet(name: str) -> Iterator[None]:
    """Only errors from the logger ``name`` (and its children) while inside: distributed's
    shutdown notices ("Worker process still alive after 4.0 seconds, killing", closing
    comms ...) are not the user's business; the runner reports what matters."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(max(logging.ERROR, logger.getEffectiveLevel()))
    try:
        yield
    finally:
        logger.setLevel(level)


def check_address(scheduler: str) -> None:
    """A malformed ``--scheduler`` is one line before any connection is tried (a ``Client``
    given one raises, and its clean-up prints a trace of its own)."""
    from distributed.comm.addressing import parse_address, resolve_address

    try:
        parse_address(scheduler)
        resolve_address(scheduler)
    except (ValueError, TypeError) as exc:
        raise SpecError(
            "scheduler",
            f"{scheduler!r} is not a scheduler address ({exc}); give e.g. tcp://host:8786",
        ) from None
    except OSError:
        pass  # a host name that does not resolve: reported when connecting


def execute(
    tasks: Sequence[Task | Bundle],
    executor: Executor | None,
    limit: int,
    on_records: Callable[[list[Record]], None],
    board: str | None = None,
) -> None:
    """Run ``tasks`` (in this process without an ``executor``), at most ``limit`` in flight,
    handing each one's records to ``on_records``; a worker that dies raises :class:`Lost`.
    ``board``: the process backend's :class:`TaskBoard` directory. A
    :class:`~impactbandits.experiments.cells.Bundle` is submitted as one task."""
    if executor is None:
        for task in tasks:
            on_records(run_claimed(task, None))
        return
    # On an exception, what is pending is dropped by the executor's context (`executor`), not
    # cancelled here: on Python 3.11, a future cancelled before the pool's workers are
    # terminated makes the pool's manager thread fail (InvalidStateError, printed to stderr).
    pending: dict[Future[list[Record]], Task | Bundle] = {}
    queue = iter(tasks)

    def fill() -> None:
        if len(pending) >= limit:
            return
        for task in queue:
            pending[executor.submit(run_claimed, task, board)] = task
            if len(pending) >= limit:
                break

    fill()
    while pending:
        done, _ = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            task = pending.pop(future)
            try:
                records = future.result()
            except BrokenProcessPool as exc:
                raise Lost(None, exc) from None
            except Exception as exc:
                if type(exc).__name__ == "KilledWorker":  # distributed's, not imported here
                    raise Lost(task, exc) from None
                raise
            on_records(records)
        fill()


def lost_message(
    lost: Lost, executor: Executor | None, board: TaskBoard | None, stored: str
) -> str:
    """One line: which worker died under which task, what is kept, how to go on."""
    advice = (
        f"{stored}: run the same command again to resume (fewer --workers or a smaller "
        "--batch-size need less memory)"
    )
    if lost.task is not None:  # Dask: the scheduler gave up on this task's workers
        return (
            f"backend: the Dask workers running {lost.task.describe()} died "
            f"({type(lost.cause).__name__}); {advice}"
        )
    dead = (
        board.lost(executor)
        if board is not None and isinstance(executor, ProcessPoolExecutor)
        else []
    )
    if not dead:
        return f"backend: a worker process died ({lost.cause}); {advice}"
    pid, code, task = dead[0]
    running = f" while running {task}" if task else " (no task was running)"
    more = f" (and {len(dead) - 1} more)" if len(dead) > 1 else ""
    return f"backend: worker process {pid} {exit_reason(code)}{running}{more}; {advice}"
