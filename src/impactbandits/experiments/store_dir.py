"""The run directory of a results store, and what is checked there before the store is opened.

A run directory holds its store in :data:`STORE_FILE`. :func:`check_run_dir` refuses a path
that cannot hold a run and :func:`check_store_files` a store file that is a link;
``Store.create`` (:mod:`impactbandits.experiments.store`) removes a blank store
(:func:`_is_blank`: a run killed before it wrote the schema), names the experiment of a foreign
store (:func:`store_name`) and refuses to rebuild a damaged store whose key is lost if it names
cells of another experiment (:func:`_check_cells`). Moved from
``impactbandits.experiments.store``, which re-exports the public names.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from impactbandits.errors import StoreError
from impactbandits.experiments.cells import Cell
from impactbandits.experiments.run_files import refuse_link
from impactbandits.experiments.store_files import (
    database_files,
    first_page_lost,
    open_read_only,
    remove_reader_files,
)
from impactbandits.experiments.store_repair import Scan

__all__ = ["STORE_FILE", "check_run_dir", "check_store_files", "store_name"]

STORE_FILE = "results.sqlite"


def check_run_dir(path: Path, field: str = "output") -> None:
    """Refuse paths that cannot hold a run (a file, or a directory without write access)."""
    if path.exists() and not path.is_dir():
        raise StoreError(f"{field}: {str(path)!r} is a file; give a directory for the results")
    for parent in [path, *path.parents]:
        if parent.exists():
            if not parent.is_dir():
                raise StoreError(f"{field}: {str(parent)!r} is a file; give a directory")
            break


def check_store_files(run_dir: Path, field: str) -> None:
    """Refuse a store file (or its ``-wal``, ``-shm`` or ``-journal``) that is a link: SQLite
    would read and write the file it points to, outside the run directory (a received
    directory may hold such a link). One line naming ``field`` and the link."""
    db_path = run_dir / STORE_FILE
    for path in (*database_files(db_path), db_path.with_name(db_path.name + "-journal")):
        refuse_link(path, field)


def store_name(run_dir: Path) -> str:
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        row = db.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()
    return json.loads(row[0]).get("name", "?") if row else "?"


def _check_cells(db_path: Path, found: Scan, cells: list[Cell]) -> None:
    """A store whose key is lost is rebuilt for this spec only if every cell it still names
    (of its intact rows and its cell table) is one of the spec's: else it is another
    experiment's (cell keys hash everything that decides a cell's results)."""
    foreign = found.cell_keys - {c.key for c in cells}
    if foreign:
        raise StoreError(
            f"output: {str(db_path)!r} is damaged and its metadata is lost, and it names "
            f"{len(foreign)} cells this spec does not have (e.g. {min(foreign)!r}): another "
            "experiment's store; move it away or choose another --out"
        )


def _is_blank(db_path: Path) -> bool:
    """Whether ``db_path`` holds no table at all (created, then killed before the schema)."""
    if db_path.stat().st_size == 0:
        return True
    if db_path.stat().st_size < 512 and first_page_lost(db_path, "output") is not None:
        return False  # cut short: opening it would only make -wal/-shm files; reported next
    try:
        db, created, _ = open_read_only(db_path)
    except sqlite3.DatabaseError:
        return False  # not readable as a database: the damage checks report it
    try:
        return db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0
    except sqlite3.DatabaseError:
        return False
    finally:
        db.close()
        remove_reader_files(db_path, created)
