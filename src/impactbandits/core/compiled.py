"""The compiled-step protocol: how a policy, built-in or a user's, runs in machine code.

A policy declares the compiled form of its rounds beside its readable (batched NumPy) class, in
the same module, as three functions on the state of **one** replication, written in the part of
Python that numba compiles and marked with :func:`kernel`::

    @kernel
    def init(params, k, rounds):            # -> state: an array, or a tuple of arrays
    @kernel
    def select(state, params, t, u):        # -> the arm of round t (1-based), an integer
    @kernel
    def update(state, params, t, arm, reward):  # learn from round t; returns nothing

``params`` is the ``float64`` array the policy resolved in ``reset`` (its exploration constant,
the horizon-derived window, …), ``k`` the number of arms, ``rounds`` the rounds to play, ``u``
the round's uniform draw from the policy's random stream (:attr:`CompiledStep.draws`; ``0.0``
for a policy that draws nothing). A policy that draws more than one value a round (Thompson
sampling: one per arm) declares :attr:`CompiledStep.stream` instead: its ``init`` then takes
the replication's counter-based stream as a fourth argument (:mod:`~impactbandits.core.
streams`). A policy whose readable form reads :attr:`~impactbandits.core.feedback.Feedback.
reevaluated` declares a fourth kernel, :attr:`CompiledStep.reevaluate`, and a policy with
phases one that reports them, :attr:`CompiledStep.phase`. After ``reset`` the
policy's :meth:`~impactbandits.core.policy.Policy.compiled_step` returns them as a
:class:`CompiledStep`, or ``None`` (no compiled form for these parameters).

The generic round loop (:mod:`impactbandits.kernels`) plays every replication with them: the
environment's pull model, the noise, the checkpoints and the bookkeeping are its own, and it
knows no concrete policy. Whether it runs is decided above this package, by whoever runs the
simulation (the runner uses the compiled loop when numba is installed and the pair has one).
The readable class stays the reference: the compiled step must give the same numbers, bit for
bit, which the library's tests check for every registered policy that declares one (for your
own policy, :func:`impactbandits.testing.check_compiled_step`).

A :func:`kernel` function is a plain Python function until the compiled loop needs it: nothing
here imports numba, so declaring a compiled step costs a policy module nothing at import time,
and the step functions can be called (and debugged) from Python as they are.

A subclass inherits its parent's compiled step only if it changes none of ``reset``,
``select``, ``update`` and ``current_phase``: :func:`declared_step` asks that the class defining
``compiled_step`` be at least as derived as the ones defining those (and likewise for an
environment's ``pull_model`` against its ``reset`` and ``step``), so a user's subclass
that overrides ``select`` runs its own (readable) code, never the parent's compiled copy.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

__all__ = ["CompiledStep", "Kernel", "declared_step", "kernel", "refill"]


class Kernel:
    """A function the compiled loop may compile with numba (:func:`kernel`); called from Python
    it runs as written. ``inline``: numba inlines it into its callers (small, hot helpers)."""

    def __init__(self, function: Callable[..., Any], inline: bool = False) -> None:
        self.py_func = function
        self.inline = inline
        functools.update_wrapper(self, function)

    def __call__(self, *args: Any) -> Any:
        return self.py_func(*args)

    def __repr__(self) -> str:
        return f"<kernel {self.py_func.__module__}.{self.py_func.__qualname__}>"


@overload
def kernel(function: Callable[..., Any], /) -> Kernel: ...
@overload
def kernel(*, inline: bool = False) -> Callable[[Callable[..., Any]], Kernel]: ...
def kernel(
    function: Callable[..., Any] | None = None, /, *, inline: bool = False
) -> Kernel | Callable[[Callable[..., Any]], Kernel]:
    """Mark ``function`` as compilable (``@kernel`` or ``@kernel(inline=True)``). A kernel may
    call other kernels (and numba-compiled functions) of any module, and read module-level
    constants, which the compiled code freezes."""
    if function is not None:
        return Kernel(function, inline)
    return lambda f: Kernel(f, inline)


def refill(target: Any, source: Any) -> None:
    """Copy the arrays of the state ``source`` into those of ``target``, in place (a state: an
    array, or a tuple of arrays, numbers and such tuples, of the same shapes; numbers are left:
    they cannot change). For a step that restarts a step it runs: ``refill(inner,
    inner_init(...))``. Callable from a kernel (compiled, the library provides it to numba)."""
    if isinstance(target, np.ndarray):
        target[...] = source
    elif isinstance(target, tuple):
        for part, new in zip(target, source, strict=True):
            refill(part, new)


@dataclass(frozen=True, eq=False)
class CompiledStep:
    """A policy's compiled form for one run (module docstring): its three kernels, the
    parameters they read, and how many uniforms per round ``select`` takes from the policy's
    stream (``draws``: 0, or 1 for a policy whose readable form draws one per replication per
    round with :meth:`~impactbandits.core.random.BatchRNG.random` or
    :meth:`~impactbandits.core.random.BatchRNG.categorical`)."""

    init: Kernel
    select: Kernel
    update: Kernel
    params: np.ndarray
    draws: int = 0
    stream: bool = False
    """Whether the step draws from the policy's counter-based stream (:mod:`~impactbandits.
    core.streams`): then ``init`` takes a fourth argument, the replication's stream (a
    ``uint64`` array: key words and replication), keeps it in the state, and the step reads
    its draws with :func:`~impactbandits.core.streams.stream_uniform` and the other kernels
    there — the same values as the readable form's ``rng.stream``."""
    first_draw: int = 1
    """With ``draws = 1``: the first round (from 1) whose ``select`` takes a draw. Rounds before
    it take none (their ``u`` is ``0.0``) and the draws start at it, for a readable form that
    draws nothing in its opening rounds (a round-robin start, say)."""
    reevaluate: Kernel | None = None
    """For a policy whose readable form reads :attr:`~impactbandits.core.feedback.Feedback.
    reevaluated` (the fresh evaluations of a rested bandit with ``noise_draws =
    "per-evaluation"``): ``reevaluate(state, params, t, fresh)``, which the loop calls every
    round right after ``update`` with ``fresh``, the round's ``reevaluated`` of the replication
    (``(K, 5)``: every arm's f(n_i) three times, then f(n_i − 1) twice, NaN where that pull does
    not exist; read it during the call, the loop reuses it). It is never called on an
    environment without re-evaluations (the step then plays as without it). A policy of this
    library without it reads no re-evaluations and runs compiled on such an environment too; a
    user's policy without it runs its readable form there (it may read them)."""
    phase: Kernel | None = None
    """For a policy with :attr:`~impactbandits.core.policy.Policy.phases`: ``phase(state,
    params)`` → the index into ``phases`` of the round just selected (its ``current_phase``),
    which the loop calls after ``select`` and before the world plays the arm, and counts into
    the run's rounds per phase and phase switches. A policy with phases and no ``phase`` runs
    its readable form."""
    simplex: bool = False
    """A step over probability vectors (a :class:`~impactbandits.core.spaces.Simplex` action
    space: meta-arms, allocations): ``select(state, params, t, u, action)`` writes round
    ``t``'s vector into ``action`` (``k`` floats) and returns 0, or the arm of a one-hot
    vector (checked against ``0 .. K − 1``); ``update(state, params, t, action, observed,
    reward)`` learns from ``observed``, each group's reward (NaN where not observed), and the
    round's. It plays in a world whose steps take vectors
    (:attr:`~impactbandits.core.world.CompiledWorld.simplex`)."""
    bound: tuple[tuple[str, Kernel], ...] = ()
    """Kernels this step's kernels call under module-global names their module leaves
    ``None``, as ``(name, kernel)`` pairs: the step of a policy run inside this one (the
    one-hot policy's base, SRUM's black box: ``inner_init``, ``inner_select``,
    ``inner_update``), a fairness function's kernels. The loop compiles copies of the step's
    kernels with those names bound, so one module's kernels serve any inner step."""
    blame: tuple[tuple[str, str], ...] = ()
    """``(bound name, spec field)`` pairs: the field on which a failing kernel of a user's bound
    under that name is reported (SRUM's fairness kernels: ``fairness``); ``policy`` for the
    others."""

    def __post_init__(self) -> None:
        for name in ("init", "select", "update"):
            if not isinstance(getattr(self, name), Kernel):
                raise TypeError(f"CompiledStep.{name} must be a function marked with @kernel")
        for name in ("reevaluate", "phase"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), Kernel):
                raise TypeError(f"CompiledStep.{name} must be a function marked with @kernel")
        if self.draws not in (0, 1):
            raise ValueError("CompiledStep.draws must be 0 or 1")
        if self.stream and self.draws:
            raise ValueError("CompiledStep: a step draws from its stream or takes u, not both")
        for pair in self.bound:
            if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str)
                    and isinstance(pair[1], Kernel)):  # fmt: skip
                raise TypeError("CompiledStep.bound must hold (name, @kernel function) pairs")
        object.__setattr__(self, "bound", tuple(self.bound))
        object.__setattr__(self, "blame", tuple(self.blame))
        if self.first_draw < 1:
            raise ValueError("CompiledStep.first_draw must be a round, 1 or later")
        params = np.ascontiguousarray(self.params, dtype=np.float64)
        if params.ndim != 1:
            raise ValueError("CompiledStep.params must be a 1-d array of numbers")
        object.__setattr__(self, "params", params)


def _defining(cls: type, name: str) -> type | None:
    """The class of ``cls``'s MRO whose namespace defines ``name``."""
    return next((base for base in cls.__mro__ if name in vars(base)), None)


def declared_step(
    obj: Any,
    declaration: str = "compiled_step",
    methods: tuple[str, ...] = ("reset", "select", "update", "current_phase"),
) -> Any:
    """``obj.<declaration>`` (a bound method, to be called by the caller) if the class that
    defines ``declaration`` also stands for ``methods`` (it, or a subclass of it, defines each),
    else ``None``. For a policy: its :meth:`~impactbandits.core.policy.Policy.compiled_step`;
    for an environment, ``declared_step(env, "pull_model", ("reset", "step"))``."""
    cls = type(obj)
    owner = _defining(cls, declaration)
    if owner is None:
        return None
    for name in methods:
        where = _defining(cls, name)
        if where is not None and not issubclass(owner, where):
            return None  # a subclass changed the readable rounds: the declaration is not theirs
    return getattr(obj, declaration)
