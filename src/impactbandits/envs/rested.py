"""Rested bandits: the m-th pull of arm i yields f_i(m) plus noise (Lindner et al. 2021, §2;
Heidari et al. 2016; Patil et al. 2023).

The reward depends only on how often the arm has been pulled, so the environment's state is the
vector of pull counts. Observation noise is drawn once per pull as common random numbers: the
noise of the m-th pull of arm i in replication r is a fixed function of (r, i, m), identical for
every policy. Noise models:

* ``"none"`` — noise-free observations;
* ``"gaussian"`` — N(0, σ²), unbounded (Lindner et al.'s experiments);
* ``"beta"`` — bounded symmetric noise ``σ·(2B − 1)`` with ``B ~ Beta(a, a)``, ``a =``
  :data:`BETA_NOISE_SHAPE`: values in [−σ, σ], the bounded-noise setting of Lindner et al. §4;
* ``"beta-mean"`` — not additive: the observation itself is ``Beta(α, β)`` with mean the
  expected reward μ (``α = β μ / (1 − μ)``, μ clipped to [10⁻⁶, 1 − 10⁻⁶], β =
  :data:`BETA_MEAN_SHAPE`; ``sigma`` unused), values in [0, 1]: the observation model of
  Metelli et al.'s (2022) experiments (their ``RewardModel.beta_noise``).

``noise_draws = "per-evaluation"`` (with noise) reproduces the authors' noisy arms, which
draw fresh noise at every *evaluation* of f, re-evaluations of past pulls included: the
feedback then also carries ``reevaluated``, fresh noisy evaluations of every arm's last two
values (used by greedy's and one-step-optimistic's ``variant = "authors-code"``); the rewards
themselves are unchanged. Default ``"per-pull"``: each pull's observation is drawn once.

Curves are validated when the environment is built: finite, within [0, 1]; the horizon check
(:meth:`RestedBandit.check_horizon`) requires at least as many values as the largest horizon.
Errors name the arm (numbered from 0) and the first bad pull.

The named families of curves (single-peaked, increasing, FICO, recommender, IMAB, …) are in
:mod:`impactbandits.envs.rested_families`; each only builds its curves and hands them to
:class:`RestedBandit`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from impactbandits import loader
from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.pull_model import PullModel
from impactbandits.core.random import CommonNoise
from impactbandits.core.spaces import Discrete
from impactbandits.envs.validation import check_table, validate_curves
from impactbandits.errors import SpecError
from impactbandits.params import LENGTH, NoiseScale

__all__ = ["BETA_MEAN_SHAPE", "BETA_NOISE_SHAPE", "RestedBandit", "validate_curves"]

NoiseKind = Literal["none", "gaussian", "beta", "beta-mean"]
NoiseDraws = Literal["per-pull", "per-evaluation"]
#: Fresh evaluations per arm and round with ``noise_draws = "per-evaluation"``: three of the
#: last pull's value f_i(n_i), then two of the previous one's f_i(n_i − 1) (what the authors'
#: one-step-optimistic evaluates per update; their greedy uses the first).
REEVALUATIONS = (3, 2)
#: Shape a of the symmetric Beta(a, a) behind bounded noise σ·(2B − 1).
BETA_NOISE_SHAPE = 2.0
#: Shape β of the mean-parametrised Beta(β μ / (1 − μ), β) observations of ``"beta-mean"``.
BETA_MEAN_SHAPE = 2.0
#: Clip of the mean μ before it parametrises a ``"beta-mean"`` observation.
BETA_MEAN_CLIP = 1e-6
#: The pull model's name of each noise kind (``"none"`` has no noise table).
_PULL_NOISE: dict[str, Literal["normal", "beta", "beta-mean"]] = {
    "gaussian": "normal",
    "beta": "beta",
    "beta-mean": "beta-mean",
}
#: What a curve named by its import path must be (checked before it is called).
CURVE = loader.function("a function of the pull count (a vectorised Python function)")
#: Default number of curve values when curves are given as callables.
DEFAULT_LENGTH = 100_000


def _evaluate(
    entry: Sequence[float] | str | Callable[..., object], arm: int, length: int
) -> np.ndarray:
    if isinstance(entry, str):
        entry = loader.load(entry, f"curves[{arm}]", CURVE)
    if callable(entry):
        values = np.asarray(entry(np.arange(1, length + 1)), dtype=float)
        if values.shape != (length,):
            raise SpecError(
                f"curves[{arm}]", f"callable must return {length} values for pulls 1..{length}"
            )
        return values
    return np.asarray(entry, dtype=float)


class RestedBandit(Environment):
    """Rested bandit from explicit curves: ``curves[i]`` is a list of f_i(1), f_i(2), … or the
    import path (``"module:function"``) of a vectorised callable evaluated at pulls 1..length.

    Default oracle: ``optimal_allocation`` (the exact optimal allocation of pulls, which is the
    value of the optimal policy: rewards depend only on pull counts).
    """

    default_oracle = "optimal_allocation"
    #: Curves computed by code named in the spec (an import path): not assumed deterministic.
    _curves_from_code = False

    def __init__(
        self,
        curves: Annotated[list[list[float] | str], Field(min_length=1)],
        noise: NoiseKind = "none",
        sigma: NoiseScale = 0.0,
        noise_draws: NoiseDraws = "per-pull",
        length: Annotated[int | None, Field(gt=0), LENGTH] = None,
    ) -> None:
        if any(isinstance(c, str) or callable(c) for c in curves):
            self._curves_from_code = True
            length = length or DEFAULT_LENGTH
            check_table(len(curves), length, "curves")
            rows = [_evaluate(c, i, length) for i, c in enumerate(curves)]
        else:
            rows = [np.asarray(c, dtype=float) for c in curves]
        sizes = {r.size for r in rows}
        if len(sizes) != 1:
            raise SpecError(
                "curves", f"every arm needs the same number of values, got {sorted(sizes)}"
            )
        self._setup(np.stack(rows), noise, sigma, noise_draws)

    def _setup(
        self,
        curves: np.ndarray,
        noise: str,
        sigma: float,
        noise_draws: str = "per-pull",
        *,
        upper: float = 1.0,
        lower: float = 0.0,
    ) -> None:
        """Validate and store ``curves`` (values within [``lower``, ``upper``]) and the noise
        model."""
        self.curves = validate_curves(curves, upper=upper, lower=lower)
        self.curves.setflags(write=False)
        if noise not in ("none", "beta-mean") and sigma <= 0:
            raise SpecError("sigma", f"{noise} noise needs sigma > 0")
        if noise == "beta-mean" and noise_draws != "per-pull":
            raise SpecError("noise_draws", "beta-mean observations are drawn per pull only")
        self.noise, self.sigma = noise, float(sigma)
        self.noise_draws = noise_draws
        n_arms, self.length = self.curves.shape
        self._space = Discrete(n_arms)
        # one padding column so expected_rewards() stays defined after an arm's last value
        self._padded = np.concatenate([self.curves, self.curves[:, -1:]], axis=1).reshape(-1)
        self._stride = self.length + 1

    @property
    def action_space(self) -> Discrete:
        return self._space

    @property
    def deterministic(self) -> bool:
        """Noise-free (``noise = "none"``): the m-th pull of arm i always yields f_i(m)."""
        return self.noise == "none" and not self._curves_from_code

    def check_horizon(self, rounds: int) -> None:
        if self.length < rounds:
            raise SpecError(
                "curves",
                f"each arm needs at least {rounds} values (the largest horizon); "
                f"arm 0 has {self.length}",
            )

    def reset(self, random: EnvironmentRandom) -> None:
        n = self._space.n
        self._counts = np.zeros((random.size, n), dtype=np.int64)
        self._flat_counts = self._counts.reshape(-1)
        self._offsets = np.arange(random.size) * n
        self._noise = None
        self._redraw = None
        self._round = 0
        if self.noise != "none":
            kind = "normal" if self.noise == "gaussian" else "uniform"
            self._noise = random.noise(n, kind)
            if self.noise_draws == "per-evaluation":
                self._redraw = random.noise(n * sum(REEVALUATIONS), kind, stream=1)
        self._arm_base = np.arange(n) * self._stride

    def _observe(self, value: np.ndarray, actions: np.ndarray, index: np.ndarray) -> np.ndarray:
        """The learner's observation of expected rewards ``value`` at the ``index``-th pull
        (numbered from 0) of ``actions``: common random numbers indexed by (r, arm, pull)."""
        if self._noise is None:
            return value
        draws = self._noise.at(actions, index)
        if self.noise == "beta-mean":
            return beta_mean_observation(value, draws)
        return value + self._scaled(draws)

    def _scaled(self, values: np.ndarray) -> np.ndarray:
        if self.noise == "gaussian":
            return self.sigma * values
        from scipy.special import betaincinv  # only needed for bounded noise

        return self.sigma * (2.0 * betaincinv(BETA_NOISE_SHAPE, BETA_NOISE_SHAPE, values) - 1.0)

    def step(self, actions: np.ndarray) -> Outcome:
        flat = self._offsets + actions
        index = self._flat_counts.take(flat)
        if index.max() >= self.length:
            raise SpecError("horizon", f"an arm was pulled more than {self.length} times")
        value = self._padded.take(self._arm_base.take(actions) + index)
        self._flat_counts[flat] = index + 1
        self._round += 1
        feedback = Feedback(self._observe(value, actions, index))
        if self._redraw is not None:
            feedback = Feedback(feedback.reward, reevaluated=self._reevaluate(self._redraw))
        return Outcome(feedback, value)

    def pull_model(self, pulls: int) -> PullModel | None:
        """What :meth:`step` computes, as a function of (replication, arm, pull), for the
        compiled loops (:mod:`impactbandits.kernels`), with ``noise_draws = "per-evaluation"``
        the table of the re-evaluations (:attr:`~impactbandits.core.pull_model.PullModel.
        reevaluation`: the rewards are the same); ``None`` when the curves are shorter than
        ``pulls``. Call after :meth:`reset`."""
        if self.length < pulls:
            return None
        values = self.curves[None, :, :pulls]
        if self._noise is None:
            return PullModel(values, "none")
        noise = _PULL_NOISE[self.noise]
        return PullModel(values, noise, self.sigma, self._noise, reevaluation=self._redraw)

    def _reevaluate(self, redraw: CommonNoise) -> np.ndarray:
        """``(R, n, 5)``: every arm's f(n_i) three times and f(n_i − 1) twice, each with noise
        drawn anew from ``redraw`` (common random numbers indexed by round): the authors' code
        evaluates a noisy arm afresh at every call, including past pulls. An arm never pulled (or
        pulled once, for f(n_i − 1)) is evaluated at pull 0, i.e. gets NaN."""
        last, previous = REEVALUATIONS
        n = self._space.n
        counts = self._counts
        rows = self._arm_base[None, :] + counts - 1  # index of f(n_i) in the padded table
        current = np.where(counts > 0, self._padded.take(np.maximum(rows, 0)), np.nan)
        before = np.where(counts > 1, self._padded.take(np.maximum(rows - 1, 0)), np.nan)
        noise = self._scaled(redraw.row(self._round)).reshape(-1, n, last + previous)
        means = np.concatenate(
            [np.repeat(current[:, :, None], last, 2), np.repeat(before[:, :, None], previous, 2)],
            axis=2,
        )
        return means + noise

    def expected_rewards(self) -> np.ndarray:
        return self._padded.take(self._arm_base[None, :] + self._counts)

    @property
    def counts(self) -> np.ndarray:
        """``(R, N)`` pulls so far of every arm."""
        return self._counts


def beta_mean_observation(mean: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """Draw of Beta(β μ / (1 − μ), β) by inversion of ``uniform`` draws, μ = ``mean`` clipped to
    [:data:`BETA_MEAN_CLIP`, 1 − :data:`BETA_MEAN_CLIP`], β = :data:`BETA_MEAN_SHAPE`."""
    from scipy.special import betaincinv  # only needed for this observation model

    mu = np.clip(mean, BETA_MEAN_CLIP, 1.0 - BETA_MEAN_CLIP)
    return betaincinv(BETA_MEAN_SHAPE * mu / (1.0 - mu), BETA_MEAN_SHAPE, uniform)
