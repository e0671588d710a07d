"""Philox4x32-10, vectorised over NumPy arrays: a counter-based random function.

Philox (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011)
maps a 128-bit counter and a 64-bit key to 128 pseudo-random bits. It has no state: the output
for a counter is computed directly, so the noise of pull ``m`` of arm ``i`` in replication ``r``
can be evaluated for any set of ``(r, i, m)`` in one vectorised call, in any order, without
generating or storing what comes before it. The rounds follow the Random123 reference
(multipliers ``0xD2511F53``, ``0xCD9E8D57``; Weyl key increments ``0x9E3779B9``, ``0xBB67AE85``);
:func:`philox4x32` reproduces its published known-answer vectors.

Words are held in ``uint64`` arrays with values below 2³² so that the 32 × 32 → 64-bit products
are exact in NumPy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["normals", "pairs", "philox4x32", "stream_key", "uniforms"]

_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = 0x9E3779B9
_W1 = 0xBB67AE85
_MASK = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)
_SHIFT11 = np.uint64(11)
ROUNDS = 10


# tests/test_philox.py checks philox4x32 against Random123's published known-answer vectors.
def philox4x32(
    counter: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    key: tuple[int, int],
    rounds: int = ROUNDS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The four output words of Philox4x32-``rounds`` at ``counter`` (four broadcastable
    arrays of 32-bit values) under ``key`` (two 32-bit integers); ``uint32`` arrays.

    The rounds run in place on ``uint32`` words with ``uint64`` products (about 30 ns per
    counter for large arrays)."""
    words = np.broadcast_arrays(*(np.asarray(c, dtype=np.uint64) for c in counter))
    c0, c1, c2, c3 = (np.array(w, dtype=np.uint32) for w in words)  # own, writable copies
    p0 = np.empty(c0.shape, dtype=np.uint64)
    p1 = np.empty(c0.shape, dtype=np.uint64)
    k0, k1 = int(key[0]) & 0xFFFFFFFF, int(key[1]) & 0xFFFFFFFF
    for i in range(rounds):
        if i:
            k0 = (k0 + _W0) & 0xFFFFFFFF
            k1 = (k1 + _W1) & 0xFFFFFFFF
        np.multiply(c0, _M0, out=p0)
        np.multiply(c2, _M1, out=p1)
        # (c0, c1, c2, c3) <- (hi(p1) ^ c1 ^ k0, lo(p1), hi(p0) ^ c3 ^ k1, lo(p0)), in place:
        # each old word is read before it is overwritten
        np.right_shift(p1, _SHIFT32, out=c0, casting="unsafe")
        c0 ^= c1
        c0 ^= np.uint32(k0)
        np.right_shift(p0, _SHIFT32, out=c2, casting="unsafe")
        c2 ^= c3
        c2 ^= np.uint32(k1)
        np.copyto(c1, p1, casting="unsafe")  # low 32 bits
        np.copyto(c3, p0, casting="unsafe")
    return c0, c1, c2, c3


def stream_key(entropy: int, key: tuple[int, ...]) -> tuple[int, int]:
    """The 64-bit Philox key of the stream ``key`` under root ``entropy``: the first two
    words of :class:`numpy.random.SeedSequence` ``(entropy, spawn_key=key)``'s state."""
    state = np.random.SeedSequence(int(entropy), spawn_key=tuple(int(k) for k in key))
    words = state.generate_state(2, np.uint32)
    return int(words[0]), int(words[1])


def _bits53(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The top 53 bits of the 64-bit integer ``high·2³² + low`` (as NumPy makes doubles)."""
    return ((high.astype(np.uint64) << _SHIFT32) | low) >> _SHIFT11


def _raw(
    key: tuple[int, int], replication: np.ndarray, channel: np.ndarray, index: np.ndarray
) -> np.ndarray:
    """53-bit integers (as ``uint64``) of value ``index`` of (``replication``, ``channel``).

    Counter ``(j mod 2³², j div 2³², channel, replication)`` with ``j = index div 2``; value
    ``2j`` is made of output words 0–1 and value ``2j + 1`` of words 2–3 (low word first), each
    reduced to its top 53 bits as NumPy does for doubles."""
    index = np.asarray(index, dtype=np.uint64)
    j = index >> np.uint64(1)
    w0, w1, w2, w3 = philox4x32((j & _MASK, j >> _SHIFT32, channel, replication), key)
    odd = (index & np.uint64(1)).astype(bool)
    return _bits53(np.where(odd, w2, w0), np.where(odd, w3, w1))


def _raw_pairs(
    key: tuple[int, int], replication: np.ndarray, channel: np.ndarray, pair: np.ndarray
) -> np.ndarray:
    """:func:`_raw` at indices ``2·pair`` and ``2·pair + 1``: shape ``(..., 2)``, one Philox
    evaluation per pair."""
    j = np.asarray(pair, dtype=np.uint64)
    w0, w1, w2, w3 = philox4x32((j & _MASK, j >> _SHIFT32, channel, replication), key)
    return np.stack([_bits53(w0, w1), _bits53(w2, w3)], axis=-1)


_UNIT53 = 1.0 / 9007199254740992.0
_UNIT52 = 1.0 / 4503599627370496.0


def uniforms(
    key: tuple[int, int], replication: np.ndarray, channel: np.ndarray, index: np.ndarray
) -> np.ndarray:
    """Uniform values in [0, 1) (multiples of 2⁻⁵³) at (``replication``, ``channel``,
    ``index``), broadcast together."""
    return _raw(key, replication, channel, index) * _UNIT53


def normals(
    key: tuple[int, int], replication: np.ndarray, channel: np.ndarray, index: np.ndarray
) -> np.ndarray:
    """Standard normal values by inversion: ``Φ⁻¹((k + ½) / 2⁵²)`` with ``k`` the top 52 bits
    of the 53-bit integer of :func:`uniforms` (exact in a double, never 0 or 1, so always
    finite: |z| < 8.2)."""
    return _to_normal(_raw(key, replication, channel, index))


def _to_normal(k53: np.ndarray) -> np.ndarray:
    from scipy.special import ndtri  # only environments with Gaussian noise need SciPy

    return ndtri(((k53 >> np.uint64(1)) + 0.5) * _UNIT52)


def pairs(
    key: tuple[int, int],
    replication: np.ndarray,
    channel: np.ndarray,
    pair: np.ndarray,
    normal: bool = False,
) -> np.ndarray:
    """Values (:func:`uniforms` or, with ``normal``, :func:`normals`) at indices ``2·pair``
    and ``2·pair + 1``, shape ``(..., 2)``: half the work of asking for both indices."""
    raw = _raw_pairs(key, replication, channel, pair)
    return _to_normal(raw) if normal else raw * _UNIT53
