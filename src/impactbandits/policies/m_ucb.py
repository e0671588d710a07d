"""M-UCB (Monitored UCB): UCB1 with forced exploration, restarted when a windowed test fires.

Cao, Wen, Kveton & Xie (2019, "Nearly optimal adaptive procedure with change detection for
piecewise-stationary bandit", AISTATS; arXiv:1802.03692), Algorithm 1 with the change detector
of Algorithm 2. With τ the round of the last restart (0 at first) and, for each arm k, n_k its
plays since τ and Z_{k,1}, …, Z_{k,n_k} their rewards, round t plays

* arm A = (t − τ) mod ⌊K/γ⌋ if A < K (forced uniform exploration, a deterministic schedule:
  arms numbered from 0, so every arm is played once in each block of ⌊K/γ⌋ rounds);
* otherwise ``argmax_k Z̄_k + sqrt(2 ln(t − τ) / n_k)`` (UCB1 on the data since τ), arms with
  n_k = 0 first (lowest index first), ties to the lowest arm.

After the play, if the played arm has n_k ≥ w observations since τ, the detector looks at its
last w (w even): an alarm is raised when |Σ (second half) − Σ (first half)| > b. On an alarm,
τ = t and *every* arm restarts (n_k = 0, histories emptied): global restarts.

Defaults and where they come from (T the horizon, K the arms, Υ = ``breakpoints``, the number of
breakpoints, i.e. M − 1 with M the paper's number of stationary segments):

* ``window = None``: w from the paper's Remark 1, w = (4/δ²)(√ln(2KT²) + √ln(2T))², rounded up
  to an even integer, with δ = ``min_change`` the smallest change of an arm's mean it must
  detect (default 0.1, SMPyBandits' ``DELTA`` in ``SMPyBandits/Policies/Monitored_UCB.py``@
  012fc13; the paper leaves δ to the user). That w is large (≈ 2·10⁴ for δ = 0.1, T = 10⁴):
  SMPyBandits replaces it by 50 K Υ when w ≥ T/(Υ + 1), Besson et al. (2022) use w = 150 and
  Kaufmann's code w = 200 or 800 — give ``window`` for short horizons. With w > T no alarm is
  ever raised (M-UCB is then UCB1 with forced exploration).
* ``threshold = None``: b = sqrt((w/2) ln(2KT²)) (the paper's Theorem; also SMPyBandits' and
  Kaufmann's code, EmilieKaufmann/PiecewiseStationaryBandits@9047ec7 ``main_NonStat.jl``).
* ``gamma = None``: γ = sqrt(Υ K (2b + 3√w) / (2T)), capped at 1, the choice the paper
  suggests for its experiments (as SMPyBandits' ``Monitored_UCB.py`` and Kaufmann's code write
  it; Besson's thesis, Naereen/phd-thesis@0fa93ca ``NonStatB.tex``, calls it the paper's
  Remark 4). ``breakpoints`` defaults to 1 (SMPyBandits' value when Υ is unknown).

Horizon-aware unless ``window``, ``threshold`` and ``gamma`` are all given. Where SMPyBandits
differs we follow the paper: SMPyBandits uses ⌈K/γ⌉ and its round counter before the
increment, keeps the alarm's observation in the new history, and its default w formula has
the fallback above. The exploration rule above is the 0-based reading of the paper's "A ← (t −
τ) mod ⌊K/γ⌋; if A ≤ K play A"; the alarm test is strict (``> b``), as in Algorithm 2.

The two half-window sums are kept incrementally in a ring buffer of each arm's last w
observations (O(1) per round, in the same order of floating-point operations in both forms;
for rewards in {0, 1} the sums are exact integers, hence equal to the paper's sums).
Deterministic. Rewards are assumed in [0, 1] (b is on that scale).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.errors import SpecError
from impactbandits.params import WINDOW, Probability, Rounds

__all__ = ["MUCB", "MUCB_MIN_CHANGE", "mucb_defaults"]

#: δ of Remark 1's window formula when no window is given (SMPyBandits' default).
MUCB_MIN_CHANGE = 0.1


def mucb_defaults(
    k: int,
    horizon: int,
    breakpoints: int,
    window: int | None,
    threshold: float | None,
    gamma: float | None,
    min_change: float,
) -> tuple[int, float, float]:
    """(w, b, γ) with the paper's choices for those not given (module docstring)."""
    log_2kt2 = math.log(2.0 * k * float(horizon) ** 2)
    if window is None:
        root = math.sqrt(log_2kt2) + math.sqrt(math.log(2.0 * horizon))
        window = math.ceil(4.0 / min_change**2 * root**2)
        window += window % 2
    if threshold is None:
        threshold = math.sqrt(window / 2.0 * log_2kt2)
    if gamma is None:
        spread = 2.0 * threshold + 3.0 * math.sqrt(window)
        gamma = min(1.0, math.sqrt(breakpoints * k * spread / (2.0 * horizon)))
    return window, threshold, gamma


class MUCB(Policy):
    """M-UCB (Cao et al. 2019; module docstring): ``window`` w (even), ``threshold`` b,
    ``gamma`` γ (``None``: the paper's choices from the horizon, ``breakpoints`` Υ and
    ``min_change`` δ)."""

    deterministic = True

    def __init__(
        self,
        breakpoints: Rounds = 1,
        window: Annotated[int | None, Field(gt=1), WINDOW] = None,
        threshold: Annotated[float | None, Field(gt=0.0, allow_inf_nan=False)] = None,
        gamma: Probability | None = None,
        min_change: Annotated[float, Field(gt=0.0, le=1.0)] = MUCB_MIN_CHANGE,
    ) -> None:
        if window is not None and window % 2:
            raise SpecError("window", f"must be even (two halves), got {window}")
        self.breakpoints = int(breakpoints)
        self.window = None if window is None else int(window)
        self.threshold = None if threshold is None else float(threshold)
        self.gamma = None if gamma is None else float(gamma)
        self.min_change = float(min_change)

    @property
    def requires_horizon(self) -> bool:
        return self.window is None or self.threshold is None or self.gamma is None

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        k = space.n
        if self.requires_horizon:
            if horizon is None:
                raise SpecError("window", "w, b and γ are derived from the horizon; give them")
            w, b, gamma = mucb_defaults(
                k, horizon, self.breakpoints, self.window, self.threshold, self.gamma,
                self.min_change,
            )  # fmt: skip
        else:
            w, b, gamma = self.window, self.threshold, self.gamma  # type: ignore[assignment]
        self._w, self._b, self._gamma = int(w), float(b), float(gamma)
        #: ⌊K/γ⌋, the length of a block of forced exploration (0: none, γ = 0)
        self._block = math.floor(k / self._gamma) if self._gamma > 0 else 0
        self.n, self.size, self.t = k, rng.size, 0
        shape = (rng.size, k)
        self.counts, self.sums = np.zeros(shape), np.zeros(shape)
        self.first, self.second = np.zeros(shape), np.zeros(shape)
        self.tau = np.zeros(rng.size, dtype=np.int64)
        self._ring = np.zeros((rng.size * k, 0))  # grown up to w columns as plays accumulate
        self._logs = np.zeros(1)  # math.log(i) at index i (0 at 0: never read)
        self._rows = np.arange(rng.size)
        self.alarms = np.zeros(rng.size, dtype=np.int64)
        """Alarms (global restarts) so far in each replication (diagnostics)."""

    def select(self) -> np.ndarray:
        self.t += 1
        if self._logs.size <= self.t:  # grown by doubling: O(1) amortised per round
            self._logs = np.array([0.0] + [math.log(i) for i in range(1, 2 * self.t)])
        elapsed = self.t - self.tau
        counts = self.counts
        with np.errstate(divide="ignore", invalid="ignore"):
            bonus = np.sqrt((2.0 * self._logs[elapsed])[:, None] / counts)
            index = np.where(counts > 0, self.sums / counts + bonus, np.inf)
        actions = np.argmax(index, axis=1)
        if self._block:
            forced = elapsed % self._block
            actions = np.where(forced < self.n, forced, actions)
        return actions

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        x = np.asarray(feedback.reward, dtype=np.float64)
        w, half = self._w, self._w // 2
        flat = self._rows * self.n + actions
        counts, sums = self.counts.reshape(-1), self.sums.reshape(-1)
        first_flat, second_flat = self.first.reshape(-1), self.second.reshape(-1)
        n = counts[flat] + 1.0
        counts[flat] = n
        sums[flat] = sums[flat] + x
        m = n.astype(np.int64)  # Z_m is the new observation
        self._grow(min(w, int(m.max())))
        first, second = first_flat[flat], second_flat[flat]
        middle = m > half  # Z_{m − w/2} moves from the second half to the first
        y = self._ring[flat, np.where(middle, (m - half - 1) % w, 0)]
        first = np.where(middle, first + y, first)
        second = np.where(middle, second - y, second)
        full = m > w  # Z_{m − w} leaves the window (its slot takes Z_m)
        slot = (m - 1) % w
        first = np.where(full, first - self._ring[flat, slot], first)
        second = second + x
        self._ring[flat, slot] = x
        first_flat[flat], second_flat[flat] = first, second
        alarm = (m >= w) & (np.abs(second - first) > self._b)
        if alarm.any():
            self.counts[alarm] = 0.0
            self.sums[alarm] = 0.0
            self.first[alarm] = 0.0
            self.second[alarm] = 0.0
            self.tau[alarm] = self.t
            self.alarms += alarm

    def _grow(self, needed: int) -> None:
        """Ring columns for ``needed`` observations (at most w): doubled when short."""
        have = self._ring.shape[1]
        if needed > have:
            wider = np.zeros((self._ring.shape[0], min(self._w, max(needed, 2 * have))))
            wider[:, :have] = self._ring
            self._ring = wider

    def compiled_step(self) -> CompiledStep | None:
        params = np.array([float(self._block), float(self._w), self._b])
        return CompiledStep(_mucb_init, _mucb_select, _mucb_update, params)


@kernel
def _mucb_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """Plays and sums since τ, the two half-window sums, the ring of each arm's last w
    observations (at most ``rounds`` columns: no arm is played more often) and τ."""
    columns = min(int(params[1]), rounds)
    ring = np.zeros((k, columns))
    return np.zeros(k), np.zeros(k), np.zeros(k), np.zeros(k), ring, np.zeros(1, dtype=np.int64)


@kernel
def _mucb_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`MUCB.select` for one replication (``params``: ⌊K/γ⌋, w, b)."""
    counts, sums, tau = state[0], state[1], state[5]
    k = counts.size
    elapsed = t - tau[0]
    block = int(params[0])
    if block > 0:
        forced = elapsed % block
        if forced < k:
            return forced
    log_elapsed = math.log(elapsed)
    best = 0
    best_value = -math.inf
    for i in range(k):
        if counts[i] > 0:
            value = sums[i] / counts[i] + math.sqrt(2.0 * log_elapsed / counts[i])
        else:
            value = math.inf
        if value > best_value:
            best, best_value = i, value
    return best


@kernel
def _mucb_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`MUCB.update`: the arm's window and the detector of Algorithm 2."""
    counts, sums, first, second, ring, tau = state
    w = int(params[1])
    half = w // 2
    n = counts[arm] + 1.0
    counts[arm] = n
    sums[arm] += reward
    m = int(n)
    f = first[arm]
    s = second[arm]
    if m > half:
        y = ring[arm, (m - half - 1) % w]
        f = f + y
        s = s - y
    slot = (m - 1) % w
    if m > w:
        f = f - ring[arm, slot]
    s = s + reward
    ring[arm, slot] = reward
    first[arm] = f
    second[arm] = s
    if m >= w and abs(s - f) > params[2]:  # alarm: every arm restarts, τ = t
        for i in range(counts.size):
            counts[i] = 0.0
            sums[i] = 0.0
            first[i] = 0.0
            second[i] = 0.0
        tau[0] = t
