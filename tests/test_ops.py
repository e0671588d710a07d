"""The library's defined operations (impactbandits.core.ops) against the C library as numba
calls it in a compiled step, and against sums written out left to right."""

from __future__ import annotations

import functools
import math
import operator

import numpy as np
import pytest

from impactbandits.core import ops
from impactbandits.oracles.opportunity_fairness import MonotoneCartesianFairness, SoftmaxFairness

SPECIAL = [0.0, -0.0, 1.0, -1.0, 709.0, 710.0, -745.0, -746.0, math.inf, -math.inf, math.nan]


def _inputs(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate(
        [-rng.exponential(5.0, 3000), rng.uniform(0.0, 1e4, 3000), rng.uniform(0, 1, 3000)]
    )


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bit for bit (nan where nan)."""
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


@pytest.fixture(scope="module")
def compiled():
    numba = pytest.importorskip("numba")

    @numba.njit(error_model="numpy")
    def apply(kind: int, x: np.ndarray, p: float) -> np.ndarray:
        out = np.empty_like(x)
        for i in range(x.size):
            if kind == 0:
                out[i] = math.exp(x[i])
            elif kind == 1:
                out[i] = math.log(x[i])
            else:
                out[i] = x[i] ** p
        return out

    return apply


def test_exp_and_log_are_the_compiled_steps(compiled):
    x = np.concatenate([_inputs(1), SPECIAL])
    assert _same(ops.exp(x), compiled(0, x, 0.0))
    y = np.concatenate([np.abs(_inputs(2)), np.arange(1.0, 20001.0), SPECIAL])
    with np.errstate(all="ignore"):
        assert _same(ops.log(y), compiled(1, y, 0.0))


@pytest.mark.parametrize("p", [2.0, 0.5, -1.0, 1.0, 1.7, 0.3, 3.0, -2.5])
def test_power_is_the_compiled_steps_including_numpys_shortcut_exponents(compiled, p):
    x = np.concatenate([np.abs(_inputs(3)), [0.0, 1.0, math.inf, math.nan, -2.0]])
    with np.errstate(all="ignore"):
        assert _same(ops.power(x, p), compiled(2, x, p))


def test_shapes_are_kept():
    x = np.linspace(-3, 3, 24).reshape(2, 3, 4)
    assert ops.exp(x).shape == ops.log(np.abs(x)).shape == ops.power(np.abs(x), 2.0).shape
    assert ops.exp(np.float64(0.5)).shape == ()
    assert ops.exp(x)[1, 2, 3] == math.exp(x[1, 2, 3])


@pytest.mark.parametrize("shape", [(1,), (7,), (8,), (9,), (130,), (1000,), (3, 129), (5, 1)])
def test_left_sum_adds_left_to_right(shape):
    rng = np.random.default_rng(len(shape) * 1000 + shape[-1])
    x = np.exp(rng.standard_normal(shape) * 8)
    rows = x.reshape(-1, shape[-1])
    expected = np.array([functools.reduce(operator.add, row.tolist()) for row in rows])
    assert np.array_equal(ops.left_sum(x).reshape(-1), expected)
    kept = ops.left_sum(x, keepdims=True)
    assert kept.shape == (*shape[:-1], 1)
    columns = ops.left_sum(np.moveaxis(x, -1, 0), axis=0)
    assert np.array_equal(columns.reshape(-1), expected)


def test_left_sum_of_an_empty_axis_is_zero():
    assert np.array_equal(ops.left_sum(np.zeros((2, 0))), np.zeros(2))


def test_left_sum_is_not_numpys_pairwise_order():
    """The point of the definition: on some inputs NumPy's pairwise sum gives other bits."""
    rng = np.random.default_rng(0)
    differs = 0
    for _ in range(200):
        x = np.exp(rng.standard_normal(64) * 8)
        differs += ops.left_sum(x) != x.sum()
    assert differs > 0


def test_fairness_functions_use_the_defined_operations():
    mu = np.random.default_rng(4).uniform(0, 1, (6, 5))
    soft = SoftmaxFairness(c=3.0)(mu)
    for row, values in zip(mu, soft, strict=True):
        e = [math.exp(3.0 * v - 3.0 * row.max()) for v in row]
        total = functools.reduce(operator.add, e)
        assert values.tolist() == [v / total for v in e]
    mono = MonotoneCartesianFairness(scale=0.2, power=1.7)(mu)
    assert mono.tolist() == [[0.2 * math.pow(v, 1.7) for v in row] for row in mu]
