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
from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from impactbandits.errors import SpecError, close_names, combined, did_you_mean
from impactbandits.params import OnlyWhen
from impactbandits.usercode import blame, describe_exception, import_paths, too_large

__all__ = [
    "construct",
    "format_validation_error",
    "import_path",
    "params_model",
    "validate_params",
    "validation_errors",
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


def _one_error(detail: Any, prefix: str, model: type[BaseModel]) -> SpecError:
    """One pydantic error as a :class:`SpecError` naming its field: ``field: what is wrong
    (allowed …)``; an unknown key gets the close known names (or all of them)."""
    loc = _loc(prefix, tuple(detail["loc"]))
    kind = detail["type"]
    if kind == "extra_forbidden":
        name = detail["loc"][-1] if detail["loc"] else ""
        hint = did_you_mean(name, model.model_fields)
        allowed = ", ".join(model.model_fields) or "none"
        return SpecError(loc, f"unknown key{hint}" if hint else f"unknown key; allowed: {allowed}")
    if kind == "missing":
        return SpecError(loc, "required field is missing")
    if kind == "value_error":
        text = str(detail["msg"]).removeprefix("Value error, ")
        return SpecError(loc, text)  # (no loc: our own SpecError, naming its field already)
    if kind == "int_parsing_size":  # e.g. 1e300 where an integer is expected
        return SpecError(loc, f"too large for an integer (got {detail.get('input')!r})")
    return SpecError(loc, f"{detail['msg']} (got {detail.get('input')!r})")


def validation_errors(
    error: ValidationError, prefix: str, model: type[BaseModel], skip: Collection[str] = ()
) -> list[SpecError]:
    """Every problem of a pydantic error, one :class:`SpecError` each (unknown keys first);
    ``skip``: fields already reported otherwise. A required field missing because its name was
    misspelt (``meanz`` for ``means``) is one problem: the unknown key, which suggests it."""
    details = sorted(error.errors(), key=lambda e: e["type"] != "extra_forbidden")
    meant = {
        close
        for detail in details
        if detail["type"] == "extra_forbidden" and detail["loc"]
        for close in close_names(detail["loc"][-1], model.model_fields, limit=1)
    }
    return [
        _one_error(detail, prefix, model)
        for detail in details
        if not (detail["loc"] and detail["loc"][0] in skip)
        and not (
            detail["type"] == "missing" and len(detail["loc"]) == 1 and detail["loc"][0] in meant
        )
    ]


def format_validation_error(error: ValidationError, prefix: str, model: type[BaseModel]) -> str:
    """One line from a pydantic error: ``field: what is wrong (allowed …)``, the first of its
    problems and how many more there are (:func:`validation_errors` gives them all)."""
    errors = validation_errors(error, prefix, model)
    more = len(errors) - 1
    suffix = f" (and {more} more error{'s' if more > 1 else ''})" if more else ""
    return f"{errors[0]}{suffix}"


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


def _precheck(model: type[BaseModel], params: Mapping[str, Any], field: str) -> list[SpecError]:
    """What pydantic's lax mode would let through: ``true`` where a number is expected (it
    would become 1) and NaN/infinity hidden in untyped parameters; one error per parameter."""
    errors = []
    for name, value in params.items():
        info = model.model_fields.get(name)
        if info is None:
            continue  # pydantic reports the unknown key
        if _has_bool(value) and not _admits_bool(info.annotation):
            errors.append(
                SpecError(
                    f"{field}.{name}",
                    f"a boolean is not allowed here; give a number (got {value!r})",
                )
            )
        elif (
            value is not None
            and not isinstance(value, bool | np.bool_)
            and _only_bool(info.annotation)
        ):
            errors.append(SpecError(f"{field}.{name}", f"must be true or false (got {value!r})"))
        else:
            bad = _non_finite(value, f"{field}.{name}")
            if bad is not None:
                errors.append(
                    SpecError(bad, "must be a finite number (NaN and infinity are not allowed)")
                )
    return errors


def _foreign(
    model: type[BaseModel], given: Mapping[str, Any], values: Mapping[str, Any], field: str
) -> list[SpecError]:
    """Parameters given for a family (an instance, a distribution) that does not use them
    (:class:`~impactbandits.params.OnlyWhen`): they would be ignored. A value equal to the
    default (``None``, or a stored spec's defaults written out) is not refused."""
    errors = []
    for name, info in model.model_fields.items():
        if name not in given or given[name] is None or values.get(name) == info.default:
            continue
        for only in (m for m in info.metadata if isinstance(m, OnlyWhen)):
            if not only.applies(dict(values)):
                wanted = " or ".join(repr(v) for v in only.values)
                errors.append(
                    SpecError(
                        f"{field}.{name}",
                        f"belongs to {only.param} = {wanted}, which uses it; this one has "
                        f"{only.param} = {values.get(only.param)!r}, which would ignore it: "
                        f"remove it or set {only.param} = {only.values[0]!r}",
                    )
                )
    return errors


def validate_params(cls: type, params: Mapping[str, Any], field: str) -> dict[str, Any]:
    """Validated parameters with defaults filled in; :class:`SpecError` on any problem — every
    problem of the parameters at once (a :class:`~impactbandits.errors.SpecErrors`, one line
    each), each naming its field.

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
    errors = _precheck(model, params, field)
    bad = {e.field.removeprefix(f"{field}.").partition(".")[0].partition("[")[0] for e in errors}
    try:
        validated = model.model_validate(dict(params))
    except ValidationError as exc:
        errors += validation_errors(exc, field, model, skip=bad)
    else:
        values = validated.model_dump(mode="json")
        errors += _foreign(model, params, values, field)
    found = combined(errors)
    if found is not None:
        raise found from None
    try:  # constructors may check combinations of parameters
        cls(**values)
    except SpecError as exc:
        raise exc.within(field) from None
    except (Exception, SystemExit) as exc:  # sys.exit() in a constructor is a failure too
        user = blame(exc, {field: (import_path(cls), values)})
        if user is not None:
            raise user from None
        large = too_large(exc, {field: (import_path(cls), values)}, field)
        if large is not None:
            raise large from None
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
