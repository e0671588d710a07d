"""dRGP-UCB and dRGP-TS for recovering bandits (Pike-Burke & Grünewälder, "Recovering
Bandits", NeurIPS 2019; arXiv 1910.14354).

Model and sources: :mod:`impactbandits.envs.recovering`; planning helpers:
:mod:`impactbandits.oracles.recovering`; the GP posterior: :mod:`impactbandits.policies.gp`.
Only the paper's abstract and introduction could be read here ("we explore the use of Gaussian
processes to tackle the estimation and planing problem"); every rule and constant below is the
authors' code's (github.com/ciarapb/recovering_bandits, ``functs/``), cited by file and function.

Both learners put an independent GP prior on each ``f_i`` — mean 0, squared-exponential kernel
(``lengthscale``, ``kernel_variance``), Gaussian noise ``noise`` — and never tune it (the
authors build ``GPy.models.GPRegression(kernel=RBF(variance=1, lengthscale=ℓ),
noise_var=noisevar)`` and never call ``optimize``). By default the prior and the noise are the
ones the environment tells (``action_space.known``: the true ``σ`` and the setup's kernel, as in
the authors' runs); each can be overridden. The learner tracks every arm's ``z`` from its own
actions (:class:`~impactbandits.oracles.recovering.RecoveryClock`).

Rounds (``RGPUCB`` in ``rgpucb_functs.py``, ``RGPUCBds`` in ``drgpucb_functs.py``, and the TS
counterparts): rounds ``1 … K`` pull arms ``0 … K−1`` in turn; then, every ``d = lookahead``
rounds from round ``K + 1``, the learner chooses a sequence of ``d`` arms from the posterior at
that moment and plays it through (the posterior is updated after every pull but the plan is not
revised: "we have already chosen sequence so it doesnt matter", ``RGPUCBds``). Sequences: all
``K^d`` with repeated arms (``repetitions = True``: what the authors' figure notebooks run,
``RGPTSds(..., repetitions=True)`` in ``make_plots/posterior_covariate_plots_drgpts.ipynb`` and
``RGPUCBds(..., repetitions=True)`` in ``..._drgpucb.ipynb``, the latter from a module
``rgpucb_ds_functs_t`` missing from the repository; and what the ``K^d`` in β counts) or the
``K!/(K−d)!`` without (``False``, ``RGPUCBds``'s default argument). Each planned pull meets
the ``z`` the plan leads to (``gen_functs.ZPlayedSeq``). Ties go to the first sequence in
lexicographic order (the authors take a ``max`` over a dict, whose order is arbitrary; for
``d = 1``, ``max(Arms, ...)``, the lowest index).

- :class:`RGPUCB` (``drgpucb_functs.UCBSeqRep``; ``rgpucb_functs.CalcUCB`` for ``d = 1``): the
  sequence ``J = (j_1 … j_d)`` meeting ``z_1 … z_d`` scores
  ``Σ_l μ_{j_l}(z_l) + √β_t · √(Σ_l v_{j_l}(z_l) + 2 Σ_{l<m, j_l = j_m} c_{j_l}(z_l, z_m))``
  with ``β_t = 2 log((t + d − 1)² K^d z_max)``, ``t`` the rounds already played (their 0-based
  loop index; ``d = 1``: ``2 log(t² z_max K)``). ``v`` is GPy's ``predict`` variance, which
  includes the noise ``σ²`` (``include_noise = None`` or ``True``; ``False``: the posterior
  variance of ``f``), ``c`` the posterior covariance of ``f``
  (``posterior_covariance_between_points``).
- :class:`RGPTS`: for ``d = 1`` (``rgpts_functs.GetTS``) each arm draws
  ``θ_i ~ N(μ_i(z_i), v_i(z_i))`` from ``predict`` (so with ``σ²``) and the largest is played;
  for ``d > 1`` (``drgpts_functs.SampleFuncts``) each arm draws one joint sample of ``f_i``
  (``posterior_samples_f``: without noise) and the sequence of highest sampled total is played.
  ``include_noise = None`` keeps that split; ``True`` / ``False`` force it either way. The joint
  sample covers the whole grid (the authors sample at ``min(z_i + l, z_max)``, ``l < d``, and
  ``0 … d−1``, which hold every ``z`` a plan can meet: the same law there), ``μ_i + A_i ε`` with
  ``A_i A_iᵀ = Σ_i`` (:func:`~impactbandits.policies.gp.sample_root`) and the sum over the grid
  taken in order. Draws come from the policy's counter-based stream at the planning round ``t``:
  ``ε_i`` on channel ``i`` (``d = 1``); ``ε_{i,g}`` on channel ``i·G + g`` and the noise draw of
  ``include_noise = True`` on channel ``K·G + i·G + g`` (``d > 1``, ``G = z_max + 1``).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np

from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.core.streams import PolicyStream
from impactbandits.errors import SpecError
from impactbandits.oracles.recovering import (
    RecoveryClock,
    best_plans,
    plan_positions,
    plan_table,
    row_chunks,
)
from impactbandits.params import NOISE, Lookahead, PositiveFloat
from impactbandits.policies.gp import GridGP, sample_root

__all__ = ["RGPTS", "RGPUCB", "ucb_beta"]

_TOLD = ("z_max", "initial_z", "sigma", "lengthscale", "kernel_variance")


def ucb_beta(t: int, k: int, d: int, z_max: int) -> float:
    """``β_t = 2 log((t + d − 1)² K^d z_max)``, ``t`` the rounds already played (the authors'
    ``UCBSeqRep``)."""
    return 2.0 * math.log((t + d - 1) ** 2 * k**d * z_max)


class _RecoveringGP(Policy):
    """The rounds both learners share (module docstring); subclasses choose the plan."""

    name = ""

    def __init__(
        self,
        lookahead: Lookahead = 1,
        repetitions: bool = True,
        lengthscale: PositiveFloat | None = None,
        kernel_variance: PositiveFloat | None = None,
        noise: Annotated[PositiveFloat | None, NOISE] = None,
        include_noise: bool | None = None,
    ) -> None:
        if int(lookahead) < 1:
            raise SpecError("lookahead", "need lookahead >= 1")
        self.lookahead = int(lookahead)
        self.repetitions = bool(repetitions)
        self.lengthscale = lengthscale
        self.kernel_variance = kernel_variance
        self.noise = noise
        self.include_noise = include_noise

    def _full_cov(self) -> bool:
        return self.lookahead > 1

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        known = getattr(space, "known", {})
        if not all(name in known for name in _TOLD):
            raise SpecError(
                "kind", f"{self.name} needs z_max, initial_z and the GP prior: run it on a "
                "recovering bandit"
            )  # fmt: skip
        noise = float(known["sigma"]) if self.noise is None else float(self.noise)
        if noise <= 0:
            raise SpecError("noise", "the environment is noise-free: give the GP noise σ > 0")
        self.k, self.rows, self.z_max = space.n, rng.size, int(known["z_max"])
        self.sigma = noise
        self.clock = RecoveryClock(known["initial_z"], self.z_max, self.rows)
        self.gp = GridGP(
            self.rows,
            self.k,
            self.z_max,
            float(known["lengthscale"] if self.lengthscale is None else self.lengthscale),
            float(known["kernel_variance"] if self.kernel_variance is None
                  else self.kernel_variance),
            noise,
            self._full_cov(),
        )  # fmt: skip
        self.plans = plan_table(self.k, self.lookahead, self.repetitions)
        self.plan = np.zeros((self.rows, self.lookahead), dtype=np.int64)
        self.t = 0
        self._reset_draws(rng)

    def _reset_draws(self, rng: BatchRNG) -> None:
        return None

    def select(self) -> np.ndarray:
        self.t += 1
        if self.t <= self.k:  # initialisation: each arm once, in order
            return np.full(self.rows, self.t - 1, dtype=np.int64)
        step = (self.t - 1 - self.k) % self.lookahead
        if step == 0:
            self.plan = self.plans[self._choose()]
        return self.plan[:, step].copy()

    def _choose(self) -> np.ndarray:
        """``(R,)`` the index of the chosen plan in :attr:`plans`."""
        raise NotImplementedError

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        pulled_at = self.clock.record(actions)
        self.gp.observe(actions, pulled_at, np.asarray(feedback.reward, dtype=np.float64))


class RGPUCB(_RecoveringGP):
    """dRGP-UCB (Pike-Burke & Grünewälder 2019; the authors' ``drgpucb_functs.py``): every
    ``lookahead`` rounds the ``d``-arm sequence of highest GP upper confidence bound on its total
    (module docstring); ``lookahead = 1`` is 1RGP-UCB."""

    name = "rgp-ucb"
    deterministic = True

    def _full_cov(self) -> bool:
        return self.lookahead > 1 and self.repetitions

    def index(self, part: slice = slice(None)) -> np.ndarray:
        """``(R, P)``: every plan's upper confidence bound now (``t`` = rounds played), for the
        replications ``part``."""
        d = self.lookahead
        where = plan_positions(self.clock.z[part], self.plans, self.z_max)
        rows = np.arange(self.rows)[part, None]
        extra = 0.0 if self.include_noise is False else self.sigma**2  # None: with σ²
        mean = np.zeros(where.shape[:2])
        var = np.zeros(where.shape[:2])
        for step in range(d):
            arm, z = self.plans[None, :, step], where[:, :, step]
            mean = mean + self.gp.mean[rows, arm, z]
            var = var + (self.gp.var[rows, arm, z] + extra)
        cov = self.gp.cov
        for first in range(d):
            for second in range(first + 1, d):
                same = self.plans[:, first] == self.plans[:, second]
                if cov is None or not same.any():
                    continue
                arm = self.plans[None, :, first]
                pair = cov[rows, arm, where[:, :, first], where[:, :, second]]
                var = var + np.where(same[None, :], 2.0 * pair, 0.0)
        beta = ucb_beta(self.t - 1, self.k, d, self.z_max)
        return mean + math.sqrt(beta) * np.sqrt(np.maximum(var, 0.0))

    def _choose(self) -> np.ndarray:
        chosen = np.zeros(self.rows, dtype=np.int64)
        for part in row_chunks(self.rows, self.plans):
            chosen[part] = np.argmax(self.index(part), axis=1)
        return chosen


class RGPTS(_RecoveringGP):
    """dRGP-TS (Pike-Burke & Grünewälder 2019; the authors' ``rgpts_functs.py`` and
    ``drgpts_functs.py``): every ``lookahead`` rounds, one posterior sample per arm and the
    ``d``-arm sequence of highest sampled total (module docstring); ``lookahead = 1`` is
    1RGP-TS."""

    name = "rgp-ts"

    def _reset_draws(self, rng: BatchRNG) -> None:
        self.stream: PolicyStream = rng.stream
        self._with_noise = (
            self.lookahead == 1 if self.include_noise is None else bool(self.include_noise)
        )
        size = self.z_max + 1
        self._channels = np.arange(self.k * size).reshape(self.k, size)
        self._root: Any = None
        self._stale = np.ones((self.rows, self.k), dtype=bool)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        super().update(actions, feedback)
        self._stale[np.arange(self.rows), actions] = True

    def sample(self) -> np.ndarray:
        """``(R, K, G)``: one joint posterior sample of every ``f_i`` on the grid (``d > 1``)."""
        cov = self.gp.cov
        assert cov is not None
        if self._root is None:
            self._root = np.zeros_like(cov)
        stale = np.nonzero(self._stale)
        self._root[stale] = sample_root(cov[stale])
        self._stale[:] = False
        eps = self.stream.normal(self._channels, self.t)  # (R, K, G)
        draw = self.gp.mean.copy()
        for g in range(self._channels.shape[1]):  # Σ_g A[..., g] ε_g, in order
            draw = draw + self._root[:, :, :, g] * eps[:, :, g, None]
        if self._with_noise:
            noise = self.stream.normal(self._channels + self._channels.size, self.t)
            draw = draw + self.sigma * noise
        return draw

    def _choose(self) -> np.ndarray:
        if self.lookahead > 1:
            return best_plans(self.sample(), self.clock.z, self.plans)[0]
        rows, arms = np.arange(self.rows)[:, None], np.arange(self.k)[None, :]
        z = self.clock.z
        extra = self.sigma**2 if self._with_noise else 0.0
        spread = np.sqrt(np.maximum(self.gp.var[rows, arms, z], 0.0) + extra)
        theta = self.gp.mean[rows, arms, z] + spread * self.stream.normal(np.arange(self.k), self.t)
        return np.argmax(theta[:, self.plans[:, 0]], axis=1)
