"""The compiled round loop of the simplex bandits: a policy's meta-arms on Tang et al.'s
delayed-impact environment (:class:`~impactbandits.envs.impact.ImpactBandit`).

:func:`_template` is the loop, written once: for each replication the policy's state
(``start``, from its ``init``) and the environment's (``env_init``), then every round
``choose`` writes the probability vector of round t into ``action`` (its return value: 0, or
the arm of a one-hot meta-arm, checked against 0 .. K − 1), ``env_step`` plays it (the impacts,
the groups' activation and payoff from the common random numbers of round t, ``observed`` and
the round's reward and expected reward), ``learn`` updates the policy, and the checkpoint
summaries of :class:`~impactbandits.core.simulate.Trajectory` are kept as the readable loop
keeps them for simplex actions: pulls are the probability mass per group, a switch a round
whose vector differs from the previous one by more than the space's tolerance in some group.

``start``, ``choose``, ``learn``, ``env_init`` and ``env_step`` are names the template does not
define: :func:`simplex_for` makes one copy of it per (policy step, environment step), with the
names bound to their compiled kernels (:class:`~impactbandits.policies.impact.SimplexStep`,
:class:`~impactbandits.envs.impact.CompiledImpact`); a step that runs a discrete policy's step
inside it (``inner``: :class:`~impactbandits.policies.impact.OneHot`) gets its own copies of
its two kernels, with ``inner_select`` and ``inner_update`` bound to the inner step's. Every
copy has a name of its own carrying the hash of its sources (:func:`simplex_tag`), as the
generic loop's (:mod:`impactbandits.kernels.loop`), and the loop is cached on disk by numba
under that name. Imported only when numba is installed.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import numpy as np
from numba import njit
from numba.core.dispatcher import Dispatcher

from impactbandits.core.compiled import CompiledStep, Kernel
from impactbandits.kernels.checkpoints import record
from impactbandits.kernels.codes import DONE, INVALID, STOPPED
from impactbandits.kernels.loop import (
    _kernel_globals,
    _start_plain,
    _start_stream,
    compile_kernel,
    keep,
    lend,
)
from impactbandits.kernels.simplex_driver import simplex_tag
from impactbandits.kernels.sources import builtin
from impactbandits.kernels.stop import stopped

__all__ = ["simplex_for"]

# names the template leaves to simplex_for (module docstring); never called as module globals
start: Any = None
choose: Any = None
learn: Any = None
env_init: Any = None
env_step: Any = None


def simplex_for(step: CompiledStep, inner: CompiledStep | None, init: Kernel, play: Kernel) -> Any:
    """The compiled loop of the policy step ``step`` (running ``inner``, if any) on the
    environment kernels ``init`` and ``play``, loaded from numba's disk cache when it was
    compiled before from the same sources."""
    inner_kernels = None if inner is None else (inner.select, inner.update)
    return _simplex(step.init, step.select, step.update, step.stream, inner_kernels, init, play)


def _copy(function: Any, scope: dict[str, Any], name: str) -> Any:
    copy = types.FunctionType(function.__code__, scope, name, function.__defaults__)
    copy.__qualname__ = name
    return copy


def _bound(kernel: Kernel, inner: tuple[Kernel, Kernel], name: str, users: bool) -> Dispatcher:
    """A copy of ``kernel`` with ``inner_select`` and ``inner_update`` bound to ``inner``'s
    kernels (and every kernel it names to its dispatcher), named ``name``, inlined."""
    function = kernel.py_func
    scope = dict(function.__globals__)
    for global_name, value in _kernel_globals(function):
        scope[global_name] = compile_kernel(value)
    scope["inner_select"] = compile_kernel(inner[0], inline=True)
    scope["inner_update"] = compile_kernel(inner[1], inline=True)
    return njit(inline="always", nogil=True, boundscheck=users)(_copy(function, scope, name))


@functools.cache
def _simplex(
    init: Kernel,
    select: Kernel,
    update: Kernel,
    stream: bool,
    inner: tuple[Kernel, Kernel] | None,
    world_init: Kernel,
    world_step: Kernel,
) -> Dispatcher:
    kernels = [init, select, update, *(inner or ()), world_init, world_step]
    tag = simplex_tag(kernels, stream)
    suffix = tag if tag is not None else f"{id(select):x}_{id(world_step):x}_{int(stream)}"
    users = not all(builtin(k.py_func) for k in kernels)
    # names of their own per copy (numba names machine code by qualified name and a counter
    # that restarts in every process: copies of one function with other globals must not
    # share it)
    starter = _start_stream if stream else _start_plain
    scope = dict(starter.__globals__, init=compile_kernel(init, inline=True))
    begin = njit(inline="always", nogil=True)(_copy(starter, scope, f"simplex_start_{suffix}"))
    if inner is None:
        chosen, learned = compile_kernel(select, inline=True), compile_kernel(update, inline=True)
    else:
        chosen = _bound(select, inner, f"simplex_select_{suffix}", users)
        learned = _bound(update, inner, f"simplex_update_{suffix}", users)
    scope = dict(
        _template.__globals__,
        start=begin,
        choose=chosen,
        learn=learned,
        env_init=compile_kernel(world_init, inline=True),
        env_step=compile_kernel(world_step, inline=True),
    )
    function = _copy(_template, scope, f"simplex_{suffix}")
    return njit(cache=tag is not None, nogil=True, boundscheck=users)(function)


def _template(
    params: np.ndarray,
    env_params: np.ndarray,
    env_noise: np.ndarray,
    tolerance: float,
    uniforms: np.ndarray,
    streams: np.ndarray,
    rounds: int,
    checkpoints: np.ndarray,
    out_reward: np.ndarray,
    out_expected: np.ndarray,
    out_pulls: np.ndarray,
    out_switches: np.ndarray,
    invalid: np.ndarray,
    stop: np.ndarray,
) -> int:
    """``rounds`` rounds in every replication; writes the checkpoint summaries into the
    ``out_*`` arrays and returns :data:`~impactbandits.kernels.codes.DONE`;
    :data:`~impactbandits.kernels.codes.STOPPED` once ``stop[0]`` is set, or
    :data:`~impactbandits.kernels.codes.INVALID` with ``invalid = (replication, round, arm)``
    when a one-hot step's arm is not in 0 .. K − 1 (the outputs unfinished).

    ``params``: the policy step's; ``env_params`` and ``env_noise`` ``(R, 2, 3)``: the
    environment's (:class:`~impactbandits.envs.impact.CompiledImpact`); ``tolerance``: the
    space's, for switches; ``uniforms``: ``(R, rounds)`` draws of the policy's stream, or
    ``(R, 1)`` zeros for none (read at a stride of 0); ``streams``: ``(R, 3)`` each
    replication's counter-based stream, for a stream step's ``init``."""
    replications, k = env_noise.shape[0], out_pulls.shape[2]
    stride = 1 if uniforms.shape[1] > 1 else 0
    n_cp = checkpoints.size
    lent_params = lend(params)
    action = np.empty(k)
    previous = np.empty(k)
    observed = np.empty(k)
    pulls = np.empty(k)
    for r in range(replications):
        if stopped(stop, 0):
            return STOPPED
        owned = start(params, k, rounds, streams[r])
        state = lend(owned)  # no reference counting in the rounds (loop.lend)
        owned_world = env_init(env_params, k, env_noise[r])
        world = lend(owned_world)
        pulls[:] = 0.0
        reward = 0.0
        value = 0.0
        switches = 0
        c = 0
        for t in range(1, rounds + 1):
            if stopped(stop, t):
                return STOPPED
            a = choose(state, lent_params, t, uniforms[r, (t - 1) * stride], action)
            if a < 0 or a >= k:
                invalid[0] = r
                invalid[1] = t
                invalid[2] = a
                return INVALID
            x, v = env_step(world, env_params, t - 1, action, observed)
            learn(state, lent_params, t, action, observed, x)
            reward += x
            value += v
            changed = False
            for i in range(k):
                pulls[i] += action[i]
                changed = changed or abs(action[i] - previous[i]) > tolerance
                previous[i] = action[i]
            if t > 1 and changed:
                switches += 1
            if c < n_cp and t == checkpoints[c]:
                record(out_reward[r], out_expected[r], out_pulls[r], out_switches[r], c, reward,
                       value, pulls, switches)  # fmt: skip
                c += 1
        keep(owned)  # the lent arrays' owners live to here
        keep(owned_world)
    keep(params)
    return DONE
