"""Failures of code a spec names: one line that says which field, which ``module:attr``, what.

A spec may name user code (``kind = "mypkg.policies:MyPolicy"``, a curve ``"mypkg:f"``, a
fairness or impact function). When that code raises — at import, in its constructor, or during
a run in a worker process — the library reports a :class:`UserCodeError`:

    policies[2].kind: mypkg.policies:MyPolicy raised ZeroDivisionError: division by zero
    (in MyPolicy.select, mypkg/policies.py:41)

The spec field is found by walking the exception's traceback for the deepest frame that
belongs to a module the component names (its ``kind`` or any ``"module:attr"`` string among its
parameters). The full traceback travels with the error (:attr:`UserCodeError.details`, also
across process boundaries) for ``--traceback``.

Specs that name code are trusted input: naming ``"module:attr"`` imports that module, which runs
its top-level code, exactly as ``import`` would.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
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


def _frames(tb: TracebackType | None) -> Iterator[tuple[str, str, str, int]]:
    """``(module, function, file, line)`` from outermost to innermost."""
    while tb is not None:
        frame = tb.tb_frame
        code = frame.f_code
        name = getattr(code, "co_qualname", code.co_name)
        yield str(frame.f_globals.get("__name__", "?")), name, code.co_filename, tb.tb_lineno
        tb = tb.tb_next


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
    for module, function, filename, line in _frames(exc.__traceback__):
        owners = [(f, p) for f, p in candidates if _owns(_module_of(p), module)]
        if owners:
            # several fields may name one module (two curves of one file): the field naming
            # the function (or class) that raised, else the first
            named = [(f, p) for f, p in owners if _names_function(p, function)]
            field, path = (named or owners)[0]
            found = (field, path, function, filename, line)
    if found is None:
        return None
    field, path, function, filename, line = found
    where = f"in {function}, {Path(filename).name}:{line}"
    details = "".join(traceback.format_exception(exc))
    return UserCodeError(field, f"{path} raised {describe_exception(exc)} ({where})", details)


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
        if not field:
            raise
        sub = f"{field}.{exc.field}" if exc.field else field
        raise SpecError(sub, exc.message) from None
    except (Exception, SystemExit) as exc:  # sys.exit() in user code is a failure of it too
        user = blame(exc, components)
        raise (user if user is not None else internal(exc, context)) from None
