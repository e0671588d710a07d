"""KL-UCB: the index is the largest mean still plausible under a Kullback–Leibler bound.

KL-UCB (Garivier & Cappé 2011, "The KL-UCB algorithm for bounded stochastic bandits and beyond",
COLT, Algorithm 1): pull each arm once (lowest index first), then the arm maximising

    u_i(t) = max{q ≥ x̄_i : n_i · d(x̄_i, q) ≤ ln t + c ln ln t},

with d the divergence of the reward model: ``"bernoulli"`` d(p, q) = p ln(p/q) + (1 − p)
ln((1 − p)/(1 − q)) (rewards in [0, 1], q ≤ 1: the paper's bounded-rewards case), or
``"gaussian"`` d(p, q) = (p − q)²/(2σ²) (Gaussian rewards of known σ, or σ-sub-Gaussian ones;
then u_i = x̄_i + σ√(2 level / n_i) in closed form). Defaults: c = 0, which the paper recommends
for practice (its Theorem 1 takes c = 3); SMPyBandits' ``klUCB`` has another ``c``, a factor
of ln t (its default 1 is our c = 0). σ defaults
to 1/2, the sub-Gaussian scale of any reward in [0, 1] (SMPyBandits' ``klucbGauss``: σ² = 1/4).

``level = "kl-ucb+"`` replaces ln t by ln(t / n_i) (KL-UCB+, Cappé, Garivier, Maillard, Munos &
Stoltz 2013, "Kullback–Leibler upper confidence bounds for optimal sequential allocation",
Ann. Statist., §3's remark; Kaufmann 2018 analyses it), which explores less. ``ln ln`` is
taken of max(1, ·), so the level is never below the logarithm itself.

The Bernoulli bound is found by bisection on [x̄_i, 1], a fixed number of halvings
(:data:`HALVINGS`: the bound to 2⁻³² ≈ 2·10⁻¹⁰, SMPyBandits' ``klUCB`` stops at 10⁻⁴), so that the
readable form (vectorised over the batch) and the compiled step do the same floating-point
operations, the logarithms being the C library's (:mod:`~impactbandits.core.ops`). Ties to the
lowest arm. Anytime and deterministic.

The compiled step finds the same arm with far fewer divergences (:func:`kl_argmax`), exactly:

* a bisection's result lies between its current ``low`` and ``high`` at every halving (both
  move only to midpoints between them), so an arm is dropped as soon as both are strictly
  below a bound some arm is known to reach — it can neither be the argmax nor tie with it;
  and the arm played last (usually still the best, or close to it) is bisected only as far
  as needed to tell it from the best of the others;
* ``pulls · d(x̄, middle)`` is a function of the arm's (count, sum) and the midpoint alone, so
  each arm keeps the values of the midpoints its last bisection tested, until its count or
  sum changes: a later bisection replays the same midpoints from memory as long as its
  level takes the same decisions (ln t moves little from round to round), computing only
  where its path leaves the remembered one; with the same level too it resumes where it
  stopped;
* for x̄ ≤ 1 the result of the bisection does not decrease with the level (at the first
  halving where a higher level decides otherwise it accepts a midpoint the lower one
  rejected), so an unchanged arm's last bisection gives a lower bound for the cut-off.

Every bound it does compute is the one :func:`kl_upper_bound` returns (the same operations on
the same operands), and the argmax keeps the lowest arm among equal bounds.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np

from impactbandits.core import ops
from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.params import NOISE, NonNegativeFloat, PositiveFloat
from impactbandits.policies.classic import counts_update
from impactbandits.policies.statistics import ArmStatistics

__all__ = ["HALVINGS", "KLUCB", "bernoulli_kl", "kl_argmax", "kl_memo_init", "kl_upper_bound"]

#: Halvings of the bisection for the Bernoulli upper bound.
HALVINGS = 32
#: q is kept in [EPS, 1 − EPS] inside the Bernoulli divergence (finite logarithms).
EPS = 1e-15


@kernel(inline=True)
def bernoulli_kl(p: float, q: float) -> float:
    """d(p, q) of Bernoulli laws, with 0 ln 0 = 0 and q kept in [EPS, 1 − EPS]."""
    q = min(max(q, EPS), 1.0 - EPS)
    value = 0.0
    if p > 0.0:
        value += p * math.log(p / q)
    if p < 1.0:
        value += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return value


@kernel
def kl_upper_bound(mean: float, pulls: float, level: float) -> float:
    """The largest q in [mean, 1] with pulls · d(mean, q) ≤ level (to 2⁻:data:`HALVINGS`)."""
    low = mean
    high = 1.0
    for _ in range(HALVINGS):
        middle = (low + high) / 2.0
        if pulls * bernoulli_kl(mean, middle) <= level:
            low = middle
        else:
            high = middle
    return low


@kernel(inline=True)
def _halve(
    mean: float,
    pulls: float,
    level: float,
    j: int,
    low: float,
    high: float,
    mids: np.ndarray,
    vals: np.ndarray,
) -> tuple[float, float]:
    """Halving ``j`` of :func:`kl_upper_bound`'s bisection from ``(low, high)``: the new
    ``(low, high)``. ``mids``/``vals``: the arm's memo, the value ``pulls · d(mean, mids[j])``
    of the midpoint tested at halving j (NaN: none), read if it is this midpoint, else
    computed and kept."""
    middle = (low + high) / 2.0
    if mids[j] == middle:
        value = vals[j]
    else:
        value = pulls * bernoulli_kl(mean, middle)
        mids[j] = middle
        vals[j] = value
    if value <= level:
        return middle, high
    return low, middle


@kernel(inline=True)
def _advance(
    mean: float, pulls: float, level: float, cutoff: float, until: int, bisection: np.ndarray,
    i: int, mids: np.ndarray, vals: np.ndarray,
) -> None:  # fmt: skip
    """Go on with arm ``i``'s bisection (its ``low``, ``high`` and halvings done: column ``i``
    of ``bisection``) up to ``until`` halvings, stopping early once its bound is shown strictly
    below ``cutoff``: the bound lies between ``low`` and ``high`` at every halving (both move
    only to midpoints between them)."""
    low, high, done = bisection[0, i], bisection[1, i], int(bisection[2, i])
    while done < until and not (low < cutoff and high < cutoff):
        low, high = _halve(mean, pulls, level, done, low, high, mids, vals)
        done += 1
    bisection[0, i] = low
    bisection[1, i] = high
    bisection[2, i] = done


@kernel
def kl_memo_init(k: int) -> Any:
    """The scratch state of :func:`kl_argmax` for ``k`` arms: each arm's level, its memo of
    midpoints and values, the (count, sum) the memo was made for, its bisection so far (low,
    high, halvings done, level), and the arm played last."""
    mids = np.full((k, HALVINGS), np.nan)
    bisection = np.full((4, k), np.nan)
    return (
        np.zeros(k), mids, np.zeros((k, HALVINGS)), np.full(2 * k, np.nan), bisection,
        np.zeros(1, np.int64),
    )  # fmt: skip


@kernel
def kl_argmax(
    counts: np.ndarray,
    sums: np.ndarray,
    levels: np.ndarray,
    mids: np.ndarray,
    vals: np.ndarray,
    seen: np.ndarray,
    bisection: np.ndarray,
    last: np.ndarray,
) -> int:
    """``argmax_i kl_upper_bound(sums_i / counts_i, counts_i, levels_i)`` (arms with no count
    first, ties to the lowest arm) for one replication, computed with the arms' memos and
    early cut-offs (module docstring; the scratch arrays from :func:`kl_memo_init`).

    A bisection's bound lies in ``[min(low, high), max(low, high)]`` at every halving (both
    move only to midpoints between them). Every arm's bound but that of the arm ``g`` played
    last is computed exactly unless its bisection shows it strictly below the best lower bound
    so far (``g``'s, an exact bound's, or one known from an arm's last bisection) — then it is
    below some arm's bound and cannot be the argmax; ``g``'s bisection goes on only while it
    is needed to decide between ``g`` and the best of the others. An arm whose count, sum and
    level are those of its last bisection resumes it where it stopped."""
    k = counts.size
    for i in range(k):
        if not counts[i] > 0.0:
            return i  # +inf: no finite bound before it beats it, none after it ties it
    finite = True
    floor = -math.inf  # a bound some arm is known to reach
    for i in range(k):
        mean = sums[i] / counts[i]
        finite = finite and math.isfinite(mean)
        changed = counts[i] != seen[i] or sums[i] != seen[k + i]
        if changed:  # a memo holds only while its arm's count and sum are unchanged
            seen[i] = counts[i]
            seen[k + i] = sums[i]
            for j in range(HALVINGS):
                mids[i, j] = np.nan
        elif mean <= 1.0 and levels[i] >= bisection[3, i]:
            # for x̄ ≤ 1 the bound does not decrease with the level (the first decision the
            # higher level takes otherwise accepts a midpoint the lower one rejected): the last
            # bisection's lower end stays a lower bound
            known = bisection[0, i]
            if bisection[2, i] < HALVINGS:
                known = min(known, bisection[1, i])
            floor = max(floor, known)
        if changed or levels[i] != bisection[3, i]:  # a bisection from the start (NaN too)
            bisection[0, i] = mean
            bisection[1, i] = 1.0
            bisection[2, i] = 0.0
            bisection[3, i] = levels[i]
    if not finite:  # the bounds' intervals need a finite mean: the plain argmax
        best = 0
        best_value = -math.inf
        for i in range(k):
            value = kl_upper_bound(sums[i] / counts[i], counts[i], levels[i])
            if value > best_value:
                best, best_value = i, value
        last[0] = best
        return best
    g = last[0]
    mean, pulls, level = sums[g] / counts[g], counts[g], levels[g]
    best = -1  # the others' best exact bound (lowest arm) and its arm
    best_value = -math.inf
    for i in range(k):
        if i != g:
            cutoff = max(min(bisection[0, g], bisection[1, g]), best_value, floor)
            _advance(
                sums[i] / counts[i], counts[i], levels[i], cutoff, HALVINGS, bisection, i,
                mids[i], vals[i],
            )  # fmt: skip
            if bisection[2, i] == HALVINGS and bisection[0, i] > best_value:
                best, best_value = i, bisection[0, i]
    choice = g  # every other arm is below g's lower bound
    while best >= 0:
        low, high, done = bisection[0, g], bisection[1, g], bisection[2, g]
        lower, upper = min(low, high), max(low, high)
        if done == HALVINGS:  # g's bound is low
            lower = upper = low
        if lower > best_value or (lower == best_value and g < best):
            break
        if upper < best_value or (upper == best_value and best < g):
            choice = best
            break
        _advance(mean, pulls, level, -math.inf, int(done) + 1, bisection, g, mids[g], vals[g])
    last[0] = choice
    return choice


def _kl_many(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """:func:`bernoulli_kl` element by element, the same operations."""
    q = np.minimum(np.maximum(q, EPS), 1.0 - EPS)
    inside = p > 0.0
    below = p < 1.0
    first = np.zeros(p.shape)
    first[inside] = p[inside] * ops.log(p[inside] / q[inside])
    second = np.zeros(p.shape)
    second[below] = (1.0 - p[below]) * ops.log((1.0 - p[below]) / (1.0 - q[below]))
    return first + second  # 0.0 + a is a: the kernel's running sum


def _bounds_many(mean: np.ndarray, pulls: np.ndarray, level: np.ndarray) -> np.ndarray:
    """:func:`kl_upper_bound` element by element."""
    low = mean.copy()
    high = np.ones(mean.shape)
    for _ in range(HALVINGS):
        middle = (low + high) / 2.0
        inside = pulls * _kl_many(mean, middle) <= level
        low = np.where(inside, middle, low)
        high = np.where(inside, high, middle)
    return low


class KLUCB(Policy):
    """KL-UCB (module docstring): ``divergence`` of the reward model, ``c`` of the ln ln t term,
    ``level`` ``"kl-ucb"`` (ln t) or ``"kl-ucb+"`` (ln(t / n_i)), ``sigma`` the Gaussian scale."""

    deterministic = True

    def __init__(
        self,
        divergence: Literal["bernoulli", "gaussian"] = "bernoulli",
        c: NonNegativeFloat = 0.0,
        level: Literal["kl-ucb", "kl-ucb+"] = "kl-ucb",
        sigma: Annotated[PositiveFloat, NOISE] = 0.5,
    ) -> None:
        self.divergence = divergence
        self.c = float(c)
        self.level = level
        self.sigma = float(sigma)

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.t = 0
        self.stats = ArmStatistics(rng.size, space.n)

    def _levels(self, counts: np.ndarray) -> np.ndarray:
        """ln(x) + c ln(max(1, ln x)) with x = t, or t / n_i (KL-UCB+), for pulled arms."""
        x = np.full(counts.shape, float(self.t))
        if self.level == "kl-ucb+":
            x = x / np.where(counts > 0, counts, 1.0)
        log_x = ops.log(x)
        return log_x + self.c * ops.log(np.maximum(log_x, 1.0))

    def select(self) -> np.ndarray:
        self.t += 1
        counts, sums = self.stats.counts, self.stats.sums
        pulled = counts > 0
        safe = np.where(pulled, counts, 1.0)
        mean = sums / safe
        level = self._levels(counts)
        if self.divergence == "gaussian":
            bound = mean + self.sigma * np.sqrt(2.0 * level / safe)
        else:
            bound = _bounds_many(mean, safe, level)
        return np.argmax(np.where(pulled, bound, np.inf), axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self.stats.add(actions, feedback.reward)

    def compiled_step(self) -> CompiledStep | None:
        params = np.array(
            [
                self.c,
                float(self.level == "kl-ucb+"),
                float(self.divergence == "gaussian"),
                self.sigma,
            ]
        )
        return CompiledStep(_klucb_init, _klucb_select, counts_update, params)


@kernel
def _klucb_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """Counts and sums (:func:`~impactbandits.policies.classic.counts_init`), then the scratch
    of :func:`kl_argmax`."""
    levels, mids, vals, seen, bisection, last = kl_memo_init(k)
    return np.zeros(k), np.zeros(k), levels, mids, vals, seen, bisection, last


@kernel
def _klucb_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`KLUCB.select` for one replication (``params``: c, KL-UCB+, Gaussian, σ): the
    Bernoulli bounds' argmax by :func:`kl_argmax`."""
    counts, sums, levels = state[0], state[1], state[2]
    if not params[2] > 0.0:
        if params[1] > 0.0:
            for i in range(counts.size):
                if counts[i] > 0:
                    log_x = math.log(float(t) / counts[i])
                    levels[i] = log_x + params[0] * math.log(max(log_x, 1.0))
        else:
            log_x = math.log(float(t))
            levels[:] = log_x + params[0] * math.log(max(log_x, 1.0))
        return kl_argmax(counts, sums, levels, state[3], state[4], state[5], state[6], state[7])
    best = 0
    best_value = -math.inf
    for i in range(counts.size):
        if counts[i] > 0:
            x = float(t)
            if params[1] > 0.0:
                x = x / counts[i]
            log_x = math.log(x)
            level = log_x + params[0] * math.log(max(log_x, 1.0))
            mean = sums[i] / counts[i]
            if params[2] > 0.0:
                value = mean + params[3] * math.sqrt(2.0 * level / counts[i])
            else:
                value = kl_upper_bound(mean, counts[i], level)
        else:
            value = math.inf
        if value > best_value:
            best, best_value = i, value
    return best
