"""A policy's own counter-based random stream: draws indexed by replication, channel and round.

A sampling policy (Thompson sampling, a randomised detector) draws from its stream by
*position*, never by order: the value at (replication, channel, round, slot) is Philox4x32-10
(:mod:`~impactbandits.core.philox`) at that counter under the policy's key, as the environments'
common noise is. So a policy's draws do not depend on how replications are batched, on the
backend or on the worker count, and its readable form and its compiled step read the same
numbers: :class:`PolicyStream` evaluates them vectorised over a batch, and the kernels below
(:func:`stream_uniform`, :func:`stream_normal`, :func:`stream_gamma`, :func:`stream_beta`) for
one replication inside a compiled loop, which hands each replication's stream to the step's
``init`` (:attr:`~impactbandits.core.compiled.CompiledStep.stream`).

Positions: round ``t`` of channel ``c`` owns the :data:`SLOTS` values at indices
``t·SLOTS … t·SLOTS + SLOTS − 1``; a channel is whatever the policy numbers (usually the arm).
Distributions, each the same function of the uniforms on every path:

* uniform: the 53-bit value at slot 0 (or the slot asked for), in [0, 1);
* normal: inversion, ``Φ⁻¹((k + ½) / 2⁵²)`` (as the common noise; SciPy's ``ndtri``);
* gamma(a): Marsaglia & Tsang (2000), "A simple method for generating gamma variables", ACM
  TOMS 26(3): attempt i reads the normal at slot 2i and the uniform at slot 2i + 1 (at most
  :data:`ATTEMPTS` attempts, each accepted with probability > 0.95 for a ≥ 1: after them, with
  probability below 10⁻¹⁹, the value is ``a − 1/3``); for a < 1, G(a) = G(a + 1)·U^{1/a} with U
  at the last slot;
* beta(a, b) = G_a / (G_a + G_b), the two gammas on channels 2c and 2c + 1.

The arithmetic is the same, operation by operation, in both forms, with the C library's
``log`` and ``pow`` (:mod:`~impactbandits.core.ops`), so the values agree bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from impactbandits.core import ops
from impactbandits.core.compiled import kernel
from impactbandits.core.philox import normals, stream_key, uniforms

__all__ = [
    "ATTEMPTS",
    "SLOTS",
    "PolicyStream",
    "beta_inverse",
    "counter_normal",
    "counter_uniform",
    "inverse_normal",
    "stream_beta",
    "stream_gamma",
    "stream_normal",
    "stream_uniform",
]

# tests/test_streams.py checks that both forms agree bit for bit.

#: Values per (channel, round).
SLOTS = 32
#: Marsaglia–Tsang attempts per gamma value (two slots each; the last slot is the boost's).
ATTEMPTS = 15
_BOOST = SLOTS - 1

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


def inverse_normal(p: float) -> float:
    """Φ⁻¹(p), SciPy's ``ndtri`` (the compiled loops call the same C function)."""
    from scipy.special import ndtri

    return float(ndtri(p))


class PolicyStream:
    """A policy's stream over a batch of replications (the readable form's draws): values of
    shape ``(R, *channel.shape)`` for channels broadcast against every replication."""

    def __init__(self, key: tuple[int, int], replications: Sequence[int] | np.ndarray) -> None:
        self.key = (int(key[0]) & 0xFFFFFFFF, int(key[1]) & 0xFFFFFFFF)
        self.replications = np.asarray(replications, dtype=np.uint64)

    @classmethod
    def from_key(
        cls, entropy: int, key: Sequence[int], replications: Sequence[int] | np.ndarray
    ) -> PolicyStream:
        """The stream ``key`` under root ``entropy`` (:func:`~impactbandits.core.philox.
        stream_key`) for these replications."""
        return cls(stream_key(int(entropy), tuple(int(k) for k in key)), replications)

    def child(self, number: int) -> PolicyStream:
        """An independent stream for a policy run inside this one (its ``number``-th)."""
        return PolicyStream(stream_key(self.key[0], (self.key[1], int(number))), self.replications)

    def words(self) -> np.ndarray:
        """``(R, 3)`` ``uint64``: each replication's stream as the compiled steps take it
        (key words, replication)."""
        out = np.empty((self.replications.size, 3), dtype=np.uint64)
        out[:, 0], out[:, 1], out[:, 2] = self.key[0], self.key[1], self.replications
        return out

    def _at(self, channel: np.ndarray | int, t: int, slot: int) -> tuple[np.ndarray, ...]:
        channel = np.asarray(channel, dtype=np.uint64)
        reps = self.replications.reshape((-1,) + (1,) * channel.ndim)
        return reps, channel, np.asarray(int(t) * SLOTS + int(slot), dtype=np.uint64)

    def uniform(self, channel: np.ndarray | int, t: int, slot: int = 0) -> np.ndarray:
        """Uniform values in [0, 1) at ``slot`` of round ``t``."""
        return uniforms(self.key, *self._at(channel, t, slot))

    def normal(self, channel: np.ndarray | int, t: int, slot: int = 0) -> np.ndarray:
        """Standard normal values (by inversion) at ``slot`` of round ``t``."""
        return normals(self.key, *self._at(channel, t, slot))

    def gamma(self, shape: np.ndarray | float, channel: np.ndarray | int, t: int) -> np.ndarray:
        """Gamma(``shape``, 1) values of round ``t`` (module docstring)."""
        ones = np.zeros(self.replications.shape + np.shape(channel))
        a = np.asarray(shape, dtype=np.float64) + ones
        boost = a < 1.0
        a1 = np.where(boost, a + 1.0, a)
        d = a1 - 1.0 / 3.0
        c = 1.0 / np.sqrt(9.0 * d)
        out = d.copy()  # the value after ATTEMPTS rejections
        todo = np.ones(a.shape, dtype=bool)
        for i in range(ATTEMPTS):
            x = self.normal(channel, t, 2 * i) + ones
            u = self.uniform(channel, t, 2 * i + 1) + ones
            v = 1.0 + c * x
            positive = todo & (v > 0.0)
            v3 = v * v * v
            safe = np.where(positive, v3, 1.0)
            bound = 0.5 * x * x + d - d * safe + d * ops.log(safe)
            accept = positive & (ops.log(u) < bound)
            out = np.where(accept, d * v3, out)
            todo &= ~accept
            if not todo.any():
                break
        if boost.any():
            u = self.uniform(channel, t, _BOOST) + ones
            factor = np.ones(a.shape)
            factor[boost] = _powers(u[boost], 1.0 / a[boost])
            out = np.where(boost, out * factor, out)
        return out

    def beta(
        self, a: np.ndarray | float, b: np.ndarray | float, channel: np.ndarray | int, t: int
    ) -> np.ndarray:
        """Beta(``a``, ``b``) values of round ``t``: gammas on channels 2c and 2c + 1."""
        channel = np.asarray(channel, dtype=np.int64)
        x = self.gamma(a, 2 * channel, t)
        y = self.gamma(b, 2 * channel + 1, t)
        total = x + y
        return np.where(total > 0.0, x / np.where(total > 0.0, total, 1.0), 0.5)


def _powers(x: np.ndarray, p: np.ndarray) -> np.ndarray:
    """x^p element by element with the C library's ``pow`` (:func:`~impactbandits.core.ops.
    power` with an exponent per element)."""
    return np.array([math.pow(xi, pi) for xi, pi in zip(x.tolist(), p.tolist(), strict=True)])


@kernel(inline=True)
def _bits(stream: np.ndarray, channel: int, index: int) -> np.uint64:
    """The 53-bit integer of value ``index`` of ``channel`` (:func:`~impactbandits.core.philox.
    uniforms`, word for word)."""
    return _philox_bits(stream[0], stream[1], stream[2], channel, index)


@kernel
def _philox_bits(
    k0: np.uint64, k1: np.uint64, replication: np.uint64, channel: int, index: int
) -> np.uint64:
    """The 53-bit integer at (``replication``, ``channel``, ``index``) under key (k0, k1)."""
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


@kernel(inline=True)
def stream_uniform(stream: np.ndarray, channel: int, t: int, slot: int) -> float:
    """:meth:`PolicyStream.uniform` for the replication of ``stream`` (``uint64`` key words and
    replication, as the loop hands it to ``init``)."""
    return float(_bits(stream, channel, t * SLOTS + slot)) * _UNIT53


@kernel(inline=True)
def stream_normal(stream: np.ndarray, channel: int, t: int, slot: int) -> float:
    """:meth:`PolicyStream.normal` for one replication."""
    k52 = _bits(stream, channel, t * SLOTS + slot) >> _ONE
    return inverse_normal((float(k52) + 0.5) * _UNIT52)


@kernel
def counter_uniform(noise: np.ndarray, table: int, channel: int, index: int) -> float:
    """Value ``index`` of ``channel`` of a common-noise table
    (:meth:`~impactbandits.core.random.CommonNoise.values` of a ``"uniform"`` table), for the
    replication of ``noise``: a world's words (:func:`~impactbandits.core.world.noise_words`),
    ``table`` the table's place among them."""
    bits = _philox_bits(noise[2 * table], noise[2 * table + 1], noise[noise.size - 1], channel,
                        index)  # fmt: skip
    return float(bits) * _UNIT53


@kernel
def counter_normal(noise: np.ndarray, table: int, channel: int, index: int) -> float:
    """As :func:`counter_uniform`, of a ``"normal"`` table (inversion, as
    :func:`~impactbandits.core.philox.normals`)."""
    bits = _philox_bits(noise[2 * table], noise[2 * table + 1], noise[noise.size - 1], channel,
                        index)  # fmt: skip
    return inverse_normal((float(bits >> _ONE) + 0.5) * _UNIT52)


def beta_inverse(a: float, b: float, u: float) -> float:
    """The inverse of the Beta(a, b) CDF at ``u``: SciPy's ``betaincinv`` (the compiled loops
    call the same C function)."""
    from scipy.special import betaincinv

    return float(betaincinv(a, b, u))


@kernel
def stream_gamma(stream: np.ndarray, shape: float, channel: int, t: int) -> float:
    """:meth:`PolicyStream.gamma` for one replication."""
    a = shape + 1.0 if shape < 1.0 else shape
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    out = d
    for i in range(ATTEMPTS):
        x = stream_normal(stream, channel, t, 2 * i)
        u = stream_uniform(stream, channel, t, 2 * i + 1)
        v = 1.0 + c * x
        if v > 0.0:
            v3 = v * v * v
            if math.log(u) < 0.5 * x * x + d - d * v3 + d * math.log(v3):
                out = d * v3
                break
    if shape < 1.0:
        out = out * math.pow(stream_uniform(stream, channel, t, _BOOST), 1.0 / shape)
    return out


@kernel
def stream_beta(stream: np.ndarray, a: float, b: float, channel: int, t: int) -> float:
    """:meth:`PolicyStream.beta` for one replication."""
    x = stream_gamma(stream, a, 2 * channel, t)
    y = stream_gamma(stream, b, 2 * channel + 1, t)
    total = x + y
    if total > 0.0:
        return x / total
    return 0.5
