"""The compiled round loops (numba, a dependency of the package; without it every run takes the
readable loop, and a large sweep says so on stderr:
:func:`~impactbandits.kernels.dispatch.numba_notice`).

:func:`simulate` runs a simulation on the compiled loop when it can, else on the readable loop
(:func:`impactbandits.core.simulate.simulate`); the runner calls it. The compiled loop runs when

* numba is installed and ``IMPACTBANDITS_KERNELS`` (:data:`KERNELS_ENV`) does not turn it off;
* the policy declares a compiled step (:mod:`impactbandits.core.compiled`: a built-in's, or a
  user's through the same protocol) and draws at most one uniform per round;
* the environment declares a compiled world (:mod:`~impactbandits.core.world`: the blocking,
  recovering and rebounding bandits, the bandit with delay-dependent payoffs, a user's
  environment) or a *pull model* (:class:`~impactbandits.core.pull_model.PullModel`: the
  expected reward of the m-th pull of each arm and the noise model, played as the pull-table
  world: the rested bandits, the stationary Bernoulli and Gaussian bandits, and any subclass
  that keeps their ``step``), and needs no per-arm rewards recorded, and a policy with phases
  reports them in its step (:attr:`~impactbandits.core.compiled.CompiledStep.phase`: π_low and
  π_ucb);
* a step over probability vectors (:attr:`~impactbandits.core.compiled.CompiledStep.simplex`:
  AD-UCB, HD-UCB, CUCB, EXP3 over meta-arms, or ``one-hot`` over a discrete policy with a
  compiled step) plays in a world over vectors (Tang et al.'s delayed-impact bandit with a
  built-in reward family and impact function), a discrete step in a world of arms. SRUM (Ron
  et al.) is such a step, with its black box's step and the fairness function's kernels bound
  into it (:attr:`~impactbandits.core.compiled.CompiledStep.bound`); an environment that reports
  each arm's rewards gets them from the loop too.


Both give identical numbers: a compiled step transcribes its policy's operations in the same
order, and the noise of each pull is computed from the same counter with the same functions
(every declared step is checked against its readable class, bit for bit). The generic loop
(:mod:`impactbandits.kernels.loop`) is compiled once per step and cached on disk by numba (in
``__pycache__`` beside it, or numba's per-user cache directory when the installation is
read-only), so a later process loads it instead of compiling.

Ctrl-C and SIGTERM: while a compiled loop runs, its thread executes no Python bytecode, so
Python's signal handlers cannot run in it. :func:`call` therefore runs a long loop in a helper
thread while the main thread waits where handlers run; what they raise (``KeyboardInterrupt``,
the runner's :class:`~impactbandits.experiments.processes.TerminateRequest`) sets the flag the
loop polls (:mod:`impactbandits.kernels.stop`), the loop returns within milliseconds, the thread
is joined and the exception goes on as if the loop had been Python code.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable
from importlib.util import find_spec
from typing import Any

import numpy as np

from impactbandits import settings
from impactbandits.errors import SpecError

__all__ = [
    "KERNELS_ENV",
    "THREAD_NAME",
    "THREAD_WORK",
    "available",
    "backend",
    "call",
    "jit",
    "planned",
    "simulate",
    "simulate_compiled",
]

# tests/test_compiled_steps.py compares every declared compiled step with its readable class,
# bit for bit (the module docstring's "identical numbers").


#: ``0`` (or ``off``): the compiled loops off; ``aot``: only the loops built ahead of time
#: (:mod:`impactbandits.kernels.aot`; a :class:`~impactbandits.errors.SpecError` if the module
#: cannot be used); ``jit``: only numba's JIT; ``auto`` or ``1`` (or unset): a step's loop built
#: ahead of time if there is one, else numba's JIT if numba is installed.
KERNELS_ENV = settings.KERNELS


def planned() -> str | None:
    """What :func:`backend` will answer (``"aot"``, ``"jit"`` or ``None``), found without
    importing numba or the built module; a :class:`~impactbandits.errors.SpecError` for a bad
    ``IMPACTBANDITS_KERNELS``."""
    return _plan(settings.kernels())


def _plan(choice: str) -> str | None:
    from impactbandits.kernels import aot

    if choice == "0":
        return None
    if choice in ("aot", "auto") and aot.current().usable:
        return "aot"
    if choice == "aot":
        reason = aot.current().reason
        raise SpecError(KERNELS_ENV, f"aot asked for, but the ahead-of-time module is {reason}")
    return "jit" if find_spec("numba") is not None else None


def backend() -> str | None:
    """Where the compiled loops come from first in this process: ``"aot"`` (the module built
    ahead of time, loaded), ``"jit"`` (numba, importable) or ``None`` (the readable loops)."""
    return _backend(settings.kernels())


@functools.cache
def _backend(choice: str) -> str | None:
    """:func:`backend` for one value of ``IMPACTBANDITS_KERNELS`` (once per process)."""
    from impactbandits.kernels import aot

    plan = _plan(choice)
    if plan == "aot":
        if aot.load() is not None:
            return "aot"
        if choice == "aot":
            raise SpecError(KERNELS_ENV, "aot asked for, but the built module fails to load")
        plan = _plan("jit")
    return plan if plan == "jit" and jit() else None


def jit() -> bool:
    """numba's JIT may compile a loop here (a step with no loop built ahead of time)."""
    return _jit(settings.kernels())


@functools.cache
def _jit(choice: str) -> bool:
    if choice not in ("jit", "auto") or find_spec("numba") is None:
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def available() -> bool:
    """The compiled loops can run in this process (:func:`backend` is not ``None``)."""
    return backend() is not None


#: A compiled run of at least this much work, rounds × replications × arms, runs in a helper
#: thread so that Ctrl-C and SIGTERM act at once (:func:`call`; the thread costs ~0.1 ms, up to
#: a few ms on a busy machine). Smaller runs, most cells of a large sweep, run directly. A round
#: costs from ~4 ns per arm (a thousand Bernoulli arms) to ~0.3 µs (Beta noise on three arms),
#: so a direct run lasts at most about half a second and a threaded one at least ~10 ms.
THREAD_WORK = 2**21
#: The helper thread's name (:func:`call`).
THREAD_NAME = "impactbandits-kernel"
#: Seconds the main thread waits at a time for the helper thread: a signal that the helper
#: thread happens to receive (the kernel picks a thread) is handled after at most this long.
_WAIT = 0.05


def call(function: Callable[..., Any], *args: Any, work: int) -> int:
    """Run the long-running compiled ``function`` (a loop of :mod:`impactbandits.kernels.loop`)
    on ``args`` with a ``stop`` flag (:mod:`impactbandits.kernels.stop`),
    so that what a signal handler raises (Ctrl-C's ``KeyboardInterrupt``, SIGTERM's
    :class:`~impactbandits.experiments.processes.TerminateRequest` in the runner) stops it.

    In the main thread, with ``work`` (rounds × replications × arms) of at least
    :data:`THREAD_WORK`, the loop runs in a helper thread (the compiled loops release the GIL)
    while this thread waits, running signal handlers; on any exception it sets the flag, waits
    the milliseconds the loop takes to return, and re-raises: no thread is left computing.
    Elsewhere (short runs; other threads, where Python runs no signal handler) the loop runs
    directly. Returns the loop's status: :data:`~impactbandits.kernels.codes.DONE`, or another
    code it reports (:data:`~impactbandits.kernels.codes.INVALID`)."""
    from impactbandits.kernels.codes import STOPPED

    stop = np.zeros(1, dtype=np.int64)
    if work < THREAD_WORK or threading.current_thread() is not threading.main_thread():
        status = function(*args, stop)
    else:
        # a first call told to stop returns before its first round: numba's JIT compiles (or
        # loads from its cache) here, where Ctrl-C acts at once, not in the helper thread
        if function(*args, np.ones(1, dtype=np.int64)) != STOPPED:
            raise RuntimeError(f"the compiled loop {function} ran although told to stop")
        status = _in_helper_thread(function, (*args, stop), stop)
    if status == STOPPED:  # only this function sets the flag, and it has raised then
        raise RuntimeError(f"the compiled loop {function} stopped unasked")
    return int(status)


def _in_helper_thread(function: Callable[..., Any], args: tuple[Any, ...], stop: np.ndarray) -> Any:
    """``function(*args)`` in a helper thread, waited for in this one (:func:`call`).

    The thread begins only when told to (``go``), from inside the ``try``: an exception raised
    while it starts (``start`` waits for the new thread) can then never leave it computing."""
    outcome: list[Any] = []
    go = threading.Event()
    done = threading.Event()

    def target() -> None:
        go.wait()
        try:
            if not stop[0]:
                outcome.append(function(*args))
        except BaseException as error:  # handed to the waiting thread
            outcome.append(error)
        finally:
            done.set()

    thread = threading.Thread(target=target, name=THREAD_NAME, daemon=True)
    try:
        thread.start()
        go.set()
        while not done.wait(_WAIT):  # signal handlers run in here
            pass
        thread.join()
    except BaseException:
        stop[0] = 1  # the loop returns at its next look at the flag (milliseconds)
        if not go.is_set():  # the thread (if it started) returns without computing
            go.set()
            raise
        while thread.is_alive():
            with contextlib.suppress(BaseException):  # a second Ctrl-C asks the same
                if done.wait(_WAIT):
                    thread.join()
        raise
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


from impactbandits.kernels.dispatch import simulate, simulate_compiled  # noqa: E402
