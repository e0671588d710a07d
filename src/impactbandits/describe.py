"""Descriptions of components and figures (``impactbandits list`` and ``describe``), as data,
as plain text and as JSON.

Docstrings are written for the API reference (reStructuredText roles such as
``:class:`~impactbandits.core.policy.Policy```, double-backtick literals, lists); a terminal
shows them as plain text rendered from their parse (:mod:`impactbandits.docstrings`: a literal
keeps single backticks, list items keep their lines), :func:`summary` gives a component's
first paragraph. :func:`description` gathers everything a user needs to write a spec entry — the
parameters with their types, defaults, constraints and conditional requirements (read from the
constructor's signature, exactly what the spec validation uses, and the
:class:`~impactbandits.params.RequiredWhen` declarations in it), the paper and section the
docstring cites, and for a figure its size — as a :class:`Description`; :func:`as_text` and
:func:`as_json` render that one object (``describe`` and ``describe --json``), and
:func:`listing` gives the rows of ``list`` and ``list --json``. Nothing is derived twice.
"""

from __future__ import annotations

import inspect
import json
import re
import types
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from annotated_types import Ge, Gt, Le, Lt

from impactbandits import docstrings
from impactbandits.errors import SpecError

if TYPE_CHECKING:
    from impactbandits.params import RequiredWhen

__all__ = [
    "SECTIONS",
    "Description",
    "FigureFacts",
    "FigureSize",
    "Parameter",
    "as_json",
    "as_text",
    "citation",
    "describe",
    "description",
    "find",
    "listing",
    "parameters",
    "plain",
    "summary",
]

#: Ordered roles of the registry, as ``describe`` names them.
ROLES = ("environment", "policy", "oracle")
#: The sections of ``impactbandits list``, in order, and the key of each row's text.
SECTIONS = {
    "environments": "summary",
    "policies": "summary",
    "oracles": "summary",
    "figures": "title",
}
#: A year as a citation gives it (2016, 2002b).
_YEAR = re.compile(r"\b(?:19|20)\d\d[a-z]?\b")
#: Between two sentences ("et al. (2021" and "Fig. 1" are not a sentence's end).
_SENTENCE_END = re.compile(r"(?<!\bal\.)(?<=[.!?])\s+(?=[A-Z])")


def plain(text: str) -> str:
    """``text`` (reStructuredText) as one line of plain text: roles become their target's
    name, literals keep single backticks (:func:`impactbandits.docstrings.plain`)."""
    return docstrings.plain(text)


def _paragraphs(obj: Any) -> list[str]:
    """The blocks of ``obj``'s docstring as plain text (:func:`impactbandits.docstrings.blocks`:
    a paragraph on one line, a list one item a line, a literal block as it is)."""
    return docstrings.blocks(inspect.getdoc(obj) or "")


def _one_line(block: str) -> str:
    return " ".join(block.split())


def summary(obj: Any) -> str:
    """The first paragraph of ``obj``'s docstring on one line, without markup."""
    paragraphs = _paragraphs(obj)
    return _one_line(paragraphs[0]) if paragraphs else ""


def _builtin_module(obj: Any) -> types.ModuleType | None:
    """The library module defining ``obj``, whose docstring holds a built-in's citation,
    defaults and their sources (``None`` for user code)."""
    module = inspect.getmodule(obj) if isinstance(obj, type) else None
    if module is not None and module.__name__.startswith("impactbandits.") and module.__doc__:
        return module
    return None


def _up_to_reference(sentence: str, year: int) -> str:
    """``sentence`` up to the end of the innermost parenthesis holding the year at index
    ``year`` (the whole sentence if the year stands outside any)."""
    opened: list[int] = []
    for i, char in enumerate(sentence):
        if char == "(":
            opened.append(i)
        elif char == ")" and opened and opened.pop() < year < i:
            return sentence[: i + 1]
    return sentence


def citation(obj: Any) -> str | None:
    """The words that cite ``obj``'s paper: the first sentence naming a year in the first
    paragraph of its docstring, else in the first paragraph of its (library) module's
    docstring, up to the parenthesis holding the year — e.g. ``"UCB1 (Auer, Cesa-Bianchi &
    Fischer 2002, Fig. 1)"``, ``"Heidari et al. (2016)"``; ``None`` if neither names one."""
    module = _builtin_module(obj)
    for source in (obj, module) if module is not None else (obj,):
        paragraphs = _paragraphs(source)
        for sentence in _SENTENCE_END.split(_one_line(paragraphs[0]) if paragraphs else ""):
            year = _YEAR.search(sentence)
            if year:
                return _up_to_reference(sentence, year.start())
    return None


@dataclass(frozen=True)
class Parameter:
    name: str
    type: str
    default: str
    """``"required"`` or the default's ``repr``."""
    constraint: str
    """e.g. ``"> 0"``, ``"in [0, 1]"``, or empty."""
    required_when: tuple[RequiredWhen, ...] = ()
    """When another parameter's value makes this one required (its default then does not
    build): the :class:`~impactbandits.params.RequiredWhen` declarations of the signature."""
    value: Any = None
    """The default itself (``None`` when required)."""
    choices: tuple[Any, ...] = ()
    """The allowed values of a ``Literal`` type (``None`` among them if it is optional)."""

    @property
    def required(self) -> bool:
        return self.default == "required"

    @property
    def allowed(self) -> str:
        """The constraint and the conditional requirements, as ``describe`` prints them."""
        return "; ".join(filter(None, [self.constraint, *map(str, self.required_when)]))


def _type_name(annotation: Any) -> str:
    """``int``, ``float | None``, ``list[float]``, ``'paper' | 'authors-code'`` (a Literal as
    its allowed values)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is type(None):
        return "None"
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is not None and args:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(_type_name(a) for a in args)}]"
    return getattr(annotation, "__name__", str(annotation))


def _choices(annotation: Any) -> tuple[Any, ...]:
    """The values of a ``Literal`` annotation (also inside ``| None``), else ``()``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return tuple(args)
    if origin in (typing.Union, types.UnionType):
        inner = [_choices(a) if a is not type(None) else (None,) for a in args]
        return sum(inner, ()) if all(inner) else ()
    return ()


def _constraint(metadata: list[Any]) -> str:
    bounds: dict[str, Any] = {}
    for item in metadata:
        for cls, key in ((Gt, "gt"), (Ge, "ge"), (Lt, "lt"), (Le, "le")):
            if isinstance(item, cls):
                bounds[key] = getattr(item, key)
    low = ("(", bounds["gt"]) if "gt" in bounds else ("[", bounds["ge"]) if "ge" in bounds else None
    high = (
        (")", bounds["lt"]) if "lt" in bounds else ("]", bounds["le"]) if "le" in bounds else None
    )
    if low and high:
        return f"in {low[0]}{low[1]}, {high[1]}{high[0]}"
    if low:
        return f"{'>' if low[0] == '(' else '>='} {low[1]}"
    if high:
        return f"{'<' if high[0] == ')' else '<='} {high[1]}"
    return ""


def parameters(cls: type[object]) -> list[Parameter]:
    """The spec parameters of a component class: its constructor's arguments as validated."""
    from impactbandits.params import RequiredWhen
    from impactbandits.registry import params_model

    hints = typing.get_type_hints(cls.__init__)
    out = []
    # (a class is hashable; mypy takes type[...] for unhashable when checking the cache's key)
    for name, field in params_model(cls).model_fields.items():  # type: ignore[arg-type]
        annotation = hints.get(name, field.annotation)
        required = field.is_required()
        out.append(
            Parameter(
                name,
                _type_name(annotation),
                "required" if required else repr(field.default),
                _constraint(field.metadata),
                tuple(m for m in field.metadata if isinstance(m, RequiredWhen)),
                None if required else field.default,
                _choices(annotation),
            )
        )
    return out


def find(kind: str) -> tuple[str, str, Any]:
    """``(role, name, object)`` for a registered environment, policy, oracle or figure name, or
    a ``module:attr`` import path (as a spec names it)."""
    from impactbandits import loader
    from impactbandits.experiments.figures import FIGURES, get_figure
    from impactbandits.registry import ENVIRONMENTS, ORACLES, POLICIES

    tables = dict(zip(ROLES, (ENVIRONMENTS, POLICIES, ORACLES), strict=True))
    matches = [role for role, table in tables.items() if kind in table]
    if kind in FIGURES:
        return "figure", kind, get_figure(kind)
    if matches:
        from impactbandits.registry import resolve

        return matches[0], kind, resolve(matches[0], kind, "kind")
    if ":" in kind:
        component = loader.Expected(
            "a class or a function",
            lambda obj: isinstance(obj, type) or loader.is_plain_function(obj),
        )
        return "import path", kind, loader.load(kind, "kind", component)
    from impactbandits.errors import did_you_mean

    hint = did_you_mean(kind, {*FIGURES, *ENVIRONMENTS, *POLICIES, *ORACLES})
    raise SpecError(
        "kind",
        f"unknown name {kind!r}{hint}; `impactbandits list` shows environments, policies, "
        "oracles and figures, or give an import path 'module:Name'",
    )


@dataclass(frozen=True)
class FigureSize:
    """A figure's experiment at one scale."""

    scale: str
    """``"full scale"`` or ``"--quick"``."""
    environments: int
    policies: int
    max_horizon: int
    seeds: int
    cells: int
    simulated_rounds: int
    """Rounds over every cell and seed."""


@dataclass(frozen=True)
class FigureFacts:
    title: str
    source: str
    """Paper, section and figure reproduced (plain text)."""
    variants: tuple[str, ...]
    sizes: tuple[FigureSize, ...]
    run: str
    """The command that reproduces it."""


@dataclass(frozen=True)
class Description:
    """Everything ``describe`` shows about a name (:func:`description`)."""

    name: str
    role: str
    """``"environment"``, ``"policy"``, ``"oracle"``, ``"figure"`` or ``"import path"``."""
    summary: str
    """A component's first docstring paragraph; a figure's title."""
    citation: str | None
    """:func:`citation`; a figure's source."""
    import_path: str | None = None
    """``module:Class`` of a class."""
    paragraphs: tuple[str, ...] = ()
    """The docstring as plain text, one block per item: a paragraph on one line, a list with
    one item a line, a literal block with its lines."""
    module: str | None = None
    """The library module of a built-in class, whose docstring follows in
    :attr:`module_paragraphs`."""
    module_paragraphs: tuple[str, ...] = ()
    parameters: tuple[Parameter, ...] | None = None
    """A class's parameters (``None`` for a function or a figure)."""
    figure: FigureFacts | None = None


def _figure_facts(figure: Any) -> FigureFacts:
    from impactbandits.experiments.cells import cell_count

    sizes = []
    for scale, quick in (("full scale", False), ("--quick", True)):
        spec = figure.spec(quick)
        cells, rounds = cell_count(spec)
        sizes.append(
            FigureSize(
                scale,
                len(spec.environments),
                len(spec.policies),
                max(spec.horizons),
                spec.seeds,
                cells,
                rounds * spec.seeds,
            )
        )
    return FigureFacts(
        figure.title,
        plain(figure.source),
        tuple(figure.variants),
        tuple(sizes),
        f"impactbandits reproduce {figure.name} [--quick] --out DIR",
    )


def description(kind: str) -> Description:
    """Everything about ``kind`` (a name from ``impactbandits list`` or an import path), the
    one source of ``describe``'s text (:func:`as_text`) and JSON (:func:`as_json`)."""
    role, name, obj = find(kind)
    if role == "figure":
        facts = _figure_facts(obj)
        return Description(name, role, facts.title, facts.source, figure=facts)
    module = _builtin_module(obj)
    return Description(
        name,
        role,
        summary(obj),
        citation(obj),
        import_path=f"{obj.__module__}:{obj.__qualname__}" if isinstance(obj, type) else None,
        paragraphs=tuple(_paragraphs(obj)),
        module=module.__name__ if module is not None else None,
        module_paragraphs=tuple(_paragraphs(module)) if module else (),
        parameters=tuple(parameters(obj)) if isinstance(obj, type) else None,
    )


def _wrap(text: str, width: int, indent: str = "") -> str:
    return docstrings.wrap(text, width, indent)


def _figure_lines(facts: FigureFacts, width: int) -> list[str]:
    lines = [_wrap(f"{facts.title}. Reproduces {facts.source}.", width), ""]
    for size in facts.sizes:
        lines.append(
            f"{size.scale}: {size.environments} environment(s) x {size.policies} policies, "
            f"horizons up to {size.max_horizon:,}, {size.seeds} seeds: {size.cells} cells, "
            f"{size.simulated_rounds:,} simulated rounds"
        )
    lines.append(f"variants: {', '.join(facts.variants)}")
    lines.append(f"run it: {facts.run}")
    return lines


def as_text(about: Description, width: int = 88) -> str:
    """``about`` as plain text of at most ``width`` columns (parameter rows may be longer)."""
    lines = [f"{about.name} ({about.role})", ""]
    if about.figure is not None:
        return "\n".join(lines + _figure_lines(about.figure, width))
    if about.import_path:
        lines.append(f"import path: {about.import_path}")
    if about.citation and about.citation not in (about.paragraphs or ("",))[0]:
        # (a citation from the module's docstring, far below; one in the first paragraph is
        # read right away)
        lines.append(_wrap(f"cites: {about.citation}", width))
    for paragraph in about.paragraphs:
        lines += ["", _wrap(paragraph, width)]
    if about.module is not None:
        lines += ["", f"from its module ({about.module}):"]
        for paragraph in about.module_paragraphs:
            lines += ["", _wrap(paragraph, width)]
    if about.parameters is not None:
        rows = about.parameters
        lines += ["", "parameters:" if rows else "parameters: none"]
        if rows:
            head = ("name", "type", "default", "allowed")
            table = [head] + [(p.name, p.type, p.default, p.allowed) for p in rows]
            widths = [max(len(r[i]) for r in table) for i in range(3)]
            for row in table:
                cells = [row[i].ljust(widths[i]) for i in range(3)] + [row[3]]
                lines.append("  " + "  ".join(cells).rstrip())
    return "\n".join(lines)


def _json_value(value: Any) -> Any:
    """``value`` if JSON can hold it as it is (``None``, numbers, strings, lists), else its
    ``repr``."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)
    return value


def _parameter_json(p: Parameter) -> dict[str, Any]:
    out: dict[str, Any] = {"name": p.name, "type": p.type, "required": p.required}
    if not p.required:
        out["default"] = _json_value(p.value)
    out["allowed"] = p.constraint or None
    out["choices"] = [_json_value(c) for c in p.choices] or None
    out["required_when"] = [
        {"param": r.param, "values": [_json_value(v) for v in r.values], "text": str(r)}
        for r in p.required_when
    ]
    return out


def as_json(about: Description) -> dict[str, Any]:
    """``about`` as a JSON document (the shape ``impactbandits describe --help`` shows)."""
    out: dict[str, Any] = {
        "name": about.name,
        "role": about.role,
        "summary": about.summary,
        "citation": about.citation,
    }
    if about.figure is not None:
        facts = about.figure
        out["figure"] = {
            "title": facts.title,
            "source": facts.source,
            "variants": list(facts.variants),
            "sizes": {
                "full" if size.scale == "full scale" else "quick": {
                    "environments": size.environments,
                    "policies": size.policies,
                    "max_horizon": size.max_horizon,
                    "seeds": size.seeds,
                    "cells": size.cells,
                    "simulated_rounds": size.simulated_rounds,
                }
                for size in facts.sizes
            },
            "run": facts.run,
        }
        return out
    out["import_path"] = about.import_path
    out["description"] = list(about.paragraphs)
    out["module"] = (
        None
        if about.module is None
        else {"name": about.module, "description": list(about.module_paragraphs)}
    )
    out["parameters"] = (
        None if about.parameters is None else [_parameter_json(p) for p in about.parameters]
    )
    return out


def describe(kind: str, width: int = 88) -> str:
    """Everything about ``kind`` (a name from ``impactbandits list`` or an import path) as
    plain text of at most ``width`` columns (parameter rows may be longer)."""
    return as_text(description(kind), width)


def listing(section: str) -> list[tuple[str, str]]:
    """``(name, one line)`` for each entry of a ``list`` section (:data:`SECTIONS`): a
    figure's title (which imports only its paper's module), a component's docstring summary
    (the registry is imported for components only)."""
    if section == "figures":
        from impactbandits.experiments.figures import FIGURES, get_figure

        return [(name, get_figure(name).title) for name in sorted(FIGURES)]
    from impactbandits.registry import ENVIRONMENTS, ORACLES, POLICIES, resolve

    tables = {"environments": ENVIRONMENTS, "policies": POLICIES, "oracles": ORACLES}
    roles = {"environments": "environment", "policies": "policy", "oracles": "oracle"}
    return [
        (name, summary(resolve(roles[section], name, section))) for name in sorted(tables[section])
    ]
