"""Delayed impact of actions (Tang, Ho & Liu 2021, §2): meta-arms on the simplex.

K groups. An action is a probability vector p(t) (``Simplex`` space, optionally restricted to
the ε-grid with ``resolution`` = 1/ε). By default (``impact="discounted"``) the impact on group k
is the γ-discounted average of its past and current shares (Eq. 2)::

    f_k(t) = Σ_{s≤t} p_k(s) γ^{t−s} / Σ_{s≤t} γ^{t−s}      (γ = 0: f(t) = p(t), action-dependent)

kept as two running sums (O(K) per round). Any impact function meeting §5.2's convergence
condition |f_k(t+s) − g(p_k)| ≤ γ^s can be plugged in: ``impact="smoothed"`` (built in) or
``"module:Class"`` with ``impact_params`` (see :mod:`impactbandits.envs.impact_functions`; the
condition is probed when the environment is built). A fixed p then earns Σ_k p_k r_k(g(p_k)).

A group's reward, when observed, is Bernoulli with mean r_k(f_k(t)) (common random numbers per
(replication, group, round)); the expected reward of the round is Σ_k p_k r_k(f_k(t)) (Eq. 1).
Feedback modes:

* ``"independent"`` (default, §2): each group is activated independently with probability p_k;
  only activated groups are observed and their rewards summed;
* ``"single"`` (footnote 2): exactly one group, drawn from p, is activated;
* ``"allocation"`` (Remark 2.1): every group with p_k > 0 is observed and the round pays
  Σ_k p_k·r_k(observed).

Reward families r_k(f), all Lipschitz with values in [0, 1]:

* ``"police"`` (Eq. 4, default): r_k(f) = high_k − f·(high_k − low_k) — a district's crime rate
  falls with patrol; crimes caught p_k·r_k. Optional ``start``/``stop`` (default 0 and 1 per
  group) make it saturate: r_k(f) = high_k − (high_k − low_k)·clip((f − start_k)/(stop_k −
  start_k), 0, 1) — patrol below ``start`` deters nothing, above ``stop`` nothing more
  (Lipschitz (high_k − low_k)/(stop_k − start_k); Eq. 4 is start = 0, stop = 1);
* ``"linear"``: r_k(f) = clip(intercept_k + slope_k·f);
* ``"concave"``: r_k(f) = clip(intercept_k + slope_k·√f) (diminishing returns of attention);
* ``"fico"``: r_k(f) = the repay probability of group k's median applicant after a score gain of
  f·75 points (a repaid loan's +75 of Liu et al. 2018), from the FICO tables — more lending
  raises the group's creditworthiness.

Regret (Eq. 3) is against the best fixed policy p*: under Eq. (2) a fixed p keeps f(t) = p
exactly, so its expected cumulative reward is t·Σ_k p_k r_k(p_k) (oracle
``best_fixed_policy``); under another impact function the oracle uses the limit
Σ_k p_k r_k(g(p_k)) per round (the §5.2 benchmark).

Compiled rounds: :meth:`ImpactBandit.compiled_world` declares the same step for one
replication (the police, linear and concave families with a built-in impact function), played
with probability vectors (:attr:`~impactbandits.core.world.CompiledWorld.simplex`), in which
the compiled loop plays the meta-arm learners' steps with the same numbers: the common random
numbers at (replication, group, round) from the same counters.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from impactbandits.core.compiled import declared_step, kernel
from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.spaces import Simplex
from impactbandits.core.streams import stream_uniform
from impactbandits.core.world import CompiledWorld
from impactbandits.envs.impact_functions import (
    DiscountedAverage,
    ImpactFunction,
    Smoothed,
    advance_impact,
    check_convergence,
    initial_impact,
)
from impactbandits.errors import SpecError
from impactbandits.loader import class_with_methods, load
from impactbandits.oracles.simplex import numpy_sum
from impactbandits.params import RESOLUTION, OnlyWhen, Probability, RequiredWhen

__all__ = ["ImpactBandit"]

#: Score gain of a repaid loan (Liu et al. 2018) used by the FICO-derived family.
FICO_SCORE_GAIN = 75.0


class ImpactBandit(Environment):
    """Tang et al.'s history-dependent bandit; see the module docstring."""

    default_oracle = "best_fixed_policy"

    def __init__(
        self,
        high: Annotated[
            Annotated[list[Probability], Field(min_length=1)] | None,
            RequiredWhen("family", "police"),
            OnlyWhen("family", "police"),
        ] = None,
        low: Annotated[
            list[Probability] | None,
            RequiredWhen("family", "police"),
            OnlyWhen("family", "police"),
        ] = None,
        family: Literal["police", "linear", "concave", "fico"] = "police",
        intercept: Annotated[
            list[Probability] | None,
            RequiredWhen("family", "linear", "concave"),
            OnlyWhen("family", "linear", "concave"),
        ] = None,
        slope: Annotated[
            list[Annotated[float, Field(ge=-1.0, le=1.0)]] | None,
            RequiredWhen("family", "linear", "concave"),
            OnlyWhen("family", "linear", "concave"),
        ] = None,
        gamma: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.0,
        resolution: Annotated[int | None, Field(gt=0), RESOLUTION] = None,
        feedback: Literal["independent", "single", "allocation"] = "independent",
        # the FICO tables' 4 groups
        groups: Annotated[int | None, Field(gt=0, le=4), OnlyWhen("family", "fico")] = None,
        start: Annotated[list[Probability] | None, OnlyWhen("family", "police")] = None,
        stop: Annotated[list[Probability] | None, OnlyWhen("family", "police")] = None,
        impact: str = "discounted",
        impact_params: dict[str, Any] | None = None,
    ) -> None:
        self.family, self.feedback = family, feedback
        self.impact = _impact_function(impact, impact_params or {}, float(gamma))
        self.gamma = float(self.impact.rate)
        if family != "police" and (start is not None or stop is not None):
            raise SpecError("start", "'start' and 'stop' belong to the police family")
        if family == "police":
            if high is None or low is None or len(high) != len(low):
                raise SpecError("high", "the police family needs 'high' and 'low' per group")
            if any(lo > hi for lo, hi in zip(low, high, strict=True)):
                raise SpecError("low", "each group needs low <= high (crime rate falls)")
            self.a = np.asarray(high, dtype=float)
            self.b = np.asarray(low, dtype=float) - self.a
            self._start = np.zeros(len(high)) if start is None else np.asarray(start, float)
            stops = np.ones(len(high)) if stop is None else np.asarray(stop, float)
            for name, given in (("start", start), ("stop", stop)):
                if given is not None and len(given) != len(high):
                    raise SpecError(name, f"needs one value per group ({len(high)})")
            if np.any(stops <= self._start):
                raise SpecError("stop", "each group needs start < stop (both in [0, 1])")
            self._width = stops - self._start
        elif family in ("linear", "concave"):
            if intercept is None or slope is None or len(intercept) != len(slope):
                raise SpecError("intercept", f"the {family} family needs 'intercept' and 'slope'")
            self.a, self.b = np.asarray(intercept, float), np.asarray(slope, float)
        else:
            from impactbandits.envs.fico import FICO_GROUPS

            k = groups or len(FICO_GROUPS)
            if k > len(FICO_GROUPS):
                raise SpecError("groups", f"the FICO family has at most {len(FICO_GROUPS)} groups")
            from impactbandits.envs.fico import sample_applicants

            self.a = np.zeros(k)
            self.b = np.zeros(k)
            self._fico_groups = FICO_GROUPS[:k]
            # each group's median applicant (fixed sample, seed = group index)
            self._fico_median = [
                float(np.median(sample_applicants(g, 101, np.random.default_rng(i))))
                for i, g in enumerate(self._fico_groups)
            ]
        k = self.a.size
        check_convergence(self.impact, k)
        self._space = Simplex(
            k, known={"gamma": self.gamma, "feedback": feedback}, resolution=resolution
        )
        if family in ("linear", "concave"):  # police and fico stay in [0, 1] by construction
            grid = np.linspace(0.0, 1.0, 101)[:, None]
            raw = self.a + self.b * (grid if family == "linear" else np.sqrt(grid))
            if not np.all((raw >= 0) & (raw <= 1)):
                group = int(np.argwhere((raw < 0) | (raw > 1))[0, 1])
                raise SpecError(
                    "slope",
                    f"group {group}: r(f) leaves [0, 1] for f in [0, 1]; "
                    "choose intercept and slope so it stays within",
                )

    @property
    def action_space(self) -> Simplex:
        return self._space

    def reward_function(self, f: np.ndarray) -> np.ndarray:
        """r_k(f_k) for an array whose last axis is the group."""
        f = np.asarray(f, dtype=float)
        if self.family == "police":
            return self.a + self.b * np.clip((f - self._start) / self._width, 0.0, 1.0)
        if self.family == "linear":
            return np.clip(self.a + self.b * f, 0.0, 1.0)
        if self.family == "concave":
            return np.clip(self.a + self.b * np.sqrt(np.clip(f, 0.0, 1.0)), 0.0, 1.0)
        from impactbandits.envs.fico import repay_probability

        out = np.empty(f.shape)
        for k, (group, median) in enumerate(zip(self._fico_groups, self._fico_median, strict=True)):
            out[..., k] = repay_probability(
                np.clip(median + FICO_SCORE_GAIN * f[..., k], 300, 850), group
            )
        return out

    def stationary_reward(self, shares: np.ndarray) -> np.ndarray:
        """r_k(g(p_k)): the mean reward of group k when share p_k is held (g = identity under
        Eq. 2)."""
        return self.reward_function(self.impact.limit(np.asarray(shares, dtype=float)))

    def fixed_value(self, p: np.ndarray) -> np.ndarray:
        """Σ_k p_k r_k(g(p_k)): per-round expected reward of keeping p fixed (f = p under Eq. 2)."""
        p = np.asarray(p, dtype=float)
        return (p * self.stationary_reward(p)).sum(axis=-1)

    def reset(self, random: EnvironmentRandom) -> None:
        size, k = random.size, self._space.n
        self._state = self.impact.initial(size, k)
        self._replications = size
        self._activation = random.noise(k, stream=0)
        self._payoff = random.noise(k, stream=1)
        self._t = 0

    def expected_reward(self, actions: np.ndarray) -> np.ndarray:
        _, f = self.impact.advance(self._state, actions)
        return (actions * self.reward_function(f)).sum(axis=1)

    def step(self, actions: np.ndarray) -> Outcome:
        state, f = self.impact.advance(self._state, actions)
        means = self.reward_function(f)
        expected = (actions * means).sum(axis=1)
        paid = (self._payoff.row(self._t) < means).astype(float)
        u = self._activation.row(self._t)
        if self.feedback == "independent":
            active = u < actions
        elif self.feedback == "single":
            cdf = np.cumsum(actions, axis=1)
            chosen = (cdf < (u[:, :1] * cdf[:, -1:])).sum(axis=1)
            active = np.zeros_like(actions, dtype=bool)
            active[np.arange(actions.shape[0]), np.minimum(chosen, actions.shape[1] - 1)] = True
        else:
            active = actions > 0
        observed = np.where(active, paid, np.nan)
        if self.feedback == "allocation":
            reward = (actions * np.nan_to_num(observed)).sum(axis=1)
        else:
            reward = np.nansum(observed, axis=1)
        self._state = state
        self._t += 1
        return Outcome(Feedback(reward, observed), expected)

    def compiled_world(self, rounds: int) -> CompiledWorld | None:
        """The compiled form of the rounds of the replications just reset
        (:mod:`~impactbandits.core.world`, played with probability vectors), or ``None`` (the
        FICO family; an impact function without a compiled form; a subclass that changes
        ``reward_function``)."""
        if declared_step(self, "compiled_world", ("reset", "step", "reward_function")) is None:
            return None
        declared = declared_step(self.impact, "compiled", ("initial", "advance", "limit"))
        form = None if declared is None else declared()
        if self.family == "fico" or form is None:
            return None
        k = self._space.n
        start, width = (self._start, self._width) if self.family == "police" else (0.0, 1.0)
        head = [_FAMILIES[self.family], _FEEDBACKS[self.feedback], *form]
        params = np.concatenate(
            [head, self.a, self.b, np.broadcast_to(start, k), np.broadcast_to(width, k)]
        )
        noise = np.empty((self._replications, 2, 3), dtype=np.uint64)
        for row, table in enumerate((self._activation, self._payoff)):
            noise[:, row, 0], noise[:, row, 1] = table.key
            noise[:, row, 2] = table.replications
        return CompiledWorld(_impact_init, _impact_step, params, np.zeros((1, 1)),
                             noise.reshape(self._replications, 6), simplex=True)  # fmt: skip


_FAMILIES = {"police": 0, "linear": 1, "concave": 2}
_FEEDBACKS = {"independent": 0, "single": 1, "allocation": 2}
_POLICE, _LINEAR = 0, 1
_SINGLE, _ALLOCATION = 1, 2
_HEAD = 5  # family, feedback and the impact function's three numbers; then a, b, start, width


@kernel
def _impact_init(
    params: np.ndarray, data: np.ndarray, k: int, rounds: int, noise: np.ndarray
) -> Any:
    """The impact state (K + 1), f, the means and a row of products (K each), and the noise:
    the activation and the payoff tables' stream words (two rows of three)."""
    state = np.empty(k + 1)
    initial_impact(params[2:_HEAD], state)
    return state, np.empty((3, k)), noise.reshape((2, 3))


@kernel(inline=True)
def _clip01(x: float) -> float:
    """``np.clip(x, 0.0, 1.0)`` (min(max(x, 0), 1), as NumPy orders it)."""
    x = x if x > 0.0 else 0.0
    return x if x < 1.0 else 1.0


@kernel(inline=True)
def _reward_of(params: np.ndarray, k: int, i: int, f: float) -> float:
    """:meth:`ImpactBandit.reward_function` of group ``i`` at impact ``f``."""
    a, b = params[_HEAD + i], params[_HEAD + k + i]
    family = params[0]
    if family == _POLICE:
        start, width = params[_HEAD + 2 * k + i], params[_HEAD + 3 * k + i]
        return a + b * _clip01((f - start) / width)
    if family == _LINEAR:
        return _clip01(a + b * f)
    return _clip01(a + b * math.sqrt(_clip01(f)))


@kernel
def _impact_step(
    world: Any, params: np.ndarray, t: int, action: np.ndarray, observed: np.ndarray
) -> tuple[float, float]:
    """:meth:`ImpactBandit.step` for one replication in round ``t``: ``(reward, expected)``."""
    state, rows, noise = world
    index = t - 1  # the noise tables' index: the round, from 0
    f, means, terms = rows[0], rows[1], rows[2]
    k = action.size
    advance_impact(params[2:_HEAD], state, action, f)
    for i in range(k):
        means[i] = _reward_of(params, k, i, f[i])
        terms[i] = action[i] * means[i]
    expected = numpy_sum(terms, 0, k)
    feedback = params[1]
    chosen = -1
    if feedback == _SINGLE:  # the inverse CDF of p at the first group's uniform
        cdf = 0.0
        for i in range(k):
            cdf += action[i]
        threshold = stream_uniform(noise[0], 0, 0, index) * cdf
        below, cdf = 0, 0.0
        for i in range(k):
            cdf += action[i]
            if cdf < threshold:
                below += 1
        chosen = min(below, k - 1)
    for i in range(k):
        paid = 1.0 if stream_uniform(noise[1], i, 0, index) < means[i] else 0.0
        if feedback == _SINGLE:
            active = i == chosen
        elif feedback == _ALLOCATION:
            active = action[i] > 0.0
        else:
            active = stream_uniform(noise[0], i, 0, index) < action[i]
        observed[i] = paid if active else np.nan
        value = paid if active else 0.0  # np.nansum, or np.nan_to_num
        terms[i] = action[i] * value if feedback == _ALLOCATION else value
    return numpy_sum(terms, 0, k), expected


def _impact_function(name: str, params: dict[str, Any], gamma: float) -> ImpactFunction:
    """Build the ``impact`` field: a built-in name (rate γ = ``gamma``) or ``"module:Class"``."""
    if name == "discounted":
        if params:
            raise SpecError("impact_params", "the discounted average (Eq. 2) takes none")
        return DiscountedAverage(gamma)
    if name == "smoothed":
        unknown = sorted(set(params) - {"power"})
        if unknown:
            raise SpecError("impact_params", f"unknown {unknown}; 'smoothed' takes 'power'")
        return Smoothed(gamma, **params)
    if ":" not in name:
        raise SpecError(
            "impact", f"unknown {name!r}; allowed: discounted, smoothed, 'module:Class'"
        )
    # the class is checked before it is built with ``impact_params``: nothing else is called
    cls = load(
        name,
        "impact",
        class_with_methods(
            "initial", "advance", "limit", base=ImpactFunction, wanted="an ImpactFunction class"
        ),
    )
    try:
        built = cls(**params)
    except TypeError as exc:
        raise SpecError("impact_params", f"{name}: {exc}") from None
    return built
