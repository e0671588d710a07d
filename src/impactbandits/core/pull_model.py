"""An environment's outcomes as a function of (replication, arm, pull): the pull table, the world
(:mod:`~impactbandits.core.world`) of every environment whose expected rewards depend only on
the arm and its pulls (or the round), with its noise models written once for the compiled
loops."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from impactbandits.core.compiled import kernel
from impactbandits.core.random import CommonNoise
from impactbandits.core.streams import beta_inverse, counter_normal, counter_uniform
from impactbandits.core.world import CompiledWorld, noise_words

__all__ = [
    "NOISE_CODES",
    "PullModel",
    "outcome",
    "table_init",
    "table_reevaluate",
    "table_step",
    "table_world",
]


@dataclass(frozen=True)
class PullModel:
    """The m-th pull of arm i in replication r has expected reward
    ``values[r or 0, i, m or 0]`` (shape ``(R or 1, K, M or 1)``; by round: :attr:`by_round`)
    and reward

    * ``"none"``: the expected reward;
    * ``"normal"``: expected + ``sigma`` · z, z the standard normal of ``noise`` at (r, i, m);
    * ``"beta"``: expected + ``sigma`` · (2·B⁻¹(u) − 1), B the Beta(2, 2) CDF, u the uniform
      of ``noise`` at (r, i, m) (bounded noise of the rested bandits);
    * ``"bernoulli"``: 1 if u < expected else 0;
    * ``"beta-mean"``: B⁻¹(u), B the CDF of Beta(β μ / (1 − μ), β), μ = expected clipped (the
      observation model of :func:`impactbandits.envs.rested.beta_mean_observation`);
    * ``"beta-concentration"``: B⁻¹(u), B the CDF of Beta(μκ, (1 − μ)κ), κ = ``sigma`` (the
      reward-opportunity bandit's Beta rewards).
    """

    values: np.ndarray
    noise: Literal["none", "normal", "beta", "bernoulli", "beta-mean", "beta-concentration"]
    sigma: float = 0.0
    table: CommonNoise | None = None
    by_round: bool = False
    """Whether the expected reward depends on the round instead of the pull: the m-th pull of
    arm i in round t then has expected reward ``values[r or 0, i, t − 1]`` (a restless arm:
    piecewise-stationary means), its noise still that of pull m."""
    reevaluation: CommonNoise | None = None
    """The table of fresh re-evaluations (a rested bandit with ``noise_draws =
    "per-evaluation"``; ``"normal"`` or ``"beta"`` noise, rewards as above): after the pull of
    round t, value j of arm i in ``Feedback.reevaluated`` is ``values[r or 0, i, n − 1]``, n =
    n_i (j < 3) or n_i − 1 (j = 3, 4) and n_i the arm's pulls so far, plus noise as ``noise``
    says from this table at (r, 5i + j, t); NaN if n = 0. ``None``: no re-evaluations."""


# noise models of a pull table, as the compiled worlds number them (0: none)
NORMAL = 1
BETA = 2
BERNOULLI = 3
BETA_MEAN = 4
BETA_CONCENTRATION = 5
#: :attr:`PullModel.noise` by number.
NOISE_CODES = {
    "none": 0,
    "normal": NORMAL,
    "beta": BETA,
    "bernoulli": BERNOULLI,
    "beta-mean": BETA_MEAN,
    "beta-concentration": BETA_CONCENTRATION,
}
#: Shape of the symmetric Beta behind bounded noise (:data:`impactbandits.envs.rested.
#: BETA_NOISE_SHAPE`; a test checks they agree).
_BETA_SHAPE = 2.0
#: β and the clip of μ of the ``"beta-mean"`` observations (:data:`impactbandits.envs.rested.
#: BETA_MEAN_SHAPE`, :data:`~impactbandits.envs.rested.BETA_MEAN_CLIP`; a test checks they agree).
_BETA_MEAN_SHAPE = 2.0
_BETA_MEAN_CLIP = 1e-6
#: Fresh evaluations per arm and round: of the last pull's value, then of the previous one's
#: (:data:`impactbandits.envs.rested.REEVALUATIONS`; a test checks they agree).
_REEVALUATED_LAST = 3
_REEVALUATED = 5


@kernel
def outcome(code: int, sigma: float, noise: np.ndarray, table: int, arm: int, pull: int,
            value: float) -> float:  # fmt: skip
    """The reward of a pull of expected reward ``value``: the noise model ``code`` (module
    numbers; :class:`PullModel`) with the common noise of table ``table`` of ``noise`` (a
    world's words) at (arm, pull): 0 ``value + 0.0``, NORMAL ``value + σ·z``, BETA ``value +
    σ·(2·B⁻¹(u) − 1)``, BERNOULLI ``1{u < value}``, BETA_MEAN the inverse CDF at u of Beta(β μ /
    (1 − μ), β), μ = ``value`` clipped as :func:`impactbandits.envs.rested.
    beta_mean_observation` clips it, BETA_CONCENTRATION the inverse CDF at u of Beta(μκ, (1 −
    μ)κ), μ = ``value``, κ = ``sigma``."""
    if code == 0:
        return value + 0.0
    if code == NORMAL:
        return value + sigma * counter_normal(noise, table, arm, pull)
    u = counter_uniform(noise, table, arm, pull)
    if code == BERNOULLI:
        return 1.0 if u < value else 0.0
    if code == BETA_MEAN:
        mu = value
        if mu < _BETA_MEAN_CLIP:  # np.clip(value, clip, 1 - clip), as minimum(maximum(...))
            mu = _BETA_MEAN_CLIP
        if mu > 1.0 - _BETA_MEAN_CLIP:
            mu = 1.0 - _BETA_MEAN_CLIP
        return beta_inverse(_BETA_MEAN_SHAPE * mu / (1.0 - mu), _BETA_MEAN_SHAPE, u)
    if code == BETA_CONCENTRATION:
        return beta_inverse(value * sigma, (1.0 - value) * sigma, u)
    return value + sigma * (2.0 * beta_inverse(_BETA_SHAPE, _BETA_SHAPE, u) - 1.0)


# The pull table as a world (:mod:`~impactbandits.core.world`). params: (noise code, σ, by
# round); data: ``values`` (R or 1, K, M or 1); noise: the table's words, then the
# re-evaluation table's. State: (values row (K, M), pulls per arm, noise words, code, σ, by
# round, by pull).


@kernel(inline=True)
def table_init(params: np.ndarray, row: np.ndarray, k: int, rounds: int,
               noise: np.ndarray) -> tuple[Any, ...]:  # fmt: skip
    """The world's state for one replication."""
    pulls = np.zeros(k, dtype=np.int64)
    return row, pulls, noise, int(params[0]), params[1], params[2] > 0.0, row.shape[1] > 1


@kernel(inline=True)
def table_step(state: Any, params: np.ndarray, t: int, arm: int) -> tuple[float, float]:
    """Round ``t``'s pull of ``arm``: ``(reward, expected reward)``."""
    table_pulls = state[1]
    m = table_pulls[arm]
    if state[5]:
        expected = state[0][arm, t - 1]
    elif state[6]:
        expected = state[0][arm, m]
    else:
        expected = state[0][arm, 0]
    table_pulls[arm] = m + 1
    return outcome(state[3], state[4], state[2], 0, arm, m, expected), expected


@kernel(inline=True)
def table_reevaluate(state: Any, params: np.ndarray, t: int, fresh: np.ndarray) -> None:
    """``fresh`` ``(K, 5)``: round ``t``'s re-evaluations of the replication
    (:meth:`impactbandits.envs.rested.RestedBandit._reevaluate`, :attr:`PullModel.
    reevaluation`): arm i's expected reward at pull n = ``pulls[i]`` (j < 3) or ``pulls[i] −
    1`` (``row[i, n − 1]``, or ``row[i, 0]`` unless per pull) with the noise of
    :func:`outcome` at (5i + j, t) of the re-evaluation table; NaN if n = 0."""
    row, pulls, noise, code, sigma, per_pull = (
        state[0],
        state[1],
        state[2],
        state[3],
        state[4],
        state[6],
    )
    for i in range(pulls.size):
        for j in range(_REEVALUATED):
            n = pulls[i] if j < _REEVALUATED_LAST else pulls[i] - 1
            if n < 1:
                fresh[i, j] = np.nan
            else:
                value = row[i, n - 1 if per_pull else 0]
                fresh[i, j] = outcome(code, sigma, noise, 1, _REEVALUATED * i + j, t, value)


def table_world(model: PullModel, replications: int, reevaluating: bool = False) -> CompiledWorld:
    """``model`` as a compiled world (:mod:`~impactbandits.core.world`) for ``replications``
    replications (``reevaluating``: with its re-evaluations, which need the same replications as
    its noise)."""
    params = np.array([NOISE_CODES[model.noise], float(model.sigma), float(model.by_round)])
    tables = (model.table, model.reevaluation) if reevaluating else (model.table,)
    return CompiledWorld(
        table_init,
        table_step,
        params,
        model.values,
        noise_words(replications, *tables),
        table_reevaluate if reevaluating else None,
    )
