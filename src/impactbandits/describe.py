"""Plain-text descriptions of components and figures (``impactbandits list`` and ``describe``).

Docstrings are written for the API reference (reStructuredText roles such as
``:class:`~impactbandits.core.policy.Policy``` and double-backtick literals); a terminal shows
them as plain text: :func:`plain` drops the markup, :func:`summary` gives a component's first
paragraph, :func:`describe` everything a user needs to write a spec entry — the parameters with
their types, defaults and constraints (read from the constructor's signature, exactly what the
spec validation uses), the paper and section the docstring cites, and for a figure its size.
"""

from __future__ import annotations

import inspect
import re
import textwrap
import types
import typing
from dataclasses import dataclass
from typing import Any

from annotated_types import Ge, Gt, Le, Lt

from impactbandits.errors import SpecError

__all__ = ["Parameter", "describe", "find", "parameters", "plain", "summary"]

#: A Sphinx role, e.g. :class:`~a.b.C` (shown as C) or :func:`a.b.f` (shown as a.b.f).
_ROLE = re.compile(r":[a-z]+:`(~?)([^`<]+?)(?:\s*<[^>]+>)?`")
#: Ordered roles of the registry, as ``describe`` names them.
ROLES = ("environment", "policy", "oracle")


def plain(text: str) -> str:
    """``text`` without reStructuredText markup: roles become their target's name, literals
    and interpreted text lose their backticks."""
    text = _ROLE.sub(lambda m: m.group(2).split(".")[-1] if m.group(1) else m.group(2), text)
    return re.sub(r"`+([^`]+?)`+", r"\1", text)


def _paragraphs(obj: Any) -> list[str]:
    doc = inspect.getdoc(obj) or ""
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", doc) if p.strip()]


def summary(obj: Any) -> str:
    """The first paragraph of ``obj``'s docstring on one line, without markup."""
    paragraphs = _paragraphs(obj)
    return plain(paragraphs[0]) if paragraphs else ""


@dataclass(frozen=True)
class Parameter:
    name: str
    type: str
    default: str
    """``"required"`` or the default's ``repr``."""
    constraint: str
    """e.g. ``"> 0"``, ``"in [0, 1]"``, or empty."""


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
    from impactbandits.registry import params_model

    hints = typing.get_type_hints(cls.__init__)
    out = []
    # (a class is hashable; mypy takes type[...] for unhashable when checking the cache's key)
    for name, field in params_model(cls).model_fields.items():  # type: ignore[arg-type]
        annotation = hints.get(name, field.annotation)
        default = "required" if field.is_required() else repr(field.default)
        out.append(Parameter(name, _type_name(annotation), default, _constraint(field.metadata)))
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
    names = sorted({*FIGURES, *ENVIRONMENTS, *POLICIES, *ORACLES})
    close = [n for n in names if kind.lower() in n or n in kind.lower()]
    hint = f" (did you mean {', '.join(close[:4])}?)" if close else ""
    raise SpecError(
        "kind",
        f"unknown name {kind!r}{hint}; `impactbandits list` shows environments, policies, "
        "oracles and figures, or give an import path 'module:Name'",
    )


def _wrap(text: str, width: int, indent: str = "") -> str:
    return textwrap.fill(text, width, initial_indent=indent, subsequent_indent=indent)


def _figure_lines(figure: Any, width: int) -> list[str]:
    from impactbandits.experiments.cells import cell_count

    lines = [_wrap(f"{figure.title}. Reproduces {plain(figure.source)}.", width), ""]
    for label, quick in (("full scale", False), ("--quick", True)):
        spec = figure.spec(quick)
        cells, rounds = cell_count(spec)
        lines.append(
            f"{label}: {len(spec.environments)} environment(s) x {len(spec.policies)} policies, "
            f"horizons up to {max(spec.horizons):,}, {spec.seeds} seeds: {cells} cells, "
            f"{rounds * spec.seeds:,} simulated rounds"
        )
    lines.append(f"variants: {', '.join(figure.variants)}")
    lines.append(f"run it: impactbandits reproduce {figure.name} [--quick] --out DIR")
    return lines


def describe(kind: str, width: int = 88) -> str:
    """Everything about ``kind`` (a name from ``impactbandits list`` or an import path) as
    plain text of at most ``width`` columns (parameter rows may be longer)."""
    role, name, obj = find(kind)
    lines = [f"{name} ({role})", ""]
    if role == "figure":
        return "\n".join(lines + _figure_lines(obj, width))
    if isinstance(obj, type):
        lines.append(f"import path: {obj.__module__}:{obj.__qualname__}")
    for paragraph in _paragraphs(obj):
        lines += ["", _wrap(plain(paragraph), width)]
    module = inspect.getmodule(obj) if isinstance(obj, type) else None
    if module is not None and module.__name__.startswith("impactbandits.") and module.__doc__:
        # a built-in's citation, defaults and their sources live in its module's docstring
        lines += ["", f"from its module ({module.__name__}):"]
        for paragraph in _paragraphs(module):
            lines += ["", _wrap(plain(paragraph), width)]
    if isinstance(obj, type):
        rows = parameters(obj)
        lines += ["", "parameters:" if rows else "parameters: none"]
        if rows:
            head = ("name", "type", "default", "allowed")
            table = [head] + [(p.name, p.type, p.default, p.constraint) for p in rows]
            widths = [max(len(r[i]) for r in table) for i in range(3)]
            for row in table:
                cells = [row[i].ljust(widths[i]) for i in range(3)] + [row[3]]
                lines.append("  " + "  ".join(cells).rstrip())
    return "\n".join(lines)
