"""Stopping a compiled loop from another thread: the flag every long-running entry point polls.

While a compiled loop runs, the thread that called it executes no Python bytecode, so Python's
signal handlers (Ctrl-C's ``KeyboardInterrupt``, the runner's SIGTERM handler) cannot run in it.
So a long run is called in a helper thread (:func:`impactbandits.kernels.call`) with a
one-element ``int64`` array, ``stop``, while the main thread waits where handlers do run; on an
interruption it sets ``stop[0]``. The loop (:mod:`impactbandits.kernels.loop`) looks at it
with :func:`stopped` before each replication and every
:data:`POLL_ROUNDS` rounds, and return :data:`~impactbandits.kernels.codes.STOPPED` (their
outputs unfinished) when it is non-zero, :data:`~impactbandits.kernels.codes.DONE` otherwise.
Reading the flag changes no number. Imported only when numba is installed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["POLL_ROUNDS", "stopped"]

#: The loops look at the flag in the rounds that are multiples of this (a power of two: the test
#: each round is a mask; the flag itself is read once every this many rounds). A round costs
#: from ~40 ns (UCB1, two Bernoulli arms) to ~15 µs (D-UCB on 4,000 arms), so a request is seen
#: within 0.2 ms to 60 ms.
POLL_ROUNDS = 4096
_MASK = POLL_ROUNDS - 1


@intrinsic
def _read(typingctx: Any, stop: Any) -> Any:
    """``stop[0]`` read as an atomic (relaxed) load: another thread writes it, so it must be read
    from memory each time, never kept in a register or hoisted out of the loop."""
    if not (isinstance(stop, types.Array) and stop.dtype == types.int64 and stop.ndim == 1):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        array = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.load_atomic(array.data, "monotonic", 8)

    return types.int64(stop), codegen


@njit(cache=True, nogil=True, inline="always")
def stopped(stop: np.ndarray, t: int) -> bool:
    """Whether to stop in round ``t`` (0: before a replication): ``t`` is a multiple of
    :data:`POLL_ROUNDS` and ``stop[0]`` is non-zero (``stop`` is never written here)."""
    return (t & _MASK) == 0 and _read(stop) != 0  # type: ignore[call-arg]
