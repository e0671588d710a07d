"""Docstrings shown in a terminal (``describe``, ``list``) are rendered from their parse
(:mod:`impactbandits.docstrings`), not flattened: no markup is left, a literal does not merge
with the word before it ("means ``means``" read "means means"), and list items keep their lines.

Expected texts are written out by hand from the reStructuredText they render; the registry-wide
checks read the items of each docstring's lists from its source with a pattern of their own.
"""

from __future__ import annotations

import inspect
import re

import pytest

from impactbandits.describe import _builtin_module, describe, find
from impactbandits.docstrings import blocks, plain, wrap
from impactbandits.experiments.figures import FIGURES
from impactbandits.registry import ENVIRONMENTS, ORACLES, POLICIES

DOC = """\
Bandit with means ``means`` (see :class:`~impactbandits.core.policy.Policy` and
:func:`impactbandits.simulate`); the *real* pulls count, **not** the idle ones.

Two kinds:

* rested: the m-th pull of arm i yields
  f_i(m);
* restless: round t yields μ_i(t).

Steps:

1. explore every arm ``m`` times;
2. commit to the best one.

As implemented::

    while A:
        drop(A)

Done."""

#: Markup that reStructuredText leaves in a text it does not render (emphasis is looked for
#: outside literals: ``h ** 2`` is code).
LEFTOVER = re.compile(r"``|:[a-z]+:`|::$", re.M)
EMPHASIS = re.compile(r"\*\*|(?<![\w*])\*\w[^*]*\*(?!\w)")
#: A rendered literal (it may be wrapped over lines).
LITERAL = re.compile(r"`[^`]+`")


def leftover(text: str) -> str | None:
    """The first piece of markup left in ``text``, if any."""
    found = LEFTOVER.search(text) or EMPHASIS.search(LITERAL.sub("", text))
    return found.group(0) if found else None


#: The same word twice in a row.
DOUBLED = re.compile(r"\b(\w+) \1\b")


def test_a_docstring_renders_block_by_block_without_markup():
    assert blocks(DOC) == [
        "Bandit with means `means` (see Policy and impactbandits.simulate); the real pulls "
        "count, not the idle ones.",
        "Two kinds:",
        "• rested: the m-th pull of arm i yields f_i(m);\n• restless: round t yields μ_i(t).",
        "Steps:",
        "1. explore every arm `m` times;\n2. commit to the best one.",
        "As implemented:",
        "    while A:\n        drop(A)",
        "Done.",
    ]


def test_the_rendered_text_has_no_doubled_word_and_no_markup():
    text = "\n\n".join(wrap(block, 60) for block in blocks(DOC))
    assert not DOUBLED.search(text), DOUBLED.search(text)
    assert leftover(text) is None


def test_wrapping_keeps_items_on_their_lines_and_hangs_their_continuation():
    block = "• rested: the m-th pull of arm i yields f_i(m);\n• restless: round t yields μ_i(t)."
    assert wrap(block, 30).splitlines() == [
        "• rested: the m-th pull of arm",
        "  i yields f_i(m);",
        "• restless: round t yields",
        "  μ_i(t).",
    ]
    assert wrap("12. a b c d e f", 9, indent="  ").splitlines() == [
        "  12. a b",
        "      c d",
        "      e f",
    ]


def test_a_wrapped_line_that_looks_like_a_list_marker_is_text():
    """In reStructuredText a list starts after a blank line: a paragraph line that begins with
    ``1)`` or ``+`` continues the paragraph (CommonMark alone would start a list there)."""
    doc = "derived from the model ``s = γ (s +\n1) + z``, then\n- nothing else"
    assert blocks(doc) == ["derived from the model `s = γ (s + 1) + z`, then - nothing else"]


def test_nested_lists_auto_numbers_and_directives():
    doc = (
        "* outer\n\n  - inner one\n  - inner two\n\n#. first\n#. second\n\n"
        ".. note:: Mind\n   this.\n\n.. math:: a = b\n\n.. a comment\n   spanning lines\n\nEnd."
    )
    assert blocks(doc) == [
        "• outer\n  • inner one\n  • inner two",
        "1. first\n2. second",
        "Note: Mind this.",
        "    a = b",
        "End.",
    ]


def test_plain_gives_one_line():
    assert plain("A ``b``\nand :data:`~x.C`, *d*.") == "A `b` and C, d."
    assert plain("see `the ledger <https://x.org/l/>`_.") == "see the ledger (https://x.org/l/)."


# ---- every registered name ----------------------------------------------------------------------

NAMES = sorted({*ENVIRONMENTS, *POLICIES, *ORACLES, *FIGURES})
COMPONENTS = sorted({*ENVIRONMENTS, *POLICIES, *ORACLES})
#: A bullet item in a docstring's source: its marker at a line's start, then its first word.
SOURCE_ITEM = re.compile(r"^( *)[*+-] +(\S+)", re.M)
#: What the renderer must show of an item's first word: ``lit`` → `lit`, **w** → w, a role →
#: its target's name (the last part after ``~``).
ROLE = re.compile(r":[a-z]+:`(~?)([^`<]+)`")


def _shown(word: str) -> str:
    """How the rendered item starts (a prefix: a literal may go on after a space)."""
    role = ROLE.match(word)
    if role:
        return role.group(2).rsplit(".", 1)[-1] if role.group(1) else role.group(2)
    if word.startswith("``"):
        return "`" + word[2:].split("`")[0]
    return word.strip("*`").rstrip(",;:.")


def _source_docs(name: str) -> list[str]:
    _, _, obj = find(name)
    module = _builtin_module(obj)
    return [inspect.getdoc(source) or "" for source in (obj, module) if source is not None]


def _items(doc: str) -> list[str]:
    """The first words of the bullet items of ``doc``: lines with a marker after a blank line
    or after another item (a marker inside a paragraph is text)."""
    lines = doc.splitlines()
    words = []
    in_list = False
    for index, line in enumerate(lines):
        item = SOURCE_ITEM.match(line)
        before = lines[index - 1] if index else ""
        if item and (not before.strip() or in_list):
            in_list = True
            words.append(_shown(item.group(2)))
        elif not line.strip():
            continue
        elif not line.startswith(" "):
            in_list = False
    return words


@pytest.mark.parametrize("name", NAMES)
def test_describe_leaves_no_markup(name):
    assert leftover(describe(name)) is None


def test_some_registered_docstrings_have_lists():
    """The next test has something to check."""
    assert sum(bool(_items(doc)) for name in COMPONENTS for doc in _source_docs(name)) >= 10


@pytest.mark.parametrize("name", COMPONENTS)
def test_describe_keeps_each_list_item_on_its_own_line(name):
    text = describe(name)
    starts = [line.strip() for line in text.splitlines()]
    for doc in _source_docs(name):
        for word in _items(doc):
            assert any(start.startswith(f"• {word}") for start in starts), (name, word)


def test_a_literal_named_like_the_word_before_it_stays_apart():
    text = describe("bernoulli")
    assert "with means `means`" in text and "means means" not in text
