"""The store's files: reading without writing, files cut short, full disks, removal.

Readers need no space and change nothing (:func:`open_read_only`): a read-only connection
(``mode=ro``) writes nothing to the database file, but SQLite still creates the WAL index
(``-shm``) and grows it to 32 KiB by writing into it; on a full disk that write fails
(``SQLITE_IOERR_SHMSIZE``, "disk I/O error"). Then the index is opened read-only
(``readonly_shm=1``: SQLite rebuilds it in private memory from the WAL, or maps the index of a
running writer), and without an index file and without a WAL to read the database file is read
alone (``immutable=1``). The ``-wal``/``-shm`` files a reader had to create are removed again
when it closes, if no other connection has the store open (:func:`remove_reader_files`).

A file cut short (copied or synced in part, a disk that filled while it was copied) is read as
far as it goes: SQLite refuses a file shorter than its header says ("database disk image is
malformed") unless ``PRAGMA writable_schema`` is on; then every page that is left can be read
and the pages past the end are reported as damaged (:func:`cut_short`,
:func:`connect_cut_short`); :mod:`~impactbandits.experiments.store_repair` recovers its rows.

A full disk is one line (:class:`DiskFullError`, :func:`disk_full_as_error`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from impactbandits.errors import StoreError

__all__ = [
    "DiskFullError",
    "companions",
    "connect_cut_short",
    "cut_short",
    "database_files",
    "disk_full_as_error",
    "error_code",
    "first_line",
    "first_page_lost",
    "is_disk_full",
    "open_read_only",
    "reads_cut_short",
    "remove_database",
    "remove_reader_files",
    "unreadable_store_error",
]


def first_line(text: str, width: int = 120) -> str:
    line = (text.strip().splitlines() or [""])[0]
    return line if len(line) <= width else line[: width - 1] + "…"


class DiskFullError(StoreError):
    """The disk filled up while writing; what was committed before is kept and consistent."""


def is_disk_full(exc: BaseException) -> bool:
    """``SQLITE_FULL`` or ``SQLITE_IOERR_SHMSIZE`` from SQLite (the second: the WAL index,
    ``-shm``, could not be grown, which SQLite does by writing into it), or
    ``ENOSPC``/``EDQUOT`` from the operating system."""
    if isinstance(exc, sqlite3.OperationalError):
        code = error_code(exc)
        return (
            code & 0xFF == sqlite3.SQLITE_FULL
            or code == _IOERR_SHMSIZE
            or "database or disk is full" in str(exc)
        )
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


#: ``SQLITE_IOERR_SHMSIZE`` (``sqlite3`` names it only from Python 3.11 on).
_IOERR_SHMSIZE = getattr(sqlite3, "SQLITE_IOERR_SHMSIZE", sqlite3.SQLITE_IOERR | (19 << 8))


def error_code(exc: BaseException) -> int:
    """The extended SQLite result code of ``exc`` (0 if it carries none)."""
    return int(getattr(exc, "sqlite_errorcode", 0) or 0)


@contextlib.contextmanager
def disk_full_as_error(what: str) -> Iterator[None]:
    """Turn a full disk into ``DiskFullError("output: disk full while WHAT; ...")``."""
    try:
        yield
    except (sqlite3.OperationalError, OSError) as exc:
        if not is_disk_full(exc):
            raise
        raise DiskFullError(
            f"output: disk full while {what}; free space and run the same command again"
        ) from None


# -- a file cut short ----------------------------------------------------------------------------
_HEADER = b"SQLite format 3\x00"


def cut_short(db_path: Path | None) -> tuple[int, int] | None:
    """``(bytes in the file, bytes its header says it holds)`` if ``db_path`` is an SQLite file
    shorter than its header says (e.g. truncated by a copy that stopped), else ``None``.

    The header's page count (offset 28) counts only if the change counter (offset 24) equals
    the "version valid for" number (offset 92), as SQLite itself decides.

    This opens the file outside SQLite: call it only where no connection of this process holds
    a lock on it (this module does so only after SQLite refused the file). Closing any
    descriptor of a file drops every POSIX lock the process holds on it, and another process
    could then take this process's connections for gone (and, say, delete the WAL one of them
    is writing)."""
    if db_path is None:
        return None
    try:
        with open(db_path, "rb") as file:
            head = file.read(100)
            size = os.fstat(file.fileno()).st_size
    except OSError:
        return None
    if len(head) < 100 or not head.startswith(_HEADER):
        return None
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    if page_size < 512 or pages == 0 or head[24:28] != head[92:96]:
        return None
    return (size, pages * page_size) if size < pages * page_size else None


def connect_cut_short(
    db_path: Path, connect: Callable[[bool], sqlite3.Connection]
) -> tuple[sqlite3.Connection, tuple[int, int] | None]:
    """``connect(False)``, and the file's :func:`cut_short` (``None``). ``connect(allow)``
    opens and reads (closing what it opened if that fails), with ``PRAGMA writable_schema=ON``
    first if ``allow``. SQLite refuses a file shorter than its header says as "malformed"
    unless ``writable_schema`` is on (which only lifts that check; nothing is written): if
    ``connect(False)`` raises ``SQLITE_CORRUPT`` and the file is cut short, the result is
    ``connect(True)`` and the cut."""
    try:
        return connect(False), None
    except sqlite3.DatabaseError as exc:
        if error_code(exc) & 0xFF != sqlite3.SQLITE_CORRUPT:
            raise
        cut = cut_short(db_path)  # the failed connection is closed: no lock of ours to drop
        if cut is None:
            raise
    return connect(True), cut


def reads_cut_short(db: sqlite3.Connection) -> bool:
    """Whether ``db`` was opened by :func:`connect_cut_short` for a file cut short."""
    try:
        return bool(db.execute("PRAGMA writable_schema").fetchone()[0])
    except sqlite3.DatabaseError:
        return False


# -- reading without writing -------------------------------------------------------------------
#: Primary result codes after which a reader tries again without the WAL index file.
_IO_CODES = frozenset(
    {sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY}
)


def companions(db_path: Path) -> tuple[Path, Path]:
    """The ``-wal`` and ``-shm`` files of ``db_path``."""
    return db_path.with_name(db_path.name + "-wal"), db_path.with_name(db_path.name + "-shm")


def _open_uri(uri: str, timeout: float, allow_cut: bool) -> sqlite3.Connection:
    """Open ``uri`` and read its schema (which starts a read: the WAL and its index are
    opened then)."""
    db = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
    try:
        if allow_cut:
            db.execute("PRAGMA writable_schema=ON")
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        db.close()
        raise
    return db


def open_read_only(
    db_path: Path, timeout: float = 30.0
) -> tuple[sqlite3.Connection, tuple[Path, ...], tuple[int, int] | None]:
    """A read-only connection to ``db_path`` that needs no free space, the ``-wal``/``-shm``
    files it created (for :func:`remove_reader_files`) and the file's :func:`cut_short`.
    Nothing is written to the database, and a healthy one is never opened outside SQLite.

    First ``mode=ro``; if that fails for want of the WAL index (``SQLITE_IOERR_SHMSIZE`` on a
    full disk; ``SQLITE_CANTOPEN`` where it cannot be created), ``readonly_shm=1`` if the index
    file exists (SQLite then reads the WAL into private memory, or maps a running writer's
    index), else, if no WAL holds anything, ``immutable=1`` (the database file alone; no other
    connection can be writing, since a writer needs both files). A file cut short is read as
    far as it goes (:func:`connect_cut_short`). Raises ``sqlite3.DatabaseError`` (the first
    failure) if none of these can read it."""
    wal, shm = companions(db_path)
    before = {path for path in (wal, shm) if path.exists()}

    def created() -> tuple[Path, ...]:
        return tuple(path for path in (wal, shm) if path not in before and path.exists())

    uri = db_path.absolute().as_uri()

    def connect(allow_cut: bool) -> sqlite3.Connection:
        try:
            return _open_uri(f"{uri}?mode=ro", timeout, allow_cut)
        except sqlite3.OperationalError as exc:
            if error_code(exc) & 0xFF not in _IO_CODES:
                raise
            return _open_without_index(uri, db_path, timeout, allow_cut, exc)

    try:
        db, cut = connect_cut_short(db_path, connect)
    except BaseException:
        remove_reader_files(db_path, created())
        raise
    return db, created(), cut


def _open_without_index(
    uri: str, db_path: Path, timeout: float, allow_cut: bool, first: sqlite3.OperationalError
) -> sqlite3.Connection:
    wal, shm = companions(db_path)
    if shm.exists():
        try:
            return _open_uri(f"{uri}?mode=ro&readonly_shm=1", timeout, allow_cut)
        except sqlite3.OperationalError as exc:
            if error_code(exc) & 0xFF not in _IO_CODES:
                raise
    try:
        log_empty = not wal.exists() or wal.stat().st_size == 0
    except OSError:
        log_empty = False
    if not log_empty:
        raise first
    return _open_uri(f"{uri}?mode=ro&immutable=1", timeout, allow_cut)


def remove_reader_files(db_path: Path, created: Iterable[Path]) -> None:
    """Remove the ``-wal``/``-shm`` files a read-only connection created (it cannot remove
    them itself, as the last writable connection does on closing), once it is closed.

    Only if the WAL is empty and no other connection has the store open: under the exclusive
    lock of a connection in ``locking_mode=EXCLUSIVE``, which keeps its WAL index in private
    memory and, the WAL being empty, writes nothing to the database file; it removes the empty
    WAL itself on closing. If SQLite cannot read the file at all (its first page is cut
    short), nobody can be using the files, and they are removed directly. Anything else in the
    way (a lock, no write access) leaves the files; they are harmless."""
    created = set(created)
    if not created:
        return
    wal, shm = companions(db_path)

    def log_empty() -> bool:
        return not wal.exists() or wal.stat().st_size == 0

    try:
        if db_path.with_name(db_path.name + "-journal").exists() or not log_empty():
            return  # a rollback journal (a writable connection would roll it back), or data
    except OSError:
        return
    uri = f"{db_path.absolute().as_uri()}?mode=rw"

    def connect(allow_cut: bool) -> sqlite3.Connection:
        db = sqlite3.connect(uri, uri=True, timeout=0, isolation_level=None)
        try:
            if allow_cut:
                db.execute("PRAGMA writable_schema=ON")
            db.execute("PRAGMA locking_mode=EXCLUSIVE")
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # takes the lock
        except BaseException:
            db.close()
            raise
        return db

    try:
        db, _ = connect_cut_short(db_path, connect)
    except sqlite3.DatabaseError as exc:
        if error_code(exc) & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
            with contextlib.suppress(OSError):
                if first_page_lost(db_path, "") is not None and log_empty():
                    for path in created:
                        path.unlink(missing_ok=True)
        return
    try:
        if shm in created and log_empty():
            shm.unlink(missing_ok=True)
    except OSError:
        pass
    finally:
        with contextlib.suppress(sqlite3.Error):
            db.close()


def unreadable_store_error(db_path: Path, exc: sqlite3.DatabaseError, field: str) -> StoreError:
    """The one-line error for a store that SQLite cannot open at all (``exc``): a full disk
    (``field`` ``"output"``: opened to write), a WAL that cannot be read without an index file
    that cannot be made, a file cut short before the end of its first page, or a file that is
    not a results store."""
    where = str(db_path)
    reason = first_line(str(exc))
    if error_code(exc) & 0xFF in _IO_CODES:
        if field == "output" and is_disk_full(exc):
            return DiskFullError(
                f"output: disk full while opening the store {where!r} (SQLite cannot make its "
                "WAL index, -shm); free space and run the same command again"
            )
        if field != "output" and _log_needs_index(db_path):
            wal, shm = companions(db_path)
            return StoreError(
                f"{field}: cannot read {where!r} here: its write-ahead log ({wal.name}) holds "
                f"results that SQLite reads through an index file ({shm.name}), which cannot "
                f"be made ({reason}); free space, or make the directory writable, and run the "
                "same command again"
            )
        verb = "open" if field != "output" else "open for writing"
        return StoreError(f"{field}: cannot {verb} {where!r} ({reason})")
    return first_page_lost(db_path, field) or StoreError(
        f"{field}: {where!r} is not a results store, or is damaged beyond repair "
        f"({reason}); move it away or choose another directory"
    )


def first_page_lost(db_path: Path, field: str) -> StoreError | None:
    """The one-line error for an SQLite file cut short before the end of its first page
    (which lists its tables: nothing in it can be read), else ``None``. Checked before SQLite
    opens it, which would make ``-wal``/``-shm`` files that could not be removed again."""
    try:
        size = db_path.stat().st_size
        with open(db_path, "rb") as file:
            head = file.read(100)
    except OSError:
        return None
    if not head or not head.startswith(_HEADER[: len(head)]):
        return None
    cut = cut_short(db_path)
    page_size = int.from_bytes(head[16:18], "big") if len(head) >= 18 else 0
    page_size = 65536 if page_size == 1 else page_size
    if len(head) == 100 and (cut is None or size >= page_size):
        return None
    total = f" of its {cut[1]:,}" if cut is not None else ""
    return StoreError(
        f"{field}: {str(db_path)!r} is damaged beyond repair: the file is cut short ({size:,}"
        f"{total} bytes are left) before the end of its first page, which lists its tables, "
        "so nothing in it can be read; move it away and run again"
    )


def _log_needs_index(db_path: Path) -> bool:
    """Whether ``db_path`` has a non-empty WAL (which cannot be read without its index)."""
    wal, _ = companions(db_path)
    try:
        return wal.stat().st_size > 0
    except OSError:
        return False


def database_files(path: Path) -> Iterator[Path]:
    yield path
    for suffix in ("-wal", "-shm"):
        yield path.with_name(path.name + suffix)


def remove_database(path: Path) -> None:
    """Delete an SQLite file and its ``-wal``/``-shm`` companions (if present)."""
    for file in database_files(path):
        file.unlink(missing_ok=True)
