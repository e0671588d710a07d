"""Docstrings as terminal text (``impactbandits describe`` and ``list``).

The docstrings are written for the API reference in a small subset of reStructuredText:
paragraphs, ``literals``, roles such as :class:`~impactbandits.core.policy.Policy` or
``:math:`x```, *emphasis* and **strong** text, bullet lists (``*``, ``-``, ``+``), numbered
lists (``1.``, ``1)``, ``#.``) and nested lists, literal blocks after ``::`` and indented
formulas, ``.. code-block::``/``.. math::`` and admonition directives, and simple tables.
That subset is CommonMark except for the roles, ``::``, directives, ``#.`` and tables, so a
docstring is parsed by markdown-it (the CommonMark parser :mod:`rich` is built on) after
:func:`to_markdown` rewrites those few constructs, and the parse tree is rendered as plain text:

* a literal keeps single backticks (``means`` shows as `means`, so "means ``means``" does not
  read "means means"), a role shows its target's name (``Policy``), a math role its formula;
* emphasis and strong text lose their asterisks;
* every list item starts its own line with ``•`` or its number, continuation lines hang under
  its text, and nested lists are indented under their item;
* literal blocks, formulas and tables keep their lines, indented by four spaces.

:func:`blocks` gives a docstring's blocks (one string per paragraph, list or literal block, not
wrapped), :func:`wrap` fills one block to a width and :func:`plain` renders a one-line text.
"""

from __future__ import annotations

import re
import textwrap
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import StateBlock
    from markdown_it.tree import SyntaxTreeNode

__all__ = ["blocks", "plain", "to_markdown", "wrap"]

#: The bullet of a rendered list item.
BULLET = "•"
#: Indentation of a literal block's lines under their container.
CODE_INDENT = "    "

#: ``:role:`` right before a code span: the span is the role's target.
_ROLE_TAIL = re.compile(r":(?:[a-z]+:)?[a-z]+:$")
#: A role's target: ``text <target>`` shows as text, ``~a.b.C`` as C.
_EXPLICIT_TITLE = re.compile(r"^(.*?)\s*<[^<>]*>$", re.S)
#: A list item's marker at the start of a source line: its indentation and the marker.
_MARKER = re.compile(r"^( *)(?:[-*+]|\d+[.)]|#\.)( +|$)")
#: The end of a paragraph that introduces a literal block (``text::``, ``text ::`` or ``::``).
_LITERAL_INTRO = re.compile(r"(\s*)::\s*$")
#: A directive line: ``.. name:: arguments``.
_DIRECTIVE = re.compile(r"^( *)\.\.\s+([\w-]+)::(.*)$")
#: Directives whose body is shown as it is.
_VERBATIM = frozenset({"code", "code-block", "sourcecode", "math", "parsed-literal"})
#: A reST comment (``.. text`` that is not a directive, a target or a footnote is hidden).
_COMMENT = re.compile(r"^( *)\.\.(?:\s|$)")
#: A border line of a simple table (``===  ====``) or of a grid table (``+----+----+``).
_TABLE_BORDER = re.compile(r"^ *(?:=+(?: +=+)+|\+(?:-+\+)+|\+(?:=+\+)+) *$")
#: The hanging indentation of a rendered line: its indentation and its list marker.
_HANG = re.compile(rf"^( *)(?:(?:{BULLET}|\d+\.) )?")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content_column(line: str) -> int:
    """Where the text of ``line`` starts: after its indentation and its list marker."""
    marker = _MARKER.match(line)
    return marker.end() if marker else _indent(line)


def _take_block(lines: list[str], start: int, deeper_than: int) -> tuple[list[str], int]:
    """The lines from ``start`` indented by more than ``deeper_than`` (blank lines inside
    included, trailing ones left), and the index after them."""
    end = start
    last = start
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > deeper_than):
        if lines[end].strip():
            last = end + 1
        end += 1
    return lines[start:last], last


def _fence(body: list[str], column: int) -> list[str]:
    """``body`` as a fenced code block at ``column`` (its common indentation removed)."""
    text = textwrap.dedent("\n".join(line.rstrip() for line in body)).strip("\n")
    pad = " " * column
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [pad + fence, *(pad + line if line else "" for line in text.splitlines()), pad + fence]


def to_markdown(doc: str) -> str:
    """``doc`` (the reST subset above) as CommonMark: literal blocks after ``::``, verbatim
    directives and tables become fenced code, admonitions a paragraph ("Note: …"), comments
    vanish and ``#.`` items are numbered. Roles are left for the renderer (CommonMark reads
    ``:class:`x``` as text followed by a code span)."""
    lines = doc.expandtabs().splitlines()
    out: list[str] = []
    numbers: dict[int, int] = {}  # the next number of a `#.` list, per indentation
    i = 0
    while i < len(lines):
        line = lines[i]
        directive = _DIRECTIVE.match(line)
        if directive:
            column = len(directive.group(1))
            body, i = _take_block(lines, i + 1, column)
            name = directive.group(2).lower()
            if name in _VERBATIM:
                argument = directive.group(3).strip()
                if name == "math" and argument:
                    body = [" " * (column + 3) + argument, *body]
                if any(b.strip() for b in body):
                    out += _fence(body, column)
            else:
                text = " ".join(part.strip() for part in [directive.group(3), *body])
                out.append(" " * column + f"{name.capitalize()}: {text.strip()}")
            continue
        if _COMMENT.match(line):
            _, i = _take_block(lines, i + 1, _indent(line))
            continue
        if _TABLE_BORDER.match(line) and (i == 0 or not lines[i - 1].strip()):
            end = i + 1
            while end < len(lines) and lines[end].strip():
                end += 1
            out += _fence(lines[i:end], _indent(line))
            i = end
            continue
        intro = _LITERAL_INTRO.search(line)
        if intro and i + 1 < len(lines) and not lines[i + 1].strip():
            column = _content_column(line)
            body, after = _take_block(lines, i + 1, column)
            if body:
                head = line[: intro.start()]
                # `text::` ends with a colon, `text ::` and a lone `::` with nothing
                if head.strip() and not intro.group(1):
                    out.append(head + ":")
                elif head.strip():
                    out.append(head)
                out += ["", *_fence(body, column)]
                i = after
                continue
        marker = _MARKER.match(line)
        if marker and line[marker.start() :].lstrip().startswith("#."):
            depth = len(marker.group(1))
            numbers[depth] = numbers.get(depth, 0) + 1
            line = line.replace("#.", f"{numbers[depth]}.", 1)
        elif marker is None and line.strip() and _indent(line) == 0:
            numbers.clear()
        out.append(line)
        i += 1
    return "\n".join(out)


def _rest_list(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """CommonMark's list rule, except that a list does not interrupt a paragraph: in reST a
    list starts after a blank line, so a wrapped line that begins ``1) +`` or ``- x`` is text.
    (The next item of a list still ends the item before it: its line is indented less than
    the paragraph in the item.)"""
    from markdown_it.rules_block import list_block

    if silent and state.parentType == "paragraph" and state.sCount[start] >= state.blkIndent:
        return False
    return list_block(state, start, end, silent)


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": False})
    parser.block.ruler.at("list", _rest_list, {"alt": ["paragraph", "reference", "blockquote"]})
    # reST has no HTML, links, headings made with '#', '>' quotes or character entities: those
    # characters are text in a docstring
    text_in_rest = ["html_block", "html_inline", "link", "image", "reference", "autolink"]
    return parser.disable([*text_in_rest, "entity", "heading", "blockquote"])


def _tree(doc: str) -> SyntaxTreeNode:
    from markdown_it.tree import SyntaxTreeNode

    return SyntaxTreeNode(_parser().parse(to_markdown(doc)))


def _role_target(content: str) -> str:
    """What a role shows: ``~a.b.C`` → ``C``, ``text <target>`` → ``text``, else the target."""
    titled = _EXPLICIT_TITLE.match(content)
    if titled and titled.group(1):
        return titled.group(1)
    if content.startswith("~"):
        return content[1:].rsplit(".", 1)[-1]
    return content


def _inline(node: SyntaxTreeNode) -> str:
    """The text of an inline node: roles resolved, literals in single backticks, emphasis
    plain, line breaks as spaces, runs of spaces outside literals as one."""
    parts: list[str] = []
    children = list(node.children)
    for index, child in enumerate(children):
        if child.type == "text":
            text = child.content
            if text.startswith("_") and index and children[index - 1].type == "code_inline":
                text = text.lstrip("_")  # the `_` of a reST hyperlink reference `text <url>`_
            role = _ROLE_TAIL.search(text)
            if role and index + 1 < len(children) and children[index + 1].type == "code_inline":
                text = text[: role.start()]
            parts.append(re.sub(r"\s+", " ", text))
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "code_inline":
            before = children[index - 1].content if index else ""
            role = _ROLE_TAIL.search(before) if index else None
            if role is not None:
                parts.append(_role_target(child.content))
            elif child.markup == "`":  # reST interpreted text (the default role), or a link
                after = children[index + 1].content if index + 1 < len(children) else ""
                titled = _EXPLICIT_TITLE.match(child.content)
                if after.startswith("_") and titled and titled.group(1):
                    address = child.content[titled.end(1) :].strip().strip("<>")
                    parts.append(f"{titled.group(1)} ({address})")
                else:
                    parts.append(_role_target(child.content))
            else:
                parts.append(f"`{child.content}`")
        elif child.children:
            parts.append(_inline(child))  # em, strong, s: their text
        else:
            parts.append(child.content)
    return re.sub(r" {2,}", " ", "".join(parts)).strip()


def _render(node: SyntaxTreeNode, out: list[list[str]], indent: str) -> None:
    """Append the blocks of ``node``'s children to ``out`` (a block is its lines)."""
    for child in node.children:
        if child.type in ("paragraph", "heading"):
            out.append([indent + _inline(child.children[0])])
        elif child.type in ("code_block", "fence"):
            text = child.content.rstrip("\n")
            out.append([indent + CODE_INDENT + line if line else "" for line in text.split("\n")])
        elif child.type in ("bullet_list", "ordered_list"):
            out.append(_list(child, indent))
        elif child.type == "hr":
            continue
        else:
            _render(child, out, indent)


def _list(node: SyntaxTreeNode, indent: str) -> list[str]:
    """A list's lines: each item's first block after its marker, its other blocks (nested
    lists, further paragraphs) indented under its text."""
    lines: list[str] = []
    start = int(str(node.attrs.get("start", 1))) if node.type == "ordered_list" else 1
    markers = [
        f"{start + n}." if node.type == "ordered_list" else BULLET
        for n in range(len(node.children))
    ]
    width = max(len(m) for m in markers) + 1 if markers else 2
    for marker, item in zip(markers, node.children, strict=True):
        inner: list[list[str]] = []
        _render(item, inner, indent + " " * width)
        flat = [line for block in inner for line in block] or [indent]
        lines.append(indent + marker.ljust(width) + flat[0][len(indent) + width :])
        lines += flat[1:]
    return lines


def blocks(doc: str) -> list[str]:
    """The blocks of ``doc`` as plain text, in order, none wrapped: a paragraph on one line; a
    list with each item on its own line (``• text`` or ``2. text``; nested items indented); a
    literal block, formula or table with its lines, indented by four spaces."""
    out: list[list[str]] = []
    _render(_tree(doc), out, "")
    return ["\n".join(block) for block in out if any(line.strip() for line in block)]


def plain(text: str) -> str:
    """``text`` (a sentence or a few) as one plain line, its markup rendered as in
    :func:`blocks`."""
    return " ".join(" ".join(block.split()) for block in blocks(text))


def wrap(block: str, width: int, indent: str = "") -> str:
    """A block of :func:`blocks` filled to ``width`` columns, each line after ``indent``: a
    list item's continuation lines hang under its text; words are not split (a long literal
    or address may pass the width)."""
    lines: list[str] = []
    for line in block.split("\n"):
        hang = _HANG.match(line)
        head = hang.group(0) if hang else ""
        body = line[len(head) :]
        if not body.strip():
            lines.append("")
            continue
        lines += textwrap.wrap(
            body,
            width,
            initial_indent=indent + head,
            subsequent_indent=indent + " " * len(head),
            break_long_words=False,
            break_on_hyphens=False,
        )
    return "\n".join(lines)
