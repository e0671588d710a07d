"""The results store: one SQLite file per run directory (``RUN_DIR/results.sqlite``).

One row per finished (cell, seed), committed as soon as it arrives (WAL journal), so a killed
sweep loses at most the batches in flight and a re-run of the same spec resumes: rows already
present are neither recomputed nor duplicated (primary key ``(cell, seed)``). The directory is
bound to one experiment by :meth:`~impactbandits.experiments.spec.ExperimentSpec.store_key`;
opening it with a different experiment is refused before anything is written.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from impactbandits.errors import StoreError
from impactbandits.experiments.cells import Cell
from impactbandits.experiments.spec import ExperimentSpec, spec_from_mapping
from impactbandits.experiments.worker import Record

__all__ = ["STORE_FILE", "Store"]

STORE_FILE = "results.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
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
    policy_spec TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    cell TEXT NOT NULL,
    seed INTEGER NOT NULL,
    payload TEXT NOT NULL,
    seconds REAL NOT NULL,
    PRIMARY KEY (cell, seed)
);
"""


def check_run_dir(path: Path, field: str = "output") -> None:
    """Refuse paths that cannot hold a run (a file, or a directory without write access)."""
    if path.exists() and not path.is_dir():
        raise StoreError(f"{field}: {str(path)!r} is a file; give a directory for the results")
    for parent in [path, *path.parents]:
        if parent.exists():
            if not parent.is_dir():
                raise StoreError(f"{field}: {str(parent)!r} is a file; give a directory")
            break


class Store:
    """Open with :meth:`create` (for a run) or :meth:`open_existing` (for export/report)."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection

    # -- opening ---------------------------------------------------------------------------------
    @staticmethod
    def _connect(db_path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(db_path, timeout=30.0, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    @classmethod
    def create(cls, run_dir: str | Path, spec: ExperimentSpec, cells: list[Cell]) -> Store:
        """Open (or create) the store of ``spec`` in ``run_dir``; refuse a foreign store."""
        run_dir = Path(run_dir)
        check_run_dir(run_dir)
        db_path = run_dir / STORE_FILE
        if db_path.exists():
            store = cls.open_existing(run_dir)
            stored_key = store.meta("store_key")
            if stored_key != spec.store_key():
                store.close()
                raise StoreError(
                    f"output: {str(run_dir)!r} holds results of another experiment "
                    f"({store_name(run_dir)!r}, key {stored_key}); choose another --out"
                )
            store._write_spec(spec)
            return store
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"output: cannot create {str(run_dir)!r} ({exc.strerror})") from None
        db = cls._connect(db_path)
        store = cls(run_dir, db)
        db.executescript(_SCHEMA)
        with store._transaction():
            db.executemany(
                "INSERT OR IGNORE INTO cells VALUES (?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        c.key,
                        i,
                        c.environment.label,
                        c.policy.label,
                        c.horizon,
                        c.rounds,
                        json.dumps(list(c.grid)),
                        c.n_arms,
                        json.dumps(c.environment.model_dump(mode="json")),
                        json.dumps(c.policy.model_dump(mode="json")),
                    )
                    for i, c in enumerate(cells)
                ],
            )
            db.execute("INSERT OR REPLACE INTO meta VALUES ('store_key', ?)", (spec.store_key(),))
            store._write_spec(spec)
        return store

    @classmethod
    def open_existing(cls, run_dir: str | Path) -> Store:
        run_dir = Path(run_dir)
        db_path = run_dir / STORE_FILE
        if not db_path.is_file():
            raise StoreError(
                f"run_dir: {str(run_dir)!r} has no {STORE_FILE}; run an experiment there first"
            )
        try:
            db = cls._connect(db_path)
            db.execute("SELECT value FROM meta WHERE key = 'store_key'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"run_dir: {str(db_path)!r} is not a results store ({exc})") from None
        return cls(run_dir, db)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- metadata --------------------------------------------------------------------------------
    def _transaction(self) -> Any:
        db = self._db

        class _Tx:
            def __enter__(self) -> None:
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self, kind: object, *rest: object) -> None:
                db.execute("ROLLBACK" if kind else "COMMIT")

        return _Tx()

    def _write_spec(self, spec: ExperimentSpec) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO meta VALUES ('spec', ?)", (json.dumps(spec.to_dict()),)
        )

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def spec(self) -> ExperimentSpec:
        raw = self.meta("spec")
        if raw is None:
            raise StoreError(f"run_dir: {str(self.path)!r} has no experiment spec")
        return spec_from_mapping(json.loads(raw))

    # -- results ---------------------------------------------------------------------------------
    def finished(self) -> set[tuple[str, int]]:
        """All stored (cell, seed) pairs."""
        return {(str(c), int(s)) for c, s in self._db.execute("SELECT cell, seed FROM results")}

    def add(self, records: Iterable[Record]) -> int:
        """Commit ``records`` at once; existing (cell, seed) rows are kept. Returns rows added."""
        rows = [(r.cell, r.seed, json.dumps(r.payload), r.seconds) for r in records]
        with self._transaction():
            before = self._db.total_changes
            self._db.executemany("INSERT OR IGNORE INTO results VALUES (?,?,?,?)", rows)
            return self._db.total_changes - before

    def cells(self) -> list[dict[str, Any]]:
        cursor = self._db.execute(
            "SELECT cell, environment, policy, horizon, rounds, grid, n_arms, env_spec, "
            "policy_spec FROM cells ORDER BY position"
        )
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    def results(self, seeds: int | None = None) -> Iterator[tuple[str, int, dict[str, Any]]]:
        """Stream ``(cell, seed, payload)`` ordered by cell position and seed."""
        query = (
            "SELECT r.cell, r.seed, r.payload FROM results r JOIN cells c ON c.cell = r.cell"
            + ("" if seeds is None else " WHERE r.seed < ?")
            + " ORDER BY c.position, r.seed"
        )
        params = () if seeds is None else (seeds,)
        for cell, seed, payload in self._db.execute(query, params):
            yield str(cell), int(seed), json.loads(payload)

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0])


def store_name(run_dir: Path) -> str:
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        row = db.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()
    return json.loads(row[0]).get("name", "?") if row else "?"
