"""Probability-vector actions with per-group feedback flow through the whole pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from impactbandits import ExperimentSpec, run_experiment, tidy_table
from impactbandits.core.spaces import Simplex
from impactbandits.errors import SpecError
from impactbandits.testing import check_environment, check_policy

from .toy_components import GreedyVector, ToyActivation

ENV = {"kind": "tests.toy_components:ToyActivation", "means": [0.2, 0.9, 0.5]}


def test_contracts_hold_for_vector_actions():
    check_environment(lambda: ToyActivation([0.2, 0.9, 0.5]))
    check_policy(GreedyVector, env_factory=lambda: ToyActivation([0.2, 0.9, 0.5]))


def test_vector_actions_through_runner(tmp_path):
    spec = ExperimentSpec.create(
        name="vec",
        environments=[ENV],
        policies=[{"kind": "tests.toy_components:GreedyVector"}],
        horizons=[50, 200],
        seeds=20,
    )
    run_experiment(spec, tmp_path, backend="serial")
    table = tidy_table(tmp_path)
    pulls = table[["pulls_0", "pulls_1", "pulls_2"]].sum(axis=1)
    np.testing.assert_allclose(pulls, table["horizon"])  # probability mass adds up to T
    assert table["regret"].isna().all()  # no oracle declared
    late = table[table.horizon == 200]
    # greedy converges to the best group unless that group's first observation is a 0 while
    # another's is a 1 (probability <= 0.1 per seed): at most 6 of 20 seeds fail with
    # probability > 0.99 (binomial, p = 0.1), and a policy that ignored the feedback would put
    # about 67 of 200 on group 1 in every seed
    assert (late["pulls_1"] > 100).sum() >= 14


def test_discrete_policy_on_vector_environment_is_refused():
    with pytest.raises(SpecError, match=r"policies\[0\]\.kind: 'ucb1' plays discrete actions"):
        from impactbandits.experiments.cells import expand

        expand(
            ExperimentSpec.create(
                name="vec", environments=[ENV], policies=[{"kind": "ucb1"}], horizons=[5]
            )
        )


def test_simplex_grid_validation():
    space = Simplex(3, resolution=4)
    space.validate(np.array([[0.25, 0.5, 0.25]]), 1)
    with pytest.raises(SpecError, match="multiples"):
        space.validate(np.array([[0.2, 0.5, 0.3]]), 1)
    with pytest.raises(SpecError, match="sum to 1"):
        space.validate(np.array([[0.25, 0.5, 0.5]]), 1)
    with pytest.raises(SpecError, match="non-negative"):
        space.validate(np.array([[-0.25, 0.75, 0.5]]), 1)
