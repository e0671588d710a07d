"""What a compiled loop's machine code comes from, found without numba: the source files behind
a compiled step (its kernels, every kernel and numba function they call, transitively, and the
generic loop's own modules) and the hash that names the loop in numba's disk cache and in the
module built ahead of time (:mod:`impactbandits.kernels.aot`). An edit of any of those files
changes the name, so no stale machine code is ever run."""

from __future__ import annotations

import functools
import hashlib
import inspect
import types
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from impactbandits.core.compiled import CompiledStep, Kernel
from impactbandits.core.world import CompiledWorld

__all__ = ["LOOP_SOURCES", "builtin", "files_tag", "loop_tag"]

_HERE = Path(__file__).resolve().parent
#: The generic loop's own modules: part of every loop's machine code.
LOOP_SOURCES = tuple(
    str(_HERE / name)
    for name in ("loop.py", "lending.py", "noise.py", "stop.py", "checkpoints.py", "codes.py")
)
_PACKAGE = "impactbandits."


def builtin(function: Any) -> bool:
    """A function of this package (not a user's)."""
    return str(getattr(function, "__module__", "")).startswith(_PACKAGE)


def _compiled(value: Any) -> Any:
    """The Python function behind a kernel or a numba dispatcher, else ``None``."""
    if isinstance(value, Kernel):
        return value.py_func
    if type(value).__module__.startswith("numba") and hasattr(value, "py_func"):
        return value.py_func
    return None


def _called(function: Any) -> Iterator[Any]:
    """The kernels and numba functions ``function``'s code names as globals."""
    scope = getattr(function, "__globals__", {})
    codes = [function.__code__]
    while codes:
        code = codes.pop()
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        for name in code.co_names:
            found = _compiled(scope.get(name))
            if found is not None:
                yield found


def _files(functions: Iterable[Any], extra: Iterable[str] = ()) -> list[str] | None:
    """The source files of ``functions`` and of everything compiled they call (sorted), with
    :data:`LOOP_SOURCES` and ``extra``; ``None`` if one cannot be read."""
    seen: set[Any] = set()
    todo = list(functions)
    files = {*LOOP_SOURCES, *extra}
    while todo:
        function = todo.pop()
        if function in seen:
            continue
        seen.add(function)
        try:
            files.add(inspect.getsourcefile(function) or "")
        except TypeError:
            return None
        todo.extend(_called(function))
    if "" in files or not all(Path(name).is_file() for name in files):
        return None
    return sorted(files)


def files_tag(
    names: Iterable[str], functions: Iterable[Any], extra: Iterable[str] = ()
) -> str | None:
    """A hash of ``names`` and of the source files of ``functions`` and ``extra``
    (:func:`_files`), or ``None`` when a source cannot be read."""
    files = _files(functions, extra)
    if files is None:
        return None
    digest = hashlib.sha256()
    for name in names:
        digest.update(f"{name}\n".encode())
    for file in files:
        digest.update(Path(file).read_bytes())
    return digest.hexdigest()[:20]


def loop_tag(
    step: CompiledStep, world: CompiledWorld, reevaluating: bool = False, arm_rewards: bool = False
) -> str | None:
    """The name of the loop of ``step`` in ``world`` (``loop_<tag>`` in numba's cache and in the
    module built ahead of time): a hash of every kernel's name and sources (with the step's and
    the world's ``reevaluate`` for the loop that calls them, ``reevaluating``) and of what else
    the copy keeps (``arm_rewards``)."""
    kernels: tuple[Kernel, ...] = (step.init, step.select, step.update, world.init, world.step)
    if reevaluating and step.reevaluate is not None and world.reevaluate is not None:
        kernels += (step.reevaluate, world.reevaluate)
    if world.record is not None:
        kernels += (world.record,)
    if step.phase is not None:
        kernels += (step.phase,)
    return _loop_tag(kernels, step.stream, step.bound, world.simplex, arm_rewards)


@functools.cache
def _loop_tag(
    kernels: tuple[Kernel, ...],
    stream: bool,
    bound: tuple[tuple[str, Kernel], ...] = (),
    simplex: bool = False,
    arm_rewards: bool = False,
) -> str | None:
    names = [f"{k.py_func.__module__}:{k.py_func.__qualname__}" for k in kernels]
    names += [f"{name}={k.py_func.__module__}:{k.py_func.__qualname__}" for name, k in bound]
    names += ["stream"] * stream + ["simplex"] * simplex + ["arm rewards"] * arm_rewards
    functions = [k.py_func for k in (*kernels, *(k for _, k in bound))]
    return files_tag(names, functions)
