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
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from types import FrameType
from typing import Any

__all__ = ["Lifeline", "TerminateRequest", "sigterm_stops", "terminate_workers"]

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
