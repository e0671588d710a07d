"""Tang, Ho & Liu (2021): the impact environment, the p* oracle, learners and figures."""

from __future__ import annotations

import numpy as np
import pytest

from impactbandits import ExperimentSpec, run_experiment, tidy_table
from impactbandits.core import EnvironmentRandom
from impactbandits.envs.impact import ImpactBandit
from impactbandits.errors import SpecError
from impactbandits.experiments.figures import get_figure
from impactbandits.oracles.impact import optimal_fixed_policy
from impactbandits.oracles.simplex import best_fixed_policy
from impactbandits.testing import check_environment

POLICE = {"high": [0.9, 0.8], "low": [0.3, 0.4]}


@pytest.mark.parametrize("gamma", [0.0, 0.3, 0.9])
def test_impact_equals_the_discounted_average_of_eq2(gamma):
    """f_k(t) = Σ_{s≤t} p_k(s) γ^{t−s} / Σ_{s≤t} γ^{t−s}, recomputed from the whole history."""
    env = ImpactBandit(**POLICE, gamma=gamma)
    env.reset(EnvironmentRandom(0, 1, [0]))
    rng = np.random.default_rng(0)
    history = []
    for _ in range(40):
        p = rng.dirichlet([1.0, 1.0])
        history.append(p)
        t = len(history)
        weights = gamma ** (t - 1 - np.arange(t))
        f = (weights[:, None] * np.array(history)).sum(axis=0) / weights.sum()
        expected = float((p * env.reward_function(f)).sum())
        assert float(env.step(p[None, :]).expected[0]) == pytest.approx(expected, abs=1e-12)


def test_fixed_policy_keeps_the_impact_at_p():
    env = ImpactBandit(**POLICE, gamma=0.7)
    env.reset(EnvironmentRandom(0, 1, [0]))
    p = np.array([[0.3, 0.7]])
    values = [float(env.step(p).expected[0]) for _ in range(20)]
    np.testing.assert_allclose(values, env.fixed_value(p[0]))


@pytest.mark.parametrize(
    "factory",
    [
        lambda: ImpactBandit(**POLICE, gamma=0.4),
        lambda: ImpactBandit(**POLICE, gamma=0.0, feedback="single"),
        lambda: ImpactBandit(**POLICE, gamma=0.2, feedback="allocation"),
        lambda: ImpactBandit(family="concave", intercept=[0.2, 0.1, 0.3], slope=[0.5, 0.7, 0.4]),
        lambda: ImpactBandit(family="fico", gamma=0.5),
    ],
    ids=["independent", "single", "allocation", "concave", "fico"],
)
def test_environment_contract(factory):
    check_environment(factory)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"high": [0.9], "low": [0.95]}, "low <= high"),
        ({"high": [0.9, 0.8]}, "needs 'high' and 'low'"),
        ({"family": "linear", "intercept": [0.5], "slope": [0.8]}, "leaves \\[0, 1\\]"),
    ],
)
def test_invalid_instances(params, message):
    with pytest.raises(SpecError, match=message):
        ImpactBandit(**params)


def test_invalid_meta_arms_are_refused():
    space = ImpactBandit(**POLICE, resolution=4).action_space
    with pytest.raises(SpecError, match="multiples"):
        space.validate(np.array([[0.3, 0.7]]), 1)
    with pytest.raises(SpecError, match="sum to 1"):
        space.validate(np.array([[0.5, 0.75]]), 1)


def test_oracle_beats_every_grid_policy_within_the_lipschitz_bound():
    env = ImpactBandit(**POLICE)
    p_star, value = optimal_fixed_policy(env)
    assert p_star.sum() == pytest.approx(1.0) and np.all(p_star >= 0)
    # analytic optimum of the police instance: U(p) = p(0.9 − 0.6p) + (1 − p)(0.8 − 0.4(1 − p))
    # dU/dp = 0.9 − 2p = 0 → p = 0.45, U = 0.6025
    assert p_star[0] == pytest.approx(0.45, abs=1e-6) and value == pytest.approx(0.6025, abs=1e-9)
    for m in (4, 10, 20):
        levels = np.arange(1, m + 1) / m
        grid_values = levels * env.reward_function(np.tile(levels, (2, 1)).T).T
        _, grid_best = best_fixed_policy(grid_values)
        assert grid_best <= value + 1e-12


def test_lemma31_base_arm_bandits_have_linear_regret_but_ad_ucb_not(tmp_path):
    spec = ExperimentSpec.create(
        name="lemma31",
        environments=[{"kind": "impact", **POLICE}],
        horizons=[500, 4000],
        seeds=3,
        policies=[
            {"kind": "one-hot", "label": "UCB1", "base": "ucb1"},
            {"kind": "ad-ucb", "label": "AD-UCB"},
        ],
    )
    run_experiment(spec, tmp_path, backend="serial")
    table = tidy_table(tmp_path)
    per_step = table.groupby(["policy", "horizon"], observed=True)["per_step_regret"].mean()
    # one-hot play earns max_k r_k(1) = 0.5 per round against U(p*) = 0.6025: ≥ 0.1 per step
    assert per_step["UCB1", 4000] > 0.09
    assert per_step["AD-UCB", 4000] < 0.06
    assert per_step["AD-UCB", 4000] < per_step["AD-UCB", 500]


@pytest.mark.parametrize("name", ["tang-fig2", "tang-fig3"])
def test_tang_figures_at_quick_scale(tmp_path, name):
    figure = get_figure(name)
    run_experiment(figure.build(True), tmp_path, backend="process", workers=2)
    table = tidy_table(tmp_path)
    assert table["regret"].notna().all()
    pngs = figure.render(tmp_path)
    assert pngs and all(p.stat().st_size > 5000 for p in pngs)
