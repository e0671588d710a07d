"""The stored form of one finished (cell, seed): its checkpoint arrays as a binary blob.

A payload is a mapping with the arrays ``times`` ``(C,)``, ``reward``, ``expected``,
``switches`` ``(C,)``, ``pulls`` ``(C, n)``, the optional arrays ``optimum``,
``phase_switches`` ``(C,)`` and ``phases`` ``(C, P)`` (``None`` when absent), ``extras`` (a
mapping of name → array: an environment's ``summary_metrics``) and the small metadata
``phase_names`` (list of str), ``regret_on`` and ``realised_on`` (str or ``None``).

Binary format (:func:`encode`; the ``payload`` column holds it as a BLOB)::

    offset 0   magic      b"IBR\\x00"
           4   version    uint16 little-endian (1)
           6   reserved   uint16 (0)
           8   H          uint32 little-endian: length of the header
          12   header     H bytes of UTF-8 JSON (below)
               padding    zeros up to a multiple of 8: the data section starts there
               arrays     raw little-endian C-order bytes, each at a multiple of 8

    header = {"arrays": [[name, dtype, shape, offset], ...],
              "extras": [[name, dtype, shape, offset], ...],
              "phase_names": [...], "regret_on": str|null, "realised_on": str|null}

``dtype`` is NumPy's ``dtype.str`` (``"<f8"``, ``"<i8"``, ...; only booleans, integers and
floats); ``offset`` counts from the start of the data section, and the blob ends with the last
array. Values are stored exactly as computed (float64 bit for bit, int64 counts).
:func:`decode` checks the layout and returns read-only arrays that are views of the blob (no
copy); the row's checksum (:func:`~impactbandits.experiments.store_repair.row_checksum`) covers
the whole blob. Stores written before this format hold the payload as JSON text;
:func:`decode_json` reads those into the same structure.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["ARRAYS", "MAGIC", "VERSION", "decode", "decode_json", "encode"]

MAGIC = b"IBR\x00"
VERSION = 1
_PREFIX = struct.Struct("<4sHHI")
ARRAYS = ("times", "reward", "expected", "optimum", "pulls", "switches", "phases", "phase_switches")
"""The payload's array fields, in the order they are stored."""
_OPTIONAL = frozenset({"optimum", "phases", "phase_switches"})
_REQUIRED = frozenset(ARRAYS) - _OPTIONAL
_KINDS = frozenset("biuf")
#: Parsed headers by their bytes: the rows of one cell share one header.
_LAYOUTS: dict[bytes, tuple[Any, ...]] = {}
_MAX_LAYOUTS = 4096


def _entry(name: str, value: Any) -> tuple[list[Any], bytes]:
    """The header entry ``[name, dtype, shape, offset]`` (offset set later) and the bytes."""
    array = np.asarray(value)
    if array.dtype.kind not in _KINDS:
        raise ValueError(f"payload array {name!r} has unsupported dtype {array.dtype}")
    array = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    return [name, array.dtype.str, list(array.shape), 0], array.tobytes()


def encode(payload: Mapping[str, Any]) -> bytes:
    """The binary form of ``payload`` (see the module docstring); deterministic."""
    entries: dict[str, list[list[Any]]] = {"arrays": [], "extras": []}
    blobs: list[tuple[list[Any], bytes]] = []
    for name in ARRAYS:
        value = payload.get(name)
        if value is None:
            if name in _OPTIONAL:
                continue
            raise ValueError(f"payload has no {name!r}")
        entry, data = _entry(name, value)
        entries["arrays"].append(entry)
        blobs.append((entry, data))
    for name, value in (payload.get("extras") or {}).items():
        entry, data = _entry(str(name), value)
        entries["extras"].append(entry)
        blobs.append((entry, data))
    offset = 0  # from the start of the data section
    for entry, data in blobs:
        entry[3] = offset
        offset = _align(offset + len(data))
    header = json.dumps(
        {
            **entries,
            "phase_names": [str(n) for n in payload.get("phase_names") or ()],
            "regret_on": payload.get("regret_on"),
            "realised_on": payload.get("realised_on"),
        },
        separators=(",", ":"),
    ).encode()
    start = _PREFIX.size + len(header)
    parts = [
        _PREFIX.pack(MAGIC, VERSION, 0, len(header)),
        header,
        b"\x00" * (_align(start) - start),
    ]
    position = 0
    for entry, data in blobs:
        parts.append(b"\x00" * (entry[3] - position))
        parts.append(data)
        position = entry[3] + len(data)
    return b"".join(parts)


def _align(offset: int) -> int:
    return (offset + 7) // 8 * 8


def _layout(blob: bytes) -> tuple[Any, ...]:
    if len(blob) < _PREFIX.size:
        raise ValueError("payload too short")
    magic, version, _, size = _PREFIX.unpack_from(blob)
    if magic != MAGIC or version != VERSION:
        raise ValueError("not a binary payload of a known version")
    raw = blob[_PREFIX.size : _PREFIX.size + size]
    layout = _LAYOUTS.get(raw)
    if layout is not None:
        return layout
    if len(raw) != size:
        raise ValueError("payload header cut short")
    header = json.loads(raw)
    start = _align(_PREFIX.size + size)
    arrays, extras = (
        tuple(_field(start, *entry) for entry in header[part]) for part in ("arrays", "extras")
    )
    if not {entry[0] for entry in arrays} >= _REQUIRED:
        raise ValueError("payload lacks an array")
    fields = arrays + extras
    end = max((offset + count * kind.itemsize for _, kind, _, offset, count in fields), default=0)
    names = [str(n) for n in header["phase_names"]]
    regret_on, realised_on = header["regret_on"], header["realised_on"]
    layout = (arrays, extras, names, regret_on, realised_on, max(end, start))
    if len(_LAYOUTS) >= _MAX_LAYOUTS:
        _LAYOUTS.clear()
    _LAYOUTS[raw] = layout
    return layout


def _field(
    start: int, name: str, dtype: str, shape: list[int], offset: int
) -> tuple[str, np.dtype, tuple[int, ...], int, int]:
    """``(name, dtype, shape, offset in the blob, element count)`` of a header entry."""
    kind = np.dtype(dtype)
    dims = tuple(int(n) for n in shape)
    count = math.prod(dims)
    if kind.kind not in _KINDS or int(offset) < 0 or min(dims, default=0) < 0:
        raise ValueError("bad payload header")
    return str(name), kind, dims, start + int(offset), count


def _view(
    blob: bytes, dtype: np.dtype, shape: tuple[int, ...], offset: int, count: int
) -> np.ndarray:
    return np.frombuffer(blob, dtype=dtype, count=count, offset=offset).reshape(shape)


def decode(blob: bytes) -> dict[str, Any]:
    """The payload of a binary blob, its arrays read-only views of ``blob``; raises
    :class:`ValueError` if ``blob`` is not a well-formed payload."""
    try:
        arrays, extras, names, regret_on, realised_on, end = _layout(blob)
    except (KeyError, TypeError, struct.error) as exc:
        raise ValueError(f"bad payload header ({exc})") from None
    if len(blob) != end:
        raise ValueError("payload cut short or too long")
    payload: dict[str, Any] = dict.fromkeys(_OPTIONAL)
    for name, *rest in arrays:
        payload[name] = _view(blob, *rest)
    payload["extras"] = {name: _view(blob, *rest) for name, *rest in extras}
    payload["phase_names"] = list(names)
    payload["regret_on"] = regret_on
    payload["realised_on"] = realised_on
    return payload


def decode_json(text: str) -> dict[str, Any]:
    """A payload stored as JSON text (stores written before the binary format), as arrays
    like :func:`decode`'s; raises :class:`ValueError` if it is not a JSON object."""
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("payload is not a JSON object")
    payload: dict[str, Any] = dict(value)
    for name in ARRAYS:
        item = value.get(name)
        payload[name] = None if item is None else np.asarray(item)
    if any(payload[name] is None for name in _REQUIRED):
        raise ValueError("payload lacks an array")
    payload["times"] = np.asarray(payload["times"], dtype=np.int64)
    payload["extras"] = {k: np.asarray(v) for k, v in (value.get("extras") or {}).items()}
    payload["phase_names"] = list(value.get("phase_names") or [])
    payload.setdefault("regret_on", None)
    payload.setdefault("realised_on", None)
    return payload
