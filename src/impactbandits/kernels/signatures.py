"""The entry points of the compiled loops and the exact types of their arguments, in one table.

The ahead-of-time build (:mod:`impactbandits.kernels.build`) compiles each entry for exactly
these types, and :func:`check` holds every call to the ahead-of-time module to them: that code
does not check what it is given (an array of another dtype, rank or layout would be read as
garbage, or crash the process), so a call that does not match is refused with a ``TypeError``
naming the argument. numba's JIT dispatchers need none of this: they compile for what they are
given. Importable without numba.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ENTRIES", "Arg", "Entry", "check"]


@dataclass(frozen=True)
class Arg:
    """One argument: a scalar (``ndim`` 0) or an array of ``dtype`` and rank ``ndim``."""

    name: str
    dtype: str
    ndim: int = 0
    #: ``"C"``: C-contiguous (what the loops index fastest); ``"A"``: any strides.
    layout: str = "C"
    #: The loop writes into it (an output): it must be writeable. Arrays the loop only reads
    #: are compiled as read-only, so read-only views (``np.broadcast_to``) pass without a copy.
    writes: bool = False


@dataclass(frozen=True)
class Entry:
    """A compiled function ``module.function`` (modules of :mod:`impactbandits.kernels`)."""

    module: str
    function: str
    args: tuple[Arg, ...]
    #: ``None``: returns nothing (writes its outputs).
    returns: Arg | None = None


def _f8(name: str, ndim: int = 0, layout: str = "C", writes: bool = False) -> Arg:
    return Arg(name, "float64", ndim, layout, writes)


def _i8(name: str, ndim: int = 0, writes: bool = False) -> Arg:
    return Arg(name, "int64", ndim, "C", writes)


def _u8(name: str, ndim: int = 0) -> Arg:
    return Arg(name, "uint64", ndim)


#: What both round loops take last: the rounds, the checkpoints and the arrays they write the
#: checkpoint summaries of :class:`~impactbandits.core.simulate.Trajectory` into.
_ROUNDS_AND_SUMMARIES = (
    _i8("rounds"),
    _i8("checkpoints", 1),
    _f8("out_reward", 2, writes=True),
    _f8("out_expected", 2, writes=True),
    _f8("out_pulls", 3, writes=True),
    _i8("out_switches", 2, writes=True),
)

#: What the long-running loops take last: the flag that asks them to stop (a one-element array
#: another thread sets; :mod:`impactbandits.kernels.stop`), and what they return
#: (:data:`~impactbandits.kernels.kinds.DONE` or :data:`~impactbandits.kernels.kinds.STOPPED`).
_STOP = _i8("stop", 1)
_STATUS = _i8("status")

#: Every entry point the library calls (``impactbandits.kernels.entry``; the long-running ones,
#: which take ``stop``, through ``impactbandits.kernels.call``).
ENTRIES: dict[str, Entry] = {
    "run": Entry(
        "loops",
        "run",
        (
            _i8("kind"),
            _f8("params", 1),
            _f8("values", 3),
            _i8("noise"),
            _f8("sigma"),
            _u8("key", 1),
            _u8("replications_ids", 1),
            _f8("uniforms", 2, "A"),
            *_ROUNDS_AND_SUMMARIES,
            _STOP,
        ),
        returns=_STATUS,
    ),
    "run_srum": Entry(
        "srum",
        "run_srum",
        (
            _f8("means", 2),
            _i8("rewards"),
            _f8("concentration"),
            _u8("key", 1),
            _u8("replication_ids", 1),
            _i8("kind"),
            _f8("fp", 1),
            _f8("gamma", 1),
            _f8("lam", 1),
            _f8("alpha"),
            _f8("beta"),
            _f8("scale_log"),
            _i8("horizon"),
            _f8("ucb_c"),
            _i8("initial_phase", 1),
            _f8("initial_targets", 2),
            *_ROUNDS_AND_SUMMARIES,
            _i8("out_phases", 3, writes=True),
            _f8("out_arm_rewards", 3, writes=True),
            _i8("out_phase_switches", 2, writes=True),
            _STOP,
        ),
        returns=_STATUS,
    ),
    "fewa_choices": Entry(
        "fewa",
        "fewa_choices",
        (_f8("averages", 3), _i8("counts", 2), _i8("windows", 1), _f8("widths", 1)),
        returns=_i8("choices", 1),
    ),
}


def _scalar(arg: Arg, value: Any) -> int | float:
    try:
        if arg.dtype == "float64":
            if isinstance(value, bool | np.bool_) or not isinstance(
                value, int | float | np.integer | np.floating
            ):
                raise TypeError
            return float(value)
        if isinstance(value, bool | np.bool_):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"argument {arg.name!r} must be a {arg.dtype} scalar, not {type(value).__name__}"
        ) from None


def _array(arg: Arg, value: Any) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        raise TypeError(f"argument {arg.name!r} must be a NumPy array, not {type(value).__name__}")
    problem = None
    if value.dtype != np.dtype(arg.dtype) or not value.dtype.isnative:
        problem = f"dtype {value.dtype}"
    elif value.ndim != arg.ndim:
        problem = f"{value.ndim} dimensions"
    elif arg.layout == "C" and not value.flags.c_contiguous:
        problem = "a non-contiguous array"
    elif not value.flags.aligned:
        problem = "an unaligned array"
    elif arg.writes and not value.flags.writeable:
        problem = "a read-only array"
    if problem is not None:
        layout = "C-contiguous " if arg.layout == "C" else ""
        access = "writeable " if arg.writes else ""
        raise TypeError(
            f"argument {arg.name!r} must be a {access}{layout}{arg.ndim}-d {arg.dtype} array, "
            f"not {problem}"
        )
    return value


def check(name: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``args`` for entry ``name``, scalars as Python ``int``/``float``; ``TypeError`` (naming
    the entry and the argument) if any does not have the type the entry was compiled for."""
    entry = ENTRIES[name]
    if len(args) != len(entry.args):
        raise TypeError(f"{name}() takes {len(entry.args)} arguments, {len(args)} given")
    try:
        return tuple(
            _scalar(arg, value) if arg.ndim == 0 else _array(arg, value)
            for arg, value in zip(entry.args, args, strict=True)
        )
    except TypeError as error:
        raise TypeError(f"{name}(): {error}") from None
