"""Process lifetimes of a run: SIGTERM as a stop request, and workers that die with the runner.

* :func:`sigterm_stops` turns SIGTERM into :class:`TerminateRequest` (raised in the main thread,
  like :class:`KeyboardInterrupt` for Ctrl-C), so the runner stops the same way for both: it
  keeps every committed batch, ends its workers and says how to resume.
* :class:`Lifeline` ties worker processes to the runner. The runner keeps the write end of a
  pipe; each worker gets the read end (through the pool's ``initializer``) and a daemon thread
  that blocks on it. When the runner dies — even by SIGKILL, which cannot be caught — the kernel
  closes the write end, the read raises ``EOFError`` and the worker leaves at once
  (``os._exit``). This does not depend on who the workers' parent is (with the ``forkserver``
  start method it is the fork server, not the runner) and costs no polling. Once the workers are
  gone, the fork server and multiprocessing's resource tracker exit by themselves: both live
  only as long as a process holds their pipes.
* :func:`terminate_workers` ends a process pool's workers without waiting for running tasks
  (``ProcessPoolExecutor.shutdown`` waits for them).
* :class:`TaskBoard` tells which task a worker was running when it died (killed from outside,
  e.g. by the out-of-memory killer): each worker writes what it runs to a file named by its
  process id (:func:`claim`), so the runner can say which task was lost.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = [
    "Lifeline",
    "TaskBoard",
    "TerminateRequest",
    "claim",
    "exit_reason",
    "sigterm_stops",
    "terminate_workers",
]

#: Exit status of a worker whose runner has died (nobody reads it; for `ps` and core dumps).
ORPHAN_EXIT = 3


class TerminateRequest(BaseException):
    """SIGTERM arrived while :func:`sigterm_stops` was active.

    A :class:`BaseException`, like :class:`KeyboardInterrupt`, so that ``except Exception``
    in library or user code does not swallow it."""


@contextlib.contextmanager
def sigterm_stops() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`TerminateRequest` in the main thread (once;
    further SIGTERMs during the clean-up are ignored). The previous handler is restored on
    exit. Does nothing outside the main thread, where Python cannot install handlers, or when
    SIGTERM is ignored or handled outside Python (a choice of whoever started us)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is None or previous == signal.SIG_IGN:
        yield
        return
    raised = False

    def handler(signum: int, frame: FrameType | None) -> None:
        nonlocal raised
        if not raised:
            raised = True
            raise TerminateRequest

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class Lifeline:
    """A pipe whose write end only the runner holds; see the module docstring.

    Use as a context manager around the pool's lifetime; pass :attr:`initializer` and
    :attr:`initargs` to the pool. Closing it (after the pool is shut down) releases both ends.
    """

    def __init__(self, context: BaseContext) -> None:
        self._reader, self._writer = context.Pipe(duplex=False)

    @property
    def initializer(self) -> Callable[[Connection], None]:
        return watch_runner

    @property
    def initargs(self) -> tuple[Connection]:
        return (self._reader,)

    def close(self) -> None:
        self._writer.close()
        self._reader.close()

    def __enter__(self) -> Lifeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def watch_runner(lifeline: Connection) -> None:
    """Pool initializer (runs in each worker): exit when the runner is gone, and leave Ctrl-C
    to the runner, which stops cleanly and ends the workers itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(
        target=_exit_when_closed, args=(lifeline,), name="impactbandits-lifeline", daemon=True
    ).start()


def _exit_when_closed(lifeline: Connection) -> None:
    try:
        while True:
            lifeline.recv_bytes()  # nothing is ever sent: this returns only at end of file
    except (EOFError, OSError):
        pass
    os._exit(ORPHAN_EXIT)


def terminate_workers(pool: ProcessPoolExecutor) -> None:
    """End ``pool``'s worker processes now (SIGTERM), without waiting for running tasks; the
    pool then counts as broken and ``shutdown`` returns promptly."""
    terminate = getattr(pool, "terminate_workers", None)  # Python >= 3.14
    if terminate is not None:
        terminate()
        return
    processes: dict[int, Any] = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        with contextlib.suppress(OSError, ValueError):  # already gone or closed
            process.terminate()


@contextlib.contextmanager
def claim(board: str | None, description: str) -> Iterator[None]:
    """In a worker: record ``description`` as what this process runs during the block (in
    ``board``, a :class:`TaskBoard`'s directory; nothing without one)."""
    if board is None:
        yield
        return
    path = Path(board) / str(os.getpid())
    with contextlib.suppress(OSError):  # the board is a diagnosis aid: never fail a task for it
        path.write_text(description, encoding="utf-8")
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.write_text("", encoding="utf-8")


class TaskBoard:
    """A temporary directory where workers :func:`claim` their tasks; :meth:`lost` reads it
    for the workers of a broken pool. Use as a context manager (the directory is removed)."""

    def __init__(self) -> None:
        self.path = tempfile.mkdtemp(prefix="impactbandits-tasks-")

    def __enter__(self) -> TaskBoard:
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    def lost(self, pool: ProcessPoolExecutor) -> list[tuple[int, int | None, str]]:
        """``(pid, exit code, task)`` of the pool's workers that died on their own (not the
        SIGTERM the pool sends the others once it is broken), with the task each was running
        (``""``: none or unknown)."""
        processes: dict[int, Any] = getattr(pool, "_processes", None) or {}
        ended = [(pid, p.exitcode) for pid, p in list(processes.items()) if p.exitcode]
        own = [(pid, code) for pid, code in ended if code != -signal.SIGTERM] or ended
        out = []
        for pid, code in own:
            try:
                task = (Path(self.path) / str(pid)).read_text(encoding="utf-8")
            except OSError:
                task = ""
            out.append((pid, code, task))
        return out


def exit_reason(code: int | None) -> str:
    """``killed by SIGKILL`` / ``exited with status 3`` / ``ended``."""
    if code is None:
        return "ended"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        oom = " (as the out-of-memory killer does)" if -code == signal.SIGKILL else ""
        return f"was killed by {name}{oom}"
    return f"exited with status {code}"
