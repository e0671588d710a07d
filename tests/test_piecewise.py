"""The piecewise-stationary bandit: its means by segment (by hand), its oracle, its compiled
pull model (means by round, noise by pull) and its errors."""

from __future__ import annotations

import numpy as np
import pytest

from impactbandits.core import EnvironmentRandom
from impactbandits.envs.piecewise import PiecewiseStationaryBandit
from impactbandits.errors import SpecError
from impactbandits.oracles.restless import best_arm_per_round
from impactbandits.policies import UCB1
from impactbandits.testing import check_compiled_step, check_environment

MEANS = [[0.3, 0.5, 0.9], [0.3, 0.2, 0.9], [0.7, 0.2, 0.1]]


def _env(**extra):
    return PiecewiseStationaryBandit(MEANS, [0, 100, 250], length=400, **extra)


def test_segments_start_after_their_change_point():
    env = _env(noise="gaussian", sigma=0.0)
    env.reset(EnvironmentRandom(1, 2, [0, 1]))
    seen = []
    for _ in range(400):
        seen.append(env.expected_rewards()[0].copy())
        env.step(np.array([0, 1]))
    seen = np.array(seen)
    # rounds 1..100 segment 0, 101..250 segment 1, 251..400 segment 2 (rows are rounds − 1)
    np.testing.assert_array_equal(seen[0], MEANS[0])
    np.testing.assert_array_equal(seen[99], MEANS[0])
    np.testing.assert_array_equal(seen[100], MEANS[1])
    np.testing.assert_array_equal(seen[249], MEANS[1])
    np.testing.assert_array_equal(seen[250], MEANS[2])


def test_oracle_is_the_sum_of_the_segments_best_means():
    env = _env()
    env.reset(EnvironmentRandom(1, 2, [0]))
    # 100 rounds of 0.9, 150 of 0.9, 150 of 0.7 (by hand)
    value = best_arm_per_round(env, np.array([100, 250, 400]))
    np.testing.assert_allclose(value[0], [90.0, 225.0, 330.0], rtol=1e-12)


def test_bernoulli_rewards_are_common_random_numbers_of_the_pull():
    a, b = _env(), _env()
    a.reset(EnvironmentRandom(4, 9, [0]))
    b.reset(EnvironmentRandom(4, 9, [0]))
    first = [float(a.step(np.array([2])).feedback.reward[0]) for _ in range(5)]
    b.step(np.array([0]))  # another arm first: arm 2's pulls see the same uniforms
    second = [float(b.step(np.array([2])).feedback.reward[0]) for _ in range(5)]
    assert first == second


@pytest.mark.parametrize("noise", ["bernoulli", "gaussian"])
def test_the_compiled_loop_reads_the_means_by_round(noise):
    pytest.importorskip("numba")
    assert check_compiled_step(UCB1, lambda: _env(noise=noise, sigma=0.2), rounds=400)


def test_contract():
    check_environment(_env)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"change_points": [1, 100, 250]}, "change_points"),
        ({"change_points": [0, 250, 100]}, "change_points"),
        ({"change_points": [0, 100]}, "change_points"),
        ({"change_points": [0, 100, 400]}, "change_points"),
        ({"means": [[0.3, 1.5], [0.1, 0.2], [0.4, 0.1]]}, "means"),
    ],
)
def test_bad_segments_name_their_field(params, field):
    args = {"means": MEANS, "change_points": [0, 100, 250], "length": 400, **params}
    with pytest.raises(SpecError) as error:
        PiecewiseStationaryBandit(**args)
    assert error.value.field == field


def test_the_figure_at_quick_scale(tmp_path):
    """``piecewise-stationary --quick`` runs every policy on both problems and renders; the
    optimum is Σ_t max_i μ_i(t), computed here by hand from the segments."""
    from impactbandits import run_experiment, tidy_table
    from impactbandits.experiments.figures import get_figure
    from impactbandits.experiments.papers.piecewise import PROBLEMS, QUICK_T

    figure = get_figure("piecewise-stationary")
    spec = figure.spec(quick=True)
    run_experiment(spec, tmp_path, backend="serial")
    table = tidy_table(tmp_path)
    assert table.groupby(["environment", "policy"], observed=True).size().min() == spec.seeds
    optimum = table.groupby("environment", observed=True)["optimum"].max()
    for name, means in PROBLEMS.items():  # five equal segments of QUICK_T / 5 rounds
        assert optimum[name] == pytest.approx(sum(max(m) for m in means) * QUICK_T / 5)
    pngs = figure.render(tmp_path)
    assert len(pngs) == 2 and all(p.stat().st_size > 5000 for p in pngs)
