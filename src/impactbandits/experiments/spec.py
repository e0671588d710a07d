"""Experiment specifications: immutable, validated, hashable.

The same :class:`ExperimentSpec` comes from a TOML file (:func:`load_spec`) or from Python
(:meth:`ExperimentSpec.create`). A TOML spec looks like::

    name = "two-arms"
    seeds = 20                      # replications
    seed = 0                        # root entropy of every random stream
    horizons = [100, 1000, 10000]   # or {start = 100, stop = 10000, num = 20, spacing = "log"}

    [[environments]]
    kind = "bernoulli"
    label = "easy"                  # optional; defaults to kind
    means = [0.3, 0.7]              # parameters of the component, validated by its signature

    [[policies]]
    kind = "ucb1"

Every problem is reported as a :class:`~impactbandits.errors.SpecError` naming the field, e.g.
``environments[0].means[1]: Input should be less than or equal to 1 (got 1.3)``.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from impactbandits.core.random import stable_key
from impactbandits.errors import SpecError, combined, unknown_name
from impactbandits.params import MAX_ROUNDS
from impactbandits.registry import (
    check_oracle,
    format_validation_error,
    import_path,
    resolve,
    resolve_oracle,
    validate_params,
    validation_errors,
)

__all__ = [
    "ComponentSpec",
    "ExperimentSpec",
    "SpecRecord",
    "component_spec",
    "load_spec",
    "parse_horizons",
    "spec_record",
]

Metric = Literal["reward", "regret", "per_step_regret", "pulls", "switches", "phases"]
DEFAULT_METRICS: tuple[Metric, ...] = ("reward", "regret", "per_step_regret", "pulls", "switches")
#: Version of the stored numbers; part of every key so incompatible stores never mix.
#: 1: common noise from per-(replication, arm) blocks of PCG64 values;
#: 2: counter-based common noise (Philox4x32-10, :mod:`impactbandits.core.philox`).
STORE_FORMAT = 2
_RESERVED = {"kind", "label", "params", "oracle", "environments"}
_MAX_HORIZON = MAX_ROUNDS


class _CarriedError(ValueError):
    """Carries a :class:`SpecError` raised inside a pydantic validator out of pydantic."""

    def __init__(self, original: SpecError) -> None:
        super().__init__(str(original))
        self.original = original


class ComponentSpec(BaseModel):
    """A validated environment or policy: registry ``kind``, display ``label``, full ``params``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    label: str
    params: dict[str, Any] = Field(default_factory=dict)
    oracle: str | None = None
    """Environments only: name of the exact benchmark for regret (``None``: no regret)."""
    environments: tuple[str, ...] | None = None
    """Policies only: labels of the environments it runs on (``None``: all)."""

    def content(self) -> dict[str, Any]:
        """What determines the numbers (the label does not)."""
        return {"kind": self.kind, "params": self.params, "oracle": self.oracle}

    def runs_on(self, environment_label: str) -> bool:
        return self.environments is None or environment_label in self.environments

    def content_key(self) -> int:
        return stable_key(canonical_json(self.content()))


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def component_spec(role: str, raw: Any, field: str) -> ComponentSpec:
    """One spec entry (``role`` ``"environment"`` or ``"policy"``) validated exactly as in a
    spec, with the same content key: what the Gymnasium adapters use to seed as the runner
    does. Errors name ``field``."""
    return _component(role, raw, field)


def _component(role: str, raw: Any, field: str) -> ComponentSpec:
    """One entry validated: every problem it has at once (:class:`SpecErrors`, one line each)."""
    if isinstance(raw, ComponentSpec):
        return raw
    if not isinstance(raw, Mapping):
        raise SpecError(field, "must be a table with 'kind' and the component's parameters")
    errors: list[SpecError] = []
    data = dict(raw)
    kind = data.pop("kind", None)
    if isinstance(kind, type):
        kind = import_path(kind)
    if not isinstance(kind, str) or not kind:
        errors.append(
            SpecError(
                f"{field}.kind", f"required: the name of the {role} (see 'impactbandits list')"
            )
        )
    label = data.pop("label", None)
    nested = data.pop("params", None) or {}
    if not isinstance(nested, Mapping):
        errors.append(SpecError(f"{field}.params", "must be a table of parameters"))
        nested = {}
    clash = set(nested) & set(data)
    if clash:
        errors.append(
            SpecError(f"{field}.{sorted(clash)[0]}", "given both inline and under 'params'")
        )
    oracle_given = "oracle" in data
    oracle = data.pop("oracle", None)
    only = data.pop("environments", None)
    if only is not None:
        if role != "policy":
            errors.append(
                SpecError(
                    f"{field}.environments", "only policies can be restricted to environments"
                )
            )
        elif (
            isinstance(only, str | bytes | Mapping)
            or not isinstance(only, Sequence)
            or not only
            or not all(isinstance(x, str) for x in only)
        ):
            errors.append(
                SpecError(f"{field}.environments", "must be a non-empty list of environment labels")
            )
        only = tuple(only) if isinstance(only, Sequence) else None
    if label is None and isinstance(kind, str):
        label = kind.rpartition(":")[2]
    if not isinstance(label, str) or not label.strip():
        errors.append(SpecError(f"{field}.label", "must be a non-empty string"))
    if role != "environment" and oracle_given and oracle is not None:
        errors.append(SpecError(f"{field}.oracle", "only environments have an oracle"))
    params = {**nested, **data}
    values: dict[str, Any] = {}
    if isinstance(kind, str) and kind:
        try:
            cls = resolve(role, kind, f"{field}.kind")
        except SpecError as exc:
            errors.append(exc)
        else:
            try:
                values = validate_params(cls, params, field)
            except SpecError as exc:
                errors.append(exc)
            if role == "environment":
                oracle = _oracle(cls, kind, oracle if oracle_given else None, oracle_given, field)
                if isinstance(oracle, SpecError):
                    errors.append(oracle)
    found = combined(errors)
    if found is not None:
        raise found
    return ComponentSpec(
        kind=str(kind),
        label=str(label),
        params=values,
        oracle=oracle if role == "environment" else None,
        environments=only,
    )


def _oracle(cls: type, kind: str, oracle: Any, given: bool, field: str) -> str | SpecError | None:
    """The environment's oracle: the one given, else its class's default (``None``: none), or
    the :class:`SpecError` saying why it cannot be used (not a name, unknown, for another kind
    of environment)."""
    if not given:
        oracle = getattr(cls, "default_oracle", None)
    if oracle in ("none", ""):
        return None
    if oracle is None:
        return None
    if not isinstance(oracle, str):
        return SpecError(f"{field}.oracle", "must be an oracle name or 'none'")
    try:
        resolve_oracle(oracle, f"{field}.oracle")
        check_oracle(oracle, cls, kind, f"{field}.oracle")
    except SpecError as exc:
        return exc
    return oracle


def _check_labels(key: str, components: tuple[ComponentSpec, ...]) -> None:
    """Labels are unique, except policies restricted to disjoint sets of environments (so a
    figure can show one "SPO" per panel, each tuned to that panel's noise)."""
    for i, a in enumerate(components):
        for b in components[:i]:
            if a.label != b.label:
                continue
            disjoint = (
                a.environments is not None
                and b.environments is not None
                and not set(a.environments) & set(b.environments)
            )
            if not disjoint:
                raise SpecError(
                    key,
                    f"label {a.label!r} is used twice; give each a unique 'label' (policies may "
                    "share one only when restricted to disjoint 'environments')",
                )


def parse_horizons(raw: Any, field: str = "horizons") -> tuple[int, ...]:
    """A sorted tuple of distinct horizons from a list or a ``{start, stop, num, spacing}`` grid."""
    if isinstance(raw, Mapping):
        allowed = {"start", "stop", "num", "spacing"}
        unknown = set(raw) - allowed
        if unknown:
            raise SpecError(
                f"{field}.{sorted(unknown)[0]}",
                f"unknown key; allowed: {', '.join(sorted(allowed))}",
            )
        for key in ("start", "stop", "num"):
            value = raw.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise SpecError(f"{field}.{key}", f"must be a positive integer, got {value!r}")
        spacing = raw.get("spacing", "linear")
        if spacing not in ("linear", "log"):
            raise SpecError(f"{field}.spacing", f"must be 'linear' or 'log', got {spacing!r}")
        if raw["stop"] < raw["start"]:
            raise SpecError(f"{field}.stop", "must be at least start")
        make = np.geomspace if spacing == "log" else np.linspace
        values = np.floor(make(raw["start"], raw["stop"], raw["num"]) + 1e-9).astype(int)
        raw = [int(v) for v in values]
    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = [raw]
    if not isinstance(raw, Sequence) or isinstance(raw, str) or not raw:
        raise SpecError(field, "must be a non-empty list of positive integers or a grid table")
    out = set()
    for i, value in enumerate(raw):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int | np.integer) or isinstance(value, bool):
            raise SpecError(f"{field}[{i}]", f"must be a positive integer, got {value!r}")
        if not 1 <= value <= _MAX_HORIZON:
            raise SpecError(f"{field}[{i}]", f"must be between 1 and {_MAX_HORIZON}, got {value}")
        out.add(int(value))
    return tuple(sorted(out))


class SpecRecord(BaseModel):
    """An experiment spec as data: what a run directory stores (``Store.spec()``), validated
    by its own schema without resolving anything it names — no ``module:attr`` is imported,
    no component is built. Readers (``export``, ``report``,
    :func:`~impactbandits.experiments.tidy.tidy_table`) get this; a spec is run only as an
    :class:`ExperimentSpec` (``ExperimentSpec.create(**record.to_dict())`` validates it again,
    importing the code it names: do that only for specs you trust)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$", max_length=100)
    description: str = ""
    environments: tuple[ComponentSpec, ...] = Field(min_length=1)
    policies: tuple[ComponentSpec, ...] = Field(min_length=1)
    horizons: tuple[int, ...] = Field(min_length=1)
    seeds: int = Field(10, ge=1, le=1_000_000, description="number of replications")
    seed: int = Field(0, ge=0, le=2**63 - 1, description="root entropy")
    metrics: tuple[Metric, ...] = DEFAULT_METRICS
    checkpoints: int = Field(50, ge=2, le=10_000, description="trajectory points per run")
    output: str | None = None

    def store_key(self, version: int = STORE_FORMAT) -> str:
        """Hash of everything that decides the stored rows (not ``seeds``, ``output`` or text);
        ``version``: the key an older version of the stored numbers gave (see
        :data:`STORE_FORMAT`)."""
        content = {
            "format": version,
            "name": self.name,
            "environments": [[c.label, c.content()] for c in self.environments],
            "policies": [[c.label, c.content(), c.environments] for c in self.policies],
            "horizons": list(self.horizons),
            "seed": self.seed,
            "checkpoints": self.checkpoints,
        }
        return f"{stable_key(canonical_json(content)):016x}"

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class ExperimentSpec(SpecRecord):
    """Environments × policies × horizons × seeds, every component resolved and its
    parameters validated (what :func:`~impactbandits.experiments.runner.run_experiment` runs).
    Immutable; :meth:`store_key` keys the store."""

    @model_validator(mode="before")
    @classmethod
    def _parse_components(cls, data: Any) -> Any:
        """Resolve and validate every component and the horizons, collecting every problem
        (with those of the other fields when there are some): one :class:`SpecErrors` line
        each, across the whole spec."""
        if not isinstance(data, Mapping):
            return data
        data = dict(data)
        errors: list[SpecError] = []
        for key in ("seeds", "seed", "checkpoints"):
            if isinstance(data.get(key), bool):
                errors.append(
                    SpecError(key, f"must be an integer, not a boolean (got {data[key]!r})")
                )
        complete = True
        for key, role in (("environments", "environment"), ("policies", "policy")):
            items = data.get(key)
            if items is None:
                continue
            if isinstance(items, Mapping | str | bytes) or not isinstance(items, Sequence):
                errors.append(
                    SpecError(key, f"must be a list of {role} tables ([[{key}]] in TOML)")
                )
                complete = False
                continue
            parsed = []
            for i, item in enumerate(items):
                try:
                    parsed.append(_component(role, item, f"{key}[{i}]"))
                except SpecError as exc:
                    errors.append(exc)
            if len(parsed) < len(items):
                complete = False
                continue
            data[key] = tuple(parsed)
            try:
                _check_labels(key, data[key])
            except SpecError as exc:
                errors.append(exc)
        if "horizons" in data:
            try:
                data["horizons"] = parse_horizons(data["horizons"])
            except SpecError as exc:
                errors.append(exc)
        if complete and data.get("environments") and data.get("policies"):
            known = {c.label for c in data["environments"]}
            for i, policy in enumerate(data["policies"]):
                unknown = set(policy.environments or ()) - known
                if unknown:
                    errors.append(
                        SpecError(
                            f"policies[{i}].environments",
                            unknown_name("environment label", sorted(unknown)[0], known),
                        )
                    )
        if errors:
            errors += _other_field_errors(data)
            found = combined(errors)
            assert found is not None
            raise _CarriedError(found)
        return data

    @classmethod
    def create(cls, **fields: Any) -> ExperimentSpec:
        """Validated spec from keyword arguments; raises :class:`SpecError` on bad input."""
        return spec_from_mapping(fields)

    def replace(self, **changes: Any) -> ExperimentSpec:
        """A validated copy with some fields changed (e.g. ``seeds`` or ``output``)."""
        data = {name: getattr(self, name) for name in type(self).model_fields}
        data.update({k: v for k, v in changes.items() if v is not None})
        return spec_from_mapping(data)


_PARSED = ("environments", "policies", "horizons")


def _other_field_errors(data: Mapping[str, Any]) -> list[SpecError]:
    """The problems of the spec's fields other than its components and horizons (unknown keys,
    a bad ``seeds`` …), found by the schema with those three left out: reported together with
    the components' problems."""
    fields: dict[str, Any] = {name: (Any, None) for name in _PARSED}
    partial = create_model("SpecFields", __base__=SpecRecord, **fields)
    rest = {k: v for k, v in data.items() if k not in _PARSED}
    try:
        partial.model_validate(rest)
    except ValidationError as exc:
        return validation_errors(exc, "", ExperimentSpec)
    return []


def spec_from_mapping(data: Mapping[str, Any]) -> ExperimentSpec:
    """Validate a mapping (parsed TOML or keyword arguments) into an :class:`ExperimentSpec`:
    every problem at once (a :class:`~impactbandits.errors.SpecErrors`, one line each)."""
    if not isinstance(data, Mapping):
        raise SpecError("spec", "must be a table of fields")
    try:
        return ExperimentSpec.model_validate(dict(data))
    except ValidationError as exc:
        for error in exc.errors():
            carried = (error.get("ctx") or {}).get("error")
            if isinstance(carried, _CarriedError):  # keep the type (UserCodeError) and details
                raise carried.original from None
        found = combined(validation_errors(exc, "", ExperimentSpec))
        raise (found or SpecError("spec", str(exc))) from None


def load_spec(path: str | os.PathLike[str], **overrides: Any) -> ExperimentSpec:
    """Read and validate a TOML spec; ``overrides`` (e.g. ``seeds=5``) replace its fields."""
    path = Path(path)
    if path.is_dir():
        raise SpecError("spec", f"{str(path)!r} is a directory; give the path of a TOML file")
    if not path.is_file():
        raise SpecError("spec", f"no such file: {path}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SpecError("spec", f"{path} is not valid TOML ({exc})") from None
    data.update({k: v for k, v in overrides.items() if v is not None})
    return spec_from_mapping(data)


def spec_record(data: Any) -> SpecRecord:
    """A stored spec (parsed JSON) read as data (:class:`SpecRecord`): nothing it names is
    imported or built; a malformed one is a :class:`SpecError` naming the field."""
    if not isinstance(data, Mapping):
        raise SpecError("spec", "must be a table of fields")
    try:
        return SpecRecord.model_validate(dict(data))
    except ValidationError as exc:
        raise SpecError("", format_validation_error(exc, "", SpecRecord)) from None
