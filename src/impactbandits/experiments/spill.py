"""Arrays set aside in a temporary file until they are read back, row by row.

The report's statistics over seeds (:mod:`~impactbandits.experiments.aggregates`) need every
value of a group at once to be exact, so a cell is held until it is read to its end. A cell of
many seeds and checkpoints holds more than a report should take (a million seeds at 50
checkpoints: 0.8 GB for its regret and reward alone), so beyond a budget the values go to a
:class:`Spill`: an anonymous temporary file in the system's temporary folder (``$TMPDIR``; the
system removes it when it is closed or the process ends), written once and read back a block of
rows at a time. Each array is stored transposed (checkpoints × results, C order), so the values
of one checkpoint are contiguous on disk and a block of checkpoints is one read.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

__all__ = ["Spill", "Spilled"]


class Spill:
    """A temporary file that arrays are appended to (:meth:`put`) and read back from
    (:meth:`Spilled.rows`); created on the first :meth:`put`, removed by :meth:`close`."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._size = 0

    @property
    def size(self) -> int:
        """Bytes written so far."""
        return self._size

    def put(self, rows: np.ndarray) -> Spilled:
        """Write ``rows`` (a 2-D array: rows × values) to the file; raises :class:`OSError`
        if it cannot be written (the caller keeps the array in memory then)."""
        rows = np.ascontiguousarray(rows)
        if rows.ndim != 2:
            raise ValueError("a spilled array has two dimensions")
        if self._file is None:
            # closed by close(), or removed by the system with the process
            self._file = tempfile.TemporaryFile(prefix="impactbandits-")  # noqa: SIM115
        self._file.seek(self._size)
        rows.tofile(self._file)
        spilled = Spilled(self, self._size, (rows.shape[0], rows.shape[1]), rows.dtype)
        self._size += rows.nbytes
        return spilled

    def read(self, offset: int, dtype: np.dtype[Any], count: int) -> np.ndarray:
        """``count`` values of ``dtype`` from ``offset``."""
        if self._file is None:
            raise ValueError("nothing was spilled")
        self._file.seek(offset)
        values = np.fromfile(self._file, dtype=dtype, count=count)
        if values.size != count:
            raise OSError(f"the temporary file ended {count - values.size} values early")
        return values

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Spill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Spilled:
    """A 2-D array written to a :class:`Spill`."""

    spill: Spill
    offset: int
    shape: tuple[int, int]
    dtype: np.dtype[Any]

    @property
    def nbytes(self) -> int:
        return self.shape[0] * self.shape[1] * self.dtype.itemsize

    def rows(self, at: slice | np.ndarray) -> np.ndarray:
        """Rows ``at`` (a slice with step 1, or indices) as a new array, read from the file."""
        count = self.shape[1]
        row_bytes = count * self.dtype.itemsize
        if isinstance(at, slice):
            start, stop, step = at.indices(self.shape[0])
            if step != 1:
                raise ValueError("rows of a spilled array are read with step 1")
            n = max(stop - start, 0)
            values = self.spill.read(self.offset + start * row_bytes, self.dtype, n * count)
            return values.reshape(n, count)
        index = np.asarray(at, dtype=np.int64).ravel()
        out = np.empty((index.size, count), dtype=self.dtype)
        for i, row in enumerate(index.tolist()):
            if not 0 <= row < self.shape[0]:
                raise IndexError(f"row {row} of a spilled array of {self.shape[0]} rows")
            out[i] = self.spill.read(self.offset + row * row_bytes, self.dtype, count)
        return out
