"""The reward-opportunity bandit (Ron, Ben-Porat & Shalit 2021, §2).

Stationary arms — Bernoulli, or general [0, 1] rewards drawn from Beta distributions with the
given means — plus a *fairness policy*: a fairness function f and transfer costs λ (one, or one
per arm). The learner is told f and λ (they are the decision-maker's own policy): the action
space carries them in ``known``. The objective is the utility of Eq. (1), computed after the run
from the recorded pull counts (:meth:`OpportunityBandit.summary_metrics`); regret is measured
against the exact Lemma-1 optimum (oracle ``opportunity_optimum``).

``penalty = "estimated"`` reproduces the authors' code, which evaluated the penalty's
requirement at the empirical means μ̂ of the run instead of the true μ (the fidelity ledger,
https://impactbandits.readthedocs.io/en/latest/fidelity/); arms never pulled count with μ̂ = 0
there. ``variant = "authors-code"`` reproduces their penalty exactly
(``BlackBoxAlgorithm.runSimulation``): λ·max(0, T f(μ̂)_i − N_i) with μ̂ the run's final
empirical means and T f(μ̂)_i *not* rounded down (the paper floors it, §2.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import numpy as np
from pydantic import Field

from impactbandits.core.environment import EnvironmentRandom
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.pull_model import PullModel
from impactbandits.core.spaces import Discrete
from impactbandits.envs.stationary import _StationaryArms
from impactbandits.errors import SpecError
from impactbandits.oracles.opportunity import penalty, requirements
from impactbandits.oracles.opportunity_fairness import make_fairness
from impactbandits.params import NonNegativeFloat, OnlyWhen, PositiveFloat, Probability

if TYPE_CHECKING:
    from impactbandits.core.simulate import Trajectory

__all__ = ["OpportunityBandit"]

#: Concentration κ of Beta(μκ, (1−μ)κ) rewards for ``distribution = "beta"``.
BETA_CONCENTRATION = 4.0


class OpportunityBandit(_StationaryArms):
    """R-O MAB instance ⟨K, T, μ, f, λ⟩ (Ron et al. 2021, §2).

    ``fairness``: ``zero``, ``uniform`` (1/K), ``linear`` (μ_i/K), ``softmax`` (with
    ``softmax_c``, default 1) or ``"module:function"``; ``transfer_cost``: λ ≥ 0 (one value or
    one per arm). Validation: f(μ) within [0, 1] and Σ_i f(μ)_i ≤ 1 at the instance's μ.
    """

    default_oracle = "opportunity_optimum"
    records_arm_rewards = True
    regret_on = "expected_utility"
    realised_on = "utility"

    def __init__(
        self,
        means: Annotated[list[Probability], Field(min_length=1)],
        fairness: str = "uniform",
        transfer_cost: NonNegativeFloat | list[NonNegativeFloat] = 0.0,
        softmax_c: Annotated[float, OnlyWhen("fairness", "softmax")] = 1.0,
        distribution: Literal["bernoulli", "beta"] = "bernoulli",
        concentration: Annotated[
            PositiveFloat, OnlyWhen("distribution", "beta")
        ] = BETA_CONCENTRATION,
        penalty: Literal["true", "estimated"] = "true",
        variant: Literal["paper", "authors-code"] = "paper",
    ) -> None:
        super().__init__(len(means))
        self.means = np.asarray(means, dtype=float)
        k = len(means)
        lam = np.atleast_1d(np.asarray(transfer_cost, dtype=float))
        if lam.size not in (1, k):
            raise SpecError("transfer_cost", f"give one value or one per arm ({k})")
        if np.any(lam < 0):
            raise SpecError("transfer_cost", "must be non-negative")
        self.transfer_cost = np.broadcast_to(lam, (k,)).copy()
        self.fairness = make_fairness(fairness, k, softmax_c)
        self.f_mu = self.fairness.check(self.means)
        if distribution == "beta" and np.any((self.means <= 0) | (self.means >= 1)):
            raise SpecError("means", "Beta rewards need means strictly inside (0, 1)")
        self.distribution, self.concentration = distribution, concentration
        self.variant = variant
        self.penalty = "estimated" if variant == "authors-code" else penalty
        self._space = Discrete(
            k, known={"fairness": self.fairness, "transfer_cost": self.transfer_cost}
        )

    @property
    def action_space(self) -> Discrete:
        return self._space

    def _instance_means(self, random: EnvironmentRandom) -> np.ndarray:
        return np.tile(self.means, (random.size, 1))

    def step(self, actions: np.ndarray) -> Outcome:
        u, mu = self._draw(actions)
        if self.distribution == "bernoulli":
            reward = (u < mu).astype(float)
        else:
            from scipy.special import betaincinv

            kappa = self.concentration
            reward = betaincinv(mu * kappa, (1.0 - mu) * kappa, u)
        return Outcome(Feedback(reward), mu)

    def pull_model(self, pulls: int) -> PullModel | None:
        """The compiled loop's view of :meth:`step` (:mod:`impactbandits.kernels`: the
        pull-table world, its copy that keeps each arm's rewards)."""
        if self.distribution == "bernoulli":
            return PullModel(self._mu[:, :, None], "bernoulli", 0.0, self._noise)
        return PullModel(
            self._mu[:, :, None], "beta-concentration", self.concentration, self._noise
        )

    def summary_metrics(self, trajectory: Trajectory) -> dict[str, np.ndarray]:
        """Utility (Eq. 1) at every checkpoint T: realised and expected, average utility and
        the requirement ⌊T f(μ)_i⌋ of every arm (opportunities required vs granted)."""
        times = np.asarray(trajectory.times, dtype=float)
        pulls = np.asarray(trajectory.pulls)
        if self.penalty == "true":
            required = np.broadcast_to(requirements(self.f_mu, times), pulls.shape)
        else:
            arm_rewards = np.asarray(trajectory.arm_rewards)
            with np.errstate(divide="ignore", invalid="ignore"):
                mu_hat = np.where(pulls > 0, arm_rewards / pulls, 0.0)
            if self.variant == "authors-code":  # T f(μ̂), not rounded down
                required = self.fairness(mu_hat) * times[None, :, None]
            else:
                required = requirements(self.fairness(mu_hat), times[None, :])
        cost = penalty(required, pulls, self.transfer_cost)
        reward = np.asarray(trajectory.reward)
        expected = np.asarray(trajectory.expected)
        out = {
            "utility": reward - cost,
            "expected_utility": expected - cost,
            "average_utility": (reward - cost) / times,
        }
        if self.penalty == "true":
            for arm in range(self._space.n):
                out[f"required_{arm}"] = requirements(self.f_mu, times)[:, arm]
        return out
