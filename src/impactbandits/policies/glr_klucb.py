"""GLR-klUCB: kl-UCB whose arms restart when a Bernoulli GLR test detects a change.

Besson, Kaufmann, Maillard & Seznec (2022, "Efficient change-point detection for tackling
piecewise-stationary bandits", JMLR 23(77); arXiv:1902.01575), Algorithm 1 with the Bernoulli
generalized likelihood ratio test (B-GLRT). With τ_k the round of arm k's last restart (0 at
first), n_k its plays since τ_k and Z_{k,1}, …, Z_{k,n_k} their rewards, round t plays

* arm A − 1 if A = t mod ⌊K/α⌋ is in {1, …, K} (forced exploration, a deterministic schedule;
  the paper numbers arms from 1);
* otherwise ``argmax_k max{q ∈ [0, 1] : n_k kl(Z̄_k, q) ≤ f(t − τ_k)}`` (kl-UCB on the data
  since the arm's restart, kl the Bernoulli divergence), with f(x) = ln x + c ln ln x for x > 1
  and f(1) = 0; arms with n_k = 0 first (lowest index first: the paper's index is 1 for them,
  ties broken at random), ties to the lowest arm.

After the play, the played arm's history Z_1, …, Z_n is tested (n ≥ 2): an alarm is raised when

    sup_{1 ≤ s < n} [ s kl(Z̄_{1:s}, Z̄_{1:n}) + (n − s) kl(Z̄_{s+1:n}, Z̄_{1:n}) ] ≥ β(n, δ).

On an alarm in round t, ``restart = "local"`` restarts that arm (τ_k = t, n_k = 0);
``"global"`` restarts every arm. The test scans every split s: O(n) per observation, exactly as
written (``test_every`` Δn and ``split_every`` Δs, both 1 by default, sub-sample the n tested
and the s scanned, as the paper's practical-considerations section and appendix propose:
test only when n mod Δn = 0, scan only s with s mod Δs = 0; its experiments use Δn = Δs = 10).

Threshold β (``threshold``):

* ``"practical"`` (default): β(n, δ) = ln(3 n √n / δ), which the paper recommends in practice
  (keeping the leading term of the theoretical threshold, which its simulations find
  conservative; Besson's thesis, Naereen/phd-thesis@0fa93ca ``NonStatB.tex``, "Practical
  considerations"; SMPyBandits' default ``threshold_BernoulliGLR``, ``SMPyBandits/Policies/
  GLR_UCB.py``@012fc13). Kaufmann's code for the JMLR experiments uses ln(n^{3/2}/δ), without
  the 3 (EmilieKaufmann/PiecewiseStationaryBandits@9047ec7 ``main_NonStat.jl``).
* ``"theory"``: β(n, δ) = 2 𝒯(ln(3n√n/δ)/2) + 6 ln(1 + ln n), the threshold of the paper's
  false-alarm lemma, with 𝒯(x) = 2 h̃((h⁻¹(1 + x) + ln(2ζ(2)))/2), h(u) = u − ln u (u ≥ 1),
  h̃(x) = e^{1/h⁻¹(x)} h⁻¹(x) if x ≥ h⁻¹(1/ln(3/2)) and (3/2)(x − ln ln(3/2)) otherwise;
  h⁻¹ is computed by a fixed number of bisections (:data:`INVERSE_HALVINGS`).

Defaults and where they come from (T the horizon, K the arms):

* ``delta = None``: δ = 1/√T, the paper's tuning without knowledge of the number of changes
  (its corollaries; Kaufmann's code: "recommended tuning ... delta = 1/sqrt(T)").
* ``alpha = None``: α₀ = √(K ln T / T), and ``exploration = "growing"``: in the k-th episode
  (k − 1 alarms so far, on any arm) the exploration rate is α_k = min(1, α₀ √k), the sequence
  of the JMLR version that needs no knowledge of the number of changes, as Kaufmann's code for
  its experiments implements it ("the exploration probability in episode k is
  alpha0*sqrt(k)", "recommended tuning: alpha0 = sqrt(K*log(T)/T)"). The JMLR text itself
  could not be read here (only its first page is in our corpus); the 2019 version (Besson's
  thesis) has a fixed rate, ``exploration = "fixed"`` (α = α₀ throughout), with α = √(ln T/T)
  or √(Υ ln T/T) in its corollaries — pass ``alpha`` for those.
* ``restart = "local"``: the paper finds local restarts better on every problem it tries.
* ``c = 0``: f(x) = ln x, as in Kaufmann's code for the experiments (and this library's
  KL-UCB default); Algorithm 1 of the 2019 version states f with c = 3 for its analysis.

Horizon-aware unless ``delta`` and ``alpha`` are both given. SMPyBandits' GLR-klUCB differs
(its experiments' configuration: deterministic exploration with α₀ = 0.05·√(·), Δn = Δs = 10,
restarts that keep the history after the estimated change point, and ``klUCB_forGLR``'s level
3 ln t_k): we follow the paper.

The kl terms use :func:`~impactbandits.policies.kl_ucb.bernoulli_kl` and the indices
:func:`~impactbandits.policies.kl_ucb.kl_upper_bound` (their vectorised twins in the readable
form), means from prefix sums of each arm's history (Z̄_{1:s} = P_s/s, Z̄_{s+1:n} = (P_n −
P_s)/(n − s)), so the two forms do the same floating-point operations. The compiled state holds
a prefix-sum array of ``rounds + 1`` values per arm; the readable form grows its own as histories
lengthen ((R, K, max n) values). Deterministic; rewards in [0, 1].
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from impactbandits.core import ops
from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.errors import SpecError
from impactbandits.params import NonNegativeFloat, Rounds
from impactbandits.policies.kl_ucb import _bounds_many, _kl_many, bernoulli_kl, kl_upper_bound

__all__ = ["INVERSE_HALVINGS", "GLRklUCB", "glr_threshold", "h_inverse", "t_function"]

#: Halvings of the bisection that inverts h(u) = u − ln u on [1, ∞).
INVERSE_HALVINGS = 64


@kernel
def h_inverse(y: float) -> float:
    """The u ≥ 1 with u − ln u = y (y ≥ 1), by bisection on [1, 2y] (h(u) ≥ u/2)."""
    low = 1.0
    high = max(2.0 * y, 2.0)
    for _ in range(INVERSE_HALVINGS):
        middle = (low + high) / 2.0
        if middle - math.log(middle) < y:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


#: ln ln(3/2), in h̃'s lower branch.
_LN_LN_THREE_HALVES = math.log(math.log(1.5))
#: h⁻¹(1/ln(3/2)), where h̃ changes branch.
_H_TILDE_CUT = h_inverse.py_func(1.0 / math.log(1.5))
#: ln(2 ζ(2)) = ln(π²/3).
_LN_TWO_ZETA_TWO = math.log(2.0 * math.pi**2 / 6.0)


@kernel
def _h_tilde(x: float) -> float:
    if x >= _H_TILDE_CUT:
        u = h_inverse(x)
        return math.exp(1.0 / u) * u
    return 1.5 * (x - _LN_LN_THREE_HALVES)


@kernel
def t_function(x: float) -> float:
    """𝒯(x) = 2 h̃((h⁻¹(1 + x) + ln(2ζ(2)))/2) (Kaufmann & Koolen 2018), x > 0."""
    return 2.0 * _h_tilde((h_inverse(1.0 + x) + _LN_TWO_ZETA_TWO) / 2.0)


@kernel
def glr_threshold(n: int, delta: float, theory: float) -> float:
    """β(n, δ): ln(3n√n/δ), or with ``theory`` > 0 the false-alarm lemma's threshold."""
    level = math.log(3.0 * n * math.sqrt(n) / delta)
    if theory > 0.0:
        return 2.0 * t_function(level / 2.0) + 6.0 * math.log(1.0 + math.log(n))
    return level


class GLRklUCB(Policy):
    """GLR-klUCB (Besson et al. 2022; module docstring): confidence ``delta`` δ, exploration
    ``alpha`` α₀ (``None``: from the horizon) with ``exploration`` ``"growing"`` (α₀√k in
    episode k) or ``"fixed"``, ``restart`` ``"local"`` or ``"global"``, ``threshold``
    ``"practical"`` or ``"theory"``, ``c`` of f(x) = ln x + c ln ln x, sub-sampling
    ``test_every`` Δn and ``split_every`` Δs."""

    deterministic = True

    def __init__(
        self,
        delta: Annotated[float | None, Field(gt=0.0, lt=1.0)] = None,
        alpha: Annotated[float | None, Field(gt=0.0, le=1.0)] = None,
        exploration: Literal["growing", "fixed"] = "growing",
        restart: Literal["local", "global"] = "local",
        threshold: Literal["practical", "theory"] = "practical",
        c: NonNegativeFloat = 0.0,
        test_every: Rounds = 1,
        split_every: Rounds = 1,
    ) -> None:
        self.delta = None if delta is None else float(delta)
        self.alpha = None if alpha is None else float(alpha)
        self.exploration, self.restart, self.threshold = exploration, restart, threshold
        self.c = float(c)
        self.test_every, self.split_every = int(test_every), int(split_every)

    @property
    def requires_horizon(self) -> bool:
        return self.delta is None or self.alpha is None

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        k = space.n
        delta, alpha = self.delta, self.alpha
        if delta is None or alpha is None:
            if horizon is None:
                field = "delta" if delta is None else "alpha"
                raise SpecError(field, "this setting is derived from the horizon; give it")
            if delta is None:
                delta = 1.0 / math.sqrt(horizon)
            if alpha is None:
                alpha = min(1.0, math.sqrt(k * math.log(horizon) / horizon))
        self._delta, self._alpha0 = delta, alpha
        self.n, self.size, self.t = k, rng.size, 0
        self.counts = np.zeros((rng.size, k), dtype=np.int64)
        self.tau = np.zeros((rng.size, k), dtype=np.int64)
        self.prefix = np.zeros((rng.size * k, 1))  # P_0 = 0; grown as histories lengthen
        self.alarms = np.zeros(rng.size, dtype=np.int64)
        """Alarms so far in each replication (episode k = alarms + 1)."""
        self._rows = np.arange(rng.size)
        self._logs = np.zeros(1)  # math.log(i) at index i
        self._loglogs = np.zeros(1)  # math.log(math.log(i)) at index i ≥ 2
        self._thresholds: dict[int, float] = {}

    def _rates(self) -> np.ndarray:
        """α of each replication's current episode."""
        if self.exploration == "fixed":
            return np.full(self.size, self._alpha0)
        return np.minimum(1.0, self._alpha0 * np.sqrt(self.alarms + 1.0))

    def select(self) -> np.ndarray:
        self.t += 1
        t, k = self.t, self.n
        if self._logs.size <= t:  # tables grown by doubling: O(1) amortised per round
            self._logs = np.array([0.0] + [math.log(i) for i in range(1, 2 * t)])
            if self.c > 0.0:
                self._loglogs = np.array([0.0, 0.0] + [math.log(x) for x in self._logs[2:]])
        elapsed = t - self.tau  # ≥ 1
        level = self._logs[elapsed]
        if self.c > 0.0:
            level = level + self.c * self._loglogs[elapsed]
        level = np.where(elapsed > 1, level, 0.0)
        counts = self.counts
        pulled = counts > 0
        safe = np.where(pulled, counts, 1).astype(np.float64)
        sums = self.prefix[self._rows[:, None] * k + np.arange(k), counts]
        bound = _bounds_many(sums / safe, safe, level)
        actions = np.argmax(np.where(pulled, bound, np.inf), axis=1)
        if self._alpha0 == 0.0:  # T = 1: no forced exploration
            return actions
        forced = t % np.floor(k / self._rates()).astype(np.int64)  # α ≤ 1: ⌊K/α⌋ ≥ K
        return np.where((forced >= 1) & (forced <= k), forced - 1, actions)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        x = np.asarray(feedback.reward, dtype=np.float64)
        flat = self._rows * self.n + actions
        counts = self.counts.reshape(-1)
        n = counts[flat] + 1
        counts[flat] = n
        self._grow(int(n.max()) + 1)
        self.prefix[flat, n] = self.prefix[flat, n - 1] + x
        tested = (n >= 2) & (n % self.test_every == 0)
        if not tested.any():
            return
        alarm = np.zeros(self.size, dtype=bool)
        rows = np.flatnonzero(tested)
        alarm[rows] = self._glr(flat[rows], n[rows])
        if not alarm.any():
            return
        self.alarms += alarm
        if self.restart == "global":
            self.counts[alarm] = 0
            self.tau[alarm] = self.t
        else:
            counts[flat[alarm]] = 0
            self.tau.reshape(-1)[flat[alarm]] = self.t

    def _glr(self, flat: np.ndarray, n: np.ndarray) -> np.ndarray:
        """Whether the B-GLRT fires on each history (rows ``flat`` of the prefix sums, ``n``
        observations each), every split s < n with s mod Δs = 0 scanned."""
        top = int(n.max())
        s = np.arange(1, top)  # candidate splits, columns
        valid = (s[None, :] < n[:, None]) & (s[None, :] % self.split_every == 0)
        row, col = np.nonzero(valid)
        split = s[col].astype(np.float64)
        size = n[row].astype(np.float64)
        before = self.prefix[flat[row], s[col]]
        total = self.prefix[flat, n][row]
        mean = total / size
        stat = split * _kl_many(before / split, mean) + (size - split) * _kl_many(
            (total - before) / (size - split), mean
        )
        beta = self._beta(n)[row]
        fired = np.zeros(flat.size, dtype=bool)
        fired[row[stat >= beta]] = True
        return fired

    def _beta(self, n: np.ndarray) -> np.ndarray:
        """β(n, δ) for each n (:func:`glr_threshold`)."""
        if self.threshold == "practical":
            size = n.astype(np.float64)
            return ops.log(3.0 * size * np.sqrt(size) / self._delta)
        out = np.empty(n.size)
        for i, value in enumerate(n.tolist()):
            if value not in self._thresholds:
                self._thresholds[value] = glr_threshold.py_func(value, self._delta, 1.0)
            out[i] = self._thresholds[value]
        return out

    def _grow(self, needed: int) -> None:
        """Prefix-sum columns for ``needed`` values: doubled when short."""
        have = self.prefix.shape[1]
        if needed > have:
            wider = np.zeros((self.prefix.shape[0], max(needed, 2 * have)))
            wider[:, :have] = self.prefix
            self.prefix = wider

    def compiled_step(self) -> CompiledStep | None:
        params = np.array(
            [
                self._alpha0,
                float(self.exploration == "growing"),
                self._delta,
                float(self.threshold == "theory"),
                self.c,
                float(self.restart == "global"),
                float(self.test_every),
                float(self.split_every),
            ]
        )
        return CompiledStep(_glr_init, _glr_select, _glr_update, params)


@kernel
def _glr_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """Each arm's prefix sums P_0 … P_rounds of its history since its restart, its plays
    n_k and restart round τ_k since then, and the alarms so far."""
    prefix = np.zeros((k, rounds + 1))
    counts = np.zeros(k, dtype=np.int64)
    tau = np.zeros(k, dtype=np.int64)
    return prefix, counts, tau, np.zeros(1, dtype=np.int64)


@kernel
def _glr_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`GLRklUCB.select` for one replication (``params``: α₀, growing, δ, theory, c,
    global, Δn, Δs)."""
    prefix, counts, tau, alarms = state
    k = counts.size
    alpha = params[0]
    if alpha > 0.0:
        if params[1] > 0.0:
            alpha = min(1.0, alpha * math.sqrt(alarms[0] + 1.0))
        forced = t % int(k / alpha)  # ⌊K/α⌋ (positive: truncation is the floor)
        if forced >= 1 and forced <= k:
            return forced - 1
    best = 0
    best_value = -math.inf
    for i in range(k):
        n = counts[i]
        if n > 0:
            elapsed = t - tau[i]
            level = 0.0
            if elapsed > 1:
                log_elapsed = math.log(elapsed)
                level = log_elapsed
                if params[4] > 0.0:
                    level = log_elapsed + params[4] * math.log(log_elapsed)
            value = kl_upper_bound(prefix[i, n] / n, float(n), level)
        else:
            value = math.inf
        if value > best_value:
            best, best_value = i, value
    return best


@kernel
def _glr_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`GLRklUCB.update`: the arm's history, the B-GLRT and the restarts."""
    prefix, counts, tau, alarms = state
    n = counts[arm] + 1
    counts[arm] = n
    prefix[arm, n] = prefix[arm, n - 1] + reward
    if n < 2 or n % int(params[6]) != 0:
        return
    beta = glr_threshold(n, params[2], params[3])
    total = prefix[arm, n]
    mean = total / n
    step = int(params[7])
    fired = False
    for s in range(step, n, step):
        before = prefix[arm, s]
        stat = s * bernoulli_kl(before / s, mean) + (n - s) * bernoulli_kl(
            (total - before) / (n - s), mean
        )
        if stat >= beta:
            fired = True
            break
    if not fired:
        return
    alarms[0] += 1
    if params[5] > 0.0:
        for i in range(counts.size):
            counts[i] = 0
            tau[i] = t
    else:
        counts[arm] = 0
        tau[arm] = t
