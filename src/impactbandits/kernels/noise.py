"""SciPy's inversions inside compiled loops: the compiled forms of
:func:`~impactbandits.core.streams.inverse_normal` and :func:`~impactbandits.core.streams.
beta_inverse`.

The counter-based noise itself is written once, in :mod:`impactbandits.core.streams` (Philox
by position, which the worlds read with ``counter_uniform`` and ``counter_normal``); Gaussian
and bounded (Beta) noise invert it with SciPy's own ``ndtri`` and ``betaincinv`` through their
C entry points (``scipy.special.cython_special``), the functions the NumPy path calls, so every
value is identical. Imported by :mod:`impactbandits.kernels.loop`, which registers these
overloads with numba.
"""

from __future__ import annotations

from typing import Any

import llvmlite.binding as llvm
from numba import types
from numba.extending import get_cython_function_address, overload

from impactbandits.core.streams import beta_inverse as _core_beta_inverse
from impactbandits.core.streams import inverse_normal


def _bind(symbol: str, scipy_name: str, signature: Any) -> Any:
    """SciPy's C function ``scipy_name`` as an external symbol of the compiled code: called by
    name, so the compiled loops can be cached on disk (a ctypes pointer could not)."""
    llvm.add_symbol(symbol, get_cython_function_address("scipy.special.cython_special", scipy_name))
    return types.ExternalFunction(symbol, signature)


_ndtri = _bind("impactbandits_ndtri", "ndtri", types.float64(types.float64))
_betaincinv = _bind(
    "impactbandits_betaincinv",
    "__pyx_fuse_0betaincinv",
    types.float64(types.float64, types.float64, types.float64),
)


@overload(inverse_normal, inline="always")
def _inverse_normal(p: Any) -> Any:
    """Compiled :func:`~impactbandits.core.streams.inverse_normal`: the same C function."""

    def implementation(p: Any) -> Any:
        return _ndtri(p)

    return implementation


@overload(_core_beta_inverse, inline="always")
def _beta_inverse_overload(a: Any, b: Any, u: Any) -> Any:
    """Compiled :func:`~impactbandits.core.streams.beta_inverse`: the same C function."""

    def implementation(a: Any, b: Any, u: Any) -> Any:
        return _betaincinv(a, b, u)

    return implementation
