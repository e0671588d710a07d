"""Integrity of the results store: per-row checksums and damage scans (copies of damaged files
and rebuilds from the intact rows: :mod:`~impactbandits.experiments.store_rebuild`).

Every result row written since checksums were introduced carries ``crc``, the CRC32 of its key
and payload (:func:`row_checksum`: the bytes of a binary payload, see
:mod:`~impactbandits.experiments.payload`, or the UTF-8 of an older JSON one); rows of older
stores have ``crc = NULL`` (not verified: only checked to be valid JSON). :func:`scan` finds
what can be trusted in a store: it runs ``PRAGMA quick_check`` for the file's structure, then
reads every row, and where the file is damaged (a page that raises ``sqlite3.DatabaseError``)
it reads row by row, so one broken page costs only the rows on it; it checks the facts the
numbers are read under too (:mod:`~impactbandits.experiments.store_facts`: the cell table, the
metadata, repeated rows). The store
(:mod:`impactbandits.experiments.store`) uses the scan to refuse exports of damaged stores and
to rebuild them before a run.

A file cut short is read as far as it goes
(:mod:`~impactbandits.experiments.store_files`): rows are never deleted, so their rowids run
from 1 without gaps; where the largest cannot be read (it was on a lost page), the cells ×
seeds of the stored spec bound the search.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from impactbandits.errors import StoreError
from impactbandits.experiments.payload import decode, decode_json
from impactbandits.experiments.store_facts import Facts, check_facts, drop_repeats
from impactbandits.experiments.store_files import first_line

__all__ = [
    "DamagedStoreError",
    "Scan",
    "StoreWarning",
    "has_checksums",
    "meta_value",
    "quick_check",
    "row_checksum",
    "scan",
    "verified_payload",
]


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
        return first_line(str(exc))
    messages = [str(row[0]) for row in rows]
    if messages == ["ok"]:
        return None
    lines = [line for m in messages for line in m.splitlines() if not line.startswith("***")]
    return first_line(lines[0] if lines else messages[0])


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found: the intact rows (by rowid) and how many are damaged."""

    good: tuple[int, ...]
    damaged: int
    file_problem: str | None
    """First complaint of ``PRAGMA quick_check`` (``None``: the file's structure is sound)."""
    unsure: int = 0
    """Rows the stored spec asks for that cannot be read and lie past the last row known to
    exist (on lost pages, where SQLite cannot tell): lost, or never stored."""
    lost: tuple[str, ...] = ()
    """Parts other than results that cannot be read: ``"metadata"`` (the store key or the
    spec), ``"run history"``, ``"cell table"``."""
    cut: tuple[int, int] | None = None
    """``(bytes left, bytes the header promises)`` if the file is cut short
    (:func:`~impactbandits.experiments.store_files.cut_short`)."""
    cell_keys: frozenset[str] = frozenset()
    """Cell keys of the intact rows and of the readable rows of the cell table."""
    facts: tuple[str, ...] = ()
    """Damaged facts the numbers are read under
    (:func:`~impactbandits.experiments.store_facts.check_facts`): "its spec fails its
    checksum", …"""
    repeated: int = 0
    """Intact result rows that repeat an earlier row's (cell, seed) and payload (not in
    :attr:`good`)."""
    keyless: tuple[str, ...] = ()
    """Tables that lost their primary key (a run rebuilds them)."""

    @property
    def rows(self) -> int:
        return len(self.good) + self.damaged + self.repeated

    @property
    def is_damaged(self) -> bool:
        return bool(
            self.damaged
            or self.unsure
            or self.lost
            or self.facts
            or self.repeated
            or self.keyless
            or self.cut is not None
            or self.file_problem is not None
        )

    def describe(self) -> str:
        """``"3 of 60 stored results lost"`` (or the file problem if none is lost); for a file
        cut short or parts lost, what is left: ``"the file is cut short: 4,196 of its 1,470,464
        bytes are left; its metadata and cell table are lost; ..."``."""
        parts = []
        if self.cut is not None:
            left, total = self.cut
            parts.append(f"the file is cut short: {left:,} of its {total:,} bytes are left")
        if self.lost:
            verb = "is" if len(self.lost) == 1 else "are"
            parts.append(f"its {_join(self.lost)} {verb} lost")
        parts.extend(self.facts)
        if self.repeated:
            parts.append(f"{self.repeated} stored results repeat an earlier one")
        if self.keyless:
            tables = f"{_join(self.keyless)} table" + ("s" if len(self.keyless) > 1 else "")
            parts.append(f"its {tables} lost the primary key")
        if self.unsure:
            readable = f"{len(self.good)} stored results" if self.good else "no stored result"
            parts.append(f"{readable} can be read, up to {self.damaged + self.unsure} are lost")
        elif self.damaged:
            parts.append(f"{self.damaged} of {self.rows} stored results lost")
        elif not parts:
            problem = self.file_problem or "a read failed"
            return f"its file structure is damaged: {problem}; no result lost"
        elif self.good:
            parts.append(f"its {len(self.good)} stored results are intact")
        else:
            parts.append("no stored result can be read")
        return "; ".join(parts)


def _join(words: tuple[str, ...]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


class StoreWarning(UserWarning):
    """Something the reader of a store should know: seeds not shown, results missing, a
    damaged store rebuilt. The CLI prints these as ``warning: ...`` lines."""


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


def _rowids(db: sqlite3.Connection, expected: int | None) -> tuple[set[int], int]:
    """Every rowid that may hold a row, and the largest known to hold one.

    Found through the key index, through the table, and the range up to the largest rowid
    (rows are never deleted, so rowids are dense); where the largest cannot be read (its page
    is lost), ``expected`` (the rows the stored spec asks for) extends the range."""
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
    known = max(int(top or 0), max(table, default=0), max(found, default=0))
    last = max(int(top or 0), max(table, default=0))
    if last <= 4 * (len(found | table) + 1000):  # a garbage rowid must not explode the range
        found.update(range(1, last + 1))
    if expected:
        found.update(range(1, expected + 1))
    return found | table, known


def _row_by_row(
    db: sqlite3.Connection, query: str, expected: int | None
) -> tuple[list[int], int, int, set[str]]:
    """``(good rowids, damaged, unsure, cell keys of the good rows)``: see :class:`Scan`."""
    good: list[int] = []
    cells: set[str] = set()
    damaged = 0
    unreadable: list[int] = []
    rowids, known = _rowids(db, expected)
    for rowid in sorted(rowids):
        try:
            row = db.execute(f"{query} WHERE rowid = ?", (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            unreadable.append(rowid)
            continue
        if row is None:
            continue  # a gap, not a row
        known = max(known, rowid)
        if _row_ok(row):
            good.append(rowid)
            cells.add(row[1])
        else:
            damaged += 1
    unsure = sum(1 for rowid in unreadable if rowid > known)
    return good, damaged + len(unreadable) - unsure, unsure, cells


def meta_value(db: sqlite3.Connection, key: str) -> str | None:
    """The ``meta`` value of ``key`` (``None`` if it is not stored, or not text); raises
    ``sqlite3.DatabaseError`` if it cannot be read."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row is not None and isinstance(row[0], str) else None


def _parts(db: sqlite3.Connection) -> tuple[tuple[str, ...], set[str], int | None]:
    """``(lost parts, cell keys of the cell table, rows the stored spec asks for)``: the
    parts other than results (:attr:`Scan.lost`), the cells that can be read and, if the spec
    and the cell table can be read, their cells × seeds."""
    lost: list[str] = []
    seeds: int | None = None
    for key in ("store_key", "spec"):
        try:
            value = meta_value(db, key)
            if key == "spec" and isinstance(value, str):
                seeds = int(json.loads(value)["seeds"])
        except (sqlite3.DatabaseError, ValueError, KeyError, TypeError):
            value = None
        if not isinstance(value, str) and "metadata" not in lost:
            lost.append("metadata")
    try:
        meta_value(db, "sessions")
    except sqlite3.DatabaseError:
        lost.append("run history")
    cells: set[str] = set()
    try:
        for (cell,) in db.execute("SELECT cell FROM cells"):
            cells.add(str(cell))
        n_cells: int | None = len(cells)
        db.execute("SELECT * FROM cells").fetchall()  # every column, not only the key
    except sqlite3.DatabaseError:
        lost.append("cell table")
        n_cells = None
    expected = None if seeds is None or n_cells is None else n_cells * max(seeds, 0)
    return tuple(lost), cells, expected


def scan(
    db: sqlite3.Connection, expected: int | None = None, cut: tuple[int, int] | None = None
) -> Scan:
    """Check the file (``PRAGMA quick_check``) and verify every result row; see the module
    docstring. ``expected``: the rows the current spec asks for (cells × seeds), which bounds
    the search where the last rows are lost (the stored spec's bound is used too); ``cut``:
    :func:`~impactbandits.experiments.store_files.cut_short` of the file. Reads the whole table:
    about 2 s per GB of results."""
    problem = quick_check(db)
    try:
        query = _select(db)
    except sqlite3.DatabaseError as exc:  # the schema itself is unreadable
        return Scan((), 0, problem or first_line(str(exc)), cut=cut)
    lost, cells, stored = _parts(db)
    try:
        facts = check_facts(db)
    except sqlite3.DatabaseError:
        facts = Facts()  # what cannot be read is in ``lost``, or the file's problem
    unsure = 0
    good: list[int] = []
    damaged = 0
    if problem is None:
        try:
            for row in db.execute(query):
                if _row_ok(row):
                    good.append(int(row[0]))
                    cells.add(row[1])
                else:
                    damaged += 1
        except sqlite3.DatabaseError as exc:
            problem = first_line(str(exc))
    if problem is not None:
        bound = max(expected or 0, stored or 0) or None
        good, damaged, unsure, found = _row_by_row(db, query, bound)
        cells |= found
    kept, repeated, conflicting, phrase = tuple(good), 0, 0, None
    if "results" in facts.keyless:
        kept, repeated, conflicting, phrase = drop_repeats(
            db, good, lambda r: _intact(db, query, r)
        )
    return Scan(
        kept,
        damaged + conflicting,
        problem,
        unsure,
        lost,
        cut,
        frozenset(cells),
        facts.problems + ((phrase,) if phrase else ()),
        repeated,
        facts.keyless,
    )


def _intact(db: sqlite3.Connection, query: str, rowid: int) -> bool:
    try:
        row = db.execute(f"{query} WHERE rowid = ?", (rowid,)).fetchone()
    except sqlite3.DatabaseError:
        return False
    return row is not None and _row_ok(row)
