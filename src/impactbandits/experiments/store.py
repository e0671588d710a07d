"""The results store: one SQLite file per run directory (``RUN_DIR/results.sqlite``).

One row per finished (cell, seed), committed as soon as it arrives (WAL journal), so a killed
sweep loses at most the batches in flight and a re-run of the same spec resumes: rows already
present are neither recomputed nor duplicated (primary key ``(cell, seed)``). The directory is
bound to one experiment by :meth:`~impactbandits.experiments.spec.ExperimentSpec.store_key`;
opening it with a different experiment is refused before anything is written.

Integrity (:mod:`~impactbandits.experiments.store_repair`; the files themselves:
:mod:`~impactbandits.experiments.store_files`): every row carries a checksum — of the
results, and of the cell table and the metadata the numbers are read under
(:mod:`~impactbandits.experiments.store_facts`, which also finds a (cell, seed) stored twice);
reads verify them and raise
:class:`~impactbandits.experiments.store_repair.DamagedStoreError` (one line) on a damaged
store, and :meth:`Store.create` (a run) checks the file and every row first:
a damaged store is copied aside (``results.sqlite.damaged-<time>``) and rebuilt from its intact
rows, so the run recomputes only what was lost (a file cut short too: from the rows on the pages
that are left). A full disk raises :class:`DiskFullError`; the transaction in progress is rolled
back, so the store stays consistent. Readers (:meth:`Store.open_existing`: export, report) open
it read-only: they write nothing to it and need no free space.

Payloads are binary blobs (:mod:`~impactbandits.experiments.payload`); stores written before
hold JSON text, and a store may hold both (an old store resumed by a newer version). Both are
read into the same arrays; :meth:`Store.migrate` rewrites the JSON rows as blobs.

The read queries are those of :class:`~impactbandits.experiments.store_queries.StoreQueries`,
which :class:`Store` inherits; the run directory and what is checked there before a store is
opened are in :mod:`~impactbandits.experiments.store_dir` (:data:`STORE_FILE`,
:func:`check_run_dir` and :func:`store_name` are re-exported here).
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from impactbandits.errors import StoreError
from impactbandits.experiments.cells import Cell
from impactbandits.experiments.payload import encode
from impactbandits.experiments.spec import ExperimentSpec
from impactbandits.experiments.store_dir import (
    STORE_FILE,
    _check_cells,
    _is_blank,
    check_run_dir,
    check_store_files,
    store_name,
)
from impactbandits.experiments.store_facts import (
    add_checksum_columns,
    cell_rows,
    cells_differ,
    fill_checksums,
    has_column,
    meta_ok,
    put_meta,
)
from impactbandits.experiments.store_files import (
    DiskFullError,
    companions,
    connect_cut_short,
    cut_short,
    disk_full_as_error,
    first_page_lost,
    is_disk_full,
    open_read_only,
    reads_cut_short,
    remove_database,
    remove_reader_files,
    unreadable_store_error,
)
from impactbandits.experiments.store_queries import StoreQueries
from impactbandits.experiments.store_rebuild import rebuild, rewrite_json_rows
from impactbandits.experiments.store_repair import (
    DamagedStoreError,
    Scan,
    StoreWarning,
    has_checksums,
    row_checksum,
    scan,
)
from impactbandits.experiments.worker import Record

# check_run_dir and store_name moved to store_dir and are re-exported (exported here as before)
__all__ = [
    "STORE_FILE",
    "DamagedStoreError",
    "DiskFullError",
    "Store",
    "StoreWarning",
    "check_run_dir",
    "store_name",
]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL, crc INTEGER);
CREATE TABLE IF NOT EXISTS cells (
    cell TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    environment TEXT NOT NULL,
    policy TEXT NOT NULL,
    horizon INTEGER,
    rounds INTEGER NOT NULL,
    grid TEXT NOT NULL,
    n_arms INTEGER NOT NULL,
    env_spec TEXT NOT NULL,
    policy_spec TEXT NOT NULL,
    crc INTEGER
);
CREATE TABLE IF NOT EXISTS results (
    cell TEXT NOT NULL,
    seed INTEGER NOT NULL,
    payload BLOB NOT NULL,
    seconds REAL NOT NULL,
    crc INTEGER,
    PRIMARY KEY (cell, seed)
);
"""


class Store(StoreQueries):
    """Open with :meth:`create` (for a run) or :meth:`open_existing` (for export/report)."""

    def __init__(
        self,
        path: Path,
        connection: sqlite3.Connection,
        read_only: bool = False,
        created: tuple[Path, ...] = (),
        cut: tuple[int, int] | None = None,
    ) -> None:
        self.path = path
        self._db = connection
        self._read_only = read_only
        self._created = created  # -wal/-shm files a read-only connection made (removed on close)
        self._cut = cut  # cut_short() of the file, if SQLite refused it as malformed

    # -- opening ---------------------------------------------------------------------------------
    @staticmethod
    def _connect(db_path: Path) -> sqlite3.Connection:
        """A connection that writes (a run); readers use :func:`open_read_only`. A file cut
        short is opened as far as it goes (:func:`connect_cut_short`), for :func:`scan` and
        the rebuild."""

        def connect(allow_cut: bool) -> sqlite3.Connection:
            db = sqlite3.connect(db_path, timeout=30.0, isolation_level=None)
            try:
                if allow_cut:
                    db.execute("PRAGMA writable_schema=ON")
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
            except BaseException:
                db.close()
                raise
            return db

        return connect_cut_short(db_path, connect)[0]

    @classmethod
    def create(cls, run_dir: str | Path, spec: ExperimentSpec, cells: list[Cell]) -> Store:
        """Open (or create) the store of ``spec`` in ``run_dir``; refuse a foreign store.

        An existing store is checked first (its file and every row); if it is damaged, a copy
        is kept and it is rebuilt from its intact rows (a :class:`StoreWarning` says so)."""
        run_dir = Path(run_dir)
        check_run_dir(run_dir)
        check_store_files(run_dir, "output")
        db_path = run_dir / STORE_FILE
        if db_path.exists() and _is_blank(db_path):
            remove_database(db_path)  # a run killed before writing the schema: start afresh
        if db_path.exists():
            store = cls._open(run_dir, write=True)
            stored_key = store._stored_key()  # None if lost: the cells of the rows are checked
            if stored_key is not None and stored_key != spec.store_key():
                store.close()
                if stored_key == spec.store_key(version=1):
                    raise StoreError(
                        f"output: {str(run_dir)!r} holds this experiment's results from an "
                        "older version (store format 1, before the counter-based noise of "
                        "CHANGELOG.md); new results would not mix with them: choose another "
                        "--out (report and export still read it)"
                    )
                try:
                    name = store_name(run_dir)
                except (sqlite3.DatabaseError, ValueError, AttributeError):
                    name = "?"  # its spec is damaged: the key says enough
                raise StoreError(
                    f"output: {str(run_dir)!r} holds results of another experiment "
                    f"({name!r}, key {stored_key}); choose another --out"
                )
            try:
                with disk_full_as_error(f"updating the store in {run_dir}"):
                    found = scan(store._db, len(cells) * spec.seeds, store._cut)
                    if stored_key is None:
                        _check_cells(db_path, found, cells)
                    found = store._compare_cells(found, cells)
                    if found.is_damaged:
                        store = store._rebuild(spec, cells, found)
                    store._add_checksum_column()
                    store._write_spec(spec)
                    fill_checksums(store._db)  # an older store's rows, now known to be right
            except BaseException:
                store.close()
                raise
            return store
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if is_disk_full(exc):
                raise DiskFullError(
                    f"output: disk full while creating {str(run_dir)!r}; free space and run "
                    "the same command again"
                ) from None
            raise StoreError(f"output: cannot create {str(run_dir)!r} ({exc.strerror})") from None
        with disk_full_as_error(f"creating the store in {run_dir}"):
            try:
                return cls._initialize(run_dir, db_path, spec, cells)
            except BaseException:
                remove_database(db_path)  # nothing stored yet: leave no half-made store
                raise

    @classmethod
    def _initialize(
        cls, run_dir: Path, db_path: Path, spec: ExperimentSpec, cells: list[Cell]
    ) -> Store:
        """A new store at ``db_path``: schema, cells and metadata of ``spec``."""
        db = cls._connect(db_path)
        store = cls(run_dir, db)
        try:
            db.executescript(_SCHEMA)
            with store._transaction():
                db.executemany(
                    "INSERT OR IGNORE INTO cells VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    cell_rows(cells),
                )
                put_meta(db, "store_key", spec.store_key())
                store._write_spec(spec)
        except BaseException:
            db.close()
            raise
        return store

    @classmethod
    def open_existing(cls, run_dir: str | Path) -> Store:
        """Open for reading: read-only, needing no free space, writing nothing to the store
        (:func:`~impactbandits.experiments.store_repair.open_read_only`); a method that
        writes (:meth:`append_session`, :meth:`migrate`) reopens it writable first."""
        return cls._open(Path(run_dir), write=False)

    @classmethod
    def _open(cls, run_dir: Path, write: bool) -> Store:
        db_path = run_dir / STORE_FILE
        field = "output" if write else "run_dir"
        check_store_files(run_dir, field)  # never read or written through a link
        if not db_path.is_file():
            raise StoreError(
                f"{field}: {str(run_dir)!r} has no {STORE_FILE}; run an experiment there first"
            )
        if 0 < db_path.stat().st_size < 512:  # shorter than any first page: SQLite would
            lost = first_page_lost(db_path, field)  # make -wal/-shm files before refusing it
            if lost is not None:
                raise lost
        created: tuple[Path, ...] = ()
        before = {path for path in companions(db_path) if path.exists()}
        try:
            if write:
                db = cls._connect(db_path)
                # cut short: damaged, to be rebuilt (reading the header is safe enough now)
                cut = cut_short(db_path) if reads_cut_short(db) else None
            else:
                db, created, cut = open_read_only(db_path)
        except sqlite3.DatabaseError as exc:
            # e.g. a full disk: the -wal/-shm files a failed writer made are not left behind
            remove_reader_files(db_path, set(companions(db_path)) - before)
            raise unreadable_store_error(db_path, exc, field) from None
        store = cls(run_dir, db, read_only=not write, created=created, cut=cut)
        try:
            tables = {str(name) for (name,) in db.execute("SELECT name FROM sqlite_master")}
        except sqlite3.DatabaseError as exc:
            store.close()
            raise unreadable_store_error(db_path, exc, field) from None
        missing = [name for name in ("meta", "cells", "results") if name not in tables]
        if missing:
            store.close()
            lost = first_page_lost(db_path, field) if cut is not None else None
            if lost is not None:
                raise lost
            raise StoreError(
                f"{field}: {str(db_path)!r} is not a results store (it has no {missing[0]!r} "
                "table); move it away or choose another directory"
            )
        return store

    def _writer(self) -> sqlite3.Connection:
        """The connection, reopened writable if the store was opened for reading."""
        if self._read_only:
            self._db.close()
            self._db = Store._connect(self.file)  # removes the reader's -wal/-shm on closing
            self._read_only = False
            self._created = ()
        return self._db

    def close(self) -> None:
        self._db.close()
        if self._read_only and self._created:
            remove_reader_files(self.file, self._created)
            self._created = ()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- integrity -------------------------------------------------------------------------------
    def _add_checksum_column(self) -> None:
        """Stores made before checksums get the column (``NULL``: not verified): the results
        table, and the ``meta`` and ``cells`` tables
        (:mod:`~impactbandits.experiments.store_facts`)."""
        if not has_checksums(self._db):
            self._writer().execute("ALTER TABLE results ADD COLUMN crc INTEGER")
        add_checksum_columns(self._writer())

    def _stored_key(self) -> str | None:
        """The stored store key; ``None`` if it cannot be read, is not text or fails its
        checksum (lost)."""
        crc = "crc" if has_column(self._db, "meta", "crc") else "NULL"
        try:
            rows = self._db.execute(
                f"SELECT value, {crc} FROM meta WHERE key = 'store_key'"
            ).fetchall()
        except sqlite3.DatabaseError:
            return None
        if len(rows) != 1 or not isinstance(rows[0][0], str):
            return None
        return rows[0][0] if meta_ok("store_key", *rows[0]) else None

    def _compare_cells(self, found: Scan, cells: list[Cell]) -> Scan:
        """``found``, with the cell table marked damaged if it is readable and differs from
        the spec's cells in what a number is read under (the store key matched, so they must
        be equal: a relabelled policy in a store without checksums)."""
        if found.is_damaged:
            return found  # rebuilt from the spec's cells anyway
        try:
            differ = cells_differ(self._db, cell_rows(cells))
        except sqlite3.DatabaseError:
            return found
        if not differ:
            return found
        phrase = "its cell table differs from the spec's cells"
        return dataclasses.replace(found, facts=(*found.facts, phrase))

    def _rebuild(self, spec: ExperimentSpec, cells: list[Cell], found: Scan) -> Store:
        """Keep a copy of this damaged store, replace it with a new one holding its intact rows
        (``found.good``) and return the new store; this one is closed."""
        rebuild(
            self._db,
            self.file,
            lambda path: Store._initialize(self.path, path, spec, cells)._db,
            found,
        )
        return Store._open(self.path, write=True)

    # -- metadata --------------------------------------------------------------------------------
    def _transaction(self) -> Any:
        db = self._writer()

        class _Tx:
            def __enter__(self) -> None:
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self, kind: object, *rest: object) -> None:
                if kind is None:
                    try:
                        db.execute("COMMIT")
                    except sqlite3.DatabaseError:
                        if db.in_transaction:
                            db.execute("ROLLBACK")
                        raise
                elif db.in_transaction:  # SQLite rolls back by itself on some errors (full disk)
                    db.execute("ROLLBACK")

        return _Tx()

    def _write_spec(self, spec: ExperimentSpec) -> None:
        put_meta(self._writer(), "spec", json.dumps(spec.to_dict()))

    def append_session(self, session: dict[str, Any]) -> None:
        """Add one runner session (:class:`~impactbandits.experiments.provenance.Session` as
        JSON) to the ``"sessions"`` list in ``meta``. A damaged list raises
        :class:`DamagedStoreError` (it is kept as it is)."""
        self._writer()
        raw = self.meta("sessions")
        try:
            sessions = json.loads(raw) if raw else []
        except ValueError:
            sessions = None
        if not isinstance(sessions, list):
            raise self._damaged()
        sessions.append(session)
        put_meta(self._db, "sessions", json.dumps(sessions))

    # -- results ---------------------------------------------------------------------------------
    def add(self, records: Iterable[Record]) -> int:
        """Commit ``records`` at once; existing (cell, seed) rows are kept. Returns rows added.

        Raises :class:`DiskFullError` (nothing of ``records`` is stored) on a full disk."""
        rows = []
        for r in records:
            payload = r.payload if isinstance(r.payload, bytes) else encode(r.payload)
            rows.append((r.cell, r.seed, payload, r.seconds, row_checksum(r.cell, r.seed, payload)))
        with disk_full_as_error(f"storing results in {self.path}"), self._transaction():
            before = self._db.total_changes
            self._db.executemany(
                "INSERT OR IGNORE INTO results (cell, seed, payload, seconds, crc) "
                "VALUES (?,?,?,?,?)",
                rows,
            )
            return self._db.total_changes - before

    def migrate(self, batch: int = 500) -> int:
        """Rewrite the JSON payloads of an older store as binary blobs (with checksums), in
        transactions of ``batch`` rows; returns the rows rewritten. A row that fails its
        checksum or cannot be decoded raises :class:`DamagedStoreError` (its batch is not
        written; the batches before are)."""
        self._add_checksum_column()
        with disk_full_as_error(f"migrating the store in {self.path}"):
            try:
                return rewrite_json_rows(self._writer(), batch)
            except (sqlite3.DatabaseError, ValueError) as exc:
                if is_disk_full(exc):
                    raise
                raise self._damaged() from None
