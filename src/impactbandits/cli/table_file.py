"""Writing ``export``'s table to its file: a temporary file renamed over the target, never written
through a link; a device or a pipe the user named is written as it is."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from impactbandits.errors import SpecError


def _write_table(table: Any, target: Path, fmt: str) -> None:
    if fmt == "csv":
        table.to_csv(target, index=False)
    else:
        table.to_parquet(target, index=False)


def _write_atomically(path: Path, write: Callable[[Path], None], root: Path | None = None) -> None:
    """``write`` a new temporary file beside ``path`` (created exclusively), then rename it over
    ``path`` (:func:`~impactbandits.experiments.run_files.write_file`): a failure (a full disk)
    leaves no half-written ``path`` (an earlier one stays), the error names ``path`` (a full
    disk: :func:`_store_messages`' line), and a link at ``path`` or at the temporary name is
    replaced, never written through. ``root``: the run directory ``path`` lies in (its folders
    are checked); without it, a device or a pipe the user named is written as it is."""
    from impactbandits.experiments.run_files import write_file
    from impactbandits.experiments.store_files import is_disk_full

    if root is None and path.exists() and not path.is_file():  # a device or a pipe
        try:
            write(path)
        except OSError as exc:
            if is_disk_full(exc):  # pandas' error names no file
                raise OSError(exc.errno, exc.strerror, str(path)) from None
            message = f"cannot write {str(path)!r} ({exc.strerror or exc})"
            raise SpecError("output", message) from None
        return
    write_file(path, write, root=root, field="output")
