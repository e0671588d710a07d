"""The read side of a results store: its queries and its integrity check.

:class:`StoreQueries` is the base of :class:`~impactbandits.experiments.store.Store`, which opens
the file (read-only for export and report, writable for a run) and writes to it; everything here
only reads. Reads verify what they return: a row that fails its checksum or cannot be decoded,
or a store SQLite finds damaged, raises
:class:`~impactbandits.experiments.store_repair.DamagedStoreError` (one line, with the count of
damaged results). Moved unchanged from ``impactbandits.experiments.store``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from impactbandits.errors import SpecError, StoreError
from impactbandits.experiments.payload import decode, decode_json
from impactbandits.experiments.spec import SpecRecord, spec_record
from impactbandits.experiments.store_dir import STORE_FILE
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

    @property
    def file(self) -> Path:
        return self.path / STORE_FILE

    # -- integrity -------------------------------------------------------------------------------
    def check(self) -> None:
        """Raise :class:`DamagedStoreError` if ``PRAGMA quick_check`` finds the file damaged,
        or the file is cut short (shorter than its header says)."""
        if quick_check(self._db) is not None or self._cut is not None:
            raise self._damaged()

    def _damaged(self) -> DamagedStoreError:
        """The error for a damaged store, with the count of damaged results (a full scan)."""
        return DamagedStoreError(self.file, scan(self._db, cut=self._cut))

    # -- metadata --------------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.DatabaseError:
            raise self._damaged() from None
        return None if row is None else str(row[0])

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
