"""Data-derived reward curves of Lindner et al. (2021): FICO credit lending and the recommender."""

from __future__ import annotations

import numpy as np
import pytest

from impactbandits.envs.fico import (
    FICO_GROUPS,
    FICO_KINDS,
    FICO_MAX,
    FICO_MIN,
    N_APPLICANTS,
    fico_curves,
    load_fico_tables,
    repay_probability,
    sample_applicants,
    transrisk_to_fico,
)
from impactbandits.envs.recommender import (
    RECOMMENDER_SELECTED_INSTANCES,
    RECOMMENDER_TMAX,
    _rescale,
    recommender_curves,
    recommender_instance,
    recommender_parameters,
)
from impactbandits.errors import SpecError

SEEDS = range(5)


def _after_peak_rise(row: np.ndarray) -> float:
    """Total upward movement after the (first) maximum."""
    steps = np.diff(row[int(np.argmax(row)) :])
    return float(steps[steps > 0].sum())


def _before_peak_drop(row: np.ndarray) -> float:
    """Total downward movement before the (first) maximum."""
    steps = np.diff(row[: int(np.argmax(row)) + 1])
    return float(-steps[steps < 0].sum())


# --- TransRisk → FICO mapping --------------------------------------------------------------


def test_score_mapping_endpoints_knots_and_monotone() -> None:
    assert transrisk_to_fico(0.0) == FICO_MIN
    assert transrisk_to_fico(100.0) == FICO_MAX
    # Cumulative shares of the rows before each score (see the docstring's table).
    knots = [0, 2.1, 6.3, 11.7, 18.2, 26.1, 35.7, 47.7, 61.5, 78.5, 94.3, 100]
    np.testing.assert_allclose(transrisk_to_fico(knots), np.arange(300, 851, 50), atol=1e-9)
    grid = np.linspace(0.0, 100.0, 2001)
    assert np.all(np.diff(transrisk_to_fico(grid)) > 0)
    # Linear between knots: the midpoint of the 700 bin (61.5 .. 78.5) maps to 725.
    assert transrisk_to_fico(70.0) == pytest.approx(725.0)
    with pytest.raises(SpecError):
        transrisk_to_fico([-0.5])
    with pytest.raises(SpecError):
        transrisk_to_fico(100.5)


def test_tables_on_fico_scale() -> None:
    tables = load_fico_tables()
    assert tables.scores.shape == (198,)
    assert tables.cdf.shape == tables.repay.shape == (4, 198)
    assert tables.scores[0] == FICO_MIN and tables.scores[-1] == FICO_MAX
    assert np.all(np.diff(tables.scores) > 0)
    assert np.all(np.diff(tables.cdf, axis=1) >= 0)
    np.testing.assert_allclose(tables.cdf[:, -1], 1.0)
    assert np.all((tables.repay > 0) & (tables.repay < 1))
    assert set(tables.totals) == set(FICO_GROUPS)
    # p(s) = 1 − default%/100 at the table's scores; linear in between.
    white = FICO_GROUPS.index("White")
    np.testing.assert_allclose(repay_probability(tables.scores, "White"), tables.repay[white])
    mid = 0.5 * (tables.scores[10] + tables.scores[11])
    expected = 0.5 * (tables.repay[white, 10] + tables.repay[white, 11])
    assert repay_probability(mid, "White") == pytest.approx(expected)


def test_inverse_cdf_sampling() -> None:
    tables = load_fico_tables()
    for g, group in enumerate(FICO_GROUPS):
        scores = sample_applicants(group, 2000, np.random.default_rng(7))
        assert np.all(np.diff(scores) <= 0)  # best first
        assert scores.min() >= FICO_MIN and scores.max() <= FICO_MAX
        # F(F⁻¹(u)) = u above the mass sitting at the lowest score.
        u = np.random.default_rng(7).random(2000)
        back = np.interp(scores, tables.scores, tables.cdf[g])
        above = np.sort(u)[::-1] > tables.cdf[g, 0]
        np.testing.assert_allclose(back[above], np.sort(u)[::-1][above], atol=1e-12)
    with pytest.raises(SpecError):
        sample_applicants("Martian", 10, np.random.default_rng(0))


# --- FICO curves -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", FICO_KINDS)
def test_fico_curves_shape_range_and_tail(kind: str) -> None:
    curves, groups = fico_curves(kind, horizon=2000, seed=0)
    assert groups == ["Asian", "Black", "Hispanic", "White"]
    assert curves.shape == (4, 2000) and curves.dtype == float
    assert np.all(np.isfinite(curves))
    assert curves.min() >= 0.0 and curves.max() <= 1.0
    np.testing.assert_allclose(curves[:, :N_APPLICANTS].max(axis=1), 1.0)
    assert np.all(curves[:, N_APPLICANTS:] == 0.0)
    # Rescaled over all applicants: a shorter horizon is a prefix of a longer one.
    short, _ = fico_curves(kind, horizon=300, seed=0)
    np.testing.assert_array_equal(short, curves[:, :300])
    small, _ = fico_curves(kind, horizon=50, seed=0, n_applicants=20)
    assert np.all(small[:, 20:] == 0.0) and np.all(small[:, :20].max(axis=1) == 1.0)


@pytest.mark.parametrize("kind", FICO_KINDS)
def test_fico_curves_seeded(kind: str) -> None:
    first, _ = fico_curves(kind, horizon=1000, seed=3)
    again, _ = fico_curves(kind, horizon=1000, seed=3)
    other, _ = fico_curves(kind, horizon=1000, seed=4)
    np.testing.assert_array_equal(first, again)
    assert not np.allclose(first, other)


def test_fico_pipeline_matches_formulas() -> None:
    """Recompute the score-change and utility curves from the stated formulas."""
    seed = 11
    rng = np.random.default_rng(seed)
    score_change, _ = fico_curves("score_change", horizon=N_APPLICANTS, seed=seed)
    utility, _ = fico_curves("bank_utility", horizon=N_APPLICANTS, seed=seed)
    for i, group in enumerate(FICO_GROUPS):  # groups drawn in order from one generator
        s = sample_applicants(group, N_APPLICANTS, rng)
        p = repay_probability(s, group)
        raw = p * (np.minimum(s + 75, 850) - s) + (1 - p) * (np.maximum(s - 150, 300) - s)
        np.testing.assert_allclose(score_change[i], np.clip(raw / raw.max(), 0, 1), atol=1e-12)
        bank = 5 * p - 4
        np.testing.assert_allclose(utility[i], np.clip(bank / bank.max(), 0, 1), atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_score_change_single_peaked(seed: int) -> None:
    """Observed over seeds 0–199: no drop at all before the peak (at m ≈ 105–165 Asian, 23–60
    Black, 37–73 Hispanic, 133–200 White). After it the curves only fall, except the Asian
    curve's gentle rise of ≈ 0.04 over m ≈ 300–460 (its default rate rises with the score between
    FICO ≈ 695 and 725) and, for any group, the last applicant or two within a few points of 300,
    which tick up by ≤ 0.055 (Asian; ≤ 0.016 for the others): there a default cannot push the
    score below 300. Total upward movement after the peak ≤ 0.093."""
    curves, _ = fico_curves("score_change", horizon=N_APPLICANTS, seed=seed)
    for row in curves:
        peak = int(np.argmax(row))
        assert 0 < peak < 250
        assert row[0] < 0.5
        assert _before_peak_drop(row) < 1e-9
        assert _after_peak_rise(row) < 0.1
        assert np.all(row[-100:] < 0.06)  # lending to the weakest applicants is worthless


@pytest.mark.parametrize("seed", SEEDS)
def test_bank_utility_nearly_decreasing(seed: int) -> None:
    """Observed (seeds 0–4): the best applicant is worth most; the total upward movement is
    ≈ 0.06 for Asian (m ≈ 300–470) and ≈ 0.05 for Black (m ≈ 12–45), 0 for the others."""
    curves, _ = fico_curves("bank_utility", horizon=N_APPLICANTS, seed=seed)
    for g, row in enumerate(curves):
        assert row[0] == 1.0
        rise = _after_peak_rise(row)
        assert rise < 0.1
        if FICO_GROUPS[g] in ("Hispanic", "White"):
            assert rise == 0.0


def test_fico_invalid_inputs() -> None:
    with pytest.raises(SpecError):
        fico_curves("profit", horizon=10)  # type: ignore[arg-type]
    with pytest.raises(SpecError):
        fico_curves(horizon=0)
    with pytest.raises(SpecError):
        fico_curves(n_applicants=0)


# --- recommender system ---------------------------------------------------------------------


def _reference_recommender(v: float, n: float, gamma: float, c: float, horizon: int) -> list[float]:
    """A plain loop from REPRODUCTION.md §1, independent of the library's implementation."""
    x = [0.0]
    for j in range(1, horizon):
        x.append(x[-1] + n * gamma**j - c * (x[-1] - v))
    shift = -min(min(x), 0.0)
    scale = max(max(x), 1.0)
    return [(value + shift) / scale for value in x]


def test_recommender_recursion_matches_plain_loop() -> None:
    horizon = 400
    for seed in (0, 5):
        curves = recommender_curves(n_arms=3, horizon=horizon, seed=seed)
        for row, (v, n, gamma, c) in zip(curves, recommender_parameters(3, seed), strict=True):
            expected = _reference_recommender(v, n, gamma, c, horizon)
            np.testing.assert_allclose(row, expected, rtol=1e-12, atol=1e-15)


def test_recommender_parameter_draw_order() -> None:
    """Generator sampler, arm by arm: U1, U2, U3, U4, then the uniform deciding B (B = 0 iff it
    is below 0.2). The legacy (authors') order is tested in tests/test_lindner_instances.py."""
    seed, n_arms = 17, 6
    rng = np.random.default_rng(seed)
    params = recommender_parameters(n_arms, seed, "generator")
    for arm in range(n_arms):
        u1, u2, u3, u4, u5 = (rng.random() for _ in range(5))
        b = 0.0 if u5 < 0.2 else 0.5
        np.testing.assert_allclose(params[arm], [b * u1, 0.5 * u2, 0.9 + 0.1 * u3, 0.2 * u4])
    many = recommender_parameters(2000, 0, "generator")
    assert np.all((many[:, 0] >= 0) & (many[:, 0] < 0.5))
    assert np.all((many[:, 1] >= 0) & (many[:, 1] < 0.5))
    assert np.all((many[:, 2] >= 0.9) & (many[:, 2] < 1.0))
    assert np.all((many[:, 3] >= 0) & (many[:, 3] < 0.2))
    assert np.mean(many[:, 0] == 0.0) == pytest.approx(0.2, abs=0.03)


@pytest.mark.parametrize("seed", SEEDS)
def test_recommender_curves_properties(seed: int) -> None:
    curves = recommender_curves(horizon=RECOMMENDER_TMAX, seed=seed)
    assert curves.shape == (4, RECOMMENDER_TMAX)
    assert np.all(np.isfinite(curves))
    assert curves.min() >= 0.0 and curves.max() <= 1.0
    assert np.all(curves[:, 0] == 0.0)  # first pull gives x_0 = 0
    for row in curves:
        assert _after_peak_rise(row) < 1e-12  # single-peaked: once falling, always falling
        assert _before_peak_drop(row) < 1e-12


def test_recommender_rescaling() -> None:
    """Arms whose raw peak exceeds 1 are divided by it; the others keep their raw values."""
    seed = 2
    curves = recommender_curves(horizon=RECOMMENDER_TMAX, seed=seed)
    for row, (v, n, gamma, c) in zip(curves, recommender_parameters(4, seed), strict=True):
        raw = np.zeros(RECOMMENDER_TMAX)
        for j in range(1, RECOMMENDER_TMAX):
            raw[j] = raw[j - 1] + n * gamma**j - c * (raw[j - 1] - v)
        assert raw.min() == 0.0  # never negative with these parameter ranges: no shift
        np.testing.assert_allclose(row, raw / max(raw.max(), 1.0), rtol=1e-12)
    peaks = curves.max(axis=1)
    assert np.any(peaks == 1.0) and np.any(peaks < 1.0)  # (paper's instance B) both kinds
    # The shift branch: −min(min x, 0) first, then divide by max(max x, 1) taken before it.
    np.testing.assert_allclose(
        _rescale(np.array([[-0.5, 0.5, 0.25], [0.0, 4.0, 2.0]])),
        [[0.0, 1.0, 0.75], [0.0, 1.0, 0.5]],
    )


def test_recommender_seeded() -> None:
    np.testing.assert_array_equal(recommender_curves(seed=9), recommender_curves(seed=9))
    assert not np.allclose(recommender_curves(seed=9), recommender_curves(seed=10))
    with pytest.raises(SpecError):
        recommender_curves(horizon=0)
    with pytest.raises(SpecError):
        recommender_instance("D")


def test_recommender_curves_memo_is_invisible() -> None:
    """Instances are memoised per process (every task builds its environment): a caller gets
    its own writable copy, so writing into it changes nothing another caller sees, and the
    value equals the uncached computation (parameters → recursion → rescaling)."""
    from impactbandits.envs.recommender import _rescale, recommender_sequences

    first = recommender_curves(seed=11, horizon=500)
    first[:] = -1.0
    second = recommender_curves(seed=11, horizon=500)
    assert second.flags.writeable and second is not first
    direct = _rescale(recommender_sequences(recommender_parameters(4, 11), 500))
    np.testing.assert_array_equal(second, direct)
    # arguments are checked before the memo, which would fail on unhashable ones
    for bad in ({"seed": [1]}, {"n_arms": [4]}, {"sampler": ["legacy"]}):
        with pytest.raises(SpecError):
            recommender_curves(**bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(RECOMMENDER_SELECTED_INSTANCES))
def test_recommender_selected_instances_show_novelty_trap(name: str) -> None:
    """The documented selection criteria of :data:`RECOMMENDER_SELECTED_INSTANCES`."""
    curves = recommender_instance(name, instance_set="selected")
    seed = RECOMMENDER_SELECTED_INSTANCES[name]
    np.testing.assert_array_equal(curves, recommender_curves(4, 3000, seed, "generator"))
    early, final, peak = curves[:, :100].mean(axis=1), curves[:, -1], curves.max(axis=1)
    early_winner, late_winner = int(np.argmax(early)), int(np.argmax(final))
    assert early_winner != late_winner
    assert final[late_winner] - final[early_winner] >= 0.2
    assert peak[early_winner] >= 0.7
    others = [i for i in range(4) if i != early_winner]
    assert any(peak[i] - final[i] >= 0.1 for i in others)
