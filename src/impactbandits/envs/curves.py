"""Synthetic reward-curve families for rested bandits (Lindner et al. 2021; Heidari et al. 2016).

Every function returns an ``(N, length)`` array ``c`` with ``c[i, m-1] = f_i(m)``: the reward of
the m-th pull of arm i, for m = 1..length. Values are clipped to [0, 1] only where the paper's
family can leave it (documented per family). Data-derived families live in
:mod:`impactbandits.envs.fico` and :mod:`impactbandits.envs.recommender`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "INCREASING_FAMILIES",
    "SINGLE_PEAKED_INSTANCES",
    "constant_curves",
    "decreasing_curves",
    "increasing_curves",
    "increasing_limits",
    "single_peaked_curve",
    "single_peaked_curves",
]

#: Lindner et al. (2021) single-peaked instances (the fidelity ledger,
#: https://impactbandits.readthedocs.io/en/latest/fidelity/), per arm
#: ``(k1, k2, c1, c2, l, a)`` of ``f(t) = a·exp(−k1(t−l)) + (c2−c1)/(exp(−(k1+k2)(t−l)) + 1) + c1``.
#: Instance 3 is the paper's Figure 1.
SINGLE_PEAKED_INSTANCES: dict[int, tuple[tuple[float, ...], ...]] = {
    1: ((0.01, 0.001, 1.0, 0.05, 600.0, -0.0015), (0.009, 0.0009, 0.8, 0.1, 500.0, -0.005)),
    2: ((0.003, 0.001, 1.0, 0.05, 600.0, -0.0015), (0.011, 0.001, 0.8, 0.2, 400.0, -0.008)),
    3: ((0.01, 0.001, 1.0, 0.5, 600.0, -0.0015), (0.009, 0.0009, 0.8, 0.6, 500.0, -0.005)),
}

#: Heidari et al. (2016) increasing families as used by Lindner et al. (Figs 4–7).
INCREASING_FAMILIES = ("inc_1", "inc_2", "inc_3")


def _pulls(length: int) -> np.ndarray:
    if length < 1:
        raise ValueError(f"length must be positive, got {length}")
    return np.arange(1, length + 1, dtype=float)


def single_peaked_curve(params: Sequence[float], length: int) -> np.ndarray:
    """``f(t) = a·exp(−k1(t−l)) + (c2−c1)/(exp(−(k1+k2)(t−l)) + 1) + c1``, clipped to [0, 1].

    The exponent is clipped to avoid overflow far before the peak (where the clip to [0, 1]
    decides the value anyway).
    """
    k1, k2, c1, c2, shift, a = (float(x) for x in params)
    t = _pulls(length)
    first = a * np.exp(np.clip(-k1 * (t - shift), -700.0, 700.0))
    second = (c2 - c1) / (np.exp(np.clip(-(k1 + k2) * (t - shift), -700.0, 700.0)) + 1.0)
    return np.clip(first + second + c1, 0.0, 1.0)


def single_peaked_curves(
    instance: int | None = None,
    params: Sequence[Sequence[float]] | None = None,
    length: int = 20_000,
) -> np.ndarray:
    """The curves of one of Lindner et al.'s instances (1–3) or of explicit parameter tuples."""
    if (instance is None) == (params is None):
        raise ValueError("give either an instance number or explicit params")
    rows = SINGLE_PEAKED_INSTANCES[instance] if instance is not None else params
    return np.stack([single_peaked_curve(p, length) for p in rows])  # type: ignore[union-attr]


def increasing_curves(family: str, alpha: float, length: int = 10_000) -> np.ndarray:
    """Heidari et al.'s increasing families (Lindner et al. Figs 4–7; the fidelity ledger,
    https://impactbandits.readthedocs.io/en/latest/fidelity/).

    * ``inc_1``: f1 = 1 − t^−0.5, f2 = 0.5 − 0.5·t^−α
    * ``inc_2``: f1 = min(1, t/1000), f2 = min(0.5, 0.5·(t/1000)^α)
    * ``inc_3``: f1 = 1 − t^−0.1, f2 as inc_1

    All values already lie in [0, 1]; note f(1) = 0 for the ``1 − t^−x`` curves.
    """
    t = _pulls(length)
    inc1_second = 0.5 - 0.5 * t ** (-alpha)
    if family == "inc_1":
        rows = (1.0 - t**-0.5, inc1_second)
    elif family == "inc_2":
        rows = (np.minimum(1.0, t / 1000.0), np.minimum(0.5, 0.5 * (t / 1000.0) ** alpha))
    elif family == "inc_3":
        rows = (1.0 - t**-0.1, inc1_second)
    else:
        raise ValueError(f"unknown increasing family {family!r}; allowed: {INCREASING_FAMILIES}")
    return np.stack(rows)


def increasing_limits(family: str, alpha: float) -> np.ndarray:
    """The asymptotes a_i = lim_{t→∞} f_i(t) of :func:`increasing_curves` (the arms' "true
    potential", Patil et al. 2023 §2), in closed form for α > 0: 1 − t^−x → 1 and
    min(1, t/1000) → 1 for the first arm; 0.5 − 0.5·t^−α → 0.5 and min(0.5, 0.5·(t/1000)^α) →
    0.5 for the second. The same for every family, and not the curves' last values (inc_1 with
    α = 0.5 at t = 2·10⁴: 0.9929 and 0.4965)."""
    if family not in INCREASING_FAMILIES:
        raise ValueError(f"unknown increasing family {family!r}; allowed: {INCREASING_FAMILIES}")
    if alpha <= 0:
        raise ValueError(f"alpha must be positive, got {alpha}")
    return np.array([1.0, 0.5])


def constant_curves(means: Sequence[float], length: int) -> np.ndarray:
    """Stationary arms as rested curves: f_i(m) = μ_i."""
    return np.tile(np.asarray(means, dtype=float)[:, None], (1, length))


def decreasing_curves(
    start: Sequence[float], end: Sequence[float], rate: Sequence[float], length: int
) -> np.ndarray:
    """Rotting arms: ``f_i(m) = end_i + (start_i − end_i)·exp(−rate_i·(m − 1))`` (start ≥ end)."""
    t = _pulls(length)[None, :] - 1.0
    s, e, r = (np.asarray(x, dtype=float)[:, None] for x in (start, end, rate))
    return e + (s - e) * np.exp(-r * t)
