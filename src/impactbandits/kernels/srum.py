"""SRUM on the reward-opportunity bandit inside a compiled loop (Ron, Ben-Porat & Shalit 2021,
"Corporate Social Responsibility via Multi-Armed Bandits", Algorithm 2; full version Algorithm 4).

:func:`_template` transcribes, operation for operation and per replication,

* :class:`~impactbandits.policies.opportunity.SelfRegulatedUtilityMaximization` (``select``,
  ``update``, ``_advance`` with the Lines 5–7 tests, ``_finish_phase3``): phases 1–2 pull
  every arm once per cycle and re-test after each full cycle with the confidence radius
  c_i = √(2 ln T / N_i) (:data:`~impactbandits.policies.opportunity.CONFIDENCE_SCALE` = 2),
  LCB/UCB(Δ_i) = μ̂_{j*} − μ̂_i ∓ 2c_i and the box C_t = Π [μ̂_i − c_i, μ̂_i + c_i], all clipped
  to [0, 1], against λ ± β and α (Theorem 2's α = K^{2/3} L^{2/3} T^{−1/3} ln^{1/3} T,
  β = T^{−1/3} ln^{1/3} T unless given: the values the policy resolved in ``reset``); phase 3
  pulls the first arm with N_i < ⌊T f(μ̂)_i⌋ (μ̂ frozen when it starts); phase 4 runs the black
  box, UCB1 (:class:`~impactbandits.policies.classic.UCB1`: paper variant, index
  x̄_i + √(c ln t / n_i), c = 2 by default; or its authors-code variant, min(1, x̄_i +
  √(c ln T / n_i))), which sees every round and is restarted when phase 4 begins;
* SRUM's ``variant = "authors-code"`` as data (``authors``), not as another copy of the loop:
  the phase-1 test LCB(Δ_j) ≤ max(0, λ_j − β) and UCB(Δ_j) ≥ min(1, λ_j + β) for λ_j > 0,
  phase 2's range ≥ α, gap bounds of width c_i + c_{j*}, and the black box *not* restarted in
  phase 4 (it keeps every pull of phases 1–3); α with K and L = |c| for softmax are resolved by
  the policy already;
* the range oracle of Line 6 and f itself: the fairness function's compiled form
  (:class:`~impactbandits.oracles.opportunity_fairness.CompiledFairness`, declared by the
  function's class: the built-in constant, monotone Cartesian and softmax functions, or a
  user's); :func:`srum_for` makes one copy of the loop per form, with its kernels bound to the
  names ``fairness_value`` and ``fairness_range`` (as :func:`~impactbandits.kernels.loop.
  loop_for` binds a policy's step); ⌊T f(μ̂)_i⌋ is
  :func:`~impactbandits.oracles.opportunity.requirements`;
* the environment's ``step`` through its pull model
  (:meth:`~impactbandits.envs.opportunity.OpportunityBandit.pull_model`: the reward of the m-th
  pull of arm i in replication r is 1{u < μ_i} (Bernoulli) or the Beta(μ_iκ, (1 − μ_i)κ)
  quantile of u, u the common uniform at (r, i, m); :func:`~impactbandits.kernels.noise.
  outcome`);
* :func:`~impactbandits.core.simulate.simulate`'s bookkeeping, phases and per-arm rewards
  included.

Everything is checked against ``simulate(..., compiled=False)``, bit for bit. Imported only when
numba is installed (:mod:`impactbandits.kernels`).
"""

from __future__ import annotations

import functools
import math
import types
from typing import Any

import numpy as np
from numba import njit
from numba.core.dispatcher import Dispatcher

from impactbandits.kernels.checkpoints import record
from impactbandits.kernels.codes import DONE, STOPPED
from impactbandits.kernels.loop import compile_kernel
from impactbandits.kernels.noise import outcome
from impactbandits.kernels.sources import builtin, srum_tag
from impactbandits.kernels.stop import stopped
from impactbandits.oracles.opportunity import FLOOR_TOLERANCE
from impactbandits.oracles.opportunity_fairness import CompiledFairness
from impactbandits.policies.classic import _ucb1_authors_select
from impactbandits.policies.ucb_buckets import full_argmax as _declared_argmax

__all__ = ["srum_for"]

# tests/test_kernels_srum.py compares everything with simulate(..., compiled=False), bit for bit.

#: UCB1's select (the black box's), compiled: the paper variant's argmax and the authors-code
#: variant's capped one
full_argmax = compile_kernel(_declared_argmax)
capped_argmax = compile_kernel(_ucb1_authors_select)

# names the templates leave to srum_for (module docstring); never called as module globals
fairness_value: Any = None
fairness_range: Any = None
advance: Any = None


@functools.cache
def _srum(value: Any, range_: Any) -> Dispatcher:
    tag = srum_tag(value, range_)
    scope = dict(
        _advance_template.__globals__,
        fairness_value=compile_kernel(value, inline=True),
        fairness_range=compile_kernel(range_, inline=True),
    )
    # a user's kernels are inlined: what they are inlined into is compiled with their bounds
    # checking
    users = not (builtin(value.py_func) and builtin(range_.py_func))
    # a name of its own per fairness form: numba names a compiled function by its qualified
    # name and a counter that restarts in every process, so two copies of the template both
    # called "advance" could resolve to one another's machine code when a loop compiled in one
    # process is loaded from the disk cache in another (the second fairness form of a process
    # then ran the first one's advance)
    advance_name = f"advance_{tag}" if tag is not None else f"advance_{id(value):x}"
    step = types.FunctionType(_advance_template.__code__, scope, advance_name)
    step.__qualname__ = advance_name
    advance_ = njit(nogil=True, error_model="numpy", boundscheck=users)(step)
    scope = dict(_template.__globals__, advance=advance_)
    name = f"run_srum_{tag}" if tag is not None else f"run_srum_{id(value):x}"
    function = types.FunctionType(_template.__code__, scope, name)
    function.__qualname__ = name
    return njit(cache=tag is not None, nogil=True, boundscheck=users)(function)


def srum_for(fairness: CompiledFairness) -> Dispatcher:
    """SRUM's compiled loop (:func:`_template`) with ``fairness``'s kernels, loaded from numba's
    disk cache when it was compiled before from the same sources."""
    return _srum(fairness.value, fairness.range)


@njit(cache=True, nogil=True)
def _clip01(x: float) -> float:
    """``np.clip(x, 0.0, 1.0)``: min(max(x, 0), 1) as NumPy orders it (signed zeros too)."""
    x = x if x > 0.0 else 0.0
    return x if x < 1.0 else 1.0


@njit(cache=True, nogil=True)
def _approximating(lcb: float, ucb: float, lam: float, beta: float, authors: int) -> bool:
    """Line 5's test for one arm (phase 1 goes on while it holds for some arm): UCB(Δ) > λ + β
    and LCB(Δ) < λ − β; ``authors``: their ``approx_delta``, λ > 0 and LCB(Δ) ≤ max(0, λ − β)
    and UCB(Δ) ≥ min(1, λ + β)."""
    if authors:
        return lam > 0.0 and lcb <= max(0.0, lam - beta) and ucb >= min(1.0, lam + beta)
    return ucb > lam + beta and lcb < lam - beta


# not cached on its own (as the kernels it calls): compiled into the loop, whose name covers its
# sources (:func:`~impactbandits.kernels.sources.srum_tag`)
@njit(nogil=True)
def _black_box(
    counts: np.ndarray, sums: np.ndarray, t: int, params: np.ndarray, capped: int
) -> int:
    """UCB1's ``select`` on the black box's own counts and sums at its round ``t``: the paper
    variant's argmax of x̄_i + √(c ln t / n_i) (``params[0]`` = c), or with ``capped`` the
    authors-code variant's capped one (``params[0]`` = c ln T)."""
    if capped:
        return capped_argmax((counts, sums), params, t, 0.0)
    return full_argmax(counts, sums, params[0] * math.log(t))


def _advance_template(
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
    buffers: np.ndarray,
    corner: np.ndarray,
    work: np.ndarray,
    authors: int,
) -> int:
    """``SelfRegulatedUtilityMaximization._advance`` for one replication at the end of a cycle
    (phase 0 or 1, every arm pulled): the phase it moves to; fills ``targets`` when phase 3
    starts (index 2; the caller then runs ``_finish_phase3``). ``fp``: the fairness function's
    parameters; ``authors``: the authors-code variant's tests and gap bounds."""
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


def _template(
    values: np.ndarray,
    noise: int,
    sigma: float,
    key: np.ndarray,
    replication_ids: np.ndarray,
    fp: np.ndarray,
    lam: np.ndarray,
    alpha: float,
    beta: float,
    scale_log: float,
    horizon: int,
    ucb_c: float,
    authors: int,
    ucb_authors: int,
    initial_phase: np.ndarray,
    initial_targets: np.ndarray,
    rounds: int,
    checkpoints: np.ndarray,
    out_reward: np.ndarray,
    out_expected: np.ndarray,
    out_pulls: np.ndarray,
    out_switches: np.ndarray,
    out_phases: np.ndarray,
    out_arm_rewards: np.ndarray,
    out_phase_switches: np.ndarray,
    stop: np.ndarray,
) -> int:
    """``rounds`` rounds of SRUM in every replication; writes the checkpoint summaries of
    :class:`~impactbandits.core.simulate.Trajectory` into the ``out_*`` arrays and returns
    :data:`~impactbandits.kernels.codes.DONE`, or :data:`~impactbandits.kernels.codes.STOPPED`
    early (the outputs unfinished) once ``stop[0]`` is set (:mod:`~impactbandits.kernels.stop`).

    ``values`` ``(R or 1, K, 1)``, ``noise``, ``sigma``, ``key``, ``replication_ids``: the
    environment's pull model, as the generic loop takes it (:func:`~impactbandits.kernels.loop.
    _template`).
    ``fp``: the fairness function's parameters (its kernels are bound by :func:`srum_for`);
    ``lam``, ``alpha``,
    ``beta``, ``scale_log`` = 2 ln max(T, 2), ``horizon`` T, UCB1's ``ucb_c`` (c, or c ln T for
    its authors-code variant, ``ucb_authors``) and SRUM's variant (``authors``): what the policy
    resolved in ``reset``, as are ``initial_phase`` ``(R,)`` (0..3 for phases 1..4) and
    ``initial_targets`` ``(R, K)`` (its ``_advance(initial=True)``)."""
    replications, k = replication_ids.size, values.shape[1]
    per_replication = values.shape[0] > 1
    n_cp = checkpoints.size
    t_float = float(horizon)
    buffers = np.empty((6, k))
    corner = np.empty(k)
    work = np.empty(k)
    ucb_params = np.array([ucb_c])
    for r in range(replications):
        if stopped(stop, 0):
            return STOPPED
        counts = np.zeros(k)
        sums = np.zeros(k)
        targets = initial_targets[r].copy()
        inner_counts = np.zeros(k)
        inner_sums = np.zeros(k)
        inner_t = 0
        phase = initial_phase[r]
        cycle = 0
        pulls = np.zeros(k, dtype=np.int64)
        arm_rewards = np.zeros(k)
        phase_counts = np.zeros(out_phases.shape[2], dtype=np.int64)
        reward = 0.0
        value = 0.0
        switches = 0
        phase_switches = 0
        previous = -1
        previous_phase = -1
        c = 0
        for t in range(1, rounds + 1):
            if stopped(stop, t):
                return STOPPED
            inner_t += 1  # the black box selects every round (its round counter)
            if phase <= 1:
                a = cycle
            elif phase == 2:
                a = 0  # the first arm below its requirement (argmax of N < R)
                for i in range(k):
                    if counts[i] < targets[i]:
                        a = i
                        break
            else:
                a = _black_box(inner_counts, inner_sums, inner_t, ucb_params, ucb_authors)
            phase_counts[phase] += 1
            if previous_phase >= 0 and phase != previous_phase:
                phase_switches += 1
            previous_phase = phase
            m = pulls[a]
            v = values[r if per_replication else 0, a, 0]
            x = outcome(noise, sigma, key, replication_ids[r], a, m, v)
            counts[a] += 1.0
            sums[a] += x
            inner_counts[a] += 1.0  # the black box sees every round
            inner_sums[a] += x
            if phase <= 1:
                cycle += 1
                if cycle == k:
                    cycle = 0
                    phase = advance(
                        phase, counts, sums, targets, lam, alpha, beta, scale_log, t_float, fp,
                        buffers, corner, work, authors,
                    )  # fmt: skip
            if phase == 2:  # _finish_phase3: every requirement met
                done = True
                for i in range(k):
                    if counts[i] < targets[i]:
                        done = False
                        break
                if done:
                    phase = 3
                    if not authors:  # restarted (the authors' UCB1 keeps phases 1-3)
                        inner_counts[:] = 0.0
                        inner_sums[:] = 0.0
                        inner_t = 0
            reward += x
            value += v
            pulls[a] = m + 1
            arm_rewards[a] += x
            if previous >= 0 and a != previous:
                switches += 1
            previous = a
            if c < n_cp and t == checkpoints[c]:
                record(out_reward[r], out_expected[r], out_pulls[r], out_switches[r], c, reward,
                       value, pulls, switches)  # fmt: skip
                for i in range(k):
                    out_arm_rewards[r, c, i] = arm_rewards[i]
                for p in range(phase_counts.size):
                    out_phases[r, c, p] = phase_counts[p]
                out_phase_switches[r, c] = phase_switches
                c += 1
    return DONE
