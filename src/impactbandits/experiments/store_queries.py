"""The read side of a results store: its queries and its integrity check.

:class:`StoreQueries` is the base of :class:`~impactbandits.experiments.store.Store`, which opens
the file (read-only for export and report, writable for a run) and writes to it; everything here
only reads. Reads verify what they return: a row that fails its checksum or cannot be decoded,
or a store SQLite finds damaged, raises
:class:`~impactbandits.experiments.store_repair.DamagedStoreError` (one line, with the count of
damaged results). So does a damaged fact the numbers are read under
(:mod:`~impactbandits.experiments.store_facts`): a ``meta`` row is verified as it is read
(:meth:`StoreQueries.meta`), and the cell table, the run history and the uniqueness of every
(cell, seed) before the cells are first returned (:meth:`StoreQueries.cells`) and by
:meth:`StoreQueries.check`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from impactbandits.errors import SpecError, StoreError
from impactbandits.experiments.payload import decode, decode_json
from impactbandits.experiments.spec import SpecRecord, spec_record
from impactbandits.experiments.store_dir import STORE_FILE
from impactbandits.experiments.store_facts import check_facts, has_column, meta_ok
from impactbandits.experiments.store_repair import (
    DamagedStoreError,
    has_checksums,
    quick_check,
    scan,
    verified_payload,
)

__all__ = ["StoreQueries"]


class StoreQueries:
    """The queries of a :class:`~impactbandits.experiments.store.Store` (its base class; a
    store is opened with :meth:`~impactbandits.experiments.store.Store.create` or
    :meth:`~impactbandits.experiments.store.Store.open_existing`)."""

    path: Path
    _db: sqlite3.Connection
    _cut: tuple[int, int] | None  # cut_short() of the file, if SQLite refused it as malformed
    _facts_checked: bool = False  # check_facts() passed on this connection

    @property
    def file(self) -> Path:
        return self.path / STORE_FILE

    # -- integrity -------------------------------------------------------------------------------
    def check(self) -> None:
        """Raise :class:`DamagedStoreError` if ``PRAGMA quick_check`` finds the file damaged,
        the file is cut short (shorter than its header says) or a fact the numbers are read
        under is damaged (:meth:`check_facts`)."""
        if quick_check(self._db) is not None or self._cut is not None:
            raise self._damaged()
        self.check_facts()

    def check_facts(self) -> None:
        """Raise :class:`DamagedStoreError` if the cell table, the metadata or the run history
        fails its checks or a (cell, seed) is stored twice
        (:func:`~impactbandits.experiments.store_facts.check_facts`: the small tables and the
        index list; the results only where their primary key is lost). Checked once per
        opened store."""
        if self._facts_checked:
            return
        try:
            wrong = check_facts(self._db).wrong
        except sqlite3.DatabaseError:
            wrong = True
        if wrong:
            raise self._damaged()
        self._facts_checked = True

    def _damaged(self) -> DamagedStoreError:
        """The error for a damaged store, with the count of damaged results (a full scan)."""
        return DamagedStoreError(self.file, scan(self._db, cut=self._cut))

    # -- metadata --------------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        """The ``meta`` value of ``key`` (``None``: not stored), verified against its checksum
        (stores written before: not verified); a damaged or repeated one raises
        :class:`DamagedStoreError`."""
        try:
            crc = "crc" if has_column(self._db, "meta", "crc") else "NULL"
            rows = self._db.execute(
                f"SELECT value, {crc} FROM meta WHERE key = ?", (key,)
            ).fetchall()
        except sqlite3.DatabaseError:
            raise self._damaged() from None
        if len(rows) > 1 or (rows and not meta_ok(key, *rows[0])):
            raise self._damaged()
        return str(rows[0][0]) if rows else None

    def spec(self) -> SpecRecord:
        """The stored spec, read as data (:class:`~impactbandits.experiments.spec.SpecRecord`):
        nothing it names is imported or called, so any run directory can be read safely."""
        raw = self.meta("spec")
        if raw is None:
            raise StoreError(f"run_dir: {str(self.path)!r} has no experiment spec")
        try:
            return spec_record(json.loads(raw))
        except (ValueError, SpecError) as exc:  # JSONDecodeError is a ValueError
            problem = str(exc) if isinstance(exc, SpecError) else f"not JSON: {exc}"
            raise StoreError(
                f"run_dir: the experiment spec stored in {str(self.file)!r} is malformed "
                f"({problem})"
            ) from None

    # -- results ---------------------------------------------------------------------------------
    def finished(self) -> set[tuple[str, int]]:
        """All stored (cell, seed) pairs."""
        try:
            return {(str(c), int(s)) for c, s in self._db.execute("SELECT cell, seed FROM results")}
        except sqlite3.DatabaseError:
            raise self._damaged() from None

    def cells(self) -> list[dict[str, Any]]:
        """The cell table in position order, once its facts are checked
        (:meth:`check_facts`)."""
        self.check_facts()
        try:
            cursor = self._db.execute(
                "SELECT cell, environment, policy, horizon, rounds, grid, n_arms, env_spec, "
                "policy_spec FROM cells ORDER BY position"
            )
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor]
        except sqlite3.DatabaseError:
            raise self._damaged() from None

    def _seeds_clause(self, seeds: int | None) -> tuple[str, tuple[int, ...]]:
        return ("", ()) if seeds is None else (" AND seed < ?", (seeds,))

    def samples(self, seeds: int | None = None) -> dict[str, tuple[int, dict[str, Any] | None]]:
        """Per cell with results: how many are stored (``seeds``: only seeds below it) and the
        decoded payload of its lowest seed (unverified: for sizing tables; ``None`` if it
        cannot be decoded)."""
        where, params = self._seeds_clause(seeds)
        found: dict[str, tuple[int, dict[str, Any] | None]] = {}
        try:
            for cell, count, seed in self._db.execute(
                f"SELECT cell, COUNT(*), MIN(seed) FROM results WHERE 1{where} GROUP BY cell",
                params,
            ).fetchall():
                row = self._db.execute(
                    "SELECT payload FROM results WHERE cell = ? AND seed = ?", (cell, seed)
                ).fetchone()
                try:
                    value = decode_json(row[0]) if isinstance(row[0], str) else decode(row[0])
                except (ValueError, TypeError):
                    value = None
                found[str(cell)] = (int(count), value)
        except sqlite3.DatabaseError:
            raise self._damaged() from None
        return found

    def seed_sets(self) -> dict[str, np.ndarray]:
        """Per cell of the cell table: its distinct stored seeds, sorted (``int64``). A
        compact :meth:`finished` (8 bytes a result, not a Python tuple): what
        :func:`~impactbandits.experiments.tidy.store_coverage` counts."""
        try:
            keys = [str(c) for (c,) in self._db.execute("SELECT cell FROM cells ORDER BY position")]
            out = {}
            for key in keys:
                cursor = self._db.execute(
                    "SELECT seed FROM results WHERE cell = ? ORDER BY seed", (key,)
                )
                seeds = np.fromiter((seed for (seed,) in cursor), dtype=np.int64)
                out[key] = np.unique(seeds)  # a results table without its key may repeat one
            return out
        except sqlite3.DatabaseError:
            raise self._damaged() from None

    def results(
        self, seeds: int | None = None, cells: Collection[str] | None = None
    ) -> Iterator[tuple[str, int, dict[str, Any]]]:
        """Stream ``(cell, seed, payload)`` ordered by cell position and seed (``seeds``: only
        seeds below it; ``cells``: only these cells). Payloads are decoded into arrays
        (:mod:`~impactbandits.experiments.payload`; those of blobs are read-only views). Every
        row is verified (checksum, decoding); a damaged one raises :class:`DamagedStoreError`.

        Reads cell by cell through the ``(cell, seed)`` key, so SQLite never sorts payloads."""
        crc = "crc" if has_checksums(self._db) else "NULL"
        where, params = self._seeds_clause(seeds)
        query = f"SELECT seed, payload, {crc} FROM results WHERE cell = ?{where} ORDER BY seed"
        try:
            keys = [str(c) for (c,) in self._db.execute("SELECT cell FROM cells ORDER BY position")]
            for key in keys:
                if cells is not None and key not in cells:
                    continue
                for seed, payload, checksum in self._db.execute(query, (key, *params)):
                    value = verified_payload(key, seed, payload, checksum)
                    if value is None:
                        raise self._damaged()
                    yield key, int(seed), value
        except sqlite3.DatabaseError:
            raise self._damaged() from None

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0])
