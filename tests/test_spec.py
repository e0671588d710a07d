"""Specs: the same immutable object from TOML and Python; canonical keys."""

from __future__ import annotations

import pydantic
import pytest

from impactbandits import ExperimentSpec, load_spec
from impactbandits.errors import SpecError
from impactbandits.experiments.cells import expand
from impactbandits.experiments.spec import parse_horizons

TOML = """
name = "same"
seeds = 3
horizons = {start = 10, stop = 1000, num = 3, spacing = "log"}

[[environments]]
kind = "bernoulli"
label = "two"
means = [0.3, 0.7]

[[policies]]
kind = "exp3"
gamma = 0.05
"""


def test_toml_and_python_give_the_same_spec(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(TOML)
    from_toml = load_spec(path)
    from_python = ExperimentSpec.create(
        name="same",
        seeds=3,
        horizons=[10, 100, 1000],
        environments=[{"kind": "bernoulli", "label": "two", "params": {"means": [0.3, 0.7]}}],
        policies=[{"kind": "exp3", "gamma": 0.05}],
    )
    assert from_toml == from_python
    assert from_toml.store_key() == from_python.store_key()


def test_spec_is_immutable():
    spec = ExperimentSpec.create(
        name="x",
        environments=[{"kind": "bernoulli", "means": [0.5]}],
        policies=[{"kind": "ucb1"}],
        horizons=[5],
    )
    with pytest.raises(pydantic.ValidationError):
        spec.seeds = 4  # type: ignore[misc]


def test_key_ignores_defaults_written_out_seed_count_and_output():
    base = dict(
        name="x", environments=[{"kind": "bernoulli", "means": [0.5, 0.6]}], horizons=[5, 9]
    )
    a = ExperimentSpec.create(**base, policies=[{"kind": "ucb1"}])
    b = ExperimentSpec.create(
        **base, policies=[{"kind": "ucb1", "c": 2.0}], seeds=99, output="elsewhere"
    )
    c = ExperimentSpec.create(**base, policies=[{"kind": "ucb1", "c": 1.0}])
    assert a.store_key() == b.store_key()
    assert a.store_key() != c.store_key()


def test_horizon_grids():
    assert parse_horizons({"start": 1, "stop": 9, "num": 3}) == (1, 5, 9)
    assert parse_horizons([30, 10, 10]) == (10, 30)
    assert parse_horizons({"start": 10, "stop": 1000, "num": 3, "spacing": "log"}) == (
        10,
        100,
        1000,
    )
    with pytest.raises(SpecError, match=r"horizons\.stop"):
        parse_horizons({"start": 10, "stop": 5, "num": 2})


def test_anytime_policies_get_one_cell_and_horizon_aware_one_per_horizon():
    spec = ExperimentSpec.create(
        name="x",
        environments=[{"kind": "bernoulli", "means": [0.5, 0.6]}],
        policies=[{"kind": "ucb1"}, {"kind": "exp3"}, {"kind": "etc", "m": 2}],
        horizons=[5, 9, 20],
    )
    cells = expand(spec)
    by_policy = {}
    for cell in cells:
        by_policy.setdefault(cell.policy.label, []).append(cell)
    assert [c.horizon for c in by_policy["ucb1"]] == [None]
    assert by_policy["ucb1"][0].grid == (5, 9, 20)
    assert [c.horizon for c in by_policy["exp3"]] == [5, 9, 20]
    assert [c.horizon for c in by_policy["etc"]] == [None]
    assert len({c.key for c in cells}) == len(cells)


def test_user_component_by_import_path():
    spec = ExperimentSpec.create(
        name="x",
        environments=[{"kind": "bernoulli", "means": [0.5, 0.6]}],
        policies=[{"kind": "tests.reference_policies:ReferenceUCB1"}],
        horizons=[5],
    )
    assert spec.policies[0].label == "ReferenceUCB1"
    with pytest.raises(SpecError, match=r"policies\[0\]\.kind: cannot import"):
        ExperimentSpec.create(
            name="x",
            environments=[{"kind": "bernoulli", "means": [0.5]}],
            policies=[{"kind": "nowhere.module:Thing"}],
            horizons=[5],
        )


def test_policies_restricted_to_environments():
    envs = [
        {"kind": "bernoulli", "label": "a", "means": [0.5, 0.6]},
        {"kind": "bernoulli", "label": "b", "means": [0.2, 0.6]},
    ]
    spec = ExperimentSpec.create(
        name="x",
        environments=envs,
        horizons=[5],
        policies=[
            {"kind": "exp3", "label": "E", "gamma": 0.1, "environments": ["a"]},
            {"kind": "exp3", "label": "E", "gamma": 0.2, "environments": ["b"]},
            {"kind": "ucb1"},
        ],
    )
    pairs = {
        (c.environment.label, c.policy.label, c.policy.params.get("gamma")) for c in expand(spec)
    }
    assert pairs == {("a", "E", 0.1), ("b", "E", 0.2), ("a", "ucb1", None), ("b", "ucb1", None)}
    with pytest.raises(SpecError, match=r"policies\[0\]\.environments: unknown environment label"):
        ExperimentSpec.create(
            name="x",
            environments=envs,
            horizons=[5],
            policies=[{"kind": "ucb1", "environments": ["c"]}],
        )
    with pytest.raises(SpecError, match="used twice"):  # overlapping restrictions
        ExperimentSpec.create(
            name="x",
            environments=envs,
            horizons=[5],
            policies=[
                {"kind": "ucb1", "label": "U", "environments": ["a"]},
                {"kind": "ucb1", "label": "U", "environments": ["a", "b"]},
            ],
        )
    with pytest.raises(SpecError, match=r"environments\[0\]\.environments"):
        ExperimentSpec.create(
            name="x",
            environments=[{**envs[0], "environments": ["a"]}],
            horizons=[5],
            policies=[{"kind": "ucb1"}],
        )
