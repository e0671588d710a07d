"""Explicit, batch-independent randomness.

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
  those three numbers (a counter-based generator, Philox4x32-10, evaluated at that counter).
  This gives common random numbers across policies: two policies that pull arm 3 for the 17th
  time see the same noise, whatever the number of arms, the batch or the backend.

Spawn keys are built with :func:`stable_key`, a 64-bit hash of a canonical text, so that names,
not positions in a list, decide the streams.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from impactbandits.core.philox import normals, pairs, stream_key, uniforms
from impactbandits.core.streams import PolicyStream

__all__ = [
    "ENV_INSTANCE",
    "ENV_NOISE",
    "POLICY",
    "BatchRNG",
    "CommonNoise",
    "generator_for",
    "stable_key",
]

#: Component numbers of the spawn key (keyed by cell, replication,
#: component). Fixed forever: changing them would change every published number.
ENV_INSTANCE = 0
ENV_NOISE = 1
POLICY = 2

_DEFAULT_BLOCK = 1024


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

    def __init__(
        self,
        generators: Sequence[np.random.Generator],
        block: int = _DEFAULT_BLOCK,
        stream: PolicyStream | None = None,
    ):
        if not generators:
            raise ValueError("BatchRNG needs at least one replication")
        self.generators: tuple[np.random.Generator, ...] = tuple(generators)
        self._block = int(block)
        self._buffer = np.empty((len(self.generators), 0))
        self._pos = 0
        self._stream = stream

    @classmethod
    def from_key(cls, entropy: int, key: Sequence[int], replications: Sequence[int]) -> BatchRNG:
        """Streams ``key + (replication,)`` for each replication index, and the counter-based
        stream ``key`` of those replications (:attr:`stream`)."""
        generators = [generator_for(entropy, (*key, int(r))) for r in replications]
        return cls(generators, stream=PolicyStream.from_key(entropy, key, replications))

    @property
    def stream(self) -> PolicyStream:
        """The policy's counter-based stream (:mod:`~impactbandits.core.streams`): draws by
        (replication, channel, round), for policies that draw several values a round."""
        if self._stream is None:
            raise ValueError(
                "this BatchRNG has no counter-based stream: build it with BatchRNG.from_key"
            )
        return self._stream

    def spawn(self) -> BatchRNG:
        """Independent streams for a policy run inside this one (a wrapper's inner policy)."""
        stream = None if self._stream is None else self._stream.child(1)
        return BatchRNG([g.spawn(1)[0] for g in self.generators], stream=stream)

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

    ``distribution`` is ``"uniform"`` (values in [0, 1)) or ``"normal"`` (standard normal). The
    value is Philox4x32-10 (:mod:`~impactbandits.core.philox`) at counter
    ``(index div 2, channel, replication)`` under the 64-bit key of the stream ``key`` (see
    :func:`~impactbandits.core.philox.stream_key`): a counter-based function, so set-up and
    memory are O(R·channels) whatever the index. Values are computed in vectorised calls and
    kept in a small look-ahead window per (replication, channel) (:attr:`window` values, at
    most about 8 MB in all); the window only decides *when* values are computed, never what
    they are.
    """

    _NEVER = -(1 << 62)
    _BUDGET = 1 << 20  # look-ahead values per table (8 MB of float64)

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
        self._key = stream_key(int(entropy), tuple(int(k) for k in key))
        self._normal = distribution == "normal"
        self._reps = np.asarray(replications, dtype=np.uint64)
        self.channels = int(channels)
        entries = len(self._reps) * self.channels
        self.window = int(min(1024, max(16, _even_power(self._BUDGET // max(entries, 1)))))
        self._window = np.uint64(self.window)  # compared with uint64 views: no slow promotion
        self._offsets = np.arange(len(self._reps), dtype=np.int64) * self.channels
        self._values: np.ndarray | None = None
        self._base = np.full(entries, self._NEVER, dtype=np.int64)
        self._last = np.full(entries, self._NEVER, dtype=np.int64)
        self._row_values: np.ndarray | None = None
        self._row_base = self._NEVER

    @property
    def key(self) -> tuple[int, int]:
        """The 64-bit Philox key of this table's stream, as two 32-bit words."""
        return self._key

    @property
    def replications(self) -> np.ndarray:
        """The replication numbers (seeds) of the batch, ``uint64``: the counter's last word."""
        return self._reps

    def values(self, replication: np.ndarray, channel: np.ndarray, index: np.ndarray) -> np.ndarray:
        """The values at positions (``replication`` index into this table's replications,
        ``channel``, ``index``), broadcast together, computed directly (no window)."""
        reps = self._reps[np.asarray(replication, dtype=np.int64)]
        draw = normals if self._normal else uniforms
        return draw(self._key, reps, np.asarray(channel, dtype=np.uint64), index)

    def _span(self, replication: np.ndarray, channel: np.ndarray, start: np.ndarray) -> np.ndarray:
        """Values at indices ``start .. start + window - 1`` (``start`` even) along a new last
        axis: one Philox evaluation per pair of values."""
        half = np.arange(self.window // 2)
        values = pairs(
            self._key,
            self._reps[replication][..., None],
            np.asarray(channel, dtype=np.uint64)[..., None],
            (start // 2)[..., None] + half,
            normal=self._normal,
        )
        return values.reshape(*values.shape[:-2], self.window)

    def at(self, channels: np.ndarray, index: np.ndarray) -> np.ndarray:
        """Values ``(R,)`` at ``channels[r]``, ``index[r]`` (indices ≥ 0) for every replication."""
        flat = self._offsets + channels
        pos = index - self._base.take(flat)
        # one unsigned comparison catches both pos < 0 and pos >= window
        if np.count_nonzero(pos.view(np.uint64) >= self._window):
            self._load(flat, index, pos)
            pos = index - self._base.take(flat)
        self._last[flat] = index
        assert self._values is not None
        return self._values[flat, pos]

    def _load(self, flat: np.ndarray, index: np.ndarray, pos: np.ndarray) -> None:
        """Fill the windows that miss ``index``, and those more than half consumed (so that
        refills come in batches, at most once per half window of rounds)."""
        width = self.window
        if self._values is None:
            self._values = np.empty((self._base.size, width))
        miss = pos.view(np.uint64) >= self._window
        need = flat[miss]
        start = index[miss] & ~1
        half_used = self._last - self._base >= width // 2
        half_used[need] = False
        low = np.flatnonzero(half_used)
        entries = np.concatenate([need, low])
        start = np.concatenate([start, (self._last[low] + 1) & ~1])
        self._values[entries] = self._span(entries // self.channels, entries % self.channels, start)
        self._base[entries] = start

    def row(self, index: int) -> np.ndarray:
        """Values ``(R, channels)`` of every channel at the same ``index`` (e.g. the round)."""
        pos = index - self._row_base
        if not 0 <= pos < self.window or self._row_values is None:
            start = index & ~1
            shape = (len(self._reps), self.channels)
            self._row_values = self._span(
                np.arange(shape[0])[:, None],
                np.broadcast_to(np.arange(self.channels), shape),
                np.full(shape, start, dtype=np.int64),
            )
            self._row_base = start
            pos = index - start
        return self._row_values[:, :, pos]


def _even_power(n: int) -> int:
    """The largest power of two ≤ ``n`` (1 for ``n`` < 2)."""
    return 1 << max(int(n).bit_length() - 1, 0)
