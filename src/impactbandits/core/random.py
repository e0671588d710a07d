"""Explicit, batch-independent randomness (ARCHITECTURE principle 5).

Every draw comes from a :class:`numpy.random.Generator` built from a
:class:`numpy.random.SeedSequence` whose ``spawn_key`` is ``(component key…, replication, …)``.
Nothing depends on how replications are grouped into batches, on the backend or on the worker
count, because:

* :class:`BatchRNG` (policies) gives every replication its own generator and hands out values in
  lockstep: each call consumes the same number of values from every replication's own stream.
  Numbers are read ahead in blocks, and a generator's sequence of doubles does not depend on the
  block size, so ``rng.random()`` for replication ``r`` is the same number whether ``r`` runs
  alone or in a batch of 1000.
* :class:`CommonNoise` (environments) is *indexed*, not sequential: the value for
  ``(replication, channel, index)`` — for example (seed, arm, pull number) — is a pure function of
  those three numbers. This gives common random numbers across policies: two policies that pull
  arm 3 for the 17th time see the same noise.

Spawn keys are built with :func:`stable_key`, a 64-bit hash of a canonical text, so that names,
not positions in a list, decide the streams.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

__all__ = [
    "ENV_INSTANCE",
    "ENV_NOISE",
    "POLICY",
    "BatchRNG",
    "CommonNoise",
    "generator_for",
    "stable_key",
]

#: Component numbers of the spawn key (ARCHITECTURE principle 5: keyed by cell, replication,
#: component). Fixed forever: changing them would change every published number.
ENV_INSTANCE = 0
ENV_NOISE = 1
POLICY = 2

_DEFAULT_BLOCK = 1024
#: Values per generated block of :class:`CommonNoise`. Part of the definition of the noise
#: (the value at index ``i`` comes from block ``i // NOISE_BLOCK``): never change it.
NOISE_BLOCK = 1024
_BLOCK_BITS = 10
assert 1 << _BLOCK_BITS == NOISE_BLOCK


def stable_key(text: str) -> int:
    """A stable non-negative 63-bit integer from ``text`` (SHA-256 based)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1


def generator_for(entropy: int, key: Sequence[int]) -> np.random.Generator:
    """The generator of the stream ``key`` under root ``entropy``."""
    return np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=tuple(key)))
    )


class BatchRNG:
    """Per-replication random streams of a batch, consumed in lockstep.

    ``generators[r]`` is replication ``r``'s own stream (also what a scalar policy receives).
    The vectorised helpers below consume exactly ``k`` values of *every* replication per call.
    A policy must therefore not make the number of calls depend on other replications' states
    (draw unconditionally, then use the values where needed); the contract tests check this.
    """

    def __init__(self, generators: Sequence[np.random.Generator], block: int = _DEFAULT_BLOCK):
        if not generators:
            raise ValueError("BatchRNG needs at least one replication")
        self.generators: tuple[np.random.Generator, ...] = tuple(generators)
        self._block = int(block)
        self._buffer = np.empty((len(self.generators), 0))
        self._pos = 0

    @classmethod
    def from_key(cls, entropy: int, key: Sequence[int], replications: Sequence[int]) -> BatchRNG:
        """Streams ``key + (replication,)`` for each replication index."""
        return cls([generator_for(entropy, (*key, int(r))) for r in replications])

    @property
    def size(self) -> int:
        """Number of replications ``R`` in the batch."""
        return len(self.generators)

    def random(self, k: int | None = None) -> np.ndarray:
        """Uniform [0, 1) values: shape ``(R,)`` if ``k`` is None, else ``(R, k)``."""
        need = 1 if k is None else int(k)
        if self._pos + need > self._buffer.shape[1]:
            self._refill(need)
        out = self._buffer[:, self._pos : self._pos + need]
        self._pos += need
        return out[:, 0] if k is None else out

    def integers(self, high: int | np.ndarray) -> np.ndarray:
        """Uniform integers in ``0 .. high-1`` (``high`` scalar or per replication)."""
        u = self.random()
        return np.minimum((u * high).astype(np.int64), np.asarray(high) - 1)

    def categorical(self, probabilities: np.ndarray) -> np.ndarray:
        """One draw per row of the ``(R, n)`` probability matrix (inverse CDF)."""
        u = self.random()
        cdf = np.cumsum(probabilities, axis=1)
        idx = (cdf < (u * cdf[:, -1])[:, None]).sum(axis=1)
        return np.minimum(idx, probabilities.shape[1] - 1)

    def _refill(self, need: int) -> None:
        size = max(self._block, need)
        rest = self._buffer[:, self._pos :]
        fresh = np.stack([g.random(size) for g in self.generators])
        self._buffer = np.concatenate([rest, fresh], axis=1) if rest.size else fresh
        self._pos = 0


class CommonNoise:
    """Indexed noise: the value at (replication, channel, index) is fixed by those numbers alone.

    ``distribution`` is ``"uniform"`` (values in [0, 1)) or ``"normal"`` (standard normal).
    Block ``b`` of channel ``c`` of replication ``r`` is generated from the stream
    ``key + (r, c, b)``; each block holds :data:`NOISE_BLOCK` values.
    """

    def __init__(
        self,
        entropy: int,
        key: Sequence[int],
        replications: Sequence[int],
        channels: int,
        distribution: str = "uniform",
    ) -> None:
        if distribution not in ("uniform", "normal"):
            raise ValueError(f"distribution must be 'uniform' or 'normal', got {distribution!r}")
        self._entropy = int(entropy)
        self._key = tuple(int(k) for k in key)
        self._reps = np.asarray(replications, dtype=np.int64)
        self.channels = int(channels)
        self._normal = distribution == "normal"
        shape = (len(self._reps), self.channels)
        self._buffer = np.empty((*shape, NOISE_BLOCK))
        self._loaded = np.full(shape, -1, dtype=np.int64)
        self._rows = np.arange(len(self._reps))

    def _load(self, r: int, c: int, block: int) -> None:
        g = generator_for(self._entropy, (*self._key, int(self._reps[r]), c, block))
        self._buffer[r, c] = (
            g.standard_normal(NOISE_BLOCK) if self._normal else g.random(NOISE_BLOCK)
        )
        self._loaded[r, c] = block

    def at(self, channels: np.ndarray, index: np.ndarray) -> np.ndarray:
        """Values ``(R,)`` at ``channels[r]``, ``index[r]`` (indices ≥ 0) for every replication."""
        block = index // NOISE_BLOCK
        stale = self._loaded[self._rows, channels] != block
        if stale.any():
            for r in np.flatnonzero(stale):
                self._load(int(r), int(channels[r]), int(block[r]))
        return self._buffer[self._rows, channels, index % NOISE_BLOCK]

    def row(self, index: int) -> np.ndarray:
        """Values ``(R, channels)`` of every channel at the same ``index`` (e.g. the round)."""
        block = index >> _BLOCK_BITS
        if self._loaded[0, 0] != block:
            for r in range(len(self._reps)):
                for c in range(self.channels):
                    self._load(r, c, block)
        return self._buffer[:, :, index & (NOISE_BLOCK - 1)]
