"""Names of the built-in components, and how any component is validated and built.

Components are classes whose ``__init__`` signature *is* their parameter schema: annotations (with
``pydantic.Field`` constraints) and defaults are turned into a frozen pydantic model, so every
parameter is validated with a one-line error before anything runs
(:mod:`impactbandits.construct`, re-exported here). Built-in components are listed by name
below (the policies' table lives with them, :mod:`impactbandits.policies.names`, so that
meta-policies can build their inner policy by name; it is re-exported here); any other
importable class can be named as ``"package.module:ClassName"`` in a spec — that is how users
plug in their own environments and policies without touching the library. The tables are plain
constants (lazy import paths): importing this module has no side effects.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

from impactbandits.construct import (
    construct,
    format_validation_error,
    import_path,
    params_model,
    validate_params,
    validation_errors,
)
from impactbandits.core.environment import BatchedSimpleEnvironment, Environment, SimpleEnvironment
from impactbandits.errors import SpecError
from impactbandits.loader import Expected, function, load_builtin, load_kind, subclass_of
from impactbandits.policies.names import EXPECTED as _POLICY
from impactbandits.policies.names import POLICIES, build_policy

__all__ = [
    "ENVIRONMENTS",
    "EXPECTED",
    "GENERIC_ORACLES",
    "ORACLES",
    "ORACLE_ENVIRONMENTS",
    "POLICIES",
    "build_environment",
    "build_policy",
    "check_oracle",
    "describe",
    "format_validation_error",
    "import_path",
    "params_model",
    "resolve",
    "resolve_oracle",
    "validate_params",
    "validation_errors",
]

ENVIRONMENTS: Mapping[str, str] = {
    "bernoulli": "impactbandits.envs.stationary:BernoulliBandit",
    "gaussian": "impactbandits.envs.stationary:GaussianBandit",
    "rested": "impactbandits.envs.rested:RestedBandit",
    "single-peaked": "impactbandits.envs.rested_families:SinglePeakedBandit",
    "increasing": "impactbandits.envs.rested_families:IncreasingBandit",
    "constant": "impactbandits.envs.rested_families:ConstantBandit",
    "decreasing": "impactbandits.envs.rested_families:DecreasingBandit",
    "fico": "impactbandits.envs.rested_families:FicoBandit",
    "recommender": "impactbandits.envs.rested_families:RecommenderBandit",
    "imab": "impactbandits.envs.rested_families:ImprovingBandit",
    "opportunity": "impactbandits.envs.opportunity:OpportunityBandit",
    "delayed": "impactbandits.envs.delay:DelayedPayoffBandit",
    "impact": "impactbandits.envs.impact:ImpactBandit",
    "restless": "impactbandits.envs.restless:RestlessBandit",
    "rising": "impactbandits.envs.rising:RisingBandit",
    "rising-restless": "impactbandits.envs.rising:RestlessRisingBandit",
    "rotting": "impactbandits.envs.rotting:RottingBandit",
    "piecewise": "impactbandits.envs.piecewise:PiecewiseStationaryBandit",
    "blocking": "impactbandits.envs.blocking:BlockingBandit",
    "rebounding": "impactbandits.envs.rebounding:ReboundingBandit",
    "recovering": "impactbandits.envs.recovering:RecoveringBandit",
}

ORACLES: Mapping[str, str] = {
    "best_fixed_arm": "impactbandits.oracles.stationary:best_fixed_arm",
    "optimal_allocation": "impactbandits.oracles.rested:optimal_allocation_oracle",
    "opportunity_optimum": "impactbandits.oracles.opportunity:opportunity_optimum",
    "ghost": "impactbandits.oracles.ranking:ghost_oracle",
    "best_fixed_policy": "impactbandits.oracles.impact:best_fixed_policy_oracle",
    "best_arm_per_round": "impactbandits.oracles.restless:best_arm_per_round",
    "oracle_greedy": "impactbandits.oracles.blocking:oracle_greedy",
    "blocking_optimum": "impactbandits.oracles.blocking:blocking_optimum",
    "rebounding_lookahead": "impactbandits.oracles.rebounding:rebounding_lookahead",
    "rebounding_optimum": "impactbandits.oracles.rebounding:rebounding_optimum",
    "recovering_lookahead": "impactbandits.oracles.recovering:recovering_lookahead",
    "recovering_optimum": "impactbandits.oracles.recovering:recovering_optimum",
}

#: The environments each built-in oracle applies to: the registered names whose classes it
#: reads (``env.delays``, ``env.curves`` …) and whose benchmark it computes. A class derived
#: from one of them counts as that environment (its nearest registered ancestor decides);
#: :func:`check_oracle` refuses every other pairing when the spec is read.
ORACLE_ENVIRONMENTS: Mapping[str, tuple[str, ...]] = {
    "best_fixed_arm": ("bernoulli", "gaussian"),
    "optimal_allocation": (
        "rested",
        "single-peaked",
        "increasing",
        "constant",
        "decreasing",
        "fico",
        "recommender",
        "imab",
        "rising",
        "rotting",
    ),
    "opportunity_optimum": ("opportunity",),
    "ghost": ("delayed",),
    "best_fixed_policy": ("impact",),
    "best_arm_per_round": ("restless", "rising-restless", "piecewise"),
    "oracle_greedy": ("blocking",),
    "blocking_optimum": ("blocking",),
    "rebounding_lookahead": ("rebounding",),
    "rebounding_optimum": ("rebounding",),
    "recovering_lookahead": ("recovering",),
    "recovering_optimum": ("recovering",),
}
#: Oracles that need only the :class:`~impactbandits.core.environment.Environment` interface
#: (``expected_rewards()`` at reset): also allowed on an environment class derived from no
#: registered one (a user's own), which then states that its rewards do not change.
GENERIC_ORACLES: frozenset[str] = frozenset({"best_fixed_arm"})

_TABLES = {"environment": ENVIRONMENTS, "policy": POLICIES, "oracle": ORACLES}

#: What each role's named object must be, checked before anything is called.
EXPECTED: Mapping[str, Expected] = {
    "environment": subclass_of(
        Environment, SimpleEnvironment, wanted="an Environment or SimpleEnvironment class"
    ),
    "policy": _POLICY,
    "oracle": function("an oracle function"),
}


def resolve(role: str, name: str, field: str) -> Any:
    """The class (or function) registered as ``name`` for ``role``, or imported from a path
    through the checked loader (:func:`impactbandits.loader.load`): an environment or policy
    must be a subclass of the matching base class, an oracle a plain function, checked before
    anything is called (``"math:pi"`` or ``"subprocess:Popen"`` are refused without running
    anything)."""
    return load_kind(_TABLES[role], role, name, field, EXPECTED[role])


def resolve_oracle(name: str, field: str) -> Callable[..., Any]:
    return typing.cast(Callable[..., Any], resolve("oracle", name, field))


def build_environment(kind: str, params: Mapping[str, Any]) -> Environment:
    """A batched environment from validated parameters (single-replication ones are wrapped)."""
    cls = resolve("environment", kind, "kind")
    return typing.cast(
        Environment,
        construct(cls, kind, params, Environment, SimpleEnvironment, BatchedSimpleEnvironment),
    )


def _registered_kind(cls: type) -> str | None:
    """The registered environment name of ``cls`` or of its nearest registered ancestor."""
    names = {load_builtin(path): name for name, path in ENVIRONMENTS.items()}
    return next((names[base] for base in cls.__mro__ if base in names), None)


def check_oracle(oracle: str, environment: type, kind: str, field: str) -> None:
    """Refuse a built-in ``oracle`` for an ``environment`` class (``kind`` as the spec names
    it) it does not apply to (:data:`ORACLE_ENVIRONMENTS`), naming ``field`` and the
    environments it supports; an oracle named by import path is the user's to pair."""
    supported = ORACLE_ENVIRONMENTS.get(oracle)
    if supported is None:
        return
    registered = _registered_kind(environment)
    if registered in supported or (registered is None and oracle in GENERIC_ORACLES):
        return
    fitting = sorted(o for o, envs in ORACLE_ENVIRONMENTS.items() if registered in envs)
    if registered is None:
        fitting = sorted(GENERIC_ORACLES)
    about = kind if registered in (None, kind) else f"{kind} (a {registered} environment)"
    instead = ", ".join([*fitting, "'none'"]) if fitting else "'none' or your own oracle"
    raise SpecError(
        field,
        f"{oracle!r} applies to {' and '.join(supported)} environments only, not to {about}; "
        f"give one for it: {instead}",
    )


def describe(role: str) -> list[tuple[str, str]]:
    """``(name, first docstring line)`` of every built-in component of ``role``."""
    rows = []
    for name in sorted(_TABLES[role]):
        obj = load_builtin(_TABLES[role][name])
        doc = (inspect.getdoc(obj) or "").strip().splitlines()
        rows.append((name, doc[0] if doc else ""))
    return rows
