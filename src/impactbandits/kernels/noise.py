"""Common noise inside compiled loops: Philox4x32-10 and the same inversions as NumPy's path.

:func:`uniform53` is :func:`impactbandits.core.philox.uniforms` for one (replication, channel,
index), word for word; Gaussian and bounded (Beta) noise use SciPy's own ``ndtri`` and
``betaincinv`` through their C entry points (``scipy.special.cython_special``), the functions
the NumPy path calls, so every value is identical.
"""

from __future__ import annotations

from typing import Any

import llvmlite.binding as llvm
import numpy as np
from numba import njit, types
from numba.extending import get_cython_function_address, overload

from impactbandits.core.streams import beta_inverse as _core_beta_inverse
from impactbandits.core.streams import inverse_normal
from impactbandits.kernels.codes import BERNOULLI, BETA_CONCENTRATION, BETA_MEAN, NORMAL

_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = np.uint64(0x9E3779B9)
_W1 = np.uint64(0xBB67AE85)
_MASK = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_S11 = np.uint64(11)
_ONE = np.uint64(1)
_UNIT53 = 1.0 / 9007199254740992.0
_UNIT52 = 1.0 / 4503599627370496.0


def _bind(symbol: str, scipy_name: str, signature: Any) -> Any:
    """SciPy's C function ``scipy_name`` as an external symbol of the compiled code: called by
    name, so the compiled loops can be cached on disk (a ctypes pointer could not)."""
    llvm.add_symbol(symbol, get_cython_function_address("scipy.special.cython_special", scipy_name))
    return types.ExternalFunction(symbol, signature)


_ndtri = _bind("impactbandits_ndtri", "ndtri", types.float64(types.float64))
_betaincinv = _bind(
    "impactbandits_betaincinv",
    "__pyx_fuse_0betaincinv",
    types.float64(types.float64, types.float64, types.float64),
)


@overload(inverse_normal, inline="always")
def _inverse_normal(p: Any) -> Any:
    """Compiled :func:`~impactbandits.core.streams.inverse_normal`: the same C function."""

    def implementation(p: Any) -> Any:
        return _ndtri(p)

    return implementation


@overload(_core_beta_inverse, inline="always")
def _beta_inverse_overload(a: Any, b: Any, u: Any) -> Any:
    """Compiled :func:`~impactbandits.core.streams.beta_inverse`: the same C function."""

    def implementation(a: Any, b: Any, u: Any) -> Any:
        return _betaincinv(a, b, u)

    return implementation


@njit(cache=True, nogil=True)
def bits53(
    k0: np.uint64, k1: np.uint64, replication: np.uint64, channel: int, index: int
) -> np.uint64:
    """The 53-bit integer behind value ``index`` of (``replication``, ``channel``)."""
    j = np.uint64(index) >> _ONE
    c0 = j & _MASK
    c1 = j >> _S32
    c2 = np.uint64(channel)
    c3 = replication
    for i in range(10):
        if i > 0:
            k0 = (k0 + _W0) & _MASK
            k1 = (k1 + _W1) & _MASK
        p0 = c0 * _M0
        p1 = c2 * _M1
        c0, c1, c2, c3 = (p1 >> _S32) ^ c1 ^ k0, p1 & _MASK, (p0 >> _S32) ^ c3 ^ k1, p0 & _MASK
    if np.uint64(index) & _ONE:
        return ((c3 << _S32) | c2) >> _S11
    return ((c1 << _S32) | c0) >> _S11


# tests/test_kernels.py checks that every value equals the NumPy path's.
@njit(cache=True, nogil=True)
def uniform53(
    k0: np.uint64, k1: np.uint64, replication: np.uint64, channel: int, index: int
) -> float:
    """:func:`impactbandits.core.philox.uniforms` at one position."""
    return float(bits53(k0, k1, replication, channel, index)) * _UNIT53


@njit(cache=True, nogil=True)
def normal(k0: np.uint64, k1: np.uint64, replication: np.uint64, channel: int, index: int) -> float:
    """:func:`impactbandits.core.philox.normals` at one position."""
    k52 = bits53(k0, k1, replication, channel, index) >> _ONE
    return _ndtri((float(k52) + 0.5) * _UNIT52)


@njit(cache=True, nogil=True)
def beta_inverse(a: float, b: float, u: float) -> float:
    """``scipy.special.betaincinv(a, b, u)``."""
    return _betaincinv(a, b, u)


#: Shape of the symmetric Beta behind bounded noise (:data:`impactbandits.envs.rested.
#: BETA_NOISE_SHAPE`).
_BETA_SHAPE = 2.0
#: β and the clip of μ of the ``"beta-mean"`` observations (:data:`impactbandits.envs.rested.
#: BETA_MEAN_SHAPE`, :data:`~impactbandits.envs.rested.BETA_MEAN_CLIP`; a test checks they agree).
_BETA_MEAN_SHAPE = 2.0
_BETA_MEAN_CLIP = 1e-6


@njit(cache=True, nogil=True)
def outcome(
    noise: int,
    sigma: float,
    key: np.ndarray,
    replication: np.uint64,
    arm: int,
    pull: int,
    value: float,
) -> float:
    """The reward of the pull: the environment's ``step`` for one (r, i, m). ``noise``: 0 none
    (``value + 0.0``), NORMAL ``value + σ·z``, BETA ``value + σ·(2·B⁻¹(u) − 1)``, BERNOULLI
    ``1{u < value}``, BETA_MEAN the inverse CDF at u of Beta(β μ / (1 − μ), β), μ = ``value``
    clipped as :func:`impactbandits.envs.rested.beta_mean_observation` clips it,
    BETA_CONCENTRATION the inverse CDF at u of Beta(μκ, (1 − μ)κ), μ = ``value``, κ = ``sigma``."""
    if noise == 0:
        return value + 0.0
    if noise == NORMAL:
        return value + sigma * normal(key[0], key[1], replication, arm, pull)
    u = uniform53(key[0], key[1], replication, arm, pull)
    if noise == BERNOULLI:
        return 1.0 if u < value else 0.0
    if noise == BETA_MEAN:
        mu = value
        if mu < _BETA_MEAN_CLIP:  # np.clip(value, clip, 1 - clip), as minimum(maximum(...))
            mu = _BETA_MEAN_CLIP
        if mu > 1.0 - _BETA_MEAN_CLIP:
            mu = 1.0 - _BETA_MEAN_CLIP
        return beta_inverse(_BETA_MEAN_SHAPE * mu / (1.0 - mu), _BETA_MEAN_SHAPE, u)
    if noise == BETA_CONCENTRATION:
        return beta_inverse(value * sigma, (1.0 - value) * sigma, u)
    return value + sigma * (2.0 * beta_inverse(_BETA_SHAPE, _BETA_SHAPE, u) - 1.0)


#: Fresh evaluations per arm and round: of the last pull's value, then of the previous one's
#: (:data:`impactbandits.envs.rested.REEVALUATIONS`; a test checks they agree).
_REEVALUATED_LAST = 3
_REEVALUATED = 5


@njit(cache=True, nogil=True)
def reevaluations(
    noise: int,
    sigma: float,
    key: np.ndarray,
    replication: np.uint64,
    row: np.ndarray,
    per_pull: bool,
    pulls: np.ndarray,
    t: int,
    fresh: np.ndarray,
) -> None:
    """``fresh`` ``(K, 5)``: round ``t``'s re-evaluations of one replication
    (:meth:`impactbandits.envs.rested.RestedBandit._reevaluate`, :attr:`~impactbandits.core.
    pull_model.PullModel.reevaluation`): arm i's expected reward at pull n = ``pulls[i]`` (j <
    3) or ``pulls[i] − 1`` (``row[i, n − 1]``, or ``row[i, 0]`` unless ``per_pull``) with the
    noise of :func:`outcome` at (``replication``, 5i + j, t) of the table keyed by ``key[2:4]``;
    NaN if n = 0."""
    again = key[2:4]
    for i in range(pulls.size):
        for j in range(_REEVALUATED):
            n = pulls[i] if j < _REEVALUATED_LAST else pulls[i] - 1
            if n < 1:
                fresh[i, j] = np.nan
            else:
                value = row[i, n - 1 if per_pull else 0]
                fresh[i, j] = outcome(noise, sigma, again, replication, _REEVALUATED * i + j, t,
                                      value)  # fmt: skip
