"""The facts every stored number is read under, and their checks: the cell table (which cell key
is which environment, policy and horizon), the metadata (the store key, the spec, the run
history) and the uniqueness of each stored (cell, seed).

A result row's checksum (:func:`~impactbandits.experiments.store_repair.row_checksum`) covers
its key and numbers, not what they are shown under: relabelling a policy in the cell table would
show one policy's numbers under another's name. So every row of ``meta`` and ``cells`` carries
a checksum too (column ``crc``: :func:`meta_checksum` of its key and value,
:func:`cell_checksum` of every column), and :func:`check_facts` verifies them with what holds
in any store: each table keeps its primary key, no key is listed twice, a cell's labels are
those of its definition, the run history is a list of sessions. Stores written before these
checksums have ``crc = NULL`` (not verified, as their result rows); a run adds the column
(:func:`add_checksum_columns`) and, once the rows are found equal to the spec's, fills it
(:func:`fill_checksums`).

The check reads the small tables and the index list, never the results' payloads; only where
the results table has lost its primary key does it count repeated (cell, seed) pairs with one
SQL query (:func:`repeated_results`). Readers raise
:class:`~impactbandits.experiments.store_repair.DamagedStoreError` on what it finds; a run
rebuilds the store from the spec and the intact rows (:mod:`~impactbandits.experiments.store`).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import sqlite3
import types
import typing
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CELL_COLUMNS",
    "Facts",
    "add_checksum_columns",
    "cell_checksum",
    "cell_rows",
    "cells_differ",
    "check_facts",
    "drop_repeats",
    "fill_checksums",
    "has_column",
    "keyless_tables",
    "meta_checksum",
    "meta_ok",
    "put_meta",
    "repeated_results",
    "sessions_ok",
]

#: The columns of the ``cells`` table, in order (the checksum covers all of them).
CELL_COLUMNS = (
    "cell",
    "position",
    "environment",
    "policy",
    "horizon",
    "rounds",
    "grid",
    "n_arms",
    "env_spec",
    "policy_spec",
)

#: Each table's primary key.
_KEYS = {"meta": ("key",), "cells": ("cell",), "results": ("cell", "seed")}

#: What a ``meta`` key holds, for messages.
_META_NAMES = {"store_key": "store key", "spec": "spec", "sessions": "run history"}


def meta_checksum(key: str, value: str) -> int:
    """CRC32 of a ``meta`` row (its key and text value)."""
    return zlib.crc32(f"{key}\x1f{value}".encode())


def cell_checksum(row: Sequence[Any]) -> int:
    """CRC32 of a ``cells`` row: its :data:`CELL_COLUMNS` values as stored (JSON of the list:
    a changed type counts as a change). Raises ``TypeError`` for a value SQLite stores but JSON
    cannot (a blob): such a row is damaged."""
    text = json.dumps(list(row), separators=(",", ":"), ensure_ascii=False)
    return zlib.crc32(text.encode())


def meta_ok(key: object, value: object, crc: object) -> bool:
    """Whether a ``meta`` row passes its checksum (``crc`` ``NULL``: not verified)."""
    if crc is None:
        return True
    return isinstance(key, str) and isinstance(value, str) and meta_checksum(key, value) == crc


def _cell_ok(row: Sequence[Any], crc: object) -> bool:
    if crc is None:
        return True
    try:
        return cell_checksum(row) == crc
    except (TypeError, ValueError):
        return False


def has_column(db: sqlite3.Connection, table: str, column: str) -> bool:
    return any(name == column for (name,) in db.execute(_TABLE_INFO, (table,)))


_TABLE_INFO = "SELECT name FROM pragma_table_info(?)"


def keyless_tables(db: sqlite3.Connection) -> tuple[str, ...]:
    """The tables of :data:`_KEYS` that have no unique index on their primary key's columns
    (a table rebuilt without it): a run could store a row twice there."""
    out = []
    for table, key in _KEYS.items():
        indexes = db.execute(
            'SELECT name FROM pragma_index_list(?) WHERE "unique"', (table,)
        ).fetchall()
        columns = [
            tuple(c for (c,) in db.execute("SELECT name FROM pragma_index_info(?)", (name,)))
            for (name,) in indexes
        ]
        if key not in columns:
            out.append(table)
    return tuple(out)


def repeated_results(db: sqlite3.Connection) -> int:
    """Result rows that repeat the (cell, seed) of another (only possible in a results table
    without its primary key: call it only then). One pass over the keys; no payload is read."""
    (count,) = db.execute(
        "SELECT coalesce(sum(n - 1), 0) FROM "
        "(SELECT count(*) AS n FROM results GROUP BY cell, seed HAVING n > 1)"
    ).fetchone()
    return int(count)


def drop_repeats(
    db: sqlite3.Connection, good: Sequence[int], intact: Callable[[int], bool]
) -> tuple[tuple[int, ...], int, int, str | None]:
    """``good`` (rowids of intact result rows) without repeats: of the copies of one (cell,
    seed) with the same payload the first intact one is kept; where the copies differ none is
    (which numbers were run cannot be told: they are recomputed). ``intact(rowid)``: whether
    that row passes its checks. Returns ``(good, copies dropped, rows with conflicting copies
    dropped, a phrase for those or None)``; for a results table without its primary key. One
    pass over the keys (sorted by SQLite); only the repeated rows' payloads are read."""
    drop: set[int] = set()
    copies = conflicting = pairs = 0
    keys = db.execute("SELECT cell, seed, rowid FROM results ORDER BY cell, seed, rowid")
    payload = "SELECT payload FROM results WHERE rowid = ?"
    for _, group in itertools.groupby(keys, key=lambda row: (row[0], row[1])):
        rowids = [int(row[2]) for row in group]
        if len(rowids) < 2:
            continue
        kept = [r for r in rowids if intact(r)]  # a damaged copy is counted as damaged
        first = db.execute(payload, (kept[0],)).fetchone()[0] if kept else None
        if any(db.execute(payload, (r,)).fetchone()[0] != first for r in kept[1:]):
            drop.update(kept)
            conflicting += len(kept)
            pairs += 1
        else:
            drop.update(kept[1:])
            copies += max(len(kept) - 1, 0)
    if not drop:
        return tuple(good), 0, 0, None
    phrase = f"{pairs} (cell, seed) pairs are stored with different numbers" if pairs else None
    return tuple(r for r in good if r not in drop), copies, conflicting, phrase


# -- the run history --------------------------------------------------------------------------
def _fits(value: Any, hint: Any) -> bool:
    """``value`` (parsed JSON) has the type ``hint`` (str, int, float, dict[str, str], a
    union of these or ``None``); a bool is no number."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, arm) for arm in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is dict:
        key_hint, value_hint = typing.get_args(hint) or (Any, Any)
        return isinstance(value, dict) and all(
            (key_hint is Any or _fits(k, key_hint)) and (value_hint is Any or _fits(v, value_hint))
            for k, v in value.items()
        )
    return True  # a type this check does not know: left to the reader


def sessions_ok(raw: object) -> bool:
    """Whether ``raw`` (the ``meta`` value of ``"sessions"``) is a JSON list of sessions that
    :class:`~impactbandits.experiments.provenance.Session` reads: every field it requires, each
    of its type."""
    from impactbandits.experiments.provenance import Session

    if not isinstance(raw, str):
        return False
    try:
        sessions = json.loads(raw)
    except ValueError:
        return False
    if not isinstance(sessions, list):
        return False
    hints = typing.get_type_hints(Session)
    fields = dataclasses.fields(Session)
    required = [
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    for item in sessions:
        if not isinstance(item, dict) or any(name not in item for name in required):
            return False
        if not all(_fits(item[f.name], hints[f.name]) for f in fields if f.name in item):
            return False
    return True


# -- the check ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Facts:
    """What :func:`check_facts` found."""

    problems: tuple[str, ...] = ()
    """Damaged facts, each a phrase for the error ("its spec fails its checksum")."""
    keyless: tuple[str, ...] = ()
    """Tables without their primary key (:func:`keyless_tables`): harmless to a reader unless
    a key is repeated (then in :attr:`problems` or :attr:`repeated`), rebuilt by a run."""
    repeated: int = 0
    """Result rows that repeat the (cell, seed) of an earlier row."""

    @property
    def wrong(self) -> bool:
        """Whether a reader would show something other than what was run."""
        return bool(self.problems or self.repeated)


def _cell_problems(db: sqlite3.Connection, verify: bool) -> list[str]:
    """The cell table: repeated keys, rows failing their checksum, labels that differ from the
    cell's definition (environment and policy specs), values of the wrong type."""
    crc = "crc" if verify else "NULL"
    rows = db.execute(f"SELECT {', '.join(CELL_COLUMNS)}, {crc} FROM cells").fetchall()
    seen: dict[object, int] = {}
    failing: list[str] = []
    malformed: list[str] = []
    for *row, checksum in rows:
        key = row[0]
        seen[key] = seen.get(key, 0) + 1
        if not _cell_ok(row, checksum):
            failing.append(str(key))
        elif not _cell_well_formed(row):
            malformed.append(str(key))
    out = []
    repeated = sorted(str(k) for k, n in seen.items() if n > 1)
    if repeated:
        out.append(f"its cell table lists {_cells(repeated)} more than once")
    if failing:
        verb = "fails its checksum" if len(failing) == 1 else "fail their checksums"
        out.append(f"{_rows(failing)} of its cell table {verb}")
    if malformed:
        verb = "disagrees" if len(malformed) == 1 else "disagree"
        out.append(f"{_rows(malformed)} of its cell table {verb} with the cell's definition")
    return out


def _rows(keys: list[str]) -> str:
    """``1 row (cell K)`` / ``3 rows (e.g. cell K)``."""
    first = min(keys)
    return f"1 row (cell {first})" if len(keys) == 1 else f"{len(keys)} rows (e.g. cell {first})"


def _cells(keys: list[str]) -> str:
    return f"cell {keys[0]}" if len(keys) == 1 else f"{len(keys)} cells (e.g. {keys[0]})"


def _cell_well_formed(row: Sequence[Any]) -> bool:
    """Types as written, and the labels those of the environment's and policy's specs."""
    cell, position, environment, policy, horizon, rounds, grid, n_arms, env, pol = row

    def whole(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    if not (isinstance(cell, str) and whole(position) and whole(rounds) and whole(n_arms)):
        return False
    if horizon is not None and not whole(horizon):
        return False
    try:
        points = json.loads(grid)
        env_spec, policy_spec = json.loads(env), json.loads(pol)
    except (TypeError, ValueError):
        return False
    if not isinstance(points, list) or not all(whole(p) for p in points):
        return False
    if not isinstance(env_spec, dict) or not isinstance(policy_spec, dict):
        return False
    return env_spec.get("label") == environment and policy_spec.get("label") == policy


def _meta_problems(db: sqlite3.Connection, verify: bool) -> list[str]:
    crc = "crc" if verify else "NULL"
    out = []
    counts: dict[object, int] = {}
    for key, value, checksum in db.execute(f"SELECT key, value, {crc} FROM meta"):
        counts[key] = counts.get(key, 0) + 1
        name = _META_NAMES.get(str(key), f"metadata {key!r}")
        if not meta_ok(key, value, checksum):
            out.append(f"its {name} fails its checksum")
        elif key == "sessions" and not sessions_ok(value):
            out.append("its run history is not a list of sessions")
    for key, count in counts.items():
        if count > 1:
            name = _META_NAMES.get(str(key), f"metadata {key!r}")
            out.append(f"its {name} is stored {count} times")
    return out


def check_facts(db: sqlite3.Connection) -> Facts:
    """Check the facts numbers are read under (see the module docstring). Raises
    ``sqlite3.DatabaseError`` where SQLite cannot read them (a damaged file)."""
    keyless = keyless_tables(db)
    problems = _meta_problems(db, has_column(db, "meta", "crc"))
    problems += _cell_problems(db, has_column(db, "cells", "crc"))
    repeated = repeated_results(db) if "results" in keyless else 0
    return Facts(tuple(problems), keyless, repeated)


# -- writing ------------------------------------------------------------------------------------
def add_checksum_columns(db: sqlite3.Connection) -> None:
    """Add the ``crc`` column to the ``meta`` and ``cells`` tables of a store written before
    them (existing rows: ``NULL``, not verified, until :func:`fill_checksums`)."""
    for table in ("meta", "cells"):
        if not has_column(db, table, "crc"):
            db.execute(f"ALTER TABLE {table} ADD COLUMN crc INTEGER")


def fill_checksums(db: sqlite3.Connection) -> None:
    """Give every ``meta`` and ``cells`` row without a checksum its checksum: call it only once
    they are known to be right (a run has compared them with its spec)."""
    metas = db.execute("SELECT key, value FROM meta WHERE crc IS NULL").fetchall()
    cells = db.execute(f"SELECT {', '.join(CELL_COLUMNS)} FROM cells WHERE crc IS NULL").fetchall()
    if not metas and not cells:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        db.executemany(
            "UPDATE meta SET crc = ? WHERE key = ?",
            [(meta_checksum(key, value), key) for key, value in metas if isinstance(value, str)],
        )
        db.executemany(
            "UPDATE cells SET crc = ? WHERE cell = ?", [(cell_checksum(r), r[0]) for r in cells]
        )
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def put_meta(db: sqlite3.Connection, key: str, value: str) -> None:
    """Store ``meta[key] = value`` with its checksum (a store without the column: without)."""
    if has_column(db, "meta", "crc"):
        db.execute(
            "INSERT OR REPLACE INTO meta (key, value, crc) VALUES (?, ?, ?)",
            (key, value, meta_checksum(key, value)),
        )
    else:
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def cell_rows(cells: Iterable[Any]) -> list[tuple[Any, ...]]:
    """The ``cells`` rows of a spec's cells (:class:`~impactbandits.experiments.cells.Cell`),
    with their checksums: one per key, the first of the cells that share a key (as ``INSERT OR
    IGNORE`` keeps it), at its position in ``cells``."""
    rows: dict[str, tuple[Any, ...]] = {}
    for i, c in enumerate(cells):
        if c.key in rows:
            continue
        row = (
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
        rows[c.key] = (*row, cell_checksum(row))
    return list(rows.values())


def cells_differ(db: sqlite3.Connection, expected: Sequence[tuple[Any, ...]]) -> bool:
    """Whether the stored cell table differs from ``expected`` (:func:`cell_rows`) in what a
    number is read under: the keys, positions, labels, horizons, rounds, grids and arm counts
    (not the text of the component specs, which other versions may write otherwise)."""
    names = CELL_COLUMNS[:8]
    stored = db.execute(f"SELECT {', '.join(names)} FROM cells ORDER BY cell").fetchall()
    want = sorted((row[:8] for row in expected), key=lambda r: str(r[0]))
    return [_read_under(r) for r in stored] != [_read_under(r) for r in want]


def _read_under(row: Sequence[Any]) -> tuple[Any, ...]:
    try:
        grid = json.loads(row[6])
    except (TypeError, ValueError):
        grid = row[6]
    return (*row[:6], grid, row[7])
