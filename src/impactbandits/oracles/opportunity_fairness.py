"""Fairness functions f: [0, 1]^K → [0, 1]^K of Ron, Ben-Porat & Shalit (2021, §2.2).

f(μ)_i is the minimal fraction of the T rounds arm i must be pulled to avoid the transfer cost;
Σ_i f(μ)_i ≤ 1 and f is L-Lipschitz in the ℓ1 norm. Each function also answers the *range
oracle* of Algorithm 2, Line 6: ``max_{μ'∈C} f(μ')_i − min_{μ'∈C} f(μ')_i`` over a hyper-cube
C = Π [lower_i, upper_i]:

* constant functions (zero, uniform): 0;
* monotone Cartesian-product functions f(μ)_i = g_i(μ_i) with g_i nondecreasing (linear
  μ_i/K, powers μ_i^c/K, …): g_i(upper_i) − g_i(lower_i), exact (the paper's §3.1 remark);
* softmax f(μ)_i = e^{cμ_i}/Σ_j e^{cμ_j}: the maximum is at μ_i = upper_i, μ_j = lower_j (j ≠ i)
  and the minimum at the opposite corner for c ≥ 0 (reversed for c < 0) — exact (Proposition 1);
* user functions: a callable, with an optional exact interval oracle; otherwise a documented
  numerical fallback (every vertex of C for K ≤ :data:`VERTEX_LIMIT`, plus random interior
  points and bounded local optimisation from the best of them). The fallback never
  over-states the range (it is a lower estimate of the true range), so Algorithm 2 may leave
  phase 2 slightly early with such functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from impactbandits import loader
from impactbandits.core import ops
from impactbandits.core.compiled import Kernel, kernel
from impactbandits.errors import SpecError

__all__ = [
    "FAIRNESS_KINDS",
    "CallableFairness",
    "CompiledFairness",
    "ConstantFairness",
    "FairnessFunction",
    "MonotoneCartesianFairness",
    "SoftmaxFairness",
    "make_fairness",
]

FAIRNESS_KINDS = ("zero", "uniform", "linear", "softmax")
#: Numerical range fallback: enumerate all 2^K vertices up to this K.
VERTEX_LIMIT = 12
#: Numerical range fallback: random interior points per call.
RANDOM_POINTS = 256


class FairnessFunction:
    """Base class: ``__call__(mu)`` on ``(..., K)`` arrays; :meth:`range`; :attr:`lipschitz`."""

    lipschitz: float = math.inf
    constant: bool = False

    def __call__(self, mu: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def range(self, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """``(..., K)``: max − min of f(·)_i over the hyper-cube Π [lower_j, upper_j]."""
        raise NotImplementedError

    def compiled_fairness(self) -> CompiledFairness | None:
        """f and its range oracle as kernels, for SRUM's compiled loop (``None``: SRUM runs its
        readable rounds). A subclass that defines ``__call__`` or ``range`` again inherits no
        compiled form (:func:`~impactbandits.core.compiled.declared_step`)."""
        return None

    def check(self, mu: np.ndarray, field: str = "fairness") -> np.ndarray:
        """f(μ) after the model's checks: values in [0, 1], Σ_i f(μ)_i ≤ 1."""
        values = np.asarray(self(np.asarray(mu, dtype=float)), dtype=float)
        if not np.all(np.isfinite(values)) or values.min() < 0 or values.max() > 1:
            raise SpecError(field, f"f(μ) must lie in [0, 1]; got {np.round(values, 4).tolist()}")
        total = values.sum(axis=-1)
        if np.any(total > 1 + 1e-9):
            raise SpecError(field, f"Σ f(μ)_i must be ≤ 1; got {float(np.max(total)):.6g}")
        return values


@dataclass(frozen=True)
class ConstantFairness(FairnessFunction):
    """f(μ)_i = γ_i for all μ (zero: γ = 0; uniform: γ = 1/K). Lipschitz constant 0."""

    gamma: tuple[float, ...]
    lipschitz: float = 0.0
    constant: bool = True

    def __call__(self, mu: np.ndarray) -> np.ndarray:
        return np.broadcast_to(np.asarray(self.gamma), np.shape(mu)).copy()

    def range(self, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        return np.zeros(np.shape(lower))

    def compiled_fairness(self) -> CompiledFairness | None:
        params = np.asarray(self.gamma, dtype=np.float64)
        return CompiledFairness(_constant_value, _constant_range, params)


@dataclass(frozen=True)
class MonotoneCartesianFairness(FairnessFunction):
    """f(μ)_i = scale·μ_i^power (power ≥ 1; ``linear`` is scale = 1/K, power = 1).

    Nondecreasing in μ_i alone, so the range over a box is g(upper_i) − g(lower_i). In ℓ1,
    ‖f(μ) − f(μ')‖₁ ≤ scale·power·‖μ − μ'‖₁ on [0, 1]^K: L = scale·power.
    """

    scale: float
    power: float = 1.0

    @property
    def lipschitz(self) -> float:  # type: ignore[override]
        return self.scale * self.power

    def __call__(self, mu: np.ndarray) -> np.ndarray:
        return self.scale * ops.power(np.asarray(mu, dtype=float), self.power)

    def range(self, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        return self(upper) - self(lower)

    def compiled_fairness(self) -> CompiledFairness | None:
        if not all(isinstance(x, int | float) for x in (self.scale, self.power)):
            return None  # an array scale or exponent: NumPy's broadcasting, not a scalar's
        params = np.array([self.scale, self.power], dtype=np.float64)
        return CompiledFairness(_monotone_value, _monotone_range, params)


@dataclass(frozen=True)
class SoftmaxFairness(FairnessFunction):
    """f^sft(μ; c)_i = e^{cμ_i} / Σ_j e^{cμ_j} (Ron et al. §2.2; c = 1 in their experiments).

    Jacobian c(diag p − p pᵀ) has ℓ1 operator norm c·max_j 2p_j(1 − p_j) ≤ c/2: L = |c|/2.
    Exact range by Proposition 1 (monotone in μ_i, antitone in the others for c ≥ 0).
    """

    c: float = 1.0

    @property
    def lipschitz(self) -> float:  # type: ignore[override]
        return abs(self.c) / 2.0

    def __call__(self, mu: np.ndarray) -> np.ndarray:
        z = self.c * np.asarray(mu, dtype=float)
        z = ops.exp(z - z.max(axis=-1, keepdims=True))
        return z / ops.left_sum(z, keepdims=True)

    def range(self, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        lower, upper = np.asarray(lower, float), np.asarray(upper, float)
        if self.c < 0:
            lower, upper = upper, lower
        k = lower.shape[-1]
        eye = np.eye(k, dtype=bool)
        high = np.where(eye, upper[..., None, :], lower[..., None, :])  # row i: corner for max_i
        low = np.where(eye, lower[..., None, :], upper[..., None, :])
        idx = np.arange(k)
        return self(high)[..., idx, idx] - self(low)[..., idx, idx]

    def compiled_fairness(self) -> CompiledFairness | None:
        return CompiledFairness(_softmax_value, _softmax_range, np.array([self.c], dtype=float))


@dataclass(frozen=True)
class CallableFairness(FairnessFunction):
    """A user function ``function(mu) -> f(mu)`` (vectorised over leading axes), with optional
    ``interval(lower, upper) -> range`` oracle and Lipschitz constant."""

    function: Callable[[np.ndarray], np.ndarray]
    interval: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    lipschitz: float = 1.0
    seed: int = field(default=0)
    name: str = ""
    """How the spec names it (``"module:function"``), for errors."""

    def __call__(self, mu: np.ndarray) -> np.ndarray:
        mu = np.asarray(mu, dtype=float)
        return self._checked(self.function(mu), mu.shape, "")

    def _checked(self, values: object, shape: tuple[int, ...], what: str) -> np.ndarray:
        """``values`` as floats of ``shape``; anything else is a one-line error naming the
        function (a user function that returns nonsense must not run on)."""
        who = f"{self.name or 'the fairness function'}{what}"
        try:
            out = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise SpecError(
                "fairness", f"{who} returned {type(values).__name__}; it must return numbers"
            ) from None
        if out.shape != shape:
            raise SpecError(
                "fairness",
                f"{who} returned shape {out.shape} for means of shape {shape}; it must return "
                "one value per arm",
            )
        if not np.all(np.isfinite(out)):
            raise SpecError("fairness", f"{who} returned NaN or infinity")
        return out

    def range(self, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        if self.interval is not None:
            shape = np.broadcast_shapes(np.shape(lower), np.shape(upper))
            return self._checked(self.interval(lower, upper), shape, "'s interval")
        lower, upper = np.asarray(lower, float), np.asarray(upper, float)
        if lower.ndim > 1:
            return np.stack([self.range(lo, up) for lo, up in zip(lower, upper, strict=True)])
        return numerical_range(self, lower, upper, seed=self.seed)


class CompiledFairness(NamedTuple):
    """A fairness function's compiled form: two kernels on one replication's arrays, with the
    same operations in the same order as ``__call__`` and ``range`` (the library's defined
    operations, :mod:`impactbandits.core.ops`), and their parameters.

    * ``value(params, mu, out, work)``: f(μ) into ``out`` (``K`` values);
    * ``range(params, lower, upper, out, corner, work)``: ``range(lower, upper)`` into ``out``;
    * ``corner`` and ``work``: scratch arrays of ``K`` floats.
    """

    value: Kernel
    range: Kernel
    params: np.ndarray


@kernel
def _constant_value(params: np.ndarray, mu: np.ndarray, out: np.ndarray, work: np.ndarray) -> None:
    for i in range(mu.size):
        out[i] = params[i]


@kernel
def _constant_range(
    params: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    out: np.ndarray,
    corner: np.ndarray,
    work: np.ndarray,
) -> None:
    for i in range(lower.size):
        out[i] = 0.0


@kernel
def _monotone_value(params: np.ndarray, mu: np.ndarray, out: np.ndarray, work: np.ndarray) -> None:
    for i in range(mu.size):
        out[i] = params[0] * mu[i] ** params[1]


@kernel
def _monotone_range(
    params: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    out: np.ndarray,
    corner: np.ndarray,
    work: np.ndarray,
) -> None:
    for i in range(lower.size):
        out[i] = params[0] * upper[i] ** params[1] - params[0] * lower[i] ** params[1]


@kernel(inline=True)
def softmax_entry(h: np.ndarray, i: int, c: float, work: np.ndarray) -> float:
    """``SoftmaxFairness(c)(h)[i]``: z = c·h, exp(z − max z) / Σ exp(z − max z), the sum left
    to right."""
    k = h.size
    top = -math.inf
    for j in range(k):
        z = c * h[j]
        work[j] = z
        if z > top:
            top = z
    total = 0.0
    for j in range(k):
        work[j] = math.exp(work[j] - top)
        total += work[j]
    return work[i] / total


@kernel
def _softmax_value(params: np.ndarray, mu: np.ndarray, out: np.ndarray, work: np.ndarray) -> None:
    for i in range(mu.size):
        out[i] = softmax_entry(mu, i, params[0], work)


@kernel
def _softmax_range(
    params: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    out: np.ndarray,
    corner: np.ndarray,
    work: np.ndarray,
) -> None:
    """Proposition 1's corners: the maximum of f_i at (upper_i, lower_j elsewhere), the minimum
    at the opposite corner; reversed for c < 0."""
    c = params[0]
    k = lower.size
    lo, up = (upper, lower) if c < 0 else (lower, upper)
    for i in range(k):
        for j in range(k):
            corner[j] = lo[j]
        corner[i] = up[i]
        high = softmax_entry(corner, i, c, work)
        for j in range(k):
            corner[j] = up[j]
        corner[i] = lo[i]
        out[i] = high - softmax_entry(corner, i, c, work)


def numerical_range(
    f: FairnessFunction, lower: np.ndarray, upper: np.ndarray, seed: int = 0
) -> np.ndarray:
    """Lower estimate of the range of each f_i over a box (vertices, random points, then
    bounded L-BFGS-B from the best points found). Used only when no exact oracle exists."""
    from scipy.optimize import minimize

    k = lower.size
    rng = np.random.default_rng(seed)
    points = [lower + (upper - lower) * rng.random((RANDOM_POINTS, k))]
    if k <= VERTEX_LIMIT:
        corners = (np.arange(2**k)[:, None] >> np.arange(k)) & 1
        points.append(np.where(corners == 1, upper, lower))
    cloud = np.concatenate(points)
    values = f(cloud)
    out = np.empty(k)
    bounds = list(zip(lower, upper, strict=True))
    for i in range(k):

        def negated(x: np.ndarray, i: int = i) -> float:
            return -f(x)[i]

        def component(x: np.ndarray, i: int = i) -> float:
            return f(x)[i]

        hi = minimize(negated, cloud[np.argmax(values[:, i])], bounds=bounds, method="L-BFGS-B")
        lo = minimize(component, cloud[np.argmin(values[:, i])], bounds=bounds, method="L-BFGS-B")
        out[i] = max(-hi.fun, values[:, i].max()) - min(lo.fun, values[:, i].min())
    return out


def make_fairness(kind: str, n_arms: int, softmax_c: float = 1.0) -> FairnessFunction:
    """``zero``, ``uniform`` (1/K), ``linear`` (μ_i/K), ``softmax`` (c), or ``"module:attr"``
    naming a :class:`FairnessFunction` or a plain vectorised callable."""
    if kind == "zero":
        return ConstantFairness((0.0,) * n_arms)
    if kind == "uniform":
        return ConstantFairness((1.0 / n_arms,) * n_arms)
    if kind == "linear":
        return MonotoneCartesianFairness(scale=1.0 / n_arms)
    if kind == "softmax":
        return SoftmaxFairness(c=softmax_c)
    if ":" in kind:
        wanted = "a function of the means or a FairnessFunction instance"
        expected = loader.function(wanted, instance_of=FairnessFunction)
        target = loader.load(kind, "fairness", expected)
        if isinstance(target, FairnessFunction):
            return target
        return CallableFairness(target, name=kind)
    allowed = ", ".join(FAIRNESS_KINDS)
    raise SpecError(
        "fairness", f"unknown fairness function {kind!r}; allowed: {allowed} or 'module:function'"
    )
