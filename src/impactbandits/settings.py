"""Environment variables the library reads, all parsed the same strict way.

An unset or empty variable means its default; any other value must be one the variable allows,
else a one-line :class:`~impactbandits.errors.SpecError` names the variable and what is allowed
(``IMPACTBANDITS_DEDUP: 'maybe' is not one of 0, 1, off, on, false, true, no, yes``), raised
before anything is stored. Values are read when they are used, never at import.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TypeVar

from impactbandits.errors import SpecError

__all__ = [
    "DEDUP",
    "KERNELS",
    "REPORT_WORKERS",
    "check",
    "choice",
    "dedup",
    "flag",
    "kernels",
    "positive_int",
    "report_workers",
]

#: ``0`` (or off/false/no) simulates every seed of a deterministic cell
#: (:mod:`impactbandits.experiments.runner`); default on.
DEDUP = "IMPACTBANDITS_DEDUP"
#: Where the compiled loops come from: ``0`` (or ``off``), ``aot``, ``jit``, ``auto`` (or ``1``);
#: default auto (:mod:`impactbandits.kernels`).
KERNELS = "IMPACTBANDITS_KERNELS"
#: Processes drawing a report's standard figures (a positive integer); default 1
#: (:mod:`impactbandits.experiments.report`).
REPORT_WORKERS = "IMPACTBANDITS_REPORT_WORKERS"
_KERNEL_CHOICES: Mapping[str, str] = {
    "0": "0",
    "jit": "jit",
    "off": "0",
    "aot": "aot",
    "auto": "auto",
    "1": "auto",
}

T = TypeVar("T")

_FLAGS: Mapping[str, bool] = {
    "0": False,
    "1": True,
    "off": False,
    "on": True,
    "false": False,
    "true": True,
    "no": False,
    "yes": True,
}


#: The most processes :data:`REPORT_WORKERS` may ask for: each one imports Matplotlib and holds
#: a figure (~100 MB), so more than this many are a typo, not a machine.
MAX_WORKERS = 1024


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return None
    return value.strip().lower()


def choice(name: str, choices: Mapping[str, T], default: T) -> T:
    """The value of ``name`` mapped through ``choices`` (keys in lower case)."""
    value = _raw(name)
    if value is None:
        return default
    if value not in choices:
        raise SpecError(name, f"{os.environ[name]!r} is not one of {', '.join(choices)}")
    return choices[value]


def flag(name: str, default: bool) -> bool:
    """A switch: ``0/1``, ``off/on``, ``false/true`` or ``no/yes``."""
    return choice(name, _FLAGS, default)


def positive_int(name: str, default: int, limit: int = MAX_WORKERS) -> int:
    """An integer in ``1 … limit``, written with the digits 0–9 (``"²"`` or ``"٣"`` pass
    ``str.isdigit`` but are no such integer)."""
    value = _raw(name)
    if value is None:
        return default
    if not (value.isascii() and value.isdecimal()) or not 1 <= int(value) <= limit:
        raise SpecError(
            name, f"{os.environ[name]!r} is not a whole number from 1 to {limit} (digits 0-9)"
        )
    return int(value)


def dedup() -> bool:
    """:data:`DEDUP`."""
    return flag(DEDUP, default=True)


def kernels() -> str:
    """:data:`KERNELS`: ``"0"``, ``"aot"``, ``"jit"`` or ``"auto"``."""
    return choice(KERNELS, _KERNEL_CHOICES, "auto")


def report_workers() -> int:
    """:data:`REPORT_WORKERS`."""
    return positive_int(REPORT_WORKERS, default=1)


def check() -> None:
    """Read every variable: a bad value of any is refused now, before a command computes or
    stores anything (not when its phase comes)."""
    dedup()
    kernels()
    report_workers()
