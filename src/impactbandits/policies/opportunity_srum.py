"""SRUM's compiled step (Ron, Ben-Porat & Shalit 2021, "Corporate Social Responsibility via
Multi-Armed Bandits", Algorithm 2; full version Algorithm 4): the rounds of
:class:`~impactbandits.policies.opportunity.SelfRegulatedUtilityMaximization` for one
replication, operation for operation, in the compiled loop's step protocol
(:mod:`impactbandits.core.compiled`).

* ``select``: phases 1–2 pull every arm once per cycle; phase 3 the first arm with
  N_i < ⌊T f(μ̂)_i⌋; phase 4 the black box. The black box selects every round (as the readable
  form asks it every round), on its own round counter.
* ``update``: the counts and sums; the black box learns every round; at the end of a cycle in
  phase 1 or 2, :func:`_advance` re-tests Lines 5–7 with the confidence radius
  c_i = √(2 ln T / N_i), LCB/UCB(Δ_i) = μ̂_{j*} − μ̂_i ∓ 2c_i and the box
  C_t = Π [μ̂_i − c_i, μ̂_i + c_i], all clipped to [0, 1], against λ ± β and α; when phase 3's
  requirements are met, phase 4 begins and (paper variant) the black box is restarted: its
  state refilled from a fresh ``init`` (:func:`~impactbandits.core.compiled.refill`) and its
  round counter set back.
* ``variant = "authors-code"`` as data (``params[_AUTHORS]``): Line 5's test LCB(Δ_j) ≤
  max(0, λ_j − β) and UCB(Δ_j) ≥ min(1, λ_j + β) for λ_j > 0, phase 2's range ≥ α, gap bounds of
  width c_i + c_{j*}, and the black box not restarted.

The black box is any discrete policy whose compiled step draws nothing (its ``init``,
``select`` and ``update`` are bound to ``inner_init``, ``inner_select`` and ``inner_update``),
the range oracle and f the fairness function's compiled form
(:class:`~impactbandits.oracles.opportunity_fairness.CompiledFairness`, bound to
``fairness_range`` and ``fairness_value``): the loop binds those names
(:attr:`~impactbandits.core.compiled.CompiledStep.bound`). Checked against the readable form,
bit for bit, in the tests.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impactbandits.core.compiled import kernel, refill
from impactbandits.oracles.opportunity import FLOOR_TOLERANCE

__all__ = ["srum_init", "srum_params", "srum_phase", "srum_select", "srum_update"]

#: Positions in the step's parameters: α, β, 2 ln max(T, 2), T, the variant (1: the authors'),
#: the initial phase (0..3 for phases 1..4), the number of the fairness function's parameters;
#: then λ (K), the initial requirements (K), the fairness function's parameters, the black box's.
_ALPHA, _BETA, _SCALE_LOG, _HORIZON, _AUTHORS, _PHASE, _FAIRNESS = range(7)
_HEAD = 7

# the kernels the loop binds (CompiledStep.bound); never called as module globals
inner_init: Any = None
inner_select: Any = None
inner_update: Any = None
fairness_value: Any = None
fairness_range: Any = None


def srum_params(
    alpha: float,
    beta: float,
    scale_log: float,
    horizon: int,
    authors: bool,
    phase: int,
    lam: np.ndarray,
    targets: np.ndarray,
    fairness: np.ndarray,
    black_box: np.ndarray,
) -> np.ndarray:
    """The step's parameters (the ``_*`` positions)."""
    head = [alpha, beta, scale_log, float(horizon), float(authors), float(phase), fairness.size]
    return np.concatenate([np.array(head, dtype=np.float64), lam, targets, fairness, black_box])


@kernel(inline=True)
def _fairness_start(params: np.ndarray, k: int) -> int:
    return _HEAD + 2 * k


@kernel(inline=True)
def _black_box_start(params: np.ndarray, k: int) -> int:
    return _HEAD + 2 * k + int(params[_FAIRNESS])


@kernel
def srum_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """(phase, cycle, the black box's round, the rounds), the counts and sums, the
    requirements, six rows of scratch, a corner and a work row, the black box's state."""
    ints = np.zeros(4, dtype=np.int64)
    ints[0] = int(params[_PHASE])
    ints[3] = rounds
    targets = params[_HEAD + k : _HEAD + 2 * k].copy()
    black_box = inner_init(params[_black_box_start(params, k) :], k, rounds)
    scratch = np.empty((6, k)), np.empty(k), np.empty(k)
    return ints, np.zeros(k), np.zeros(k), targets, scratch, black_box


@kernel
def srum_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """The arm of the round: the cycle's, the first arm below its requirement (argmax of
    N < R: arm 0 when none), or the black box's, which selects every round."""
    ints, counts, _, targets, _, black_box = state
    k = counts.size
    ints[2] += 1
    arm = inner_select(black_box, params[_black_box_start(params, k) :], ints[2], u)
    phase = ints[0]
    if phase <= 1:
        return ints[1]
    if phase == 2:
        for i in range(k):
            if counts[i] < targets[i]:
                return i
        return 0
    return arm


@kernel
def srum_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """The estimates and the black box learn the round; a cycle's end re-tests the phase
    (:func:`_advance`); phase 3 ends when every requirement is met."""
    ints, counts, sums, targets, scratch, black_box = state
    k = counts.size
    inner_params = params[_black_box_start(params, k) :]
    counts[arm] += 1.0
    sums[arm] += reward
    inner_update(black_box, inner_params, ints[2], arm, reward)  # it sees every round
    authors = params[_AUTHORS] != 0.0
    phase = ints[0]
    if phase <= 1:
        ints[1] += 1
        if ints[1] == k:
            ints[1] = 0
            start = _fairness_start(params, k)
            fp = params[start : start + int(params[_FAIRNESS])]
            phase = _advance(phase, counts, sums, targets, params[_HEAD : _HEAD + k],
                             params[_ALPHA], params[_BETA], params[_SCALE_LOG],
                             params[_HORIZON], fp, scratch, authors)  # fmt: skip
    if phase == 2:  # _finish_phase3: every requirement met
        done = True
        for i in range(k):
            if counts[i] < targets[i]:
                done = False
                break
        if done:
            phase = 3
            if not authors:  # restarted (the authors' black box keeps phases 1-3)
                refill(black_box, inner_init(inner_params, k, ints[3]))
                ints[2] = 0
    ints[0] = phase


@kernel
def srum_phase(state: Any, params: np.ndarray) -> int:
    """The phase of the round just selected: 0..3 for phases 1..4."""
    return state[0][0]


@kernel(inline=True)
def _clip01(x: float) -> float:
    """``np.clip(x, 0.0, 1.0)``: min(max(x, 0), 1) as NumPy orders it (signed zeros too)."""
    x = x if x > 0.0 else 0.0
    return x if x < 1.0 else 1.0


@kernel(inline=True)
def _approximating(lcb: float, ucb: float, lam: float, beta: float, authors: bool) -> bool:
    """Line 5's test for one arm (phase 1 goes on while it holds for some arm): UCB(Δ) > λ + β
    and LCB(Δ) < λ − β; ``authors``: their ``approx_delta``, λ > 0 and LCB(Δ) ≤ max(0, λ − β)
    and UCB(Δ) ≥ min(1, λ + β)."""
    if authors:
        return lam > 0.0 and lcb <= max(0.0, lam - beta) and ucb >= min(1.0, lam + beta)
    return ucb > lam + beta and lcb < lam - beta


@kernel
def _advance(
    phase: int,
    counts: np.ndarray,
    sums: np.ndarray,
    targets: np.ndarray,
    lam: np.ndarray,
    alpha: float,
    beta: float,
    scale_log: float,
    horizon: float,
    fp: np.ndarray,
    scratch: tuple[np.ndarray, np.ndarray, np.ndarray],
    authors: bool,
) -> int:
    """``SelfRegulatedUtilityMaximization._advance`` at the end of a cycle (phase 0 or 1,
    every arm pulled): the phase it moves to; fills ``targets`` when phase 3 starts (index 2).
    ``fp``: the fairness function's parameters."""
    buffers, corner, work = scratch
    k = counts.size
    mu, radius, lcb = buffers[0], buffers[1], buffers[2]
    lower, upper, spread = buffers[3], buffers[4], buffers[5]
    best = 0
    for i in range(k):
        mu[i] = sums[i] / counts[i] if counts[i] > 0 else 0.0
        radius[i] = math.sqrt(scale_log / counts[i])
        if mu[i] > mu[best]:
            best = i
    stay1 = False
    for i in range(k):
        gap = mu[best] - mu[i]
        width = radius[i] + radius[best] if authors else 2.0 * radius[i]
        lcb[i] = _clip01(gap - width)
        ucb = _clip01(gap + width)
        lower[i] = _clip01(mu[i] - radius[i])
        upper[i] = _clip01(mu[i] + radius[i])
        if _approximating(lcb[i], ucb, lam[i], beta, authors):
            stay1 = True
    fairness_range(fp, lower, upper, spread, corner, work)
    stay2 = False
    for i in range(k):
        variable = spread[i] >= alpha if authors else spread[i] > alpha
        if variable and lcb[i] < lam[i]:
            stay2 = True
    if phase == 0 and stay1:
        return 0
    if stay2:
        return 1
    fairness_value(fp, mu, spread, work)  # f(μ̂), μ̂ as means() gives it
    for i in range(k):
        targets[i] = np.floor(spread[i] * horizon + FLOOR_TOLERANCE) if lcb[i] < lam[i] else 0.0
    return 2
