"""Compiled round loops for the hot policy × environment pairs (optional: ``pip install
impactbandits[fast]``, which brings numba).

:func:`~impactbandits.core.simulate.simulate` hands a run to :func:`simulate_compiled` when

* the compiled loops are available (:func:`backend`): built ahead of time
  (:mod:`impactbandits.kernels.aot`; ``make kernels``, which ``make demo`` and ``make test``
  run), else numba's JIT if numba is installed; ``IMPACTBANDITS_KERNELS`` chooses
  (:data:`KERNELS_ENV`);
* the policy is one of the built-ins with a kernel (paper variants, exactly that class, not a
  subclass): greedy, UCB1, EXP3 (:mod:`~impactbandits.policies.classic`), Rexp3, D-UCB,
  Lindner et al.'s UCB and SW-UCB (:mod:`~impactbandits.policies.nonstationary`), Lindner et
  al.'s greedy, one-step-optimistic, SPO and SPO-δ (:mod:`~impactbandits.policies.single_peaked`,
  SPO's LP (⋆) bound in :mod:`impactbandits.kernels.spo`), Patil et al.'s Algorithm 1
  (:class:`~impactbandits.policies.improving.PatilAnytime`) and Heidari et al.'s HKR
  (:class:`~impactbandits.policies.improving.HKR`, paper variant), both run per replication by
  :class:`~impactbandits.core.policy.BatchedSimplePolicy`;
* the environment is a built-in whose outcomes depend on (replication, arm, pull number) only —
  the rested bandits (:class:`~impactbandits.envs.rested.RestedBandit` and its built-in
  instances, with Metelli et al.'s rising and Seznec et al.'s rotting arms; per-pull noise,
  Metelli et al.'s mean-parametrised Beta observations included) and the stationary
  Bernoulli and Gaussian bandits — exactly that class: it gives its ``pull_model``
  (:class:`~impactbandits.core.pull_model.PullModel`: the expected reward of the m-th pull of
  each arm and the noise model), and the loop computes each pull's reward on the spot, storing
  nothing per arm and pull;
* or the pair is Ron et al.'s SRUM (:class:`~impactbandits.policies.opportunity.
  SelfRegulatedUtilityMaximization`, paper variant, UCB1 as the black box) on the
  reward-opportunity bandit (:class:`~impactbandits.envs.opportunity.OpportunityBandit`) with a
  built-in fairness function: :mod:`impactbandits.kernels.srum`, which also records the phases
  and the per-arm rewards.

Otherwise the readable NumPy loop runs. All give identical numbers: every kernel transcribes
its policy's operations in the same order, and the noise of each pull is computed from the
same counter with the same functions (``tests/test_kernels.py`` compares them bit for bit, with
the ahead-of-time module and with the JIT). The ahead-of-time module is the same numba source
compiled once; a process that uses it never imports numba (less memory, no per-process
loading of the JIT's cached kernels).

Working on the kernels: numba's on-disk cache (``cache=True``, in ``__pycache__``) is keyed on
each function's own source file, and a cached function carries the compiled code of the
functions it calls from other modules. After editing a kernel module, delete the ``*.nbi`` and
``*.nbc`` files under ``src/impactbandits/kernels/__pycache__`` (``make clean-kernels``), or a
caller may keep running the old code. (An installed release is unaffected: installing rewrites
every file.) The ahead-of-time module goes stale with any edit of its sources and is then not
used until it is rebuilt (``make kernels``; ``make test`` rebuilds it).

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
import importlib
import sys
import threading
from collections.abc import Callable
from importlib.util import find_spec
from typing import Any, cast

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
    "entry",
    "planned",
    "simulate_compiled",
]


#: ``0``: the compiled loops off; ``jit``: numba's JIT only; ``aot``: the ahead-of-time module
#: only (a :class:`~impactbandits.errors.SpecError` if it cannot be used); ``auto`` or ``1`` (or
#: unset): the ahead-of-time module if it is usable, else the JIT.
KERNELS_ENV = settings.KERNELS


def _choice() -> str:
    """:func:`impactbandits.settings.kernels` (parsed like every environment variable)."""
    return settings.kernels()


def planned() -> str | None:
    """What :func:`backend` will answer (``"aot"``, ``"jit"`` or ``None``), found without
    importing numba or the built module; a :class:`~impactbandits.errors.SpecError` for a bad
    ``IMPACTBANDITS_KERNELS``."""
    return _plan(_choice())


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
    """Where the compiled loops come from in this process: ``"aot"`` (the module built ahead
    of time, loaded), ``"jit"`` (numba, importable) or ``None`` (the readable loops run)."""
    return _backend(_choice())


@functools.cache
def _backend(choice: str) -> str | None:
    """:func:`backend` for one value of ``IMPACTBANDITS_KERNELS`` (once per process: policies
    ask every round)."""
    plan = _plan(choice)
    if plan == "aot":
        from impactbandits.kernels import aot

        if aot.load() is not None:
            return "aot"
        if choice == "aot":
            raise SpecError(KERNELS_ENV, "aot asked for, but the built module fails to load")
        plan = _plan("jit")
    if plan == "jit":
        try:
            import numba  # noqa: F401
        except ImportError:
            return None
        return "jit"
    return None


def available() -> bool:
    """The compiled loops can run in this process (:func:`backend` is not ``None``)."""
    return backend() is not None


def entry(name: str) -> Callable[..., Any]:
    """The compiled entry point ``name`` (:data:`~impactbandits.kernels.signatures.ENTRIES`)
    of :func:`backend`: the ahead-of-time module's, each call checked against the types it was
    compiled for (``TypeError`` otherwise), or numba's JIT dispatcher. Only when
    :func:`available`."""
    return _entry(backend(), name)


@functools.cache
def _entry(source: str | None, name: str) -> Callable[..., Any]:
    """:func:`entry` from ``source``, resolved once per process (FEWA asks every round)."""
    from impactbandits.kernels.signatures import ENTRIES, check

    spec = ENTRIES[name]
    if source == "aot":
        from impactbandits.kernels import aot

        compiled = getattr(aot.load(), name)

        def checked(*args: Any) -> Any:
            return compiled(*check(name, args))

        return checked
    module = importlib.import_module(f"impactbandits.kernels.{spec.module}")
    return cast("Callable[..., Any]", getattr(module, spec.function))


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


def call(name: str, *args: Any, work: int) -> None:
    """Run the long-running compiled entry point ``name`` (``run``, ``run_srum``) on ``args``
    with a ``stop`` flag (:mod:`impactbandits.kernels.stop`), so that what a signal handler
    raises (Ctrl-C's ``KeyboardInterrupt``, SIGTERM's
    :class:`~impactbandits.experiments.processes.TerminateRequest` in the runner) stops it.

    In the main thread, with ``work`` (rounds × replications × arms) of at least
    :data:`THREAD_WORK`, the loop runs in a helper thread (the compiled loops release the GIL)
    while this thread waits, running signal handlers; on any exception it sets the flag, waits
    the milliseconds the loop takes to return, and re-raises: no thread is left computing.
    Elsewhere (short runs; other threads, where Python runs no signal handler) the loop runs
    directly."""
    from impactbandits.kernels.kinds import DONE, STOPPED

    function = entry(name)
    stop = np.zeros(1, dtype=np.int64)
    if work < THREAD_WORK or threading.current_thread() is not threading.main_thread():
        status = function(*args, stop)
    else:
        # a first call told to stop returns before its first round: numba's JIT compiles (or
        # loads from its cache) here, where Ctrl-C acts at once, not in the helper thread
        if function(*args, np.ones(1, dtype=np.int64)) != STOPPED:
            raise RuntimeError(f"the compiled loop {name} ran although told to stop")
        status = _in_helper_thread(function, (*args, stop), stop)
    if status != DONE:  # only this function sets the flag, and it has raised then
        raise RuntimeError(f"the compiled loop {name} stopped unasked (status {status})")


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


def _policy_kernel(policy: Any) -> tuple[int, np.ndarray] | None:
    """The kernel number and parameters of ``policy`` (after ``reset``), if it has one."""
    from impactbandits.core.policy import BatchedSimplePolicy
    from impactbandits.kernels import kinds as loops
    from impactbandits.policies import classic, improving, nonstationary, single_peaked

    kind = type(policy)
    if getattr(policy, "variant", "paper") != "paper":
        return None
    if kind is classic.Greedy:
        return loops.GREEDY, np.zeros(1)
    if kind is classic.UCB1:
        return loops.UCB1, np.array([policy.c])
    if kind is classic.EXP3:
        return loops.EXP3, np.array([policy._gamma])
    if kind is nonstationary.RExp3:
        return loops.REXP3, np.array([policy._gamma, policy.batch])
    if kind in (nonstationary.DiscountedUCB, nonstationary.UCB):
        return loops.DUCB, np.array([policy._padding, policy.xi, policy._gamma])
    if kind is nonstationary.SlidingWindowUCB:
        return loops.SWUCB, np.array([policy.b, policy.xi, policy._tau])
    if kind is single_peaked.LastRewardGreedy:
        return loops.LAST_GREEDY, np.zeros(1)
    if kind is single_peaked.OneStepOptimistic:
        return loops.ONE_STEP, np.array([policy.noise_bound])
    if kind in (single_peaked.SPO, single_peaked.SPODelta):
        return loops.SPO, np.array([policy.width, policy.horizon, policy.initial])
    if kind is BatchedSimplePolicy and type(policy.prototype) is improving.PatilAnytime:
        return loops.PATIL, np.array([improving.TIE_ULPS * sys.float_info.epsilon])
    if (
        kind is BatchedSimplePolicy
        and type(policy.prototype) is improving.HKR
        and policy.prototype.variant == "paper"
        and policy.copies
    ):
        return loops.HKR, np.array([float(policy.copies[0].horizon)])
    return None


def _pull_indexed(env: Any) -> bool:
    from impactbandits.envs import rested, rising, rotting, stationary

    kinds = {
        rested.RestedBandit,
        rested.SinglePeakedBandit,
        rested.IncreasingBandit,
        rested.ConstantBandit,
        rested.DecreasingBandit,
        rested.FicoBandit,
        rested.RecommenderBandit,
        rested.ImprovingBandit,
        rising.RisingBandit,
        rotting.RottingBandit,
        rotting.AbruptRottingBandit,
        rotting.SmoothRottingBandit,
        stationary.BernoulliBandit,
        stationary.GaussianBandit,
    }
    return type(env) in kinds


def _srum_pair(env: Any, policy: Any) -> bool:
    """SRUM (paper variant; UCB1, paper variant, as the black box) on the reward-opportunity
    bandit, exactly those classes (the fairness function is checked by the kernel)."""
    from impactbandits.envs.opportunity import OpportunityBandit
    from impactbandits.policies.classic import UCB1
    from impactbandits.policies.opportunity import SelfRegulatedUtilityMaximization

    if type(policy) is not SelfRegulatedUtilityMaximization or type(env) is not OpportunityBandit:
        return False
    inner = policy._inner
    return policy.variant == "paper" and type(inner) is UCB1 and inner.variant == "paper"


def simulate_compiled(
    env: Any,
    policy: Any,
    rounds: int,
    checkpoints: np.ndarray,
    replications: int,
    policy_rng: Any,
) -> tuple[np.ndarray, ...] | None:
    """The run's ``(reward, expected, pulls, switches)`` checkpoint arrays from the compiled
    loop, or ``None`` if this pair has no kernel. ``env`` and ``policy`` must have been reset
    (the policy's random streams untouched). For SRUM the tuple goes on with the
    ``(phases, arm_rewards, phase_switches)`` arrays (:class:`~impactbandits.core.simulate.
    Trajectory`'s order)."""
    if _srum_pair(env, policy):
        if not available():
            return None
        from impactbandits.kernels.srum_driver import simulate_srum

        return simulate_srum(env, policy, rounds, checkpoints, replications)
    if not _pull_indexed(env) or env.records_arm_rewards or policy.phases:
        return None  # the loops record neither per-arm rewards nor phases
    found = _policy_kernel(policy)
    if found is None or not available():  # numba is imported only for a pair it can run
        return None
    model = env.pull_model(rounds)
    if model is None:
        return None
    from impactbandits.kernels import kinds

    kind, params = found
    noise = {
        "none": 0,
        "normal": kinds.NORMAL,
        "beta": kinds.BETA,
        "bernoulli": kinds.BERNOULLI,
        "beta-mean": kinds.BETA_MEAN,
    }[model.noise]
    if model.table is not None:
        key = np.asarray(model.table.key, dtype=np.uint64)
        ids = model.table.replications
    else:
        key = np.zeros(2, dtype=np.uint64)
        ids = np.zeros(replications, dtype=np.uint64)
    if kind in (kinds.EXP3, kinds.REXP3):  # one uniform per round: what categorical() takes
        uniforms = policy_rng.random(rounds)
    else:
        uniforms = np.zeros((replications, 1))
    n_cp = checkpoints.size
    n = env.action_space.n
    out_reward = np.empty((replications, n_cp))
    out_expected = np.empty((replications, n_cp))
    out_pulls = np.empty((replications, n_cp, n))
    out_switches = np.empty((replications, n_cp), dtype=np.int64)
    call(
        "run",
        kind,
        params,
        np.ascontiguousarray(model.values, dtype=np.float64),
        noise,
        float(model.sigma),
        key,
        np.ascontiguousarray(ids, dtype=np.uint64),
        uniforms,
        rounds,
        np.ascontiguousarray(checkpoints, dtype=np.int64),
        out_reward,
        out_expected,
        out_pulls,
        out_switches,
        work=rounds * replications * n,
    )
    return out_reward, out_expected, out_pulls, out_switches
