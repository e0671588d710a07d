"""The compiled loops built ahead of time: loading them without numba.

``python -m impactbandits.kernels.build`` (``make kernels``; ``make demo`` and ``make test`` run
it) compiles the generic loop (:mod:`impactbandits.kernels.loop`) of every built-in policy's
compiled step in its world with numba's ahead-of-time compiler into one extension module,
``impactbandits.kernels._aot``: one entry per step and world, named by the hash of the sources
its machine code comes from (:func:`impactbandits.kernels.sources.loop_tag`). A process that
finds its step's entry there runs it without importing numba at all: no JIT runtime (about
100 MB of LLVM and typing tables, and ~0.4 CPU s per process to load the cached loops), the
same numbers. A step with no entry — a user's policy, or a built-in edited since the build —
runs on numba's JIT, which compiles the same source.

The module is used only on the Python, NumPy and CPU it was built for: the build writes a stamp
(``_aot.json``) and :func:`status` compares it with the present. SciPy's ``ndtri`` and
``betaincinv`` (the noise of :mod:`impactbandits.kernels.noise`) are reached through a small C
shim (``aot_shim.c``) linked into the module: :func:`load` hands it the addresses of SciPy's C
entry points in this process, as the JIT registers them with LLVM.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib
import json
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

__all__ = [
    "LOOP_ARGS",
    "MODULE",
    "STAMP",
    "Status",
    "check",
    "current",
    "entry",
    "fingerprint",
    "load",
    "loop_args",
    "status",
]

#: The extension module the build writes (next to this file).
MODULE = "impactbandits.kernels._aot"
#: The stamp the build writes beside it: :func:`fingerprint` of what it was built for.
STAMP = Path(__file__).with_name("_aot.json")
#: The rounds, the checkpoints and the checkpoint summaries every loop writes.
_CHECKPOINTS: tuple[tuple[str, int], ...] = (
    ("int64", 0),  # rounds
    ("int64", 1),  # checkpoints
    ("float64", 2),  # out_reward
    ("float64", 2),  # out_expected
    ("float64", 3),  # out_pulls
    ("int64", 2),  # out_switches
)


def loop_args(data_ndim: int) -> tuple[tuple[str, int], ...]:
    """The arguments of a loop entry (:func:`impactbandits.kernels.loop._template`) whose world
    has ``data_ndim``-dimensional data, as (dtype, ndim) — ndim 0 a scalar — all arrays
    C-contiguous; the entries return an int64."""
    return (
        ("float64", 1),  # params
        ("float64", 1),  # world_params
        ("float64", data_ndim),  # world_data
        ("uint64", 2),  # world_noise
        ("float64", 0),  # tolerance
        ("float64", 2),  # uniforms
        ("uint64", 2),  # streams
        *_CHECKPOINTS,
        ("float64", 3),  # out_world
        ("int64", 3),  # out_phases
        ("float64", 3),  # out_arm_rewards
        ("int64", 2),  # out_phase_switches
        ("int64", 1),  # invalid
        ("int64", 1),  # stop
    )


#: The arguments of a loop entry in the pull-table world (its data: the table's values).
LOOP_ARGS = loop_args(3)
#: SciPy's C entry points the shim calls (names in ``cython_special.__pyx_capi__``), in the
#: order of ``impactbandits_bind``'s arguments.
_SCIPY = ("ndtri", "__pyx_fuse_0betaincinv")


def _cpu_flags() -> str:
    """The CPU's feature flags (the module is compiled for this CPU, as the JIT compiles)."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith(("flags", "Features")):
                    return hashlib.sha256(line.encode()).hexdigest()[:16]
    except OSError:
        pass
    return platform.processor() or "unknown"


def fingerprint() -> dict[str, str]:
    """What a build depends on beyond its entries' sources: Python, NumPy, the machine, its
    CPU."""
    return {
        "python": f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}",
        "numpy": ".".join(np.__version__.split(".")[:2]),
        "machine": platform.machine(),
        "cpu": _cpu_flags(),
    }


@dataclass(frozen=True)
class Status:
    """Whether the built module can be used (``usable``), and why not (``reason``)."""

    usable: bool
    reason: str
    entries: tuple[str, ...] = ()


def status(stamp: Path = STAMP) -> Status:
    """Whether the module was built, for the Python, NumPy and CPU of now, and its entries."""
    try:
        built = json.loads(stamp.read_text())
    except FileNotFoundError:
        return Status(False, "not built (make kernels, or python -m impactbandits.kernels.build)")
    except (OSError, ValueError) as error:
        return Status(False, f"unreadable stamp {stamp.name}: {error}")
    if not isinstance(built, dict) or not isinstance(built.get("entries"), list):
        return Status(False, f"unreadable stamp {stamp.name}")
    now = fingerprint()
    changed = [key for key in now if built.get(key) != now[key]]
    if changed:
        return Status(False, f"built for other {', '.join(changed)}: rebuild it")
    return Status(True, "built for this Python, NumPy and CPU", tuple(built["entries"]))


@functools.cache
def current() -> Status:
    """:func:`status` of the installed module, once per process."""
    return status()


def _scipy_address(name: str) -> int:
    capsule = importlib.import_module("scipy.special.cython_special").__pyx_capi__[name]
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = get_pointer(capsule, get_name(capsule))
    if not address:
        raise ImportError(f"scipy.special.cython_special has no C entry point {name}")
    return int(address)


@functools.cache
def load() -> ModuleType | None:
    """The ahead-of-time module, ready to call (SciPy's entry points bound), or ``None`` if
    :func:`status` says it cannot be used or it does not import. Once per process."""
    if not current().usable:
        return None
    try:
        module = importlib.import_module(MODULE)
        # the loaded module itself (dlopen returns its handle); a platform that does not export
        # the shim's symbol (Windows exports only what is listed) falls back to the JIT
        bind = ctypes.CDLL(module.__file__).impactbandits_bind
        addresses = [_scipy_address(name) for name in _SCIPY]
    except (ImportError, OSError, AttributeError, KeyError):
        return None
    bind.restype, bind.argtypes = None, [ctypes.c_void_p, ctypes.c_void_p]
    bind(*addresses)
    return module


def check(args: tuple[Any, ...], types: tuple[tuple[str, int], ...]) -> tuple[Any, ...]:
    """``args`` if each has the type of ``types`` (scalars as ``int``/``float``); a
    ``TypeError`` naming the argument otherwise: the built code checks nothing, and an array of
    another dtype, rank or layout would be read as garbage."""
    if len(args) != len(types):
        raise TypeError(f"{len(types)} arguments expected, {len(args)} given")
    out: list[Any] = []
    for position, (value, (dtype, ndim)) in enumerate(zip(args, types, strict=True)):
        if ndim == 0:
            kinds = int | np.integer if dtype == "int64" else int | float | np.integer | np.floating
            if isinstance(value, bool | np.bool_) or not isinstance(value, kinds):
                raise TypeError(f"argument {position} must be a {dtype} scalar, not {value!r}")
            out.append(float(value) if dtype == "float64" else int(value))
            continue
        if not (
            isinstance(value, np.ndarray)
            and value.dtype == np.dtype(dtype)
            and value.dtype.isnative
            and value.ndim == ndim
            and value.flags.c_contiguous
            and value.flags.aligned
        ):
            raise TypeError(f"argument {position} must be a C-contiguous {ndim}-d {dtype} array")
        out.append(value)
    return tuple(out)


def entry(name: str, types: tuple[tuple[str, int], ...]) -> Callable[..., Any] | None:
    """The built entry ``name`` (``loop_<tag>``), each call's arguments
    checked against ``types`` (:func:`check`), or ``None`` if the module cannot be used or has
    no such entry."""
    if name not in current().entries:
        return None
    module = load()
    compiled = None if module is None else getattr(module, name, None)
    if compiled is None:
        return None

    def checked(*args: Any) -> Any:
        return compiled(*check(args, types))

    checked.__name__ = name
    return checked
