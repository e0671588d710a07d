"""File names for figures: portable ASCII, stable, and never shared by two labels.

A label's file stem is its **slug**: transliterated to ASCII (``σ`` → ``sigma``, ``é`` →
``e``, ``≤`` → ``le``), lower case, every run of other characters one ``-``, at most 64
characters (``"instance 3, σ = 0.05"`` → ``instance-3-sigma-0-05``): a name that LaTeX's
``\\includegraphics``, a shell and every file system take as it is.

Within one set of labels (:func:`figure_stems`, the figures of one run directory), labels whose
slugs would coincide — case-insensitively, so that case-insensitive file systems keep them apart
too — each get ``--`` and a hash of the exact label appended (``"a b"`` and ``"a-b"`` →
``a-b--c8687a08aa`` and ``a-b--…``). A slug never contains ``--``, so a hashed name cannot meet a
plain one; two hashed names would need a hash collision, which is refused
(``ValueError``) rather than a figure silently overwritten. A label's name therefore depends only
on the label and on whether another label of the same run has the same slug.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable

__all__ = ["figure_stem", "figure_stems"]

_RESERVED = frozenset(
    ["con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))]
)
_HASH_DIGITS = 10
_LENGTH = 64
#: Symbols with a conventional ASCII spelling; other symbols separate words.
_SYMBOLS = {
    "≤": "le", "≥": "ge", "≠": "ne", "×": "x", "∞": "inf", "±": "pm", "√": "sqrt", "%": "pct",
    "−": "-", "–": "-", "—": "-", "·": "-", "ß": "ss", "æ": "ae", "ø": "o", "œ": "oe",
}  # fmt: skip


def _ascii(ch: str) -> str:
    """``ch`` in ASCII: itself, its decomposition without accents, a Greek letter's name, a
    symbol's spelling, else a separator."""
    if ch.isascii():
        return ch
    if ch.lower() in _SYMBOLS:
        return f"-{_SYMBOLS[ch.lower()]}-" if len(_SYMBOLS[ch.lower()]) > 1 else _SYMBOLS[ch]
    plain = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
    if plain:
        return plain
    name = unicodedata.name(ch, "")
    if name.startswith("GREEK") and "LETTER" in name:
        letter = name.split()[-1].lower()
        return f"-{'lambda' if letter == 'lamda' else letter}-"  # Unicode spells it "LAMDA"
    return "-"


def figure_stem(label: str) -> str:
    """The slug of ``label`` (module docstring): the file stem of its figure when no other label
    of the run shares it."""
    text = "".join(_ascii(ch) for ch in label).lower()
    slug = re.sub(r"[^a-z0-9_]+", "-", text).strip("-_")
    slug = re.sub(r"-{2,}", "-", slug)[:_LENGTH].rstrip("-_")
    if not slug:
        return "figure"
    return f"{slug}-figure" if slug in _RESERVED else slug


def figure_stems(labels: Iterable[str]) -> dict[str, str]:
    """``{label: stem}`` for the figures of one run: the slug (:func:`figure_stem`), with ``--``
    and a hash of the label where two labels share a slug; raises ``ValueError`` if two labels
    would still share a file (a hash collision: never silently overwrite a figure)."""
    labels = list(dict.fromkeys(labels))
    slugs = {label: figure_stem(label) for label in labels}
    counts: dict[str, int] = {}
    for slug in slugs.values():
        counts[slug.casefold()] = counts.get(slug.casefold(), 0) + 1
    stems: dict[str, str] = {}
    owners: dict[str, str] = {}
    for label, slug in slugs.items():
        stem = slug
        if counts[slug.casefold()] > 1:
            digest = hashlib.sha256(label.encode("utf-8")).hexdigest()[:_HASH_DIGITS]
            stem = f"{slug[: _LENGTH - _HASH_DIGITS - 2].rstrip('-_')}--{digest}"
        other = owners.setdefault(stem.casefold(), label)
        if other != label:
            raise ValueError(f"figures of {other!r} and {label!r} would share the file {stem!r}")
        stems[label] = stem
    return stems
