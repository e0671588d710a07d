"""A griffe extension for the API pages: the docstrings' reStructuredText roles
(``:class:`~pkg.mod.Name```, ``:func:`pkg.f```, ``:data:`NAME```, …) become Markdown inline
code — the short name after ``~``, the full path otherwise —, ````text```` becomes ```text```,
and a literal-block marker ``text::`` becomes ``text:``, so mkdocstrings renders them as code
instead of showing the markup."""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|obj|exc|ref):`(~?)([^`]+)`")
DOUBLE = re.compile(r"``([^`]+)``")
#: reST's literal-block marker: "text::" shows as "text:", a "::" line alone disappears (the
#: indented block after it is a Markdown code block either way)
LITERAL = re.compile(r"(\S)::$", re.M)
BARE_LITERAL = re.compile(r"^[ \t]*::[ \t]*\n", re.M)


def convert(text: str) -> str:
    def role(match: re.Match[str]) -> str:
        short, target = match.group(1), match.group(2)
        return f"`{target.rsplit('.', 1)[-1] if short else target}`"

    text = LITERAL.sub(r"\1:", DOUBLE.sub(r"`\1`", ROLE.sub(role, text)))
    return BARE_LITERAL.sub("", text)


class ReSTRoles(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = convert(obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        # the root package is not among the objects ``on_object`` sees
        if pkg.docstring is not None:
            pkg.docstring.value = convert(pkg.docstring.value)
