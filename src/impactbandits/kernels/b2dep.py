"""The compiled round loop of bandits with delay-dependent payoffs (B2DEP, Cella & Cesa-Bianchi
2020): a discrete policy's compiled step, phases included, on
:class:`~impactbandits.envs.delay.DelayedPayoffBandit`.

:func:`_template` is the loop, written once: for each replication the policy's state (``start``,
from its ``init``) and the environment's (``env_init``, with the replication's delays and noise
stream), then every round ``select`` picks the arm, ``phase`` reports the policy's phase (for a
policy with phases: :class:`~impactbandits.policies.delay.PhasedStep`), ``env_step`` plays the
arm (μ_i(τ) and the Bernoulli draw from the common random numbers:
:class:`~impactbandits.envs.delay.CompiledDelay`), ``update`` learns, and the checkpoint
summaries of :class:`~impactbandits.core.simulate.Trajectory` are kept as the readable loop keeps
them: rewards, expected rewards, pulls and switches, and for a policy with phases the rounds per
phase and the phase switches (no per-arm rewards: the environment records none).

``start``, ``select``, ``update``, ``phase``, ``env_init`` and ``env_step`` are names the template
does not define: :func:`b2dep_for` makes one copy of it per (policy step, phase kernel,
environment kernels), with the names bound to their compiled kernels. Every copy has a name of
its own carrying the hash of its sources (:func:`~impactbandits.kernels.b2dep_driver.
b2dep_tag`), as the generic loop's (:mod:`impactbandits.kernels.loop`): numba names machine code
by qualified name and a counter that restarts in every process, so copies of one function with
other globals must not share a name. The loop is cached on disk by numba under that name.
Imported only when numba is installed.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import numpy as np
from numba import njit
from numba.core.dispatcher import Dispatcher

from impactbandits.core.compiled import CompiledStep, Kernel
from impactbandits.kernels.b2dep_driver import b2dep_tag
from impactbandits.kernels.checkpoints import record
from impactbandits.kernels.codes import DONE, INVALID, STOPPED
from impactbandits.kernels.loop import _start_plain, _start_stream, compile_kernel, keep, lend
from impactbandits.kernels.sources import builtin
from impactbandits.kernels.stop import stopped

__all__ = ["b2dep_for"]

# names the template leaves to b2dep_for (module docstring); never called as module globals
start: Any = None
select: Any = None
update: Any = None
phase: Any = None
env_init: Any = None
env_step: Any = None


def b2dep_for(step: CompiledStep, phase_kernel: Kernel, init: Kernel, play: Kernel) -> Dispatcher:
    """The compiled loop of the policy step ``step`` with its phase kernel ``phase_kernel`` on
    the environment kernels ``init`` and ``play``, loaded from numba's disk cache when it was
    compiled before from the same sources."""
    return _b2dep(step.init, step.select, step.update, step.stream, phase_kernel, init, play)


def _copy(function: Any, scope: dict[str, Any], name: str) -> Any:
    copy = types.FunctionType(function.__code__, scope, name, function.__defaults__)
    copy.__qualname__ = name
    return copy


@functools.cache
def _b2dep(
    init: Kernel,
    select_: Kernel,
    update_: Kernel,
    stream: bool,
    phase_: Kernel,
    world_init: Kernel,
    world_step: Kernel,
) -> Dispatcher:
    kernels = [init, select_, update_, phase_, world_init, world_step]
    tag = b2dep_tag(kernels, stream)
    suffix = tag if tag is not None else f"{id(select_):x}_{id(phase_):x}_{int(stream)}"
    users = not all(builtin(k.py_func) for k in kernels)
    starter = _start_stream if stream else _start_plain
    scope = dict(starter.__globals__, init=compile_kernel(init, inline=True))
    begin = njit(inline="always", nogil=True)(_copy(starter, scope, f"b2dep_start_{suffix}"))
    scope = dict(
        _template.__globals__,
        start=begin,
        select=compile_kernel(select_, inline=True),
        update=compile_kernel(update_, inline=True),
        phase=compile_kernel(phase_, inline=True),
        env_init=compile_kernel(world_init, inline=True),
        env_step=compile_kernel(world_step, inline=True),
    )
    function = _copy(_template, scope, f"b2dep_{suffix}")
    return njit(cache=tag is not None, nogil=True, boundscheck=users)(function)


def _template(
    params: np.ndarray,
    env_params: np.ndarray,
    delays: np.ndarray,
    noise: np.ndarray,
    uniforms: np.ndarray,
    streams: np.ndarray,
    rounds: int,
    checkpoints: np.ndarray,
    out_reward: np.ndarray,
    out_expected: np.ndarray,
    out_pulls: np.ndarray,
    out_switches: np.ndarray,
    out_phases: np.ndarray,
    out_phase_switches: np.ndarray,
    invalid: np.ndarray,
    stop: np.ndarray,
) -> int:
    """``rounds`` rounds in every replication; writes the checkpoint summaries into the
    ``out_*`` arrays and returns :data:`~impactbandits.kernels.codes.DONE`;
    :data:`~impactbandits.kernels.codes.STOPPED` once ``stop[0]`` is set, or
    :data:`~impactbandits.kernels.codes.INVALID` with ``invalid = (replication, round, arm)``
    when ``select`` returns no arm in 0 .. K − 1 (the outputs unfinished).

    ``params``: the policy step's; ``env_params``, ``delays`` ``(R, K)`` and ``noise``
    ``(R, 3)``: the environment's (:class:`~impactbandits.envs.delay.CompiledDelay`);
    ``uniforms``: ``(R, rounds)`` draws of the policy's stream, or ``(R, 1)`` zeros for none
    (read at a stride of 0); ``streams``: ``(R, 3)`` each replication's counter-based stream,
    for a stream step's ``init``; ``out_phases`` ``(R, C, P)``: P = 0 for a policy without
    phases (then ``phase`` is never called and ``out_phase_switches`` is not written)."""
    replications, k = noise.shape[0], out_pulls.shape[2]
    stride = 1 if uniforms.shape[1] > 1 else 0
    n_cp = checkpoints.size
    n_phases = out_phases.shape[2]
    lent_params = lend(params)
    pulls = np.empty(k, dtype=np.int64)
    phase_counts = np.empty(n_phases, dtype=np.int64)
    for r in range(replications):
        if stopped(stop, 0):
            return STOPPED
        owned = start(params, k, rounds, streams[r])
        state = lend(owned)  # no reference counting in the rounds (loop.lend)
        owned_world = env_init(env_params, k, delays[r], noise[r])
        world = lend(owned_world)
        pulls[:] = 0
        phase_counts[:] = 0
        reward = 0.0
        value = 0.0
        switches = 0
        phase_switches = 0
        previous = -1
        previous_phase = -1
        c = 0
        for t in range(1, rounds + 1):
            if stopped(stop, t):
                return STOPPED
            a = select(state, lent_params, t, uniforms[r, (t - 1) * stride])
            if a < 0 or a >= k:
                invalid[0] = r
                invalid[1] = t
                invalid[2] = a
                return INVALID
            if n_phases > 0:
                p = phase(state, lent_params)
                phase_counts[p] += 1
                if previous_phase >= 0 and p != previous_phase:
                    phase_switches += 1
                previous_phase = p
            x, v = env_step(world, env_params, t, a)
            update(state, lent_params, t, a, x)
            reward += x
            value += v
            pulls[a] += 1
            if previous >= 0 and a != previous:
                switches += 1
            previous = a
            if c < n_cp and t == checkpoints[c]:
                record(out_reward[r], out_expected[r], out_pulls[r], out_switches[r], c, reward,
                       value, pulls, switches)  # fmt: skip
                if n_phases > 0:
                    for i in range(n_phases):
                        out_phases[r, c, i] = phase_counts[i]
                    out_phase_switches[r, c] = phase_switches
                c += 1
        keep(owned)  # the lent arrays' owners live to here
        keep(owned_world)
    keep(params)
    return DONE
