"""One writer per run directory: an advisory lock on ``RUN_DIR/.lock``.

A run (``run``, ``reproduce``, :func:`~impactbandits.experiments.runner.run_experiment`) holds
the lock from before its store is created or opened until it returns or raises. A second run
on the same directory is refused at once — ``output: '…' is in use by another run (pid N)`` —
instead of computing every result a second time. Readers (``export``, ``report``) take no
lock: the store's WAL journal lets them read while a run writes.

POSIX uses ``fcntl.flock``, Windows ``msvcrt.locking`` on one byte. Either way the operating
system releases the lock when its holder closes the file or dies, so the file left behind by a
killed run never blocks the next one. The file itself stays (removing it would race with a
process that has just opened it); it holds the holder's pid, for the message. A lock file that
is a link (a received directory) is refused, never opened through.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from impactbandits.errors import StoreError
from impactbandits.experiments.run_files import open_in_place
from impactbandits.experiments.store_files import DiskFullError

__all__ = ["LOCK_FILE", "run_dir_lock"]

LOCK_FILE = ".lock"
#: Windows locks are mandatory: lock a byte past the pid so that others can read the pid.
_WINDOWS_LOCK_OFFSET = 64


@contextlib.contextmanager
def run_dir_lock(run_dir: Path, field: str = "output") -> Iterator[None]:
    """Hold the lock of ``run_dir`` (created if missing) for the block.

    Raises :class:`~impactbandits.errors.StoreError` naming ``field`` if another process holds
    it or the directory cannot be created. Where the file system cannot lock at all (some
    network file systems), the block runs unlocked."""
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DiskFullError(
                f"{field}: disk full while creating {str(run_dir)!r}; free space and run the "
                "same command again"
            ) from None
        raise StoreError(f"{field}: cannot create {str(run_dir)!r} ({exc.strerror})") from None
    try:  # never through a link placed there (a received directory)
        fd = open_in_place(run_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644, field)
    except OSError as exc:
        raise StoreError(f"{field}: cannot write to {str(run_dir)!r} ({exc.strerror})") from None
    try:
        locked = _try_lock(fd)
        if locked is False:
            pid = _read_pid(fd)
            holder = f" (pid {pid})" if pid is not None else ""
            raise StoreError(
                f"{field}: {str(run_dir)!r} is in use by another run{holder}; wait for it to "
                "finish or choose another directory"
            )
        if locked:
            _write(fd, f"{os.getpid()}\n")
        try:
            yield
        finally:
            if locked:
                _write(fd, "")
                _unlock(fd)
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool | None:
    """``True``: locked; ``False``: another process holds it; ``None``: cannot lock here."""
    try:
        if sys.platform == "win32":
            import msvcrt

            os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if isinstance(exc, BlockingIOError) or exc.errno in (errno.EACCES, errno.EDEADLK):
            return False  # held by another process (EACCES/EDEADLK: msvcrt's way to say so)
        return None
    return True


def _unlock(fd: int) -> None:
    """Release explicitly where closing may release late (Windows); close releases flock."""
    if sys.platform == "win32":
        import msvcrt

        with contextlib.suppress(OSError):
            os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)


def _write(fd: int, text: str) -> None:
    """Replace the file's text (best effort: the pid is only for messages)."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, text.encode())


def _read_pid(fd: int) -> int | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        os.lseek(fd, 0, os.SEEK_SET)
        return int(os.read(fd, 32).split()[0])
    return None
