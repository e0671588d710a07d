"""Failures of code a spec names: one line that says which field, which ``module:attr``, what.

A spec may name user code (``kind = "mypkg.policies:MyPolicy"``, a curve ``"mypkg:f"``, a
fairness or impact function). When that code raises — at import, in its constructor, or during
a run in a worker process — the library reports a :class:`UserCodeError`:

    policies[2].kind: mypkg.policies:MyPolicy raised ZeroDivisionError: division by zero
    (in MyPolicy.select, mypkg/policies.py:41)

The spec field is found by walking the exception's traceback for the deepest frame of user
code: a frame in a module the component names (its ``kind`` or any ``"module:attr"`` string
among its parameters), or in any other module that is not part of the library, of Python's
standard library or of an installed package — a base class in another of the user's modules,
whose method the named class inherits, is user code too (its frame's ``self`` tells which
component it belongs to). The full traceback travels with the error
(:attr:`UserCodeError.details`, also across process boundaries) for ``--traceback``.

A built-in component that runs out of memory (sizes that multiply: a window per replication
times the replications simulated together, a window derived from the horizon) is reported as a
:class:`SpecError` naming the component, not as a bug of the library (:func:`too_large`).

Specs that name code are trusted input: naming ``"module:attr"`` imports that module, which runs
its top-level code, exactly as ``import`` would.
"""

from __future__ import annotations

import re
import sys
import sysconfig
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from impactbandits.errors import ImpactBanditsError, SpecError

__all__ = [
    "InternalError",
    "UserCodeError",
    "blame",
    "describe_exception",
    "import_paths",
    "internal",
    "reporting",
    "too_large",
]

#: ``package.module:Attr.attr`` as specs write it.
IMPORT_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
_MESSAGE_LIMIT = 300


class UserCodeError(SpecError):
    """Code named by the spec raised; ``details`` holds the full traceback text."""

    def __init__(self, field: str, message: str, details: str = "") -> None:
        super().__init__(field, message)
        self.details = details

    def __reduce__(self) -> tuple[Any, ...]:  # keep field/message/details across processes
        return (type(self), (self.field, self.message, self.details))


class InternalError(ImpactBanditsError):
    """A built-in component failed: a bug of the library (``details``: the traceback)."""

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.details))


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` on one line, shortened."""
    text = " ".join(str(exc).split())
    if len(text) > _MESSAGE_LIMIT:
        text = text[: _MESSAGE_LIMIT - 1] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def import_paths(value: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """``(sub-field, "module:attr")`` for every import path among (nested) parameters."""
    if isinstance(value, str):
        if IMPORT_PATH.match(value):
            yield prefix, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from import_paths(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from import_paths(item, f"{prefix}[{i}]")


def _frames(tb: TracebackType | None) -> Iterator[tuple[str, str, str, int, FrameType]]:
    """``(module, function, file, line, frame)`` from outermost to innermost."""
    while tb is not None:
        frame = tb.tb_frame
        code = frame.f_code
        name = getattr(code, "co_qualname", code.co_name)
        module = str(frame.f_globals.get("__name__", "?"))
        yield module, name, code.co_filename, tb.tb_lineno, frame
        tb = tb.tb_next


@cache
def _installed_roots() -> tuple[str, ...]:
    """Where Python's standard library and installed packages live (their code is not the
    user's, unless a spec names it)."""
    paths = sysconfig.get_paths()
    roots = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    roots |= {str(Path(p)) for p in sys.path if Path(p).name in ("site-packages", "dist-packages")}
    return tuple(sorted(str(Path(root).resolve()) for root in roots))


def _user_module(module: str, filename: str) -> bool:
    """Whether a frame's code (``module``, ``filename``) is the user's: not the library's, not
    Python's standard library, not an installed package (NumPy's, …), not generated code."""
    top = module.partition(".")[0]
    if top == "impactbandits" or top in sys.stdlib_module_names or filename.startswith("<"):
        return False
    try:
        where = str(Path(filename).resolve())
    except (OSError, ValueError):
        return False
    return not any(where == root or where.startswith(root + "/") for root in _installed_roots())


def _owner(frame: FrameType, candidates: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The candidate whose class the frame's ``self`` is an instance of (a method the named
    class inherits from a base class elsewhere), if any."""
    owner = frame.f_locals.get("self")
    if owner is None:
        return None
    for cls in type(owner).__mro__:
        name = f"{cls.__module__}:{cls.__qualname__}"
        for field, path in candidates:
            if path == name:
                return field, path
    return None


def _module_of(path: str) -> str:
    return path.partition(":")[0]


def _names_function(path: str, qualname: str) -> bool:
    """Whether ``"module:attr"`` names the function ``qualname`` or the class it belongs to
    (``attr`` ``C`` for the frame ``C.select``)."""
    attr = path.partition(":")[2]
    return qualname == attr or qualname.startswith(attr + ".")


def _owns(module: str, frame_module: str) -> bool:
    return frame_module == module or frame_module.startswith(module + ".")


Components = Mapping[str, tuple[str, Mapping[str, Any] | None]]
"""Spec field of a component → ``(kind, params)``; with ``params = None`` the field names
the ``module:attr`` itself (e.g. ``environments[0].oracle``)."""


def blame(exc: BaseException, components: Components) -> UserCodeError | None:
    """The :class:`UserCodeError` for ``exc`` if user code named by one of ``components``
    raised it (the deepest traceback frame in a module the component names), else ``None``
    (a library error)."""
    candidates: list[tuple[str, str]] = []  # (field, "module:attr"), user code only
    for field, (kind, params) in components.items():
        if ":" in kind and not kind.startswith("impactbandits."):
            candidates.append((field if params is None else f"{field}.kind", kind))
        for sub, path in import_paths(params or {}):
            if not path.startswith("impactbandits."):
                candidates.append((f"{field}.{sub}", path))
    if not candidates:
        return None
    found: tuple[str, str, str, str, int] | None = None
    for module, function, filename, line, frame in _frames(exc.__traceback__):
        owners = [(f, p) for f, p in candidates if _owns(_module_of(p), module)]
        if owners:
            # several fields may name one module (two curves of one file): the field naming
            # the function (or class) that raised, else the first
            named = [(f, p) for f, p in owners if _names_function(p, function)]
            field, path = (named or owners)[0]
            found = (field, path, function, filename, line)
        elif _user_module(module, filename):
            # code of a module the spec does not name (a base class in another of the user's
            # modules): the component whose object it runs for, else the only candidate
            owner = _owner(frame, candidates)
            if owner is None and len({p for _, p in candidates}) == 1:
                owner = candidates[0]
            if owner is not None:
                found = (owner[0], owner[1], function, filename, line)
    if found is None:
        return None
    field, path, function, filename, line = found
    where = f"in {function}, {Path(filename).name}:{line}"
    details = "".join(traceback.format_exception(exc))
    return UserCodeError(field, f"{path} raised {describe_exception(exc)} ({where})", details)


_TOO_BIG = ("array is too big", "maximum allowed dimension exceeded", "maximum allowed size")


def _out_of_memory(exc: BaseException) -> bool:
    """A request for more memory than there is (NumPy's ``MemoryError``, or its refusal of an
    array whose size does not fit)."""
    if isinstance(exc, MemoryError):
        return True
    return isinstance(exc, ValueError) and any(t in str(exc).lower() for t in _TOO_BIG)


def _oracle_field(field: str) -> bool:
    return field.endswith(".oracle")


def _policy_field(field: str) -> bool:
    return field.startswith("policies") or field == "policy"


def _environment_field(field: str) -> bool:
    return field.startswith("environments") and ".oracle" not in field


#: Which library package's code belongs to which kind of component field.
_ROLES: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("impactbandits.oracles.", _oracle_field),
    ("impactbandits.policies.", _policy_field),
    ("impactbandits.envs.", _environment_field),
)


def _owner_of(exc: BaseException, components: Components) -> list[str]:
    """The fields of ``components`` whose code raised ``exc``: the deepest frame of
    :mod:`impactbandits.envs`, ``.policies`` or ``.oracles`` decides (every field if none)."""
    fields = list(components)
    for module, *_ in _frames(exc.__traceback__):
        for prefix, fits in _ROLES:
            if module.startswith(prefix):
                fields = [f for f in components if fits(f)] or fields
    return fields


def _placed(exc: SpecError, components: Components) -> SpecError:
    """A :class:`SpecError` a built-in component raised while running (a parameter it found
    wrong, an exact oracle too large for the run), named after the component's field unless
    it names one already."""
    if any(exc.field == f or exc.field.startswith((f"{f}.", f"{f}[")) for f in components):
        return exc
    owners = _owner_of(exc, components)
    if len(owners) != 1:
        return exc
    owner = owners[0]
    kind = components[owner][0]
    if _oracle_field(owner):
        return SpecError(owner, f"{kind!r} cannot be computed for this run: {exc}")
    return exc.within(owner)


def too_large(exc: BaseException, components: Components, field: str = "") -> SpecError | None:
    """A one-line :class:`SpecError` when a built-in component ran out of memory (``exc``),
    naming the component (``field``, else the one whose code asked for the memory: the deepest
    frame of :mod:`impactbandits.envs`, ``.policies`` or ``.oracles``), else ``None``."""
    if not _out_of_memory(exc):
        return None
    if not field:
        field = " × ".join(_owner_of(exc, components))
    return SpecError(
        field,
        f"too large for this machine's memory ({describe_exception(exc)}); give smaller sizes "
        "(`impactbandits describe KIND` shows each parameter's bound), a shorter horizon or "
        "fewer replications simulated together (--batch-size)",
    )


def internal(exc: BaseException, context: str) -> InternalError:
    """An :class:`InternalError` for a failure of built-in code, with its traceback."""
    details = "".join(traceback.format_exception(exc))
    return InternalError(
        f"internal error {context}: {describe_exception(exc)} (a bug: please report it with "
        "the output of --traceback)",
        details,
    )


@contextmanager
def reporting(components: Components, context: str, field: str = "") -> Iterator[None]:
    """Turn any failure inside the block into a one-line error: a :class:`SpecError` gets
    ``field`` prefixed to its own, user code that raised becomes a :class:`UserCodeError`
    (see :func:`blame`), anything else an :class:`InternalError` ``context`` describes."""
    try:
        yield
    except UserCodeError:
        raise
    except SpecError as exc:
        if field:
            raise exc.within(field) from None
        raise _placed(exc, components) from None
    except (Exception, SystemExit) as exc:  # sys.exit() in user code is a failure of it too
        user = blame(exc, components)
        if user is not None:
            raise user from None
        large = too_large(exc, components, field)
        raise (large if large is not None else internal(exc, context)) from None
