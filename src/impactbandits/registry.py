"""Names of the built-in components, and how any component is validated and built.

Components are classes whose ``__init__`` signature *is* their parameter schema: annotations (with
``pydantic.Field`` constraints) and defaults are turned into a frozen pydantic model, so every
parameter is validated with a one-line error before anything runs. Built-in components are
listed by name below; any other importable class can be named as ``"package.module:ClassName"``
in a spec — that is how users plug in their own environments and policies without touching the
library. The tables are plain constants (lazy import paths): importing this module has no side
effects.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from impactbandits.core.environment import BatchedSimpleEnvironment, Environment, SimpleEnvironment
from impactbandits.core.policy import BatchedSimplePolicy, Policy, SimplePolicy
from impactbandits.errors import SpecError
from impactbandits.loader import Expected, function, load, subclass_of
from impactbandits.usercode import UserCodeError, blame, describe_exception, import_paths

__all__ = [
    "ENVIRONMENTS",
    "EXPECTED",
    "ORACLES",
    "POLICIES",
    "build_environment",
    "build_policy",
    "describe",
    "format_validation_error",
    "import_path",
    "resolve",
    "resolve_oracle",
    "validate_params",
]

ENVIRONMENTS: Mapping[str, str] = {
    "bernoulli": "impactbandits.envs.stationary:BernoulliBandit",
    "gaussian": "impactbandits.envs.stationary:GaussianBandit",
    "rested": "impactbandits.envs.rested:RestedBandit",
    "single-peaked": "impactbandits.envs.rested:SinglePeakedBandit",
    "increasing": "impactbandits.envs.rested:IncreasingBandit",
    "constant": "impactbandits.envs.rested:ConstantBandit",
    "decreasing": "impactbandits.envs.rested:DecreasingBandit",
    "fico": "impactbandits.envs.rested:FicoBandit",
    "recommender": "impactbandits.envs.rested:RecommenderBandit",
    "imab": "impactbandits.envs.rested:ImprovingBandit",
    "opportunity": "impactbandits.envs.opportunity:OpportunityBandit",
    "delayed": "impactbandits.envs.delayed:DelayedPayoffBandit",
    "impact": "impactbandits.envs.impact:ImpactBandit",
    "restless": "impactbandits.envs.restless:RestlessBandit",
    "rising": "impactbandits.envs.rising:RisingBandit",
    "rising-restless": "impactbandits.envs.rising:RestlessRisingBandit",
    "rotting": "impactbandits.envs.rotting:RottingBandit",
}

POLICIES: Mapping[str, str] = {
    "ucb1": "impactbandits.policies.classic:UCB1",
    "exp3": "impactbandits.policies.classic:EXP3",
    "greedy": "impactbandits.policies.classic:Greedy",
    "epsilon-greedy": "impactbandits.policies.classic:EpsilonGreedy",
    "etc": "impactbandits.policies.classic:ExploreThenCommit",
    "round-robin": "impactbandits.policies.classic:RoundRobin",
    "ucb": "impactbandits.policies.nonstationary:UCB",
    "d-ucb": "impactbandits.policies.nonstationary:DiscountedUCB",
    "sw-ucb": "impactbandits.policies.nonstationary:SlidingWindowUCB",
    "r-exp3": "impactbandits.policies.nonstationary:RExp3",
    "r-ed-ucb": "impactbandits.policies.rising:RedUCB",
    "r-less-ucb": "impactbandits.policies.rising:RlessUCB",
    "fewa": "impactbandits.policies.rotting:FEWA",
    "raw-ucb": "impactbandits.policies.rotting:RawUCB",
    "swa": "impactbandits.policies.rotting:SWA",
    "spo": "impactbandits.policies.single_peaked:SPO",
    "spo-delta": "impactbandits.policies.single_peaked:SPODelta",
    "one-step-optimistic": "impactbandits.policies.single_peaked:OneStepOptimistic",
    "last-reward-greedy": "impactbandits.policies.single_peaked:LastRewardGreedy",
    "hkr": "impactbandits.policies.improving:HKR",
    "patil": "impactbandits.policies.improving:PatilAnytime",
    "fa-etc": "impactbandits.policies.opportunity:FairnessAwareETC",
    "srum": "impactbandits.policies.opportunity:SelfRegulatedUtilityMaximization",
    "const-elimination": "impactbandits.policies.opportunity:ConstantFairnessElimination",
    "pi-low": "impactbandits.policies.delay:PiLow",
    "pi-ucb": "impactbandits.policies.delay:PiUCB",
    "ranker-low": "impactbandits.policies.delay:RankerThenLow",
    "ad-ucb": "impactbandits.policies.impact:ActionDependentUCB",
    "hd-ucb": "impactbandits.policies.impact:HistoryDependentUCB",
    "cucb": "impactbandits.policies.impact:CombinatorialUCB",
    "exp3-meta": "impactbandits.policies.impact:MetaEXP3",
    "one-hot": "impactbandits.policies.impact:OneHot",
}

ORACLES: Mapping[str, str] = {
    "best_fixed_arm": "impactbandits.oracles.stationary:best_fixed_arm",
    "optimal_allocation": "impactbandits.oracles.rested:optimal_allocation_oracle",
    "opportunity_optimum": "impactbandits.oracles.opportunity:opportunity_optimum",
    "ghost": "impactbandits.oracles.ranking:ghost_oracle",
    "best_fixed_policy": "impactbandits.oracles.impact:best_fixed_policy_oracle",
    "best_arm_per_round": "impactbandits.oracles.restless:best_arm_per_round",
}

_TABLES = {"environment": ENVIRONMENTS, "policy": POLICIES, "oracle": ORACLES}


def import_path(obj: Any) -> str:
    """``"module:QualName"`` of a class or function (how specs name user components)."""
    return f"{obj.__module__}:{obj.__qualname__}"


def _load(path: str) -> Any:
    module_name, _, attr = path.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    return target


#: What each role's named object must be, checked before anything is called.
EXPECTED: Mapping[str, Expected] = {
    "environment": subclass_of(
        Environment, SimpleEnvironment, wanted="an Environment or SimpleEnvironment class"
    ),
    "policy": subclass_of(Policy, SimplePolicy, wanted="a Policy or SimplePolicy class"),
    "oracle": function("an oracle function"),
}


def resolve(role: str, name: str, field: str) -> Any:
    """The class (or function) registered as ``name`` for ``role``, or imported from a path
    through the checked loader (:func:`impactbandits.loader.load`): an environment or policy
    must be a subclass of the matching base class, an oracle a plain function, checked before
    anything is called (``"math:pi"`` or ``"subprocess:Popen"`` are refused without running
    anything)."""
    table = _TABLES[role]
    if name in table:
        return _load(table[name])
    if not isinstance(name, str) or ":" not in name:
        allowed = ", ".join(sorted(table))
        raise SpecError(field, f"unknown {role} {name!r}; allowed: {allowed} or 'module:Class'")
    return load(name, field, EXPECTED[role])


def resolve_oracle(name: str, field: str) -> Callable[..., Any]:
    return typing.cast(Callable[..., Any], resolve("oracle", name, field))


@functools.cache
def params_model(cls: type) -> type[BaseModel]:
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


def _instantiate(cls: type, params: Mapping[str, Any]) -> Any:
    return cls(**params)


def _build(
    role: str,
    kind: str,
    params: Mapping[str, Any],
    batched: type,
    simple: type,
    adapter: Callable[[Any], Any],
) -> Any:
    obj = _instantiate(resolve(role, kind, "kind"), params)
    if isinstance(obj, simple):
        return adapter(obj)
    if not isinstance(obj, batched):
        raise SpecError("kind", f"{kind!r} is not a {batched.__name__} or {simple.__name__}")
    return obj


def build_environment(kind: str, params: Mapping[str, Any]) -> Environment:
    """A batched environment from validated parameters (single-replication ones are wrapped)."""
    return typing.cast(
        Environment,
        _build(
            "environment", kind, params, Environment, SimpleEnvironment, BatchedSimpleEnvironment
        ),
    )


def build_policy(kind: str, params: Mapping[str, Any]) -> Policy:
    """A batched policy from validated parameters (single-replication ones are wrapped)."""
    return typing.cast(
        Policy, _build("policy", kind, params, Policy, SimplePolicy, BatchedSimplePolicy)
    )


def describe(role: str) -> list[tuple[str, str]]:
    """``(name, first docstring line)`` of every built-in component of ``role``."""
    rows = []
    for name in sorted(_TABLES[role]):
        obj = _load(_TABLES[role][name])
        doc = (inspect.getdoc(obj) or "").strip().splitlines()
        rows.append((name, doc[0] if doc else ""))
    return rows
