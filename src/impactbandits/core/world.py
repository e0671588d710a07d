"""The compiled-world protocol: how an environment, built-in or a user's, runs in machine code.

An environment declares the compiled form of its rounds beside its readable (batched NumPy)
class, in the same module, as two functions on the state of **one** replication, written in the
part of Python that numba compiles and marked with :func:`~impactbandits.core.compiled.kernel`::

    @kernel
    def init(params, data, k, rounds, noise):   # -> state: an array, or a tuple of arrays
    @kernel
    def step(state, params, t, arm):            # -> (reward, expected reward) of round t

``params`` is a ``float64`` array of the environment's constants (its noise scale, the arms'
delays, …); ``data`` the replication's row of :attr:`CompiledWorld.data` (a ``float64`` array
whose first axis is the replication, or of length 1 when every replication shares it: the arms'
means, a table of expected rewards by arm and pull, …); ``k`` the number of arms, ``rounds``
the rounds to play; ``noise`` the replication's words of :attr:`CompiledWorld.noise`
(``uint64``: the key words of the environment's common-noise tables and the replication's
number, read with :func:`~impactbandits.core.streams.counter_uniform` and
:func:`~impactbandits.core.streams.counter_normal`, the values the readable class's
:class:`~impactbandits.core.random.CommonNoise` gives at the same position). ``step`` plays arm
``arm`` in round ``t`` (1-based) and returns the realised reward and the expected reward of that
pull, as the readable class's :meth:`~impactbandits.core.environment.Environment.step` returns
them (``feedback.reward`` and ``expected``).

An environment that reports more than the rewards (a benchmark that depends on the learner's
own path, say) declares :attr:`CompiledWorld.record` ``(state, params, out)``, which writes
:attr:`CompiledWorld.recorded` values into ``out`` at every checkpoint, and
:attr:`CompiledWorld.receive`, a Python callable that gets them all after the run (``(R, C,
recorded)``), where the readable form would have collected them in its ``step``.

An environment whose readable form also hands the learner fresh re-evaluations
(:attr:`~impactbandits.core.feedback.Feedback.reevaluated`) declares a third kernel,
:attr:`CompiledWorld.reevaluate` ``(state, params, t, fresh)``, which fills ``fresh`` (``(K,
5)``) after round ``t``'s step.

After ``reset`` the environment's ``compiled_world(rounds)`` returns a :class:`CompiledWorld`,
or ``None`` (no compiled form for these parameters). The generic round loop
(:mod:`impactbandits.kernels`) plays every policy that has a compiled step
(:mod:`~impactbandits.core.compiled`) on it; the readable class stays the reference, and the
compiled world must give the same numbers bit for bit (for your own environment,
:func:`impactbandits.testing.check_compiled_world`). As for a policy's step, a subclass
inherits its parent's world only if it changes neither ``reset`` nor ``step``
(:func:`~impactbandits.core.compiled.declared_step`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from impactbandits.core.compiled import Kernel
from impactbandits.core.random import CommonNoise

__all__ = ["CompiledWorld", "noise_words"]


@dataclass(frozen=True, eq=False)
class CompiledWorld:
    """An environment's compiled form for one run (module docstring)."""

    init: Kernel
    step: Kernel
    params: np.ndarray
    data: np.ndarray
    """``(R or 1, ...)`` ``float64``: row ``r`` (or 0) goes to ``init`` of replication ``r``."""
    noise: np.ndarray
    """``(R, W)`` ``uint64``: replication ``r``'s words go to its ``init``
    (:func:`noise_words`)."""
    reevaluate: Kernel | None = None
    record: Kernel | None = None
    """``record(state, params, out)``: the world's own values at a checkpoint (module
    docstring)."""
    recorded: int = 0
    """How many values :attr:`record` writes at each checkpoint."""
    receive: Callable[[np.ndarray], Any] | None = None
    """Called after the run with the recorded values, ``(R, C, recorded)``."""
    simplex: bool = False
    """A world played with probability vectors (a :class:`~impactbandits.core.spaces.Simplex`
    action space): ``step(state, params, t, action, observed)`` plays the vector ``action``
    (``k`` floats), writes each group's observed reward into ``observed`` (NaN where not
    observed) and returns ``(reward, expected)``. Only steps over vectors
    (:attr:`~impactbandits.core.compiled.CompiledStep.simplex`) play in it."""

    def __post_init__(self) -> None:
        for name in ("init", "step"):
            if not isinstance(getattr(self, name), Kernel):
                raise TypeError(f"CompiledWorld.{name} must be a function marked with @kernel")
        for name in ("reevaluate", "record"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), Kernel):
                raise TypeError(f"CompiledWorld.{name} must be a function marked with @kernel")
        if (self.record is None) != (self.recorded == 0) or self.recorded < 0:
            raise ValueError("CompiledWorld: give record with recorded > 0 values, or neither")
        if self.record is not None and not callable(self.receive):
            raise ValueError("CompiledWorld: a world that records needs receive")
        params = np.ascontiguousarray(self.params, dtype=np.float64)
        if params.ndim != 1:
            raise ValueError("CompiledWorld.params must be a 1-d array of numbers")
        data = np.ascontiguousarray(self.data, dtype=np.float64)
        if data.ndim < 1 or data.shape[0] < 1:
            raise ValueError("CompiledWorld.data needs a first axis: the replication, or 1")
        noise = np.ascontiguousarray(self.noise, dtype=np.uint64)
        if noise.ndim != 2:
            raise ValueError("CompiledWorld.noise must be (replications, words) of uint64")
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "noise", noise)

    @property
    def replications(self) -> int:
        """The replications the world is set up for (rows of :attr:`noise`)."""
        return int(self.noise.shape[0])


def noise_words(replications: int, *tables: CommonNoise | None) -> np.ndarray:
    """``(R, 2·len(tables) + 1)`` ``uint64``: for each replication, the two key words of every
    table (zeros for ``None``), then the replication's number (from the first table that is not
    ``None``, else 0): what a world's ``init`` receives as ``noise``. The tables must share their
    replications."""
    words = np.zeros((replications, 2 * len(tables) + 1), dtype=np.uint64)
    present = [table for table in tables if table is not None]
    for i, table in enumerate(tables):
        if table is not None:
            words[:, 2 * i], words[:, 2 * i + 1] = table.key[0], table.key[1]
    if present:
        words[:, -1] = present[0].replications
    return words
