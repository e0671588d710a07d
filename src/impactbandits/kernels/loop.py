"""The generic compiled round loop: any policy's compiled step in any environment's compiled world.

:func:`_template` is the loop, written once: for each replication, ``state = init(params, k,
rounds)`` (with the replication's stream for a stream step) and the world's state
(``world_init``, :mod:`~impactbandits.core.world`), then every round ``a = select(state,
params, t, u)``, the reward and expected reward of the pull from the world (``world_step``),
``update(state, params, t, a, x)``, and the checkpoint summaries of
:class:`~impactbandits.core.simulate.Trajectory`. ``init``, ``select``, ``update``,
``world_init`` and ``world_step`` are names it does not define: :func:`loop_for` makes one copy
of the function per (compiled step, world) pair with those names bound to their kernels, and
numba compiles that copy into one piece of machine code (the kernels inlined into the loop
where numba chooses to). What only some pairs need is a constant of the copy, and no code in
the others: a copy ``reevaluating`` (a step's
:attr:`~impactbandits.core.compiled.CompiledStep.reevaluate` in a world with
:attr:`~impactbandits.core.world.CompiledWorld.reevaluate`) has the world make each round's
fresh evaluations and hands them to the step's ``reevaluate`` after ``update``; a copy
``phasing`` (a step with :attr:`~impactbandits.core.compiled.CompiledStep.phase`) counts the
rounds of each phase and the phase switches; a copy ``recording`` (a world with
:attr:`~impactbandits.core.world.CompiledWorld.record`) keeps the world's own values at each
checkpoint; a copy ``arm_rewarding`` keeps each arm's total reward (an environment that
reports them, :attr:`~impactbandits.core.environment.Environment.records_arm_rewards`); a copy
``simplex`` (a step and a world over probability vectors,
:attr:`~impactbandits.core.compiled.CompiledStep.simplex`) plays a vector each round, counts the
probability mass per group as its pulls and a round whose vector moved by more than the
space's tolerance as a switch. A step that runs a discrete step inside it
names the kernels it calls (:attr:`~impactbandits.core.compiled.CompiledStep.bound`: an inner
step's, a fairness function's) and gets copies of its kernels with those names bound.

Each copy is cached on disk by numba under a name that carries a hash of every source file its
machine code comes from (this module and the kernels' modules, the step's and the world's
modules and the modules of every kernel they call, transitively), so an edited policy or
environment compiles afresh instead of running its old cached code, and a fresh process loads
the machine code instead of compiling (:func:`~impactbandits.kernels.sources.loop_tag`).
Kernels defined where no source file can be read (``__main__`` of an interactive session)
compile once per process, uncached.

:func:`compile_kernel` turns a :class:`~impactbandits.core.compiled.Kernel` into numba's
dispatcher, and numba sees a kernel named by another kernel as that dispatcher (a ``typeof``
registration made on import of this module). Kernels from outside the package are compiled
with bounds checking, so that a user's step or world that indexes out of bounds raises
``IndexError`` instead of reading other memory; the built-ins are compiled without it.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from typing import Any

import numpy as np
from numba import njit
from numba.core import types as numba_types
from numba.core.dispatcher import Dispatcher
from numba.extending import overload, typeof_impl

from impactbandits.core.compiled import CompiledStep, Kernel, kernel, refill
from impactbandits.core.world import CompiledWorld
from impactbandits.kernels import noise as _noise  # noqa: F401  (SciPy's C functions for numba)
from impactbandits.kernels.checkpoints import record
from impactbandits.kernels.codes import DONE, INVALID, STOPPED
from impactbandits.kernels.lending import keep, lend
from impactbandits.kernels.sources import builtin, loop_tag
from impactbandits.kernels.stop import stopped

__all__ = ["compile_kernel", "loop_for"]


@functools.cache
def compile_kernel(kernel: Kernel, inline: bool = False) -> Dispatcher:
    """numba's dispatcher for ``kernel`` (once per process; not cached on disk by itself: the
    loop that calls it is, with its code inside). The kernels it names are bound to their own
    dispatchers (in a copy of its globals), so numba sees them as functions it may inline:
    those marked ``inline``, and with ``inline`` this one into its caller."""
    function = kernel.py_func
    scope = dict(function.__globals__)
    for name, value in _kernel_globals(function):
        scope[name] = compile_kernel(value)
    copy = types.FunctionType(
        function.__code__, scope, function.__name__, function.__defaults__, function.__closure__
    )
    copy.__qualname__, copy.__module__ = function.__qualname__, function.__module__
    options: dict[str, Any] = {"nogil": True, "boundscheck": not builtin(function)}
    if kernel.inline or inline:
        options["inline"] = "always"
    return njit(**options)(copy)


@functools.cache
def _called(kernel: Kernel) -> Dispatcher:
    """``kernel`` compiled to be called, never inlined at numba's IR level (LLVM may still
    inline it): a world's ``step`` inlined into the loop beside the policy's kernels made numba
    mix up their variables (numba 0.68: the policy's step then read the world's ``params``)."""
    return compile_kernel(Kernel(kernel.py_func, inline=False))


def _kernel_globals(function: Any) -> list[tuple[str, Kernel]]:
    """The (name, kernel) pairs of the globals ``function``'s code names."""
    scope = function.__globals__
    codes, found = [function.__code__], []
    while codes:
        code = codes.pop()
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        found += [(n, scope[n]) for n in code.co_names if isinstance(scope.get(n), Kernel)]
    return found


@overload(refill)
def _refill(target: Any, source: Any) -> Any:
    """:func:`~impactbandits.core.compiled.refill` for numba: arrays copied, a tuple its first
    part and then the rest (typed anew for each shorter tuple), anything else left."""
    # (each implementation repeats the overload's annotations: numba compares the signatures)
    if isinstance(target, numba_types.Array):

        def fill(target: Any, source: Any) -> Any:
            target[...] = source

        return fill
    if isinstance(target, numba_types.BaseTuple) and len(target) > 0:

        def each(target: Any, source: Any) -> Any:
            refill(target[0], source[0])
            refill(target[1:], source[1:])

        return each

    def leave(target: Any, source: Any) -> Any:
        return None

    return leave


@typeof_impl.register(Kernel)
def _typeof_kernel(value: Kernel, context: Any) -> numba_types.Dispatcher:
    return numba_types.Dispatcher(compile_kernel(value))


def loop_for(
    step: CompiledStep, world: CompiledWorld, reevaluating: bool = False, arm_rewards: bool = False
) -> Dispatcher:
    """The compiled loop of ``step``'s kernels in ``world`` (:func:`_template`), loaded from
    numba's disk cache when it was compiled before from the same sources; ``reevaluating``: the
    loop in which the world makes re-evaluations and the step reads them; ``arm_rewards``: the
    loop that keeps each arm's total reward (an environment that reports them)."""
    if step.simplex != world.simplex:
        raise ValueError("a step over probability vectors plays in a world over them, only")
    reevaluate = step.reevaluate if reevaluating else None
    world_reevaluate = world.reevaluate if reevaluating else None
    kernels = _Kernels(step.init, step.select, step.update, world.init, world.step, reevaluate,
                       world_reevaluate, world.record, step.phase, step.bound,
                       step.simplex, arm_rewards)  # fmt: skip
    return _loop(kernels, step.stream)


@dataclasses.dataclass(frozen=True)
class _Kernels:
    """The kernels a loop copy binds (hashable: the copies are cached by them)."""

    init: Kernel
    select: Kernel
    update: Kernel
    world_init: Kernel
    world_step: Kernel
    reevaluate: Kernel | None = None
    world_reevaluate: Kernel | None = None
    world_record: Kernel | None = None
    phase: Kernel | None = None
    bound: tuple[tuple[str, Kernel], ...] = ()
    simplex: bool = False
    arm_rewards: bool = False

    def all(self) -> list[Kernel]:
        """The kernels it holds."""
        held = [getattr(self, f.name) for f in dataclasses.fields(self)]
        return [k for k in held if isinstance(k, Kernel)] + [k for _, k in self.bound]


def _start_plain(params: np.ndarray, k: int, rounds: int, stream: np.ndarray) -> Any:
    """A step's state, from an ``init`` that takes no stream."""
    return init(params, k, rounds)


def _start_stream(params: np.ndarray, k: int, rounds: int, stream: np.ndarray) -> Any:
    """A step's state, from an ``init`` that keeps the replication's stream."""
    return init(params, k, rounds, stream)


@kernel(inline=True)
def _no_reevaluation(state: Any, params: np.ndarray, t: int, fresh: np.ndarray) -> None:
    """``reevaluate`` of a loop without re-evaluations (never called)."""


@kernel(inline=True)
def _no_phase(state: Any, params: np.ndarray) -> int:
    """``phase`` of a step without phases (never called)."""
    return 0


@kernel(inline=True)
def _no_record(state: Any, params: np.ndarray, out: np.ndarray) -> None:
    """``record`` of a world that records nothing (never called)."""


def _ignore(values: np.ndarray) -> None:
    """``receive`` of the world :func:`_loop` names its copy by (never called)."""


@functools.cache
def _loop(kernels: _Kernels, stream: bool = False) -> Dispatcher:
    reevaluating = kernels.reevaluate is not None and kernels.world_reevaluate is not None
    step = CompiledStep(kernels.init, kernels.select, kernels.update, np.zeros(0), stream=stream,
                        reevaluate=kernels.reevaluate if reevaluating else None,
                        phase=kernels.phase, simplex=kernels.simplex,
                        bound=kernels.bound)  # fmt: skip
    world = CompiledWorld(kernels.world_init, kernels.world_step, np.zeros(0), np.zeros(1),
                          np.zeros((1, 1), dtype=np.uint64),
                          kernels.world_reevaluate if reevaluating else None,
                          kernels.world_record, int(kernels.world_record is not None),
                          _ignore, kernels.simplex)  # fmt: skip
    tag = loop_tag(step, world, reevaluating, kernels.arm_rewards)
    # a user's kernels are inlined: the loop is compiled with their bounds checking
    users = not all(builtin(k.py_func) for k in kernels.all())
    anonymous = "_".join(f"{id(k):x}" for k in kernels.all()) + f"_{int(stream)}"
    suffix = tag if tag is not None else anonymous

    def compiled(kernel: Kernel) -> Dispatcher:  # with the step's names bound, if it has any
        if not kernels.bound:
            return compile_kernel(kernel, inline=True)
        return _binding(kernel, kernels.bound, suffix, users)

    compiled_init = compiled(kernels.init)
    starter = _start_stream if stream else _start_plain
    # a name of its own per copy (numba names machine code by qualified name and a counter that
    # restarts in every process: copies of one function with other globals must not share it)
    start_name = f"start_{suffix}"
    start = types.FunctionType(
        starter.__code__, dict(starter.__globals__, init=compiled_init), start_name
    )
    start.__qualname__ = start_name
    # the kernels' dispatchers, inlined into the loop: a large state tuple would otherwise be
    # copied into every call (SPO's twelve arrays: ~90 ns a round)
    scope = dict(
        _template.__globals__,
        start=njit(inline="always", nogil=True)(start),
        select=compiled(kernels.select),
        update=compiled(kernels.update),
        reevaluate=compiled(step.reevaluate or _no_reevaluation),
        world_init=_called(kernels.world_init),
        world_step=_called(kernels.world_step),
        world_reevaluate=_called(world.reevaluate or _no_reevaluation),
        world_record=_called(world.record or _no_record),
        phase=compiled(kernels.phase or _no_phase),
        reevaluating=reevaluating,
        recording=world.record is not None,
        phasing=kernels.phase is not None,
        simplex=kernels.simplex,
        arm_rewarding=kernels.arm_rewards,
    )
    name = f"loop_{suffix}"
    function = types.FunctionType(_template.__code__, scope, name, _template.__defaults__)
    function.__qualname__ = name
    return njit(cache=tag is not None, nogil=True, boundscheck=users)(function)


@functools.cache
def _binding(
    kernel: Kernel, bound: tuple[tuple[str, Kernel], ...], suffix: str, users: bool
) -> Dispatcher:
    """A copy of ``kernel`` (inlined) in which the names of ``bound`` are its kernels, and so in
    every kernel it calls that names one of them, transitively (the others are their plain
    dispatchers); each copy named after the loop (``suffix``), as numba needs."""
    names = {name for name, _ in bound}
    function = kernel.py_func
    scope = dict(function.__globals__)
    for global_name, value in _kernel_globals(function):
        if _names(value) & names:
            scope[global_name] = _binding(value, bound, suffix, users)
        else:
            scope[global_name] = compile_kernel(value)
    for name, value in bound:
        scope[name] = compile_kernel(value, inline=True)
    name = f"{function.__name__}__{suffix}"
    copy = types.FunctionType(function.__code__, scope, name, function.__defaults__)
    copy.__qualname__ = name
    return njit(inline="always", nogil=True, boundscheck=users)(copy)


@functools.cache
def _names(kernel: Kernel) -> frozenset[str]:
    """The global names ``kernel``'s code uses, and those of the kernels it calls."""
    function = kernel.py_func
    codes, found = [function.__code__], set[str]()
    while codes:
        code = codes.pop()
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        found.update(code.co_names)
    for _, value in _kernel_globals(function):
        found |= _names(value)
    return frozenset(found)


# names the template leaves to loop_for (module docstring); never called as module globals
init: Any = None
start: Any = None
select: Any = None
update: Any = None
reevaluate: Any = None
world_init: Any = None
world_step: Any = None
world_reevaluate: Any = None
world_record: Any = None
phase: Any = None
reevaluating = False
recording = False
phasing = False
simplex = False
arm_rewarding = False


def _template(
    params: np.ndarray,
    world_params: np.ndarray,
    world_data: np.ndarray,
    world_noise: np.ndarray,
    tolerance: float,
    uniforms: np.ndarray,
    streams: np.ndarray,
    rounds: int,
    checkpoints: np.ndarray,
    out_reward: np.ndarray,
    out_expected: np.ndarray,
    out_pulls: np.ndarray,
    out_switches: np.ndarray,
    out_world: np.ndarray,
    out_phases: np.ndarray,
    out_arm_rewards: np.ndarray,
    out_phase_switches: np.ndarray,
    invalid: np.ndarray,
    stop: np.ndarray,
) -> int:
    """``rounds`` rounds of the step in the world in every replication; writes the checkpoint
    summaries into the ``out_*`` arrays and returns :data:`~impactbandits.kernels.codes.DONE`;
    or :data:`~impactbandits.kernels.codes.STOPPED` once ``stop[0]`` is set
    (:mod:`~impactbandits.kernels.stop`), or :data:`~impactbandits.kernels.codes.INVALID` with
    ``invalid = (replication, round, arm)`` when ``select`` returns no arm in ``0 .. K − 1``
    (the outputs unfinished).

    ``world_params``, ``world_data`` and ``world_noise``: the world's
    (:class:`~impactbandits.core.world.CompiledWorld`; row ``r`` of the data, or row 0 when it
    has one, and row ``r`` of the noise words go to replication ``r``'s ``world_init``);
    ``tolerance``: for a ``simplex`` copy, the action space's (a round switches when its vector
    differs from the previous round's by more than it in some group; unused by the others);
    ``uniforms``: ``(R, rounds)`` draws of the policy's stream, or ``(R, 1)`` zeros for none
    (read at a stride of 0: a branch on "draws or not" in the round slowed every step 2x);
    ``streams``: ``(R, 3)`` each replication's counter-based stream, handed to a stream step's
    ``init`` (:attr:`~impactbandits.core.compiled.CompiledStep.stream`); ``out_world``: ``(R,
    C, W)``, what a ``recording`` copy's world records at each checkpoint (``W = 0``: nothing);
    ``out_phases`` ``(R, C, P)`` and ``out_phase_switches`` ``(R, C)``: a ``phasing`` copy's
    rounds per phase and phase switches at each checkpoint (``P = 0`` and unwritten in the
    others); ``out_arm_rewards`` ``(R, C, K)``: an ``arm_rewarding`` copy's total reward of each
    arm at each checkpoint (``K = 0`` and unwritten in the others)."""
    replications, k = world_noise.shape[0], out_pulls.shape[2]
    per_replication = world_data.shape[0] > 1
    stride = 1 if uniforms.shape[1] > 1 else 0  # (R, rounds) draws, or (R, 1) zeros
    n_cp = checkpoints.size
    lent_params = lend(params)
    lent_world_params = lend(world_params)
    fresh = np.empty((k if reevaluating else 0, 5))  # a round's re-evaluations
    lent_fresh = lend(fresh)
    phase_counts = np.empty(out_phases.shape[2], dtype=np.int64)
    width = k if simplex else 0  # a simplex copy's vectors: played, observed, previous, mass
    action = np.zeros(width)
    observed = np.empty(width)
    last_action = np.empty(width)
    mass = np.empty(width)
    arm_rewards = np.zeros(k if arm_rewarding else 0)
    for r in range(replications):
        if stopped(stop, 0):
            return STOPPED
        owned = start(params, k, rounds, streams[r])
        state = lend(owned)  # see lend: no reference counting in the rounds
        world_owned = world_init(world_params, world_data[r if per_replication else 0], k,
                                 rounds, world_noise[r])  # fmt: skip
        world = lend(world_owned)
        pulls = np.zeros(k, dtype=np.int64)
        mass[:] = 0.0
        arm_rewards[:] = 0.0
        reward = 0.0
        value = 0.0
        switches = 0
        previous = -1
        phase_counts[:] = 0
        phase_switches = 0
        previous_phase = -1
        c = 0
        for t in range(1, rounds + 1):
            if stopped(stop, t):
                return STOPPED
            u = uniforms[r, (t - 1) * stride]
            if simplex:  # a constant of the copy
                a = select(state, lent_params, t, u, action)
            else:
                a = select(state, lent_params, t, u)
            if a < 0 or a >= k:
                invalid[0] = r
                invalid[1] = t
                invalid[2] = a
                return INVALID
            if phasing:  # a constant of the copy
                p = phase(state, lent_params)
                phase_counts[p] += 1
                if previous_phase >= 0 and p != previous_phase:
                    phase_switches += 1
                previous_phase = p
            if simplex:
                x, v = world_step(world, lent_world_params, t, action, observed)
                reward += x
                value += v
                update(state, lent_params, t, action, observed, x)
                changed = False
                for i in range(k):
                    mass[i] += action[i]
                    changed = changed or abs(action[i] - last_action[i]) > tolerance
                    last_action[i] = action[i]
                if t > 1 and changed:
                    switches += 1
            else:
                x, v = world_step(world, lent_world_params, t, a)
                reward += x
                value += v
                pulls[a] += 1
                if arm_rewarding:  # a constant of the copy
                    arm_rewards[a] += x
                update(state, lent_params, t, a, x)
                if reevaluating:  # a constant of the copy
                    world_reevaluate(world, lent_world_params, t, lent_fresh)
                    reevaluate(state, lent_params, t, lent_fresh)
                if previous >= 0 and a != previous:
                    switches += 1
                previous = a
            if c < n_cp and t == checkpoints[c]:
                if simplex:  # pulls: the probability mass per group
                    record(out_reward[r], out_expected[r], out_pulls[r], out_switches[r], c,
                           reward, value, mass, switches)  # fmt: skip
                else:
                    record(out_reward[r], out_expected[r], out_pulls[r], out_switches[r], c,
                           reward, value, pulls, switches)  # fmt: skip
                if recording:  # a constant of the copy
                    world_record(world, lent_world_params, out_world[r, c])
                if phasing:  # a constant of the copy
                    out_phases[r, c, :] = phase_counts
                    out_phase_switches[r, c] = phase_switches
                if arm_rewarding:  # a constant of the copy
                    out_arm_rewards[r, c, :] = arm_rewards
                c += 1
        keep(owned)  # the lent arrays' owners live to here
        keep(world_owned)
    keep(params)
    keep(world_params)
    keep(fresh)
    return DONE
