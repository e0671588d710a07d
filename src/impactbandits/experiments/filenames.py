"""File names for figures: unique and stable, whatever the label.

:func:`figure_stem` is a pure function of the label (the same label gives the same file in every
run) and injective in practice (two labels never share a file):

* a label that is already a safe, portable file name — lowercase ASCII letters, digits, ``-`` and
  ``_``, at most 64 characters, not a reserved Windows device name — is kept as it is
  (``"easy"`` → ``easy``);
* any other label gets a readable slug followed by a dot and a hash of the exact label
  (``"a b"`` → ``a-b.c8d0…``, ``"a-b"`` → ``a-b``). Plain names never contain a dot, so they
  cannot meet a hashed one; hashed names differ by the hash.

Lowercase-only plain names keep files distinct on case-insensitive file systems too.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

__all__ = ["figure_stem", "figure_stems"]

_PLAIN = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_RESERVED = frozenset(
    ["con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))]
)
_HASH_DIGITS = 10
_READABLE_LENGTH = 48


def figure_stem(label: str) -> str:
    """The file stem (no extension) for a figure of ``label``; see the module docstring."""
    if _PLAIN.fullmatch(label) and label not in _RESERVED:
        return label
    readable = "".join(ch if ch.isalnum() or ch == "_" else "-" for ch in label.lower())
    readable = re.sub(r"-{2,}", "-", readable).strip("-_")[:_READABLE_LENGTH].rstrip("-_")
    digest = hashlib.sha256(label.encode("utf-8")).hexdigest()[:_HASH_DIGITS]
    return f"{readable or 'figure'}.{digest}"


def figure_stems(labels: Iterable[str]) -> dict[str, str]:
    """``{label: figure_stem(label)}``; raises ``ValueError`` if two labels would share a file
    (a hash collision: never silently overwrite a figure)."""
    stems: dict[str, str] = {}
    owners: dict[str, str] = {}
    for label in labels:
        stem = figure_stem(label)
        other = owners.setdefault(stem.casefold(), label)
        if other != label:
            raise ValueError(f"figures of {other!r} and {label!r} would share the file {stem!r}")
        stems[label] = stem
    return stems
