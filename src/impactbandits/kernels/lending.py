"""Lending arrays to compiled kernels without numba's reference counting: the intrinsics
:func:`lend` and :func:`keep` the round loop (:mod:`impactbandits.kernels.loop`) wraps around a
step's and a world's state. Imported only when numba is installed.
"""

from __future__ import annotations

import typing
from typing import Any

from numba.core import cgutils
from numba.core import types as numba_types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array

__all__ = ["keep", "lend"]


def _lend(typingctx: Any, value: Any) -> Any:
    """``value`` (an array, or a tuple of arrays, scalars and such tuples) with its arrays lent:
    the same data, shape and strides, but no owner (``meminfo`` null), so that numba's
    reference counting of them is a no-op. A step's kernels take the arrays out of the state
    tuple every round, and numba counts each one taken out (an atomic increment and decrement)
    wherever its pruning of counts cannot follow the kernel's control flow (an early
    ``return`` before a loop, say): ~10 ns per array and round. The caller keeps the owner
    alive (:func:`keep`) for as long as the lent value is used."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return _lent(context, builder, signature.args[0], args[0])

    return value(value), codegen


def _lent(context: Any, builder: Any, ty: Any, value: Any) -> Any:
    if isinstance(ty, numba_types.Array):
        array = _make_array(ty)(context, builder, value=value)
        array.meminfo = _cgutils.get_null_value(array.meminfo.type)
        array.parent = _cgutils.get_null_value(array.parent.type)
        return array._getvalue()
    if isinstance(ty, numba_types.BaseTuple):
        items: list[Any] = []
        for i, item in enumerate(typing.cast(Any, ty)):
            items.append(_lent(context, builder, item, builder.extract_value(value, i)))
        return context.make_tuple(builder, ty, items)
    context.nrt.incref(builder, ty, value)  # returned as a new reference of its own
    return value


def _keep(typingctx: Any, value: Any) -> Any:
    """Nothing: a use of ``value``, so numba releases it only after this point."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return context.get_dummy_value()

    return numba_types.none(value), codegen


# numba's intrinsics, typed loosely (numba's typing code is untyped)
lend: Any = intrinsic(_lend)
keep: Any = intrinsic(_keep)
_cgutils: Any = cgutils
_make_array: Any = make_array
