"""Exact optimal-allocation oracle for rested bandits (``impactbandits.oracles.allocation``).

Every method is checked against brute-force enumeration on many small random instances of each
curve family, and the special methods against the general DP on larger ones. Instances are drawn
from fixed seeds; values on a coarse grid (quarters) make ties and flat stretches common.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from impactbandits.oracles import allocation
from impactbandits.oracles.allocation import (
    METHODS,
    Allocation,
    _monotone_row_argmax,
    detect_shape,
    optimal_allocation,
)

N_SMALL_INSTANCES = 500
MAX_SMALL_ARMS = 4
MAX_SMALL_HORIZON = 40
N_LARGE_INSTANCES = 12
LARGE_HORIZONS = (200, 2000)
REL_TOL = 1e-12
ABS_TOL = 1e-13
GRID_STEPS = 4  # grid values k / GRID_STEPS: frequent ties

Generator = Callable[[np.random.Generator, int, int], np.ndarray]


# --- curve families ------------------------------------------------------------------------------


def _values(rng: np.random.Generator, size: int) -> np.ndarray:
    """Values in [0, 1]: on a coarse grid (many ties) or continuous, at random."""
    if rng.random() < 0.5:
        return rng.integers(0, GRID_STEPS + 1, size=size) / GRID_STEPS
    return rng.random(size)


def arbitrary_curves(rng: np.random.Generator, n_arms: int, horizon: int) -> np.ndarray:
    return np.stack([_values(rng, horizon) for _ in range(n_arms)]) if horizon else _empty(n_arms)


def increasing_curves(rng: np.random.Generator, n_arms: int, horizon: int) -> np.ndarray:
    return np.sort(arbitrary_curves(rng, n_arms, horizon), axis=1)


def decreasing_curves(rng: np.random.Generator, n_arms: int, horizon: int) -> np.ndarray:
    return -np.sort(-arbitrary_curves(rng, n_arms, horizon), axis=1)


def _peak_index(rng: np.random.Generator, horizon: int) -> int:
    """0-based peak position; the ends (peak at the first or the last pull) are over-weighted."""
    draw = rng.random()
    if draw < 0.2:
        return 0
    if draw < 0.4:
        return horizon - 1
    return int(rng.integers(0, horizon))


def _rising(rng: np.random.Generator, length: int, concave: bool) -> np.ndarray:
    """Nondecreasing values in [0, 1]; concave ones have nonincreasing (possibly zero) steps."""
    if not concave:
        return np.sort(_values(rng, length))
    steps = -np.sort(-_values(rng, length))
    start = _values(rng, 1)[0] * rng.random()
    total = start + steps.sum()
    scale = 1.0 if total <= 1.0 else 1.0 / total
    return (start + np.cumsum(steps)) * scale


def single_peaked_curves(rng: np.random.Generator, n_arms: int, horizon: int) -> np.ndarray:
    """Rising (concave or arbitrary), then falling below the peak; flats and ties included."""
    if horizon == 0:
        return _empty(n_arms)
    rows = []
    for _ in range(n_arms):
        peak = _peak_index(rng, horizon)
        rising = _rising(rng, peak + 1, concave=bool(rng.random() < 0.5))
        falling = -np.sort(-_values(rng, horizon - peak - 1)) * rising[-1]
        if rng.random() < 0.3:  # a plateau at the peak value
            falling[: int(rng.integers(0, falling.size + 1))] = rising[-1]
            falling = -np.sort(-falling)
        rows.append(np.concatenate([rising, falling]))
    return np.stack(rows)


def _empty(n_arms: int) -> np.ndarray:
    return np.zeros((n_arms, 0))


FAMILIES: dict[str, tuple[Generator, tuple[str, ...]]] = {
    "general": (arbitrary_curves, ("general", "auto")),
    "increasing": (increasing_curves, ("increasing", "single-peaked", "general", "auto")),
    "decreasing": (decreasing_curves, ("decreasing", "single-peaked", "general", "auto")),
    "single-peaked": (single_peaked_curves, ("single-peaked", "general", "auto")),
}
FAMILY_SEEDS = {"general": 11, "increasing": 12, "decreasing": 13, "single-peaked": 14}


# --- helpers -------------------------------------------------------------------------------------


def cumulative(curves: np.ndarray) -> np.ndarray:
    out = np.zeros((curves.shape[0], curves.shape[1] + 1))
    np.cumsum(curves, axis=1, out=out[:, 1:])
    return out


def check_allocation(curves: np.ndarray, result: Allocation, expected: np.ndarray) -> None:
    """Shapes, valid counts that achieve the values, and values equal to ``expected``."""
    n_arms, horizon = curves.shape
    assert result.values.shape == (horizon + 1,)
    assert result.counts.shape == (horizon + 1, n_arms)
    assert result.counts.dtype == np.int64
    assert np.all(result.counts >= 0)
    np.testing.assert_array_equal(result.counts.sum(axis=1), np.arange(horizon + 1))
    totals = cumulative(curves)
    achieved = np.zeros(horizon + 1)
    for arm in range(n_arms):
        achieved += totals[arm, result.counts[:, arm]]
    np.testing.assert_array_equal(achieved, result.values)
    np.testing.assert_allclose(result.values, expected, rtol=REL_TOL, atol=ABS_TOL)


def valid_for(curves: np.ndarray, method: str) -> bool:
    try:
        optimal_allocation(curves, method)
    except ValueError:
        return False
    return True


# --- exactness against brute force ---------------------------------------------------------------


@pytest.mark.parametrize("family", list(FAMILIES))
def test_methods_match_enumeration_on_small_instances(family: str) -> None:
    generate, methods = FAMILIES[family]
    rng = np.random.default_rng(FAMILY_SEEDS[family])
    for _ in range(N_SMALL_INSTANCES):
        n_arms = int(rng.integers(1, MAX_SMALL_ARMS + 1))
        horizon = int(rng.integers(0, MAX_SMALL_HORIZON + 1))
        curves = generate(rng, n_arms, horizon)
        assert family == "general" or detect_shape(curves) != "general"
        reference = optimal_allocation(curves, "enumerate")
        check_allocation(curves, reference, reference.values)
        for method in methods:
            result = optimal_allocation(curves, method)
            check_allocation(curves, result, reference.values)
            if method == "auto":
                assert result.method in METHODS and result.method != "auto"
                assert valid_for(curves, result.method)
            else:
                assert result.method == method


@pytest.mark.parametrize("family", ["increasing", "decreasing", "single-peaked"])
def test_special_methods_match_general_dp_on_larger_instances(family: str) -> None:
    generate, methods = FAMILIES[family]
    rng = np.random.default_rng(100 + FAMILY_SEEDS[family])
    for _ in range(N_LARGE_INSTANCES):
        n_arms = int(rng.integers(2, MAX_SMALL_ARMS + 1))
        horizon = int(rng.integers(*LARGE_HORIZONS, endpoint=True))
        curves = generate(rng, n_arms, horizon)
        reference = optimal_allocation(curves, "general")
        check_allocation(curves, reference, reference.values)
        for method in methods:
            check_allocation(curves, optimal_allocation(curves, method), reference.values)


def test_single_peaked_with_late_and_early_peaks_matches_general_dp() -> None:
    """Smooth, strictly single-peaked arms peaking at the first pull, mid-way and the last pull."""
    horizon = 1500
    pulls = np.arange(1, horizon + 1)
    curves = np.stack(
        [
            0.9 * np.exp(-pulls / 300),
            np.minimum(pulls / 700, 1) * np.exp(-np.maximum(pulls - 700, 0) / 900),
            0.3 + 0.6 * np.sqrt(pulls / horizon),
            np.where(pulls <= 40, pulls / 40, np.maximum(1 - (pulls - 40) / 100, 0.05)),
        ]
    )
    assert detect_shape(curves) == "single-peaked"
    reference = optimal_allocation(curves, "general")
    check_allocation(curves, optimal_allocation(curves, "single-peaked"), reference.values)


def test_general_dp_in_many_small_blocks_matches_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    curves = arbitrary_curves(rng, 3, 300)
    whole = optimal_allocation(curves, "general")
    monkeypatch.setattr(allocation, "_DP_BLOCK_ENTRIES", 2_000)  # blocks of 6 rows
    check_allocation(curves, optimal_allocation(curves, "general"), whole.values)


def test_monotone_row_argmax_matches_brute_force() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        n_problems = int(rng.integers(1, 4))
        tail_steps = -np.sort(-_values(rng, int(rng.integers(0, 30))))
        tail = np.concatenate([[0.0], np.cumsum(tail_steps)])
        heads = [np.cumsum(_values(rng, int(rng.integers(1, 30)))) for _ in range(n_problems)]
        n_rows = np.array([head.size + tail.size - 1 for head in heads])
        picks = _monotone_row_argmax(heads, tail, n_rows)
        for head, rows, pick in zip(heads, n_rows, picks, strict=True):
            table = np.full((rows, head.size), -np.inf)
            for m in range(head.size):
                table[m : m + tail.size, m] = head[m] + tail
            chosen = head[pick] + tail[np.arange(rows) - pick]
            np.testing.assert_allclose(chosen, table.max(axis=1), rtol=REL_TOL, atol=ABS_TOL)


# --- paper facts and API -------------------------------------------------------------------------


def test_increasing_curves_put_every_pull_on_one_arm() -> None:
    """Heidari et al. (2016): with nondecreasing rewards a single arm is optimal at every h."""
    rng = np.random.default_rng(21)
    for _ in range(200):
        curves = increasing_curves(rng, int(rng.integers(1, 6)), int(rng.integers(1, 300)))
        for method in ("increasing", "auto"):
            counts = optimal_allocation(curves, method).counts
            assert np.all(np.count_nonzero(counts, axis=1) <= 1)


def test_decreasing_curves_follow_the_greedy_policy() -> None:
    """Heidari et al. (2016): with nonincreasing rewards, greedy (best next reward) is optimal."""
    curves = np.array([[0.9, 0.5, 0.5, 0.1], [0.7, 0.6, 0.2, 0.0]])
    result = optimal_allocation(curves, "decreasing")
    np.testing.assert_array_equal(result.counts, [[0, 0], [1, 0], [1, 1], [1, 2], [2, 2]])
    np.testing.assert_allclose(result.values, [0.0, 0.9, 1.6, 2.2, 2.7])


@pytest.mark.parametrize(
    ("method", "curves", "arm", "index"),
    [
        ("increasing", [[0.1, 0.2, 0.3], [0.1, 0.3, 0.2]], 1, 2),
        ("decreasing", [[0.3, 0.2, 0.1], [0.3, 0.2, 0.1], [0.5, 0.4, 0.45]], 2, 2),
        ("single-peaked", [[0.1, 0.5, 0.2, 0.1], [0.2, 0.1, 0.3, 0.1]], 1, 2),
        ("single-peaked", [[0.1, 0.5, 0.5, 0.2, 0.2, 0.3]], 0, 5),
    ],
)
def test_special_method_on_wrong_shape_raises_naming_arm_and_index(
    method: str, curves: list[list[float]], arm: int, index: int
) -> None:
    with pytest.raises(ValueError, match=rf"arm {arm} .*index {index}\b") as caught:
        optimal_allocation(np.array(curves), method)
    assert "\n" not in str(caught.value)


def test_auto_falls_back_to_general_for_arbitrary_curves() -> None:
    curves = np.array([[0.1, 0.9, 0.2, 0.8], [0.5, 0.5, 0.5, 0.5]])
    assert detect_shape(curves) == "general"
    assert optimal_allocation(curves).method == "general"
    wiggle = np.array([[0.1, 0.5, 0.3, np.nextafter(0.3, 1.0)]])  # one-ulp rise after the peak
    assert detect_shape(wiggle) == "general"


def test_auto_picks_the_most_specific_shape() -> None:
    assert detect_shape(np.array([[0.5, 0.5], [0.1, 0.2]])) == "increasing"
    assert detect_shape(np.array([[0.5, 0.4], [0.2, 0.2]])) == "decreasing"
    assert detect_shape(np.array([[0.5, 0.4], [0.1, 0.2]])) == "single-peaked"
    horizon = 5000
    pulls = np.arange(1, horizon + 1)
    curves = np.stack(
        [np.minimum(pulls / 100, 1.2 - pulls / 500).clip(0, 1), 0.5 * np.ones(horizon)]
    )
    assert optimal_allocation(curves).method == "single-peaked"


def test_edge_cases_and_result_contract() -> None:
    empty = optimal_allocation(np.zeros((3, 0)))
    np.testing.assert_array_equal(empty.values, [0.0])
    np.testing.assert_array_equal(empty.counts, np.zeros((1, 3), dtype=np.int64))
    one_arm = np.array([[0.2, 0.9, 0.1]])
    for method in ("general", "single-peaked", "enumerate", "auto"):
        result = optimal_allocation(one_arm, method)
        np.testing.assert_allclose(result.values, [0.0, 0.2, 1.1, 1.2])
        np.testing.assert_array_equal(result.counts[:, 0], np.arange(4))
    result = optimal_allocation([[0.3, 0.2], [0.25, 0.25]])
    assert not result.values.flags.writeable and not result.counts.flags.writeable
    with pytest.raises(ValueError, match="method"):
        optimal_allocation(one_arm, "greedy")
    with pytest.raises(ValueError, match="finite"):
        optimal_allocation(np.array([[0.1, np.nan]]))
    with pytest.raises(ValueError, match="2-D"):
        optimal_allocation(np.array([0.1, 0.2]))
    with pytest.raises(ValueError, match="enumerate"):
        optimal_allocation(np.zeros((6, 200)), "enumerate")
