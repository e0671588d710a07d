"""Delayed impact of actions (Tang, Ho & Liu 2021, §2): meta-arms on the simplex.

K groups. An action is a probability vector p(t) (``Simplex`` space, optionally restricted to
the ε-grid with ``resolution`` = 1/ε). The impact on group k is the γ-discounted average of its
past and current shares (Eq. 2)::

    f_k(t) = Σ_{s≤t} p_k(s) γ^{t−s} / Σ_{s≤t} γ^{t−s}      (γ = 0: f(t) = p(t), action-dependent)

kept as two running sums (O(K) per round). A group's reward, when observed, is Bernoulli with
mean r_k(f_k(t)) (common random numbers per (replication, group, round)); the expected reward
of the round is Σ_k p_k r_k(f_k(t)) (Eq. 1). Feedback modes:

* ``"independent"`` (default, §2): each group is activated independently with probability p_k;
  only activated groups are observed and their rewards summed;
* ``"single"`` (footnote 2): exactly one group, drawn from p, is activated;
* ``"allocation"`` (Remark 2.1): every group with p_k > 0 is observed and the round pays
  Σ_k p_k·r_k(observed).

Reward families r_k(f), all Lipschitz with values in [0, 1]:

* ``"police"`` (Eq. 4, default): r_k(f) = high_k − f·(high_k − low_k) — a district's crime rate
  falls with patrol; crimes caught p_k·r_k;
* ``"linear"``: r_k(f) = clip(intercept_k + slope_k·f);
* ``"concave"``: r_k(f) = clip(intercept_k + slope_k·√f) (diminishing returns of attention);
* ``"fico"``: r_k(f) = the repay probability of group k's median applicant after a score gain of
  f·75 points (a repaid loan's +75 of Liu et al. 2018), from the FICO tables — more lending
  raises the group's creditworthiness.

Regret (Eq. 3) is against the best fixed policy p*: a fixed p keeps f(t) = p exactly, so its
expected cumulative reward is t·Σ_k p_k r_k(p_k) (oracle ``best_fixed_policy``).
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.spaces import Simplex
from impactbandits.errors import SpecError
from impactbandits.params import PositiveInt, Probability

__all__ = ["ImpactBandit"]

#: Score gain of a repaid loan (Liu et al. 2018) used by the FICO-derived family.
FICO_SCORE_GAIN = 75.0


class ImpactBandit(Environment):
    """Tang et al.'s history-dependent bandit; see the module docstring."""

    default_oracle = "best_fixed_policy"

    def __init__(
        self,
        high: Annotated[list[Probability], Field(min_length=1)] | None = None,
        low: list[Probability] | None = None,
        family: Literal["police", "linear", "concave", "fico"] = "police",
        intercept: list[float] | None = None,
        slope: list[float] | None = None,
        gamma: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.0,
        resolution: PositiveInt | None = None,
        feedback: Literal["independent", "single", "allocation"] = "independent",
        groups: PositiveInt | None = None,
    ) -> None:
        self.family, self.gamma, self.feedback = family, float(gamma), feedback
        if family == "police":
            if high is None or low is None or len(high) != len(low):
                raise SpecError("high", "the police family needs 'high' and 'low' per group")
            if any(lo > hi for lo, hi in zip(low, high, strict=True)):
                raise SpecError("low", "each group needs low <= high (crime rate falls)")
            self.a = np.asarray(high, dtype=float)
            self.b = np.asarray(low, dtype=float) - self.a
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
        self._space = Simplex(
            k, known={"gamma": self.gamma, "feedback": feedback}, resolution=resolution
        )
        if family in ("linear", "concave"):  # police and fico stay in [0, 1] by construction
            grid = np.linspace(0.0, 1.0, 101)[:, None]
            raw = self.a + self.b * (grid if family == "linear" else np.sqrt(grid))
            if not np.all((raw >= 0) & (raw <= 1)):
                group = int(np.argwhere((raw < 0) | (raw > 1))[0, 1])
                raise SpecError(
                    family,
                    f"group {group}: r(f) leaves [0, 1] for f in [0, 1]; "
                    "choose intercept and slope so it stays within",
                )

    @property
    def action_space(self) -> Simplex:
        return self._space

    def reward_function(self, f: np.ndarray) -> np.ndarray:
        """r_k(f_k) for an array whose last axis is the group."""
        f = np.asarray(f, dtype=float)
        if self.family in ("police", "linear"):
            return np.clip(self.a + self.b * f, 0.0, 1.0)
        if self.family == "concave":
            return np.clip(self.a + self.b * np.sqrt(np.clip(f, 0.0, 1.0)), 0.0, 1.0)
        from impactbandits.envs.fico import repay_probability, sample_applicants

        out = np.empty(f.shape)
        for k, group in enumerate(self._fico_groups):
            median = float(np.median(sample_applicants(group, 101, np.random.default_rng(k))))
            out[..., k] = repay_probability(
                np.clip(median + FICO_SCORE_GAIN * f[..., k], 300, 850), group
            )
        return out

    def fixed_value(self, p: np.ndarray) -> np.ndarray:
        """Σ_k p_k r_k(p_k): per-round expected reward of keeping p fixed (f = p)."""
        p = np.asarray(p, dtype=float)
        return (p * self.reward_function(p)).sum(axis=-1)

    def reset(self, random: EnvironmentRandom) -> None:
        size, k = random.size, self._space.n
        self._num = np.zeros((size, k))
        self._den = np.zeros((size, 1))
        self._activation = random.noise(k, stream=0)
        self._payoff = random.noise(k, stream=1)
        self._t = 0

    def _impact(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        num = self.gamma * self._num + actions
        den = self.gamma * self._den + 1.0
        return num, den

    def expected_reward(self, actions: np.ndarray) -> np.ndarray:
        num, den = self._impact(actions)
        return (actions * self.reward_function(num / den)).sum(axis=1)

    def step(self, actions: np.ndarray) -> Outcome:
        num, den = self._impact(actions)
        means = self.reward_function(num / den)
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
        self._num, self._den = num, den
        self._t += 1
        return Outcome(Feedback(reward, observed), expected)
