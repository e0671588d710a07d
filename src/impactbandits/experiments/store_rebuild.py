"""Repairs of a damaged results store: a copy of the damaged file is kept, and the store is
rebuilt from the spec and the rows :func:`~impactbandits.experiments.store_repair.scan` found
intact (:func:`rebuild`); and the rewrite of an older store's JSON payloads as blobs
(:func:`rewrite_json_rows`). Moved from :mod:`~impactbandits.experiments.store_repair`, which
finds the damage.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from impactbandits.experiments.payload import encode
from impactbandits.experiments.store_facts import has_column, meta_ok, put_meta, sessions_ok
from impactbandits.experiments.store_files import (
    database_files,
    disk_full_as_error,
    remove_database,
)
from impactbandits.experiments.store_repair import (
    Scan,
    StoreWarning,
    has_checksums,
    row_checksum,
    verified_payload,
)

__all__ = ["copy_rows", "keep_copy", "rebuild", "rewrite_json_rows"]

#: Rows copied per transaction when a store is rebuilt.
_COPY_BATCH = 500


def keep_copy(db_path: Path) -> Path:
    """Copy a damaged store (and its WAL) to ``results.sqlite.damaged-<timestamp>``; each
    copy is a new file (created exclusively: never through a link placed at its name)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    number = 1
    while True:
        tail = f"-{number}" if number > 1 else ""
        target = db_path.with_name(f"{db_path.name}.damaged-{stamp}{tail}")
        made: list[Path] = []
        try:
            for source, copy in zip(database_files(db_path), database_files(target), strict=True):
                if source.name.endswith("-shm") or not source.exists():
                    continue  # the shared-memory index is rebuilt from the WAL
                if source.name.endswith("-wal") and source.stat().st_size == 0:
                    continue
                with open(source, "rb") as read, open(copy, "xb") as write:
                    made.append(copy)
                    shutil.copyfileobj(read, write, 1 << 20)
        except FileExistsError:
            for path in made:
                path.unlink(missing_ok=True)
            number += 1
            continue
        except BaseException:
            for path in made:
                path.unlink(missing_ok=True)
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


def _copy_sessions(source: sqlite3.Connection, target: sqlite3.Connection) -> None:
    """Copy the run history (``meta`` ``"sessions"``, a JSON list of sessions) if it can be
    read and is intact (the damaged copy keeps it otherwise)."""
    crc = "crc" if has_column(source, "meta", "crc") else "NULL"
    try:
        rows = source.execute(f"SELECT value, {crc} FROM meta WHERE key = 'sessions'").fetchall()
    except sqlite3.DatabaseError:
        return
    if len(rows) == 1 and meta_ok("sessions", *rows[0]) and sessions_ok(rows[0][0]):
        put_meta(target, "sessions", rows[0][0])


def rebuild(
    damaged: sqlite3.Connection,
    db_path: Path,
    initialize: Callable[[Path], sqlite3.Connection],
    found: Scan,
) -> Path:
    """Replace the damaged store at ``db_path`` (open as ``damaged``, which is closed) with a
    new one holding its intact rows ``found.good`` and its run history (if readable);
    ``initialize(path)`` makes an empty store for this experiment (cells and metadata from the
    current spec). A copy of the damaged file is kept (its path is returned) and a
    :class:`StoreWarning` says what happened. Nothing is replaced if this fails."""
    with disk_full_as_error(f"keeping a copy of the damaged store {str(db_path)!r}"):
        copy = keep_copy(db_path)
    fresh_path = db_path.with_name(db_path.name + ".rebuild")
    remove_database(fresh_path)
    try:
        fresh = initialize(fresh_path)
        try:
            _copy_sessions(damaged, fresh)
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
    lost = "; the lost ones are recomputed" if found.damaged or found.unsure else ""
    warnings.warn(
        f"{db_path} was damaged ({found.describe()}); kept a copy as {copy.name} and "
        f"rebuilt it from the {len(found.good)} intact results{lost}",
        StoreWarning,
        stacklevel=4,
    )
    return copy
