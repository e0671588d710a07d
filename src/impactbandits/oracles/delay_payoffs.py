"""Delay-dependent payoffs (B2DEP): Eq. 1 and the ranking policies.

Paper: Cella & Cesa-Bianchi, "Stochastic Bandits with Delay-Dependent Payoffs", AISTATS 2020,
Sections 3 and 5. The model, its conventions and the paper's examples are described in
:mod:`impactbandits.oracles.delay`, which re-exports every name here. This module holds what a
B2DEP instance ``(mu, d, f)`` determines directly: the checked instance (:func:`f_table`), the
payoffs of Eq. 1 (:func:`payoff`), and the ranking policies ``π_m`` (:func:`ranking_order`,
:func:`ranking_values` / :func:`ranking_value`, :func:`ghost`, :func:`r0`,
:func:`ranking_schedule`). Moved unchanged from ``impactbandits.oracles.delay``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from impactbandits.errors import SpecError
from impactbandits.oracles.delay_graph import _as_delays

__all__ = [
    "TIE_TOL",
    "FLike",
    "f_table",
    "ghost",
    "payoff",
    "r0",
    "ranking_order",
    "ranking_schedule",
    "ranking_value",
    "ranking_values",
]

FLike = Callable[[int], float] | Sequence[float] | np.ndarray
"""``f`` as a callable ``f(τ)`` or the array ``(f(1), …, f(L))`` (entry 0 is ``f(1)``)."""

TIE_TOL = 1e-12
"""Absolute tolerance for ties: ``g(m)`` in :func:`ghost`, payoffs in
:func:`~impactbandits.oracles.delay_schedules.greedy_schedule`, schedule values in
:func:`~impactbandits.oracles.delay_schedules.best_periodic_schedule`."""


# ---------------------------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------------------------


def _as_mu(mu: Any) -> np.ndarray:
    array = np.asarray(mu, dtype=float)
    if array.ndim != 1 or array.size < 1:
        raise SpecError("mu", f"need a 1-D array with ≥ 1 arm, got shape {array.shape}")
    if not np.all(np.isfinite(array)) or np.any(array < 0) or np.any(array > 1):
        raise SpecError("mu", f"baseline means must lie in [0, 1]; got {array.tolist()}")
    return array


def f_table(f: FLike, max_tau: int) -> np.ndarray:
    """The table ``t`` with ``t[0] = 0`` and ``t[τ] = f(τ)`` for ``τ = 1..max_tau``.

    ``f`` is a callable ``f(τ)`` or an array-like ``(f(1), f(2), …)`` of length ≥ ``max_tau``
    (entry 0 is ``f(1)``; extra entries are ignored). Values must lie in [0, 1].
    """
    if max_tau < 0:
        raise SpecError("f", f"max_tau must be ≥ 0; got {max_tau}")
    if callable(f):
        values = np.array([float(f(tau)) for tau in range(1, max_tau + 1)], dtype=float)
    else:
        given = np.asarray(f, dtype=float)
        if given.ndim != 1:
            raise SpecError(
                "f", f"need a callable or a 1-D array (f(1), f(2), …); got {given.shape}"
            )
        if given.size < max_tau:
            raise SpecError(
                "f", f"need f(1..{max_tau}) (entry 0 is f(1)); got only {given.size} values"
            )
        values = given[:max_tau]
    if not np.all(np.isfinite(values)) or np.any(values < 0) or np.any(values > 1):
        raise SpecError("f", f"values must lie in [0, 1]; got f(1..{max_tau}) = {values.tolist()}")
    return np.concatenate(([0.0], values))


def _instance(mu: Any, delays: Any, f: FLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    means = _as_mu(mu)
    lags = _as_delays(delays, means.size)
    return means, lags, f_table(f, int(lags.max()))


def _arm_payoffs(
    mu: np.ndarray, delays: np.ndarray, table: np.ndarray, arms: np.ndarray, tau: np.ndarray
) -> np.ndarray:
    """Eq. 1 for arms ``arms`` at delays ``tau`` (same shape; any τ ≥ 0 allowed)."""
    tau = np.asarray(tau)
    penalised = (tau > 0) & (tau <= delays[arms])
    return mu[arms] * (1.0 - np.where(penalised, table[np.minimum(tau, table.size - 1)], 0.0))


# ---------------------------------------------------------------------------------------------
# Eq. 1 and ranking policies (Section 5)
# ---------------------------------------------------------------------------------------------


def payoff(mu: Any, delays: Any, f: FLike, tau: Any) -> np.ndarray:
    """Expected payoffs ``mu_i(τ_i)`` of Eq. 1, vectorised over leading axes.

    ``tau`` has shape ``(..., k)`` (one delay per arm; any integers ``≥ 0``: ``0`` means never
    pulled, values above ``d_i`` pay the full ``mu_i``). Returns an array of the same shape.
    """
    means, lags, table = _instance(mu, delays, f)
    taus = np.asarray(tau)
    if taus.shape[-1:] != means.shape or taus.dtype.kind not in "iu" or np.any(taus < 0):
        raise SpecError("tau", f"need nonnegative integers of shape (..., {means.size})")
    return _arm_payoffs(means, lags, table, np.arange(means.size), taus)


def ranking_order(mu: Any) -> np.ndarray:
    """Arm indices by decreasing baseline mean (stable: ties keep the smaller index first)."""
    return np.argsort(-_as_mu(mu), kind="stable")


def ranking_values(mu: Any, delays: Any, f: FLike) -> np.ndarray:
    """``[g(1), …, g(k)]`` with ``g(m) = (1/m) Σ_{j≤m} mu_(j)(m)`` (Section 5, before Eq. 3).

    ``mu_(1) ≥ … ≥ mu_(k)`` is the :func:`ranking_order`. ``g(m)`` is the *long-run* per-round
    reward of ``π_m``: in steady state every arm is met at delay ``m``; the first cycle (which
    pays ``Σ_{j≤m} mu_(j)``, all arms fresh) only adds ``O(1)`` to ``G_T`` (proof of Theorem 2).
    """
    means, lags, table = _instance(mu, delays, f)
    order = np.argsort(-means, kind="stable")
    k = means.size
    ms = np.arange(1, k + 1)
    arms = np.broadcast_to(order, (k, k))  # row m-1: all arms in rank order
    pay = _arm_payoffs(means, lags, table, arms, np.broadcast_to(ms[:, None], (k, k)))
    included = np.arange(k)[None, :] < ms[:, None]
    return np.where(included, pay, 0.0).sum(axis=1) / ms


def ranking_value(
    mu: Any, delays: Any, f: FLike, m: int | Sequence[int] | np.ndarray
) -> float | np.ndarray:
    """``g(m)`` (a float for an int ``m``, an array for an array of ``m``), ``1 ≤ m ≤ k``."""
    values = ranking_values(mu, delays, f)
    ms = np.asarray(m)
    if ms.dtype.kind not in "iu" or np.any(ms < 1) or np.any(ms > values.size):
        raise SpecError("m", f"must be integers in 1..{values.size}; got {ms.tolist()}")
    out = values[ms - 1]
    return float(out) if out.ndim == 0 else out


def ghost(mu: Any, delays: Any, f: FLike) -> tuple[int, float]:
    """``(r*, g(r*))`` of ``π_ghost`` (Eq. 3): the best ranking policy.

    Ties (``g(m)`` within :data:`TIE_TOL` of the maximum) go to the smallest ``m``.
    """
    values = ranking_values(mu, delays, f)
    best = int(np.flatnonzero(values >= values.max() - TIE_TOL)[0])
    return best + 1, float(values[best])


def r0(mu: Any, delays: Any, f: FLike) -> int:
    """``r_0`` of Theorem 2, on the :func:`ranking_order`.

    ``r_0`` is the largest ``r`` with ``mu_i > max_{j<i} mu_j(i − j)`` for all ``i = 2..r``
    (strict, exact float comparison), and ``r_0 = 1`` if ``mu_2 ≤ mu_1(1)`` or ``k = 1``. With
    distinct means it is the number of rounds during which ``π_greedy`` keeps pulling fresh arms
    in rank order (the remark after Theorem 2).
    """
    means, lags, table = _instance(mu, delays, f)
    order = np.argsort(-means, kind="stable")
    means, lags = means[order], lags[order]
    k = means.size
    i = np.arange(k)[:, None]
    j = np.arange(k)[None, :]
    gap = np.maximum(i - j, 0)
    earlier = _arm_payoffs(means, lags, table, np.broadcast_to(j, (k, k)), gap)
    best_earlier = np.where(j < i, earlier, -np.inf).max(axis=1)  # row 0: -inf
    ok = means[1:] > best_earlier[1:]
    return 1 + (int(np.argmin(ok)) if not ok.all() else k - 1)


def ranking_schedule(mu: Any, policies: Sequence[int]) -> tuple[int, ...]:
    """One period of the schedule playing ``π_{m_1}`` for one cycle, then ``π_{m_2}``, ….

    ``policies = (m_1, m_2, …)``; ``π_m`` cycles over the ``m`` best arms in rank order. Arm
    indices are the caller's. Fact 1 (Section 8): alternating two optimal ranking policies
    ``π_m, π_n`` — ``ranking_schedule(mu, (n, m))`` — beats playing either one.
    """
    order = ranking_order(mu)
    ms = [int(m) for m in policies]
    if not ms or any(m < 1 or m > order.size for m in ms):
        raise SpecError("policies", f"need ranking sizes in 1..{order.size}; got {list(policies)}")
    return tuple(int(arm) for m in ms for arm in order[:m])
