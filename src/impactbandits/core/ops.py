"""Operations whose results the library defines, so that every path gives the same bits.

A policy's readable form works on NumPy arrays and its compiled step on scalars in a numba
loop (:mod:`impactbandits.core.compiled`). Both must produce the same numbers, bit for bit, on
every machine. IEEE arithmetic (``+ − × ÷ √``, comparisons) is exact-rounded everywhere, but
three kinds of operation are not pinned down by NumPy:

* **transcendental functions**: NumPy's vectorised ``np.exp``, ``np.log`` and ``x ** p`` pick an
  implementation by CPU (on AVX-512 machines, SIMD approximations that differ from the C
  library in the last bit for ~5 % of ``exp``/``pow`` inputs and ~0.01 % of ``log`` inputs),
  while numba's ``math.exp``, ``math.log`` and ``x ** p`` call the C library. The library
  defines them as the C library's functions — :func:`exp`, :func:`log`, :func:`power` apply
  Python's ``math`` functions (which call it) element by element;
* **summation**: ``np.sum`` adds pairwise with eight accumulators, in an order that depends
  on the array's length and layout and is not part of NumPy's API. The library defines a sum
  as left to right (:func:`left_sum`, the last prefix sum of ``np.cumsum``, whose result is
  fixed by its definition), which is what a compiled loop ``total += x[i]`` does;
* **draws**: every random number comes from the counter-based streams of
  :mod:`impactbandits.core.random`, keyed by replication, round and arm, never by the order
  in which a backend asks for them.

A compiled step uses ``math.exp``, ``math.log``, ``x ** p`` and a plain loop for sums; its
readable form uses the functions below. Results differ from NumPy's own functions in the last
bit at most, and only on machines where NumPy's differ from the C library.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["exp", "left_sum", "log", "power"]


def _elementwise(function: Callable[..., float], x: np.ndarray, *args: float) -> np.ndarray:
    """``function`` of every element (C-library semantics, as numba's): where Python's
    ``math`` raises instead of returning ``inf`` or ``nan``, the IEEE value is used."""
    values = np.asarray(x, dtype=np.float64)
    flat = values.ravel().tolist()
    try:
        out = [function(v, *args) for v in flat]
    except (OverflowError, ValueError):
        out = [_ieee(function, v, *args) for v in flat]
    return np.array(out, dtype=np.float64).reshape(values.shape)


def _ieee(function: Callable[..., float], v: float, *args: float) -> float:
    """What the C function returns where Python's ``math`` raises: the special values
    (overflow → ±inf, log 0 → −inf, a domain error → nan, pow's poles → ±inf), which are
    exact, so NumPy's scalar functions give them."""
    try:
        return function(v, *args)
    except (OverflowError, ValueError):
        numpy_function = {math.exp: np.exp, math.log: np.log, math.pow: np.power}[function]
        with np.errstate(all="ignore"):
            return float(numpy_function(np.float64(v), *map(np.float64, args)))


def exp(x: np.ndarray) -> np.ndarray:
    """e^x element by element, as the C library's ``exp`` (``math.exp``; numba's too)."""
    return _elementwise(math.exp, x)


def log(x: np.ndarray) -> np.ndarray:
    """ln x element by element, as the C library's ``log`` (``math.log``; numba's too)."""
    return _elementwise(math.log, x)


def power(x: np.ndarray, p: float) -> np.ndarray:
    """x^p element by element, as the C library's ``pow`` (``math.pow``; numba's ``x ** p``
    for a float ``p``), with no shortcut for p = 2, 0.5 or −1."""
    return _elementwise(math.pow, x, float(p))


def left_sum(x: np.ndarray, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    """Σ of ``x`` along ``axis``, added left to right (``((x₀ + x₁) + x₂) + …``), as a compiled
    loop adds; an empty axis sums to 0."""
    values = np.asarray(x, dtype=np.float64)
    if values.shape[axis] == 0:
        return np.sum(values, axis=axis, keepdims=keepdims)
    total = np.take(np.cumsum(values, axis=axis), [-1], axis=axis)
    return total if keepdims else np.squeeze(total, axis=axis)
