"""A component's parameters: validated against its constructor's signature, then built.

Components are classes whose ``__init__`` signature *is* their parameter schema: annotations
(with ``pydantic.Field`` constraints) and defaults are turned into a frozen pydantic model
(:func:`params_model`), so every parameter is validated with a one-line error before anything
runs (:func:`validate_params`), and :func:`construct` builds the component from the validated
values. Nothing here knows a component's name: the name tables are the registry's
(:mod:`impactbandits.registry`; the policies' own, :mod:`impactbandits.policies.names`, which
meta-policies use to build their inner policy). This module sits below every component, so any
of them may use it.
"""

from __future__ import annotations

import functools
import inspect
import math
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from impactbandits.errors import SpecError
from impactbandits.usercode import UserCodeError, blame, describe_exception, import_paths

__all__ = [
    "construct",
    "format_validation_error",
    "import_path",
    "params_model",
    "validate_params",
]


def import_path(obj: Any) -> str:
    """``"module:QualName"`` of a class or function (how specs name user components)."""
    return f"{obj.__module__}:{obj.__qualname__}"


@functools.cache
def params_model(cls: type[object]) -> type[BaseModel]:
    """A frozen pydantic model built from ``cls.__init__``'s signature."""
    signature = inspect.signature(cls.__init__)
    hints = typing.get_type_hints(cls.__init__, include_extras=True)
    fields: dict[str, Any] = {}
    for name, parameter in list(signature.parameters.items())[1:]:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        annotation = hints.get(name, Any)
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[name] = (annotation, default)
    config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=False,
        arbitrary_types_allowed=True,
        allow_inf_nan=False,
    )
    return create_model(f"{cls.__name__}Params", __config__=config, **fields)


def _loc(prefix: str, loc: tuple[Any, ...]) -> str:
    out = prefix
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def format_validation_error(error: ValidationError, prefix: str, model: type[BaseModel]) -> str:
    """One line from a pydantic error: ``field: what is wrong (allowed …)``."""
    errors = sorted(error.errors(), key=lambda e: e["type"] != "extra_forbidden")
    first = errors[0]
    loc = _loc(prefix, tuple(first["loc"]))
    kind = first["type"]
    if kind == "extra_forbidden":
        allowed = ", ".join(model.model_fields) or "none"
        message = f"unknown key; allowed: {allowed}"
    elif kind == "missing":
        message = "required field is missing"
    elif kind == "value_error":
        text = str(first["msg"]).removeprefix("Value error, ")
        if not loc:
            return text  # our own SpecError from a validator: it names its field already
        return f"{loc}: {text}"
    else:
        message = f"{first['msg']} (got {first.get('input')!r})"
    more = len(errors) - 1
    suffix = f" (and {more} more error{'s' if more > 1 else ''})" if more else ""
    return f"{loc}: {message}{suffix}"


def _admits_bool(annotation: Any) -> bool:
    """Whether ``annotation`` (possibly nested: ``list[bool]``, ``int | bool``, ``Any``) has
    room for a boolean."""
    if annotation is bool or annotation is Any:
        return True
    return any(_admits_bool(arg) for arg in typing.get_args(annotation))


def _only_bool(annotation: Any) -> bool:
    """Whether ``annotation`` is ``bool`` (or ``bool | None``, ``Annotated[bool, ...]``): then a
    value must be ``true``/``false`` itself, not ``"yes"`` or ``1`` (pydantic's lax mode
    would turn both into ``True``)."""
    if annotation is bool:
        return True
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin is typing.Annotated:
        return _only_bool(args[0])
    if origin in (typing.Union, types.UnionType) and args:
        return all(_only_bool(a) for a in args)
    return False


def _has_bool(value: Any) -> bool:
    if isinstance(value, bool | np.bool_):
        return True
    if isinstance(value, list | tuple):
        return any(_has_bool(v) for v in value)
    return False


def _non_finite(value: Any, prefix: str) -> str | None:
    """The sub-field of the first NaN/infinite number in (nested) ``value``, if any."""
    if isinstance(value, float | np.floating) and not math.isfinite(value):
        return prefix
    items: Any = ()
    if isinstance(value, Mapping):
        items = ((f"{prefix}.{k}", v) for k, v in value.items())
    elif isinstance(value, list | tuple):
        items = ((f"{prefix}[{i}]", v) for i, v in enumerate(value))
    for sub, item in items:
        found = _non_finite(item, sub)
        if found is not None:
            return found
    return None


def _precheck(model: type[BaseModel], params: Mapping[str, Any], field: str) -> None:
    """What pydantic's lax mode would let through: ``true`` where a number is expected (it
    would become 1) and NaN/infinity hidden in untyped parameters."""
    for name, value in params.items():
        info = model.model_fields.get(name)
        if info is None:
            continue  # pydantic reports the unknown key
        if _has_bool(value) and not _admits_bool(info.annotation):
            raise SpecError(
                f"{field}.{name}", f"a boolean is not allowed here; give a number (got {value!r})"
            )
        if (
            value is not None
            and not isinstance(value, bool | np.bool_)
            and _only_bool(info.annotation)
        ):
            raise SpecError(f"{field}.{name}", f"must be true or false (got {value!r})")
        bad = _non_finite(value, f"{field}.{name}")
        if bad is not None:
            raise SpecError(bad, "must be a finite number (NaN and infinity are not allowed)")


def validate_params(cls: type, params: Mapping[str, Any], field: str) -> dict[str, Any]:
    """Validated parameters with defaults filled in; :class:`SpecError` on any problem.

    The constructor runs once with the validated values, so combinations of parameters are
    checked too; if it raises anything else than a :class:`SpecError`, the error names the
    field (and the user code that raised, see :mod:`impactbandits.usercode`)."""
    try:
        model = params_model(cls)
    except Exception as exc:  # unresolvable annotations of a user class
        raise SpecError(
            f"{field}.kind",
            f"cannot read the parameters of {import_path(cls)} ({describe_exception(exc)})",
        ) from None
    _precheck(model, params, field)
    try:
        validated = model.model_validate(dict(params))
    except ValidationError as exc:
        raise SpecError("", format_validation_error(exc, field, model)) from None
    values = validated.model_dump(mode="json")
    try:  # constructors may check combinations of parameters
        cls(**values)
    except SpecError as exc:
        sub = f"{field}.{exc.field}" if exc.field else field
        if isinstance(exc, UserCodeError):
            raise UserCodeError(sub, exc.message, exc.details) from None
        raise SpecError(sub, exc.message) from None
    except (Exception, SystemExit) as exc:  # sys.exit() in a constructor is a failure too
        user = blame(exc, {field: (import_path(cls), values)})
        if user is not None:
            raise user from None
        named = [path for _, path in import_paths(values)]
        using = f", using {', '.join(repr(p) for p in named)}" if named else ""
        raise SpecError(
            field, f"constructing {import_path(cls)} failed{using} ({describe_exception(exc)})"
        ) from None
    return values


def construct(
    cls: type,
    kind: str,
    params: Mapping[str, Any],
    batched: type,
    simple: type,
    adapter: Callable[[Any], Any],
) -> Any:
    """``cls(**params)`` (validated parameters) as a ``batched`` component: a ``simple``
    (single-replication) one is wrapped by ``adapter``; anything else is a :class:`SpecError`
    naming ``kind``."""
    obj = cls(**params)
    if isinstance(obj, simple):
        return adapter(obj)
    if not isinstance(obj, batched):
        raise SpecError("kind", f"{kind!r} is not a {batched.__name__} or {simple.__name__}")
    return obj
