"""The one loader of code a spec names: ``"module:attr"`` → an object of the expected kind.

Every field of a spec that may name code — environment and policy ``kind``, a policy's
``base``/``black_box``, an environment's ``oracle``, rested ``curves``, Tang et al.'s
``impact``, Ron et al.'s ``fairness`` — goes through :func:`load`, which checks that the
object is of the kind the field expects (:class:`Expected`) *before* anything calls it or
builds it with the spec's parameters:

* a module of Python's standard library is refused without importing it: it holds no
  component, and importing some of them runs code (``this`` prints a poem);
* the module is imported (its top-level code runs: a spec naming code is code you run), and a
  failure there — a missing module, an exception, ``sys.exit()`` — is a one-line error naming
  the field;
* the object must then pass the field's check: a class derived from the field's base classes
  (or having its methods), or a plain function where a function is expected — so
  ``subprocess:Popen``, ``os:system`` or ``builtins:eval`` are refused in every field, and
  nothing of theirs is called.

A component's ``kind`` is either a built-in name — a key of a name table, whose value is the
library's own ``"module:attr"`` path, imported as it is — or such an import path
(:func:`load_kind`).

Reading a run directory never comes here: a stored spec is data
(:class:`~impactbandits.experiments.spec.SpecRecord`).
"""

from __future__ import annotations

import importlib
import inspect
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from impactbandits.errors import SpecError, did_you_mean, unknown_name
from impactbandits.usercode import IMPORT_PATH, UserCodeError, describe_exception

__all__ = [
    "Expected",
    "class_with_methods",
    "function",
    "is_plain_function",
    "load",
    "load_builtin",
    "load_kind",
    "subclass_of",
]


@dataclass(frozen=True)
class Expected:
    """What a field may name: ``accepts(obj)`` decides, ``wanted`` says it in words (for the
    error: ``'os:system' is the built-in function system, not <wanted>``)."""

    wanted: str
    accepts: Callable[[Any], bool]


def subclass_of(*bases: type, wanted: str) -> Expected:
    """A class derived from one of ``bases``."""
    return Expected(wanted, lambda obj: isinstance(obj, type) and issubclass(obj, bases))


def class_with_methods(*methods: str, base: type | None = None, wanted: str) -> Expected:
    """A class derived from ``base``, or any class whose own methods include ``methods``
    (looked up on the class: nothing is built to find out)."""

    def accepts(obj: Any) -> bool:
        if not isinstance(obj, type):
            return False
        if base is not None and issubclass(obj, base):
            return True
        return all(callable(getattr(obj, m, None)) for m in methods)

    return Expected(wanted, accepts)


def is_plain_function(obj: Any) -> bool:
    """A function written in Python (``def`` or ``lambda``), a NumPy ufunc (``numpy:sqrt``),
    or a numba-compiled Python function (its ``py_func``). Built-in callables (``os:system``,
    ``builtins:eval``), classes and other callable objects are not."""
    if inspect.isfunction(obj):
        return True
    if type(obj).__name__ == "ufunc" and type(obj).__module__ == "numpy":
        return True
    return inspect.isfunction(getattr(obj, "py_func", None))


def function(wanted: str, instance_of: type | None = None) -> Expected:
    """A plain function (see :func:`is_plain_function`), or an instance of ``instance_of``."""

    def accepts(obj: Any) -> bool:
        if instance_of is not None and isinstance(obj, instance_of):
            return True
        return is_plain_function(obj)

    return Expected(wanted, accepts)


def describe_object(obj: Any) -> str:
    """``the class Popen``, ``the built-in function system``, ``a float value`` …"""
    if isinstance(obj, type):
        return f"the class {obj.__name__}"
    if inspect.isbuiltin(obj):
        return f"the built-in function {obj.__name__}"
    if inspect.ismodule(obj):
        return f"the module {obj.__name__}"
    if callable(obj):
        return f"the callable {getattr(obj, '__name__', type(obj).__name__)}"
    return f"a {type(obj).__name__} value"


def _standard_library(module: str) -> bool:
    top = module.partition(".")[0]
    return top in sys.stdlib_module_names or top in sys.builtin_module_names


def _import(path: str, field: str) -> Any:
    module_name, _, attr = path.partition(":")
    target: Any = None
    try:
        target = importlib.import_module(module_name)
        for part in attr.split("."):
            if not hasattr(target, part):  # a misspelt name: the close ones
                names = [n for n in dir(target) if not n.startswith("_")]
                hint = did_you_mean(part, names)
                raise SpecError(
                    field, f"cannot import {path!r} (no {part!r} in {_name_of(target)}){hint}"
                )
            target = getattr(target, part)
    except SpecError:
        raise
    except (ImportError, AttributeError) as exc:
        raise SpecError(field, f"cannot import {path!r} ({describe_exception(exc)})") from None
    except SystemExit as exc:
        raise UserCodeError(
            field,
            f"importing {path!r} called sys.exit({exc.code!r})",
            "".join(traceback.format_exception(exc)),
        ) from None
    except Exception as exc:  # the module itself raised (SyntaxError included) at import
        raise UserCodeError(
            field,
            f"importing {path!r} raised {describe_exception(exc)}",
            "".join(traceback.format_exception(exc)),
        ) from None
    return target


def _name_of(obj: Any) -> str:
    """``module mypkg.policies``, ``class MyPolicy`` …: where an attribute was looked for."""
    if inspect.ismodule(obj):
        return f"module {obj.__name__}"
    kind = "class" if isinstance(obj, type) else type(obj).__name__
    return f"{kind} {getattr(obj, '__name__', '')}".strip()


def check_path(path: Any, field: str) -> str:
    """``path`` if it is a well-formed ``"package.module:Name"`` outside the standard library;
    else a :class:`SpecError` naming ``field`` (nothing is imported)."""
    if not isinstance(path, str) or not IMPORT_PATH.match(path):
        raise SpecError(
            field, f"{path!r} is not an import path; write 'package.module:Name' (e.g. 'mypkg:f')"
        )
    module = path.partition(":")[0]
    if _standard_library(module):
        raise SpecError(
            field,
            f"{path!r} names Python's standard library, which holds no component; name your "
            "own module (nothing was imported)",
        )
    return path


def load(path: Any, field: str, expected: Expected) -> Any:
    """The object ``path`` (``"package.module:Name"``) names, checked to be ``expected`` before
    anything calls it; every failure is one line naming ``field`` (:class:`SpecError`, or
    :class:`~impactbandits.usercode.UserCodeError` when the module raised while imported)."""
    check_path(path, field)
    obj = _import(path, field)
    if not expected.accepts(obj):
        raise SpecError(field, f"{path!r} is {describe_object(obj)}, not {expected.wanted}")
    return obj


def load_builtin(path: str) -> Any:
    """The object a name table's ``"module:attr"`` path names (the library's own code: imported
    without the checks :func:`load` makes)."""
    module_name, _, attr = path.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    return target


def load_kind(
    table: Mapping[str, str], role: str, name: Any, field: str, expected: Expected
) -> Any:
    """What ``name`` names for ``role``: a built-in name of ``table``, or an import path loaded
    through :func:`load` (checked to be ``expected`` before anything calls it); anything else is
    a :class:`SpecError` naming ``field`` with the close built-in names (or all of them)."""
    if name in table:
        return load_builtin(table[name])
    if not isinstance(name, str) or ":" not in name:
        raise SpecError(
            field,
            unknown_name(
                role,
                name,
                table,
                extra=" or 'module:Class'",
                where=f"`impactbandits list {_PLURAL.get(role, role)}` shows them all",
            ),
        )
    return load(name, field, expected)


_PLURAL = {"environment": "environments", "policy": "policies", "oracle": "oracles"}
