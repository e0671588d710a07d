"""Checks of the arguments of the public readers (:func:`~impactbandits.experiments.tidy.
tidy_table`, :func:`~impactbandits.experiments.tidy.seed_coverage`,
:func:`~impactbandits.experiments.aggregates.run_aggregates`,
:func:`~impactbandits.experiments.figures.load_run`,
:func:`~impactbandits.experiments.report.write_report`, …): a wrong type is a one-line
:class:`~impactbandits.errors.SpecTypeError` (a :class:`TypeError` too) naming the argument and
what it takes, instead of whatever the first function to touch it raises
(``tidy_table(123)``: ``TypeError: expected str, bytes or os.PathLike object, not int``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from impactbandits.errors import SpecError, SpecTypeError

__all__ = ["flag_argument", "run_dir_argument", "seeds_argument"]


def run_dir_argument(value: Any, name: str = "run_dir") -> Path:
    """``value`` as the path of a run directory: a non-empty ``str`` or ``os.PathLike``."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise SpecTypeError(
            name,
            f"must be the path of a run directory (a str or os.PathLike), got {value!r} "
            f"({type(value).__name__})",
        )
    if not value.strip():
        raise SpecTypeError(name, "must be the path of a run directory, got an empty string")
    return Path(value)


def flag_argument(value: Any, name: str) -> bool:
    """``value`` as a switch: ``True`` or ``False`` (not ``"yes"``, not ``1``)."""
    if not isinstance(value, bool):
        raise SpecTypeError(name, f"must be True or False, got {value!r} ({type(value).__name__})")
    return value


def seeds_argument(value: Any) -> None:
    """``value`` as the seeds a table shows: ``None``, ``"all"`` or a positive integer."""
    if value is None or (isinstance(value, str) and value == "all"):
        return
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        error = SpecError if isinstance(value, int | str) else SpecTypeError
        raise error("seeds", f"must be a positive integer, 'all' or None, got {value!r}")
