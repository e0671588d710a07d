"""A griffe extension for the API pages: the docstrings' reStructuredText roles
(``:class:`~pkg.mod.Name```, ``:func:`pkg.f```, ``:data:`NAME```, …) become Markdown inline
code — the short name after ``~``, the full path otherwise — and ````text```` becomes
```text```, so mkdocstrings renders them as code instead of showing the role markup."""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|obj|exc|ref):`(~?)([^`]+)`")
DOUBLE = re.compile(r"``([^`]+)``")


def convert(text: str) -> str:
    def role(match: re.Match[str]) -> str:
        short, target = match.group(1), match.group(2)
        return f"`{target.rsplit('.', 1)[-1] if short else target}`"

    return DOUBLE.sub(r"`\1`", ROLE.sub(role, text))


class ReSTRoles(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = convert(obj.docstring.value)
