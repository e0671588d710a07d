"""The compiled loops built ahead of time: loading them without numba.

``python -m impactbandits.kernels.build`` (``make kernels``; ``make demo`` and ``make test`` run
it) compiles the entry points of :mod:`impactbandits.kernels.signatures` from the same numba
source into one extension module, ``impactbandits.kernels._aot``, with numba's ahead-of-time
compiler. A process that loads it runs the compiled loops without importing numba at all: no
JIT runtime (~130 MB of LLVM and typing tables, about a second of CPU per process to load the
cached kernels), the same numbers (``tests/test_kernels.py`` runs every comparison on both).

The module is used only if it was built from the kernel sources as they are now, for this
Python, NumPy and machine: the build writes a stamp (``_aot.json``) with a hash of those sources
(:data:`SOURCES`) and of the rest, and :func:`status` compares it with the present. Anything
else (not built, stale after an edit, another machine) makes :mod:`impactbandits.kernels` fall
back to numba's JIT, which compiles the same source.

SciPy's ``ndtri`` and ``betaincinv`` (the noise of :mod:`impactbandits.kernels.noise`) are
reached through a small C shim (``aot_shim.c``) linked into the module: :func:`load` hands it
the addresses of SciPy's C entry points in this process, as the JIT registers them with LLVM.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib
import json
import platform
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

__all__ = ["MODULE", "SOURCES", "STAMP", "Status", "current", "fingerprint", "load", "status"]

#: The extension module the build writes (next to this file).
MODULE = "impactbandits.kernels._aot"
#: The stamp the build writes beside it: :func:`fingerprint` of what it was built from.
STAMP = Path(__file__).with_name("_aot.json")
_PACKAGE = Path(__file__).resolve().parent.parent
#: Every source file the compiled code depends on (the numba modules and the constants they
#: import), relative to the package.
SOURCES = (
    "kernels/checkpoints.py",
    "kernels/fewa.py",
    "kernels/kinds.py",
    "kernels/loops.py",
    "kernels/noise.py",
    "kernels/spo.py",
    "kernels/srum.py",
    "kernels/stop.py",
    "kernels/ucb_groups.py",
    "kernels/signatures.py",
    "kernels/aot_shim.c",
    "kernels/build.py",
    "opportunity/objective.py",
)
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


def fingerprint(package: Path = _PACKAGE) -> dict[str, str]:
    """What a build depends on: the sources' hash, Python, NumPy, the machine and its CPU."""
    digest = hashlib.sha256()
    for name in SOURCES:
        digest.update(name.encode())
        digest.update((package / name).read_bytes())
    return {
        "sources": digest.hexdigest(),
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


def status(stamp: Path = STAMP, package: Path = _PACKAGE) -> Status:
    """Whether the module was built, and from the sources, Python, NumPy and CPU of now."""
    try:
        built = json.loads(stamp.read_text())
    except FileNotFoundError:
        return Status(False, "not built (make kernels, or python -m impactbandits.kernels.build)")
    except (OSError, ValueError) as error:
        return Status(False, f"unreadable stamp {stamp.name}: {error}")
    if not isinstance(built, dict):
        return Status(False, f"unreadable stamp {stamp.name}")
    now = fingerprint(package)
    changed = [key for key in now if built.get(key) != now[key]]
    if changed:
        return Status(False, f"stale (built for other {', '.join(changed)}): rebuild it")
    return Status(True, "built for these sources")


@functools.cache
def current() -> Status:
    """:func:`status` of the installed module, found once per process (it hashes the sources;
    the module a process has loaded cannot change under it anyway)."""
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
