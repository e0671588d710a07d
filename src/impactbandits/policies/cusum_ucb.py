"""CUSUM-UCB: UCB whose arms restart when a two-sided CUSUM test sees their mean move.

Liu, Lee & Shroff (2018, "A change-detection based framework for piecewise-stationary
multi-armed bandit problem", AAAI; arXiv:1711.03539), Algorithm 1 (CD-UCB) with the two-sided
CUSUM detector of Algorithm 2. In round t, with τ_i the round after arm i's last alarm,
N_t(i) its plays since τ_i, X̄_t(i) their mean and n_t = Σ_i N_t(i):

* with probability α play an arm drawn uniformly (each arm with probability α/K);
* otherwise play ``argmax_i X̄_t(i) + sqrt(ξ ln n_t / N_t(i))``, arms with N_t(i) = 0 first
  (lowest index first), ties to the lowest arm.

Each arm runs its own CUSUM on its observations y_1, y_2, … since τ_i: the first M give
û₀ = (y_1 + … + y_M)/M; from k = M + 1 on, g⁺_k = max(0, g⁺_{k−1} + (y_k − û₀) − ε) and
g⁻_k = max(0, g⁻_{k−1} + (û₀ − y_k) − ε) (g⁺_M = g⁻_M = 0); an alarm is raised when g⁺_k ≥ h or
g⁻_k ≥ h. On an alarm in round t the arm restarts: τ_i = t + 1 (the observation that raised it
is dropped), its statistics and its CUSUM start afresh. Only the alarmed arm restarts (local
restarts); note that the UCB term uses ln n_t, n_t counting the plays since each arm's own
restart, as the paper writes it (Besson et al. 2022 remark that this departs from the usual
ln(t − τ_i)).

Defaults and where they come from:

* ``threshold = None``: h = ln(T/Υ) and ``alpha = None``: α = sqrt(Υ ln(T/Υ) / T) (capped at
  1), the tuning the paper suggests for its experiments (its Corollary's simplified form; the
  same formulas in SMPyBandits' ``compute_h_alpha_from_input_parameters__CUSUM``,
  ``SMPyBandits/Policies/CUSUM_UCB.py``@012fc13, in Kaufmann's code for Besson et al. 2022,
  ``Algos.jl``/``main_NonStat.jl``, EmilieKaufmann/PiecewiseStationaryBandits@9047ec7, and as
  Besson's thesis quotes it, Naereen/phd-thesis@0fa93ca ``NonStatB.tex``). Υ =
  ``breakpoints`` (default 1, SMPyBandits' value when the number of breakpoints is unknown).
  Horizon-aware unless both are given.
* ``warmup = 150`` (M) and ``drift = 0.1`` (ε): the values Besson et al. (2022, §6) give
  CUSUM-UCB in their experiments (Naereen/phd-thesis@0fa93ca ``NonStatB.tex``). The paper's
  own experimental values could not be read here (only its first page is in our corpus);
  SMPyBandits defaults to M = 100, ε = 0.05 (``CUSUM_UCB.py``, ``CD_UCB.py``@012fc13), which
  raised an alarm before the change in 16 of 20 replications of our detection test (means 0.8
  and 0.3) against 1 of 24 with these; Kaufmann's code uses M = 200, ε = 0.1. Both depend on
  the problem (ε below the smallest change).
* ``xi = 2`` (ξ of the UCB term): the paper's constant could not be read; 2 gives UCB1's
  sqrt(2 ln n_t / N_t(i)), the UCB that SMPyBandits' CUSUM-UCB wraps. Chosen, hence a parameter.

Where SMPyBandits differs we follow the paper: it keeps the alarm's observation as the first of
the new history (the paper restarts at τ_i = t + 1), its CUSUM loop also runs over the first M
samples, and it tests only every 10th observation of an arm (its
``LAZY_DETECT_CHANGE_ONLY_X_STEPS``); we test every observation. The alarm test ``≥ h`` is
SMPyBandits' (Kaufmann's code uses ``> h``; for rewards with a continuous part the two agree
almost surely).

The uniform exploration draws from the policy's counter-based stream
(:mod:`~impactbandits.core.streams`): round t reads the uniforms of channel 0 at slots 0 (explore
if below α) and 1 (the arm, ⌊u K⌋). Rewards are assumed in [0, 1] (h and ε are on that scale).
The CUSUM statistics are updated once per observation (O(1)), which is Algorithm 2 run on the
arm's history up to its current sample.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from impactbandits.core import ops
from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.core.streams import stream_uniform
from impactbandits.errors import SpecError
from impactbandits.params import NonNegativeFloat, PositiveFloat, Probability, Rounds

__all__ = ["CUSUMUCB", "CUSUM_DRIFT", "CUSUM_WARMUP", "CUSUM_XI", "cusum_defaults"]

#: M, the samples that estimate an arm's pre-change mean û₀ (Besson et al. 2022's experiments).
CUSUM_WARMUP = 150
#: ε, the CUSUM's drift correction (Besson et al. 2022's experiments).
CUSUM_DRIFT = 0.1
#: ξ of the UCB term sqrt(ξ ln n_t / N_t(i)) (UCB1's 2; the paper's value not recovered).
CUSUM_XI = 2.0


def cusum_defaults(horizon: int, breakpoints: int) -> tuple[float, float]:
    """(h, α) = (ln(T/Υ), min(1, sqrt(Υ ln(T/Υ) / T))), the paper's suggested tuning."""
    if horizon <= breakpoints:
        raise SpecError(
            "breakpoints",
            f"the tuning h = ln(T/Υ) needs fewer breakpoints than rounds (T = {horizon})",
        )
    log_ratio = math.log(horizon / breakpoints)
    return log_ratio, min(1.0, math.sqrt(breakpoints * log_ratio / horizon))


class CUSUMUCB(Policy):
    """CUSUM-UCB (Liu, Lee & Shroff 2018; module docstring): ``breakpoints`` Υ for the default
    tuning, ``alpha`` α and ``threshold`` h (``None``: derived from the horizon), ``warmup`` M,
    ``drift`` ε, ``xi`` ξ."""

    deterministic = False

    def __init__(
        self,
        breakpoints: Rounds = 1,
        alpha: Probability | None = None,
        threshold: Annotated[float | None, Field(gt=0.0, allow_inf_nan=False)] = None,
        warmup: Rounds = CUSUM_WARMUP,
        drift: NonNegativeFloat = CUSUM_DRIFT,
        xi: PositiveFloat = CUSUM_XI,
    ) -> None:
        self.breakpoints = int(breakpoints)
        self.alpha = None if alpha is None else float(alpha)
        self.threshold = None if threshold is None else float(threshold)
        self.warmup = int(warmup)
        self.drift = float(drift)
        self.xi = float(xi)

    @property
    def requires_horizon(self) -> bool:
        return self.alpha is None or self.threshold is None

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        h, alpha = self.threshold, self.alpha
        if h is None or alpha is None:
            if horizon is None:
                field = "alpha" if alpha is None else "threshold"
                raise SpecError(field, "this setting is derived from the horizon; give it")
            default_h, default_alpha = cusum_defaults(horizon, self.breakpoints)
            h = default_h if h is None else h
            alpha = default_alpha if alpha is None else alpha
        self._h, self._alpha = h, alpha
        self.n, self.size, self.t = space.n, rng.size, 0
        self.stream = rng.stream
        shape = (rng.size, space.n)
        self.counts, self.sums = np.zeros(shape), np.zeros(shape)
        self.u0, self.g_plus, self.g_minus = np.zeros(shape), np.zeros(shape), np.zeros(shape)
        self._offsets = np.arange(rng.size) * space.n
        self.alarms = np.zeros(rng.size, dtype=np.int64)
        """Alarms raised so far in each replication (diagnostics)."""

    def select(self) -> np.ndarray:
        self.t += 1
        explore = self.stream.uniform(0, self.t, 0) < self._alpha
        uniform = np.minimum(
            (self.stream.uniform(0, self.t, 1) * self.n).astype(np.int64), self.n - 1
        )
        counts = self.counts
        total = ops.left_sum(counts, axis=1)  # n_t, added left to right as the kernel does
        log_n = ops.log(np.maximum(total, 1.0))  # read only where some arm was played
        with np.errstate(divide="ignore", invalid="ignore"):
            bonus = np.sqrt((self.xi * log_n)[:, None] / counts)
            index = np.where(counts > 0, self.sums / counts + bonus, np.inf)
        return np.where(explore, uniform, np.argmax(index, axis=1))

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        x = np.asarray(feedback.reward, dtype=np.float64)
        flat = self._offsets + actions
        counts, sums = self.counts.reshape(-1), self.sums.reshape(-1)
        u0_flat, gp_flat, gm_flat = (a.reshape(-1) for a in (self.u0, self.g_plus, self.g_minus))
        n = counts[flat] + 1.0
        s = sums[flat] + x
        u0 = np.where(n == self.warmup, s / self.warmup, u0_flat[flat])
        after = n > self.warmup
        gp = np.where(after, np.maximum(0.0, gp_flat[flat] + ((x - u0) - self.drift)), 0.0)
        gm = np.where(after, np.maximum(0.0, gm_flat[flat] + ((u0 - x) - self.drift)), 0.0)
        alarm = after & ((gp >= self._h) | (gm >= self._h))
        keep = ~alarm
        counts[flat] = np.where(keep, n, 0.0)
        sums[flat] = np.where(keep, s, 0.0)
        u0_flat[flat] = np.where(keep, u0, 0.0)
        gp_flat[flat] = np.where(keep, gp, 0.0)
        gm_flat[flat] = np.where(keep, gm, 0.0)
        self.alarms += alarm

    def compiled_step(self) -> CompiledStep | None:
        params = np.array([self._alpha, self._h, float(self.warmup), self.drift, self.xi])
        return CompiledStep(_cusum_init, _cusum_select, _cusum_update, params, stream=True)


@kernel
def _cusum_init(params: np.ndarray, k: int, rounds: int, stream: np.ndarray) -> Any:
    """Plays and reward sums since each arm's restart, û₀, g⁺, g⁻, and the stream."""
    return np.zeros(k), np.zeros(k), np.zeros(k), np.zeros(k), np.zeros(k), stream.copy()


@kernel
def _cusum_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`CUSUMUCB.select` for one replication (``params``: α, h, M, ε, ξ)."""
    counts, sums, stream = state[0], state[1], state[5]
    k = counts.size
    if stream_uniform(stream, 0, t, 0) < params[0]:
        return min(int(stream_uniform(stream, 0, t, 1) * k), k - 1)
    total = 0.0
    for i in range(k):  # n_t, left to right
        total += counts[i]
    log_n = math.log(max(total, 1.0))
    best = 0
    best_value = -math.inf
    for i in range(k):
        if counts[i] > 0:
            value = sums[i] / counts[i] + math.sqrt(params[4] * log_n / counts[i])
        else:
            value = math.inf
        if value > best_value:
            best, best_value = i, value
    return best


@kernel
def _cusum_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`CUSUMUCB.update`: the arm's statistics and its two-sided CUSUM (Algorithm 2)."""
    counts, sums, u0, g_plus, g_minus = state[0], state[1], state[2], state[3], state[4]
    n = counts[arm] + 1.0
    s = sums[arm] + reward
    if n == params[2]:
        u0[arm] = s / params[2]
    if n > params[2]:
        gp = max(0.0, g_plus[arm] + ((reward - u0[arm]) - params[3]))
        gm = max(0.0, g_minus[arm] + ((u0[arm] - reward) - params[3]))
        if gp >= params[1] or gm >= params[1]:  # alarm: the arm restarts at t + 1
            counts[arm] = 0.0
            sums[arm] = 0.0
            u0[arm] = 0.0
            g_plus[arm] = 0.0
            g_minus[arm] = 0.0
            return
        g_plus[arm] = gp
        g_minus[arm] = gm
    counts[arm] = n
    sums[arm] = s
