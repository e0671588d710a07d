"""Ron, Ben-Porat & Shalit (2021): objective, Lemma-1 optimum, range oracles, algorithms."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from impactbandits import ExperimentSpec, run_experiment, tidy_table
from impactbandits.errors import SpecError
from impactbandits.experiments.figures import get_figure
from impactbandits.oracles.opportunity import (
    lemma1_counts,
    optimal_utility,
    penalty,
    requirements,
)
from impactbandits.oracles.opportunity_fairness import (
    CallableFairness,
    ConstantFairness,
    MonotoneCartesianFairness,
    SoftmaxFairness,
)


def _one(spec_kwargs, tmp_path, backend="serial"):
    spec = ExperimentSpec.create(name="ro", **spec_kwargs)
    run_experiment(spec, tmp_path, backend=backend)
    return tidy_table(tmp_path)


# -- the paper's worked example (§3) -------------------------------------------------------------


def test_worked_example_optimum_is_three_quarters_of_t():
    for T in (10, 1000, 123_456):
        # pull each arm T/2 times: T/2·1 + T/2·(1/2) = 0.75T, no penalty
        assert optimal_utility(np.array([1.0, 0.5]), np.array([0.5, 0.5]), 0.6, T) == 0.75 * T


#: Ron et al.'s worked example: μ = (1, 0.5), f_uni, transfer cost λ = 0.6.
WORKED_EXAMPLE = {
    "kind": "opportunity",
    "means": [1.0, 0.5],
    "fairness": "uniform",
    "transfer_cost": 0.6,
}


def test_worked_example_fairness_unaware_etc_tends_to_0_7t(tmp_path):
    """ETC explores m = ⌈(T/2)^{2/3} (ln T)^{1/3}⌉ pulls per arm, then commits to arm 0
    (μ = 1 always pays 1, so it is never behind). Its expected utility is exactly
    (T − m)·1 + m·0.5 − 0.6·(T/2 − m) = 0.7T + 0.1m → 0.7T: linear regret 0.05T − 0.1m."""
    T = 100_000
    table = _one(
        dict(
            environments=[WORKED_EXAMPLE],
            policies=[{"kind": "etc"}],
            horizons=[T],
            seeds=4,
        ),
        tmp_path,
    )
    m = math.ceil((T / 2) ** (2 / 3) * math.log(T) ** (1 / 3))
    np.testing.assert_allclose(table["expected_utility"], 0.7 * T + 0.1 * m)
    np.testing.assert_allclose(table["optimum"], 0.75 * T)
    np.testing.assert_allclose(table["regret"], 0.05 * T - 0.1 * m)


# -- Lemma 1 against brute force -------------------------------------------------------------------


def _brute_force(mu, f_mu, lam, T):
    required = requirements(f_mu, T)
    best = -math.inf
    k = len(mu)
    for cut in itertools.combinations(range(T + k - 1), k - 1):
        counts = np.diff((-1, *cut, T + k - 1)) - 1
        best = max(best, float(mu @ counts - penalty(required, counts, lam)))
    return best


def test_lemma1_equals_brute_force_with_ties():
    rng = np.random.default_rng(11)
    grid = np.arange(9) / 8.0  # exact binary fractions: gaps can equal λ exactly
    ties = 0
    for _ in range(300):
        k = int(rng.integers(1, 5))
        T = int(rng.integers(1, 31 if k <= 3 else 19))
        mu = rng.choice(grid, k)
        lam = rng.choice(grid[:7], k) if rng.random() < 0.5 else np.full(k, rng.choice(grid[:7]))
        kind = rng.integers(4)
        if kind == 0:
            f_mu = rng.dirichlet(np.ones(k)) * rng.uniform(0, 1)
        elif kind == 1:
            f_mu = MonotoneCartesianFairness(1.0 / k)(mu)
        elif kind == 2:
            f_mu = SoftmaxFairness(float(rng.uniform(-3, 3)))(mu)
        else:
            f_mu = np.full(k, 1.0 / k)
        ties += int(np.any(np.isclose(mu.max() - mu, lam) & (mu < mu.max())))
        expected = _brute_force(mu, f_mu, lam, T)
        assert optimal_utility(mu, f_mu, lam, T) == pytest.approx(expected, abs=1e-9)
        for rule in ("pull", "skip"):  # the indifferent case: both are optimal
            counts = lemma1_counts(mu, f_mu, lam, T, indifferent=rule)
            assert counts.sum() == T and counts.min() >= 0
            value = mu @ counts - penalty(requirements(f_mu, T), counts, lam)
            assert value == pytest.approx(expected, abs=1e-9)
    assert ties >= 30


# -- range oracles -----------------------------------------------------------------------------


def _grid_range(f, lower, upper, points=11):
    axes = [np.linspace(lo, up, points) for lo, up in zip(lower, upper, strict=True)]
    cloud = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(lower))
    values = f(cloud)
    return values.max(axis=0) - values.min(axis=0)


FACTORIES = {
    "softmax1": lambda k: SoftmaxFairness(1.0),
    "softmax3": lambda k: SoftmaxFairness(3.0),
    "softmax-2": lambda k: SoftmaxFairness(-2.0),
    "linear": lambda k: MonotoneCartesianFairness(1 / k),
    "square": lambda k: MonotoneCartesianFairness(1 / k, power=2.0),
    "constant": lambda k: ConstantFairness((1 / k,) * k),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_range_oracles_equal_grid_and_vertex_search(name):
    rng = np.random.default_rng(3)
    for _ in range(40):
        k = int(rng.integers(2, 5))
        fairness = FACTORIES[name](k)
        a, b = rng.random(k), rng.random(k)
        lower, upper = np.minimum(a, b), np.maximum(a, b)
        exact = fairness.range(lower, upper)
        # the grid contains every vertex, where these functions attain max and min
        np.testing.assert_allclose(exact, _grid_range(fairness, lower, upper), atol=1e-12)


def test_numerical_fallback_never_overstates_and_is_close():
    exact_f = SoftmaxFairness(2.0)
    fallback = CallableFairness(exact_f.__call__)
    rng = np.random.default_rng(9)
    for _ in range(10):
        a, b = rng.random(3), rng.random(3)
        lower, upper = np.minimum(a, b), np.maximum(a, b)
        exact, approx = exact_f.range(lower, upper), fallback.range(lower, upper)
        assert np.all(approx <= exact + 1e-12)
        np.testing.assert_allclose(approx, exact, atol=1e-6)


def test_softmax_lipschitz_constant_holds():
    f = SoftmaxFairness(3.0)
    rng = np.random.default_rng(0)
    x, y = rng.random((2000, 5)), rng.random((2000, 5))
    ratio = np.abs(f(x) - f(y)).sum(axis=1) / np.abs(x - y).sum(axis=1)
    assert ratio.max() <= f.lipschitz + 1e-12


# -- validation ---------------------------------------------------------------------------------


def too_much(mu):
    return np.full(np.shape(mu), 0.6)


def out_of_range(mu):
    return np.full(np.shape(mu), 1.5)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"fairness": "tests.test_opportunity:too_much"}, r"Σ f\(μ\)_i must be ≤ 1"),
        ({"fairness": "tests.test_opportunity:out_of_range"}, r"f\(μ\) must lie in \[0, 1\]"),
        ({"transfer_cost": -0.1}, "transfer_cost"),
        ({"transfer_cost": [0.1, 0.2]}, "one value or one per arm"),
        ({"fairness": "fairest"}, "unknown fairness function"),
    ],
)
def test_invalid_fairness_policies(env, message):
    with pytest.raises(SpecError, match=message):
        ExperimentSpec.create(
            name="x",
            horizons=[10],
            policies=[{"kind": "srum"}],
            environments=[{"kind": "opportunity", "means": [0.2, 0.5, 0.9], **env}],
        )


def test_policies_need_the_fairness_policy_and_constant_f(tmp_path):
    from impactbandits.experiments.cells import expand

    spec = ExperimentSpec.create(
        name="x",
        horizons=[10],
        policies=[{"kind": "srum"}],
        environments=[{"kind": "bernoulli", "means": [0.2, 0.5]}],
    )
    with pytest.raises(SpecError, match="reward-opportunity environment"):
        run_experiment(spec, tmp_path, backend="serial")
    spec = ExperimentSpec.create(
        name="y",
        horizons=[10],
        policies=[{"kind": "const-elimination"}],
        environments=[{"kind": "opportunity", "means": [0.2, 0.5], "fairness": "linear"}],
    )
    # refused while the spec is expanded (each policy is reset once), before a store exists
    with pytest.raises(SpecError, match=r"policies\[0\]\.kind: .*constant fairness"):
        expand(spec)
    with pytest.raises(SpecError, match="constant fairness"):
        run_experiment(spec, tmp_path / "y", backend="serial")
    assert not (tmp_path / "y").exists()


# -- algorithms -------------------------------------------------------------------------------


def test_srum_with_zero_transfer_cost_is_the_black_box(tmp_path):
    """λ = 0: no arm has LCB(Δ) < 0, so phases 1–3 are empty and UCB1 plays every round
    (the paper's observation for Figure 2a); the pulls equal plain UCB1's."""
    table = _one(
        dict(
            environments=[
                {
                    "kind": "opportunity",
                    "means": [0.2, 0.5, 0.8],
                    "fairness": "softmax",
                    "transfer_cost": 0.0,
                }
            ],
            policies=[{"kind": "srum"}, {"kind": "ucb1"}],
            horizons=[2000],
            seeds=3,
        ),
        tmp_path,
    )
    srum, ucb = table[table.policy == "srum"], table[table.policy == "ucb1"]
    assert (srum["phase_4"] == 1.0).all()
    np.testing.assert_array_equal(
        srum[["pulls_0", "pulls_1", "pulls_2"]].to_numpy(),
        ucb[["pulls_0", "pulls_1", "pulls_2"]].to_numpy(),
    )


def test_srum_alpha_rules():
    from impactbandits.core.random import BatchRNG
    from impactbandits.envs.opportunity import OpportunityBandit
    from impactbandits.policies.opportunity import SelfRegulatedUtilityMaximization as SRUM

    space = OpportunityBandit([0.2, 0.5, 0.8, 0.9], "softmax", 0.4).action_space
    T, K, L = 10_000, 4, 0.5
    scale = T ** (-1 / 3) * math.log(T) ** (1 / 3)
    for rule, factor in (("paper", K ** (2 / 3)), ("authors-code", K)):
        policy = SRUM(alpha_rule=rule)
        policy.reset(space, T, BatchRNG.from_key(0, (1,), [0]))
        assert policy._alpha == pytest.approx(factor * L ** (2 / 3) * scale)
        assert policy._beta == pytest.approx(scale)


def test_fa_etc_and_elimination_reach_the_optimum_on_the_worked_example(tmp_path):
    table = _one(
        dict(
            environments=[WORKED_EXAMPLE],
            policies=[{"kind": "fa-etc"}, {"kind": "const-elimination"}, {"kind": "srum"}],
            horizons=[20_000],
            seeds=4,
        ),
        tmp_path,
    )
    np.testing.assert_allclose(table["expected_utility"], 0.75 * 20_000, rtol=1e-3)


def test_authors_penalty_variant_uses_estimated_means(tmp_path):
    mu = np.array([0.3, 0.6, 0.9])
    env = {"kind": "opportunity", "means": mu.tolist(), "fairness": "linear", "transfer_cost": 0.8}
    table = _one(
        dict(
            environments=[env, {**env, "label": "estimated", "penalty": "estimated"}],
            policies=[{"kind": "ucb1"}],
            horizons=[3000],
            seeds=3,
        ),
        tmp_path,
    )
    pulls = table[["pulls_0", "pulls_1", "pulls_2"]].to_numpy()
    true_penalty = penalty(requirements(mu / 3, table["horizon"].to_numpy()), pulls, 0.8)
    recomputed = table["reward"].to_numpy() - true_penalty
    paper = (table.environment == "opportunity").to_numpy()
    np.testing.assert_allclose(table["utility"].to_numpy()[paper], recomputed[paper])
    assert not np.allclose(table["utility"].to_numpy()[~paper], recomputed[~paper])


def test_average_utility_approaches_the_optimum_at_quick_scale(tmp_path):
    """ron-fig1 --quick (T = 10³, 10⁴, 10⁵; 10 seeds). Stated tolerances: at T = 10⁵ every one
    of the nine fairness policies is within 0.12 of the optimal average utility; the gap never
    grows by more than 0.005 (noise) from T = 10³ to 10⁵, and shrinks by at least a third
    wherever it exceeded 0.05 at T = 10³."""
    figure = get_figure("ron-fig1")
    spec = figure.build(True)
    run_experiment(spec, tmp_path, backend="process", workers=2)
    table = tidy_table(tmp_path)
    table["gap"] = table["optimum"] / table["horizon"] - table["average_utility"]
    gaps = table.groupby(["environment", "horizon"], observed=True)["gap"].mean().unstack()
    assert len(gaps) == 9
    first, last = gaps[1_000], gaps[100_000]
    assert (last <= 0.12).all(), last
    assert (last <= first + 0.005).all()
    assert (last[first > 0.05] <= first[first > 0.05] * 2 / 3).all()
    assert figure.render(tmp_path)[0].stat().st_size > 5000


def test_ron_fig2_quick_writes_phase_shares(tmp_path):
    figure = get_figure("ron-fig2")
    spec = figure.build(True).replace(horizons=[1_000, 5_000], seeds=3)
    run_experiment(spec, tmp_path, backend="serial")
    table = tidy_table(tmp_path)
    shares = table[["phase_1", "phase_2", "phase_3", "phase_4"]].sum(axis=1)
    np.testing.assert_allclose(shares, 1.0)
    assert figure.render(tmp_path)[0].stat().st_size > 5000
