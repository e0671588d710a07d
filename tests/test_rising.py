"""Rising bandits (Metelli et al. 2022): instances, the restless environment and its oracle,
R-ed-UCB / R-less-UCB against plain references."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from impactbandits.core import EnvironmentRandom
from impactbandits.core.policy import BatchedSimplePolicy
from impactbandits.envs.restless import RestlessBandit
from impactbandits.envs.rising import RestlessRisingBandit, RisingBandit, rising_curves
from impactbandits.errors import SpecError
from impactbandits.oracles.rested import optimal_allocation_oracle
from impactbandits.oracles.restless import best_arm_per_round
from impactbandits.policies.rising import RedUCB, RlessUCB
from impactbandits.registry import build_policy

from .reference_rising import ReferenceAuthorsRisingUCB, ReferenceRisingUCB
from .simulation import run_batch

REPS = list(range(6))


def _run(policy, env, rounds, reps=REPS, seed=5):
    return run_batch(policy, env, rounds, reps=reps, seed=seed, env_key=41, policy_key=42)


def _envs():
    return [
        RisingBandit("random", length=400, seed=1, scale=300),
        RisingBandit("random", length=400, seed=7, scale=2000, noise="gaussian", sigma=0.1),
        RestlessRisingBandit("random", length=400, seed=3, scale=500),
        RisingBandit("15-arms", length=400),
    ]


@pytest.mark.parametrize("env", _envs(), ids=["rested-beta", "rested-gauss", "restless", "15"])
@pytest.mark.parametrize(
    ("params", "cls"),
    [({}, RedUCB), ({"epsilon": 0.3, "alpha": 2.0, "sigma": 0.05}, RlessUCB)],
    ids=["defaults", "other-params"],
)
def test_paper_index_equals_plain_reference(env, params, cls):
    fast = _run(cls(**params), env, 400)
    slow = _run(BatchedSimplePolicy(ReferenceRisingUCB(**params)), env, 400)
    np.testing.assert_array_equal(fast.pulls, slow.pulls)
    np.testing.assert_array_equal(fast.reward, slow.reward)


@pytest.mark.parametrize("env", _envs(), ids=["rested-beta", "rested-gauss", "restless", "15"])
def test_authors_code_variant_equals_plain_reference(env):
    fast = _run(RedUCB(variant="authors-code"), env, 400)
    slow = _run(BatchedSimplePolicy(ReferenceAuthorsRisingUCB()), env, 400)
    np.testing.assert_array_equal(fast.pulls, slow.pulls)
    np.testing.assert_array_equal(fast.reward, slow.reward)


@pytest.mark.parametrize("variant", ["paper", "authors-code"])
def test_replications_do_not_depend_on_the_batch(variant):
    env = RisingBandit("random", length=600, seed=2, scale=400)
    whole = _run(RedUCB(variant=variant), env, 600, reps=range(6))
    alone = _run(RedUCB(variant=variant), env, 600, reps=[4])
    np.testing.assert_array_equal(whole.pulls[4:5], alone.pulls)
    np.testing.assert_array_equal(whole.reward[4:5], alone.reward)


def test_sample_tables_grow_past_their_initial_capacity():
    # an anytime run of 2,500 rounds: the per-round tables (initially 256 rounds) double 4 times
    env = RisingBandit("2-arms", length=2500, noise="gaussian", sigma=0.01)
    fast = _run(RedUCB(), env, 2500, reps=[0, 1])
    slow = _run(BatchedSimplePolicy(ReferenceRisingUCB()), env, 2500, reps=[0, 1])
    np.testing.assert_array_equal(fast.pulls, slow.pulls)
    assert fast.pulls[:, -1].max() > 1024


def test_instances_match_values_worked_by_hand():
    fifteen = rising_curves("15-arms", 7000)
    # arm 2: 0.73 (1 − e^{−3·162/162}) at x = 162
    assert fifteen[2, 162] == pytest.approx(0.73 * (1 - math.exp(-3)), rel=1e-12)
    # arm 4 (ρ = 1): 0.48 (1 − 144 / (x + 144)) = 0.24 at x = 144
    assert fifteen[4, 144] == pytest.approx(0.24, rel=1e-12)
    # arm 12 crosses 1 where (x + 85^1.25)^0.8 = 85 · 1.08 / 0.08, i.e. x ≈ 6454.1
    crossing = (85 * 1.08 / 0.08) ** 1.25 - 85**1.25
    assert fifteen[12, math.floor(crossing)] < 1.0 < fifteen[12, math.ceil(crossing)]
    two = rising_curves("2-arms", 30_000)
    assert two[0, 500] == pytest.approx(0.2)  # 0.4 (1 − 50000 / 100000)
    assert two[1, 12_500] == pytest.approx(0.5) and two[1, 25_000] == 1.0


@pytest.mark.parametrize("seed", range(6))
def test_random_instances_are_rising_and_concave(seed):
    curves = rising_curves("random", 3000, seed=seed)
    assert 2 <= curves.shape[0] <= 15
    assert (curves >= 0).all() and (curves <= 1).all()
    assert (np.diff(curves, axis=1) >= -1e-12).all()
    assert (np.diff(curves, 2, axis=1) <= 1e-12).all()
    assert not np.array_equal(curves, rising_curves("random", 3000, seed=seed + 1))


def test_restless_rewards_follow_the_round_not_the_pulls():
    env = RestlessBandit([[0.1, 0.2, 0.3, 0.4], [0.9, 0.8, 0.7, 0.6]])
    env.reset(EnvironmentRandom(0, 1, [0, 1]))
    seen = [env.step(np.array([0, 1])).expected.tolist() for _ in range(4)]
    assert seen == [[0.1, 0.9], [0.2, 0.8], [0.3, 0.7], [0.4, 0.6]]
    with pytest.raises(SpecError, match="round 4"):
        env.step(np.array([0, 0]))


def test_restless_oracle_is_the_best_of_all_action_sequences():
    rng = np.random.default_rng(3)
    curves = rng.random((3, 6))
    env = RestlessBandit(curves.tolist())
    env.reset(EnvironmentRandom(0, 1, [0]))
    oracle = best_arm_per_round(env, np.arange(7))[0]
    for horizon in range(7):  # brute force over all 3^T action sequences
        best = max(
            (sum(curves[a, t] for t, a in enumerate(seq)) for seq in
             itertools.product(range(3), repeat=horizon)),
            default=0.0,
        )  # fmt: skip
        assert oracle[horizon] == pytest.approx(best)


def test_rested_rising_optimum_is_the_best_single_arm():
    # non-decreasing rested rewards: pulling one arm throughout is optimal (Heidari et al. 2016)
    env = RisingBandit("15-arms", length=5000, noise="none")
    env.reset(EnvironmentRandom(0, 1, [0]))
    times = np.array([1, 10, 100, 1000, 5000])
    single = np.cumsum(env.curves, axis=1)[:, times - 1].max(axis=0)
    np.testing.assert_allclose(optimal_allocation_oracle(env, times)[0], single, rtol=1e-12)


def test_beta_mean_observations_have_the_curve_as_mean():
    env = RestlessBandit([[0.3] * 4000, [0.8] * 4000], noise="beta-mean")
    env.reset(EnvironmentRandom(9, 1, [0]))
    seen = np.array([env.step(np.array([i % 2])).feedback.reward[0] for i in range(4000)])
    low, high = seen[0::2], seen[1::2]
    assert ((seen >= 0) & (seen <= 1)).all()
    # Beta(βμ/(1−μ), β), β = 2: sd ≤ 0.2, so 2,000 draws give a mean within 0.015 (> 3 s.e.)
    assert low.mean() == pytest.approx(0.3, abs=0.015)
    assert high.mean() == pytest.approx(0.8, abs=0.015)


def test_bad_parameters_name_the_field():
    with pytest.raises(SpecError, match="epsilon"):
        build_policy("r-ed-ucb", {"epsilon": 0.7})
    with pytest.raises(SpecError, match="instance"):
        rising_curves("3-arms", 10)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="sigma"):
        RestlessBandit([[0.5]], noise="gaussian")


@pytest.mark.parametrize("variant", ["paper", "authors-code"])
def test_metelli_figure_at_quick_scale(tmp_path, variant):
    from impactbandits import run_experiment, tidy_table
    from impactbandits.experiments.figures import get_figure

    figure = get_figure("metelli-synthetic")
    spec = figure.spec(quick=True, variant=variant)
    run_experiment(spec, tmp_path, backend="serial")
    table = tidy_table(tmp_path)
    cells = table.groupby(["environment", "policy"], observed=True).size()
    assert cells.loc[("15 arms, rested", "R-ed-UCB")] == spec.seeds
    assert cells.loc[("15 arms, restless", "R-less-UCB")] == spec.seeds
    assert ("15 arms, restless", "R-ed-UCB") not in cells.index
    assert table["regret"].notna().all()
    optimum = table.groupby("environment", observed=True)["optimum"].max()
    # the same 15 arms: Σ_t max_i μ_i(t) (restless) ≥ max_i Σ_t μ_i(t) (rested)
    assert optimum["15 arms, restless"] > optimum["15 arms, rested"]
    pngs = figure.render(tmp_path)
    assert len(pngs) == 3 and all(p.stat().st_size > 5000 for p in pngs)


@pytest.mark.parametrize(
    "env_spec",
    [
        (
            "restless",
            {"curves": [[0.1, 0.5, 0.9] * 200, [0.4] * 600], "noise": "gaussian", "sigma": 0.1},
        ),
        ("restless", {"curves": [[0.1, 0.5, 0.9] * 200, [0.4] * 600], "noise": "beta-mean"}),
        ("rising-restless", {"instance": "15-arms", "length": 600}),
        ("rising-restless", {"instance": "2-arms", "length": 600, "variant": "authors-code"}),
    ],
    ids=["restless-gaussian", "restless-beta-mean", "rising-restless", "rising-restless-authors"],
)
@pytest.mark.parametrize("policy", ["ucb1", "kl-ucb", "sw-ts"])
def test_restless_arms_run_compiled_with_the_readable_numbers(env_spec, policy):
    """A restless environment's pull model reads the means by round (its noise by pull): the
    compiled loop gives the readable loop's numbers bit for bit (the authors-code variant of
    the rising restless bandit advances its arms by pulls, as the rested model does)."""
    pytest.importorskip("numba")
    from impactbandits.registry import build_environment, build_policy
    from impactbandits.testing import check_compiled_step

    assert check_compiled_step(
        lambda: build_policy(policy, {}), lambda: build_environment(*env_spec), rounds=500
    )
