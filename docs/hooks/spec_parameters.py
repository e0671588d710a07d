"""A griffe extension for the API pages: every registered component's entry says its name in a
spec, and a registered environment's or policy's entry shows its parameters — the table
``impactbandits describe NAME`` prints (name, type, default, allowed values), from the same
data (:func:`impactbandits.describe.description`: the constructor's signature as the spec
validation reads it), so the page and the command cannot disagree.

The text is added to the end of the docstring of the object the registry names (where it is
defined), when the package is loaded; the docstrings in ``src/`` are not changed. An oracle is a
function: its entry gets its registered name, and its signature shows its arguments.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

import griffe

from impactbandits.describe import Description, Parameter, description
from impactbandits.registry import ENVIRONMENTS, ORACLES, POLICIES

#: The registry's tables, by the role ``describe`` names.
TABLES: Mapping[str, Mapping[str, str]] = {
    "environment": ENVIRONMENTS,
    "policy": POLICIES,
    "oracle": ORACLES,
}
#: The columns of ``impactbandits describe``'s parameter table.
HEAD = ("name", "type", "default", "allowed")


def _code(text: str) -> str:
    return f"``{text}``" if "`" in text else f"`{text}`"


def _row(parameter: Parameter) -> str:
    default = "*required*" if parameter.required else _code(parameter.default)
    allowed = _code(parameter.allowed) if parameter.allowed else ""
    cells = (_code(parameter.name), _code(parameter.type), default, allowed)
    return "| " + " | ".join(cells) + " |"


def parameter_table(parameters: Iterable[Parameter]) -> str:
    """The parameters as a Markdown table (empty for none)."""
    rows = [_row(p) for p in parameters]
    if not rows:
        return ""
    head = "| " + " | ".join(HEAD) + " |"
    rule = "|" + "---|" * len(HEAD)
    return "\n".join([head, rule, *rows])


def registered_block(about: list[Description]) -> str:
    """The Markdown added to the docstring of a component registered under the names of
    ``about`` (one :class:`~impactbandits.describe.Description` per name; a class may be
    registered twice, with the same parameters)."""
    names = ", ".join(f'`kind = "{d.name}"`' for d in about)
    first = about[0]
    if first.role == "oracle":
        return f"**Registered oracle**: {names} (`impactbandits describe {first.name}`)."
    lines = [
        f"**Registered {first.role}**: {names} in a spec. Its parameters, as "
        f"`impactbandits describe {first.name}` lists them:"
    ]
    table = parameter_table(first.parameters or ())
    lines.append(table if table else "none.")
    return "\n\n".join(lines)


def registered() -> dict[str, list[Description]]:
    """The full path (``module.qualname``) of every registered component → its descriptions."""
    found: dict[str, list[Description]] = defaultdict(list)
    for role, table in TABLES.items():
        for name, path in table.items():
            about = description(name)
            if about.role != role:  # a figure of the same name: describe shows the figure
                continue
            module, _, attr = (about.import_path or path).partition(":")
            found[f"{module}.{attr}"].append(about)
    return found


class SpecParameters(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: object) -> None:
        if pkg.name != "impactbandits":
            return
        for path, about in registered().items():
            try:
                obj = pkg.modules_collection[path]
                target = obj.final_target if obj.is_alias else obj
            except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
                continue  # not in the source griffe reads (a generated name): no entry to add to
            block = registered_block(about)
            if target.docstring is None:
                target.docstring = griffe.Docstring(block, parent=target)
            else:
                target.docstring.value = f"{target.docstring.value.rstrip()}\n\n{block}"
