"""Integrity of the results store: per-row checksums, damage scans, copies of damaged files,
full disks.

Every result row written since checksums were introduced carries ``crc``, the CRC32 of its key
and payload (:func:`row_checksum`: the bytes of a binary payload, see
:mod:`~impactbandits.experiments.payload`, or the UTF-8 of an older JSON one); rows of older
stores have ``crc = NULL`` (not verified: only checked to be valid JSON). :func:`scan` finds
what can be trusted in a store: it runs ``PRAGMA quick_check`` for the file's structure, then
reads every row, and where the file is damaged (a page that raises ``sqlite3.DatabaseError``)
it reads row by row, so one broken page costs only the rows on it. The store
(:mod:`impactbandits.experiments.store`) uses the scan to refuse exports of damaged stores and
to rebuild them before a run.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sqlite3
import time
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from impactbandits.errors import StoreError
from impactbandits.experiments.payload import decode, decode_json, encode

__all__ = [
    "DamagedStoreError",
    "DiskFullError",
    "Scan",
    "StoreWarning",
    "copy_rows",
    "disk_full_as_error",
    "has_checksums",
    "is_disk_full",
    "keep_copy",
    "quick_check",
    "rebuild",
    "remove_database",
    "rewrite_json_rows",
    "row_checksum",
    "scan",
    "verified_payload",
]

#: Rows copied per transaction when a store is rebuilt.
_COPY_BATCH = 500


def row_checksum(cell: str, seed: int, payload: str | bytes) -> int:
    """CRC32 of a result row's key and payload (the ``crc`` column): the blob's bytes, or the
    UTF-8 of a JSON payload (stores written before the binary format)."""
    key = zlib.crc32(f"{cell}\x1f{seed}\x1f".encode())
    return zlib.crc32(payload.encode("utf-8") if isinstance(payload, str) else payload, key)


def has_checksums(db: sqlite3.Connection) -> bool:
    """Whether the ``results`` table has the ``crc`` column (stores made before it lack it)."""
    return any(row[1] == "crc" for row in db.execute("PRAGMA table_info(results)"))


def quick_check(db: sqlite3.Connection) -> str | None:
    """``None`` if ``PRAGMA quick_check`` finds the file sound, else its first complaint."""
    try:
        rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        return _first_line(str(exc))
    messages = [str(row[0]) for row in rows]
    if messages == ["ok"]:
        return None
    lines = [line for m in messages for line in m.splitlines() if not line.startswith("***")]
    return _first_line(lines[0] if lines else messages[0])


def _first_line(text: str, width: int = 120) -> str:
    line = (text.strip().splitlines() or [""])[0]
    return line if len(line) <= width else line[: width - 1] + "…"


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found: the intact rows (by rowid) and how many are damaged."""

    good: tuple[int, ...]
    damaged: int
    file_problem: str | None
    """First complaint of ``PRAGMA quick_check`` (``None``: the file's structure is sound)."""

    @property
    def rows(self) -> int:
        return len(self.good) + self.damaged

    @property
    def is_damaged(self) -> bool:
        return self.damaged > 0 or self.file_problem is not None

    def describe(self) -> str:
        """``"3 of 60 stored results lost"`` (or the file problem if none is lost)."""
        if self.damaged:
            return f"{self.damaged} of {self.rows} stored results lost"
        return f"its file structure is damaged: {self.file_problem}; no result lost"


class StoreWarning(UserWarning):
    """Something the reader of a store should know: seeds not shown, results missing, a
    damaged store rebuilt. The CLI prints these as ``warning: ...`` lines."""


class DiskFullError(StoreError):
    """The disk filled up while writing; what was committed before is kept and consistent."""


def is_disk_full(exc: BaseException) -> bool:
    """``SQLITE_FULL`` from SQLite, or ``ENOSPC``/``EDQUOT`` from the operating system."""
    if isinstance(exc, sqlite3.OperationalError):
        code = getattr(exc, "sqlite_errorcode", None)
        return (code is not None and code & 0xFF == sqlite3.SQLITE_FULL) or (
            "database or disk is full" in str(exc)
        )
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


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


def verified_payload(
    cell: object, seed: object, payload: object, checksum: object
) -> dict[str, Any] | None:
    """The decoded payload (:func:`~impactbandits.experiments.payload.decode` of a blob,
    :func:`~impactbandits.experiments.payload.decode_json` of JSON text), or ``None`` if the
    row fails its checksum or cannot be decoded (rows without a checksum are only decoded)."""
    if not isinstance(cell, str) or not isinstance(seed, int):
        return None
    if not isinstance(payload, str | bytes):
        return None
    if checksum is not None and row_checksum(cell, seed, payload) != checksum:
        return None
    try:
        return decode_json(payload) if isinstance(payload, str) else decode(payload)
    except (ValueError, TypeError):
        return None


class DamagedStoreError(StoreError):
    """The store holds damaged results; ``run`` (the same command) keeps a copy and recomputes."""

    def __init__(self, db_path: Path, found: Scan) -> None:
        self.db_path = db_path
        self.scan = found
        super().__init__(
            f"run_dir: {str(db_path)!r} is damaged ({found.describe()}); run the command that "
            "made it (run or reproduce) again: it keeps a copy of the damaged file, rebuilds the "
            "store and recomputes what was lost"
        )


def _json_valid_in_sql(db: sqlite3.Connection) -> bool:
    try:
        db.execute("SELECT json_valid('[]')").fetchone()
    except sqlite3.OperationalError:  # pragma: no cover - SQLite without JSON functions
        return False
    return True


def _select(db: sqlite3.Connection) -> str:
    """Columns ``rowid, cell, seed, crc, payload, valid``: the payload only where it must be
    checked in Python (a checksum, or a blob without one), ``valid`` (SQLite's
    ``json_valid``) for JSON text without a checksum."""
    crc = "crc" if has_checksums(db) else "NULL"
    if not _json_valid_in_sql(db):  # pragma: no cover - SQLite without JSON functions
        return f"SELECT rowid, cell, seed, {crc}, payload, NULL FROM results"
    plain = f"{crc} IS NULL AND typeof(payload) = 'text'"
    return (
        f"SELECT rowid, cell, seed, {crc}, CASE WHEN {plain} THEN NULL ELSE payload END, "
        f"CASE WHEN {plain} THEN json_valid(payload) END FROM results"
    )


def _row_ok(row: tuple[Any, ...]) -> bool:
    _, cell, seed, crc, payload, valid = row
    if not isinstance(cell, str) or not isinstance(seed, int):
        return False
    if crc is not None:
        return isinstance(payload, str | bytes) and row_checksum(cell, seed, payload) == crc
    if valid is not None:
        return bool(valid)
    return verified_payload(cell, seed, payload, None) is not None


def _rowids(db: sqlite3.Connection) -> set[int]:
    """Every rowid that can be found: through the key index, through the table, and the range
    up to the largest rowid (rows are never deleted, so rowids are dense)."""
    found: set[int] = set()
    table: set[int] = set()
    for query, into in (
        ("SELECT rowid FROM results INDEXED BY sqlite_autoindex_results_1", found),
        ("SELECT rowid FROM results NOT INDEXED", table),
    ):
        try:
            for (rowid,) in db.execute(query):
                into.add(int(rowid))
        except sqlite3.DatabaseError:
            pass
    try:
        top = db.execute("SELECT max(rowid) FROM results").fetchone()[0]
    except sqlite3.DatabaseError:
        top = None
    last = max(int(top or 0), max(table, default=0))
    if last <= 4 * (len(found | table) + 1000):  # a garbage rowid must not explode the range
        found.update(range(1, last + 1))
    return found | table


def _row_by_row(db: sqlite3.Connection, query: str) -> tuple[list[int], int]:
    good: list[int] = []
    damaged = 0
    for rowid in sorted(_rowids(db)):
        try:
            row = db.execute(f"{query} WHERE rowid = ?", (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            damaged += 1
            continue
        if row is None:
            continue  # a gap, not a row
        if _row_ok(row):
            good.append(rowid)
        else:
            damaged += 1
    return good, damaged


def scan(db: sqlite3.Connection) -> Scan:
    """Check the file (``PRAGMA quick_check``) and verify every result row; see the module
    docstring. Reads the whole table: about 2 s per GB of results."""
    problem = quick_check(db)
    try:
        query = _select(db)
    except sqlite3.DatabaseError as exc:  # the schema itself is unreadable
        return Scan((), 0, problem or _first_line(str(exc)))
    if problem is None:
        try:
            good: list[int] = []
            damaged = 0
            for row in db.execute(query):
                if _row_ok(row):
                    good.append(int(row[0]))
                else:
                    damaged += 1
            return Scan(tuple(good), damaged, None)
        except sqlite3.DatabaseError as exc:
            problem = _first_line(str(exc))
    good, damaged = _row_by_row(db, query)
    return Scan(tuple(good), damaged, problem)


def _database_files(path: Path) -> Iterator[Path]:
    yield path
    for suffix in ("-wal", "-shm"):
        yield path.with_name(path.name + suffix)


def remove_database(path: Path) -> None:
    """Delete an SQLite file and its ``-wal``/``-shm`` companions (if present)."""
    for file in _database_files(path):
        file.unlink(missing_ok=True)


def keep_copy(db_path: Path) -> Path:
    """Copy a damaged store (and its WAL) to ``results.sqlite.damaged-<timestamp>``."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = db_path.with_name(f"{db_path.name}.damaged-{stamp}")
    number = 1
    while target.exists():
        number += 1
        target = db_path.with_name(f"{db_path.name}.damaged-{stamp}-{number}")
    try:
        for source, copy in zip(_database_files(db_path), _database_files(target), strict=True):
            if source.name.endswith("-shm") or not source.exists():
                continue  # the shared-memory index is rebuilt from the WAL
            if source.name.endswith("-wal") and source.stat().st_size == 0:
                continue
            shutil.copyfile(source, copy)
    except BaseException:
        remove_database(target)
        raise
    return target


def copy_rows(
    source: sqlite3.Connection, target: sqlite3.Connection, rowids: Iterable[int]
) -> None:
    """Copy the result rows ``rowids`` of ``source`` into ``target`` (both open stores), with
    their checksums (``NULL`` stays ``NULL``: not verified)."""
    crc = "crc" if has_checksums(source) else "NULL"
    query = f"SELECT cell, seed, payload, seconds, {crc} FROM results WHERE rowid = ?"
    batch: list[tuple[Any, ...]] = []

    def flush() -> None:
        target.execute("BEGIN IMMEDIATE")
        try:
            target.executemany(
                "INSERT OR IGNORE INTO results (cell, seed, payload, seconds, crc) "
                "VALUES (?,?,?,?,?)",
                batch,
            )
        except BaseException:
            if target.in_transaction:
                target.execute("ROLLBACK")
            raise
        target.execute("COMMIT")
        batch.clear()

    for rowid in rowids:
        batch.append(source.execute(query, (rowid,)).fetchone())
        if len(batch) >= _COPY_BATCH:
            flush()
    if batch:
        flush()


def rewrite_json_rows(db: sqlite3.Connection, batch: int = _COPY_BATCH) -> int:
    """Rewrite every JSON payload of ``db`` (a store with the ``crc`` column) as a binary blob
    with its checksum, ``batch`` rows per transaction; returns the rows rewritten. Raises
    :class:`ValueError` at a row that fails its checksum or cannot be decoded."""
    done = last = 0
    while True:
        rows = db.execute(
            "SELECT rowid, cell, seed, payload, crc FROM results "
            "WHERE rowid > ? AND typeof(payload) = 'text' ORDER BY rowid LIMIT ?",
            (last, batch),
        ).fetchall()
        if not rows:
            return done
        last = rows[-1][0]
        updates = []
        for rowid, cell, seed, text, checksum in rows:
            value = verified_payload(cell, seed, text, checksum)
            if value is None:
                raise ValueError(f"result ({cell}, {seed}) is damaged")
            blob = encode(value)
            updates.append((blob, row_checksum(cell, seed, blob), rowid))
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany("UPDATE results SET payload = ?, crc = ? WHERE rowid = ?", updates)
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        done += len(updates)


def rebuild(
    damaged: sqlite3.Connection,
    db_path: Path,
    initialize: Callable[[Path], sqlite3.Connection],
    found: Scan,
) -> Path:
    """Replace the damaged store at ``db_path`` (open as ``damaged``, which is closed) with a
    new one holding its intact rows ``found.good``; ``initialize(path)`` makes an empty store
    for this experiment. A copy of the damaged file is kept (its path is returned) and a
    :class:`StoreWarning` says what happened. Nothing is replaced if this fails."""
    with disk_full_as_error(f"keeping a copy of the damaged store {str(db_path)!r}"):
        copy = keep_copy(db_path)
    fresh_path = db_path.with_name(db_path.name + ".rebuild")
    remove_database(fresh_path)
    try:
        fresh = initialize(fresh_path)
        try:
            copy_rows(damaged, fresh, found.good)
        finally:
            fresh.close()
    except BaseException:
        remove_database(fresh_path)
        raise
    damaged.close()
    # the damaged file's WAL is in the copy; it must not be replayed into the new file
    for suffix in ("-wal", "-shm"):
        db_path.with_name(db_path.name + suffix).unlink(missing_ok=True)
    os.replace(fresh_path, db_path)
    lost = "; the lost ones are recomputed" if found.damaged else ""
    warnings.warn(
        f"{db_path} was damaged ({found.describe()}); kept a copy as {copy.name} and "
        f"rebuilt it from the {len(found.good)} intact results{lost}",
        StoreWarning,
        stacklevel=4,
    )
    return copy
