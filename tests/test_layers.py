"""The package graph is a DAG that follows the layers of docs/architecture.md (issue 26, item 4).

A *part* of the package is a sub-package (``core``, ``envs``, …, ``experiments``) or a top-level
module (``registry``, ``cli``, …); the package's own ``__init__.py`` is the part
``impactbandits``. Every reference from one part to another counts as an import, wherever it is
in the file:

* ``import`` and ``from … import`` (relative ones too) at module level, inside functions and
  methods, and under ``if TYPE_CHECKING:`` — a type-only import is still a dependency (a type
  checker follows it, and it turns into a real import the day someone needs it at run time);
* a string that is an import path into the package — ``importlib.import_module(
  "impactbandits.cli")``, ``"impactbandits.envs.stationary:BernoulliBandit"`` in a name table,
  ``"impactbandits.core.spaces"`` in a lazy-export table, ``f"impactbandits.kernels.{name}"``:
  they are all lazy imports.

Two checks hold over that graph: (a) it has no cycle, and (b) every edge goes from a part to one
on a *lower* row of :data:`LAYERS` (never to its own row, never upward). Imports inside one part
are not checked here. The checker itself is tested on planted sources, so the test can fail.
"""

from __future__ import annotations

import ast
import itertools
import re
import textwrap
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "impactbandits"

#: The layers, highest first. A part may import only parts of *lower* rows: never a part of its
#: own row, never one above. docs/architecture.md ("Layers and packages") states the same rows.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("impactbandits", "__main__"),  # the package's lazy top-level names; `python -m`
    ("cli",),  # the `impactbandits` command
    ("describe", "gym"),  # the text of `list` and `describe`; Gymnasium adapters
    ("experiments",),  # specs, cells, runner, worker, store, tidy table, report, figures
    ("registry", "metrics", "testing"),  # name → component tables; regret; contract checks
    ("kernels",),  # compiled round loops for the hot policy × environment pairs
    ("envs", "policies"),  # environments; algorithms (and the policies' name table)
    ("oracles",),  # exact benchmarks (and Ron et al.'s fairness functions and utility)
    ("core",),  # Environment, Policy, spaces, Feedback, randomness, simulate
    ("loader", "construct"),  # the checked `module:attr` loader; parameters from signatures
    ("settings", "usercode"),  # environment variables; one-line errors for user code
    # exceptions; parameter types; docs site; BibTeX; docstrings as terminal text
    ("errors", "params", "links", "citations", "docstrings"),
)

#: A string that is an import path into the package: ``impactbandits.a.b`` or ``…a.b:Name``.
_IMPORT_PATH = re.compile(r"impactbandits(?:\.\w+)+(?::[\w.]+)?")
#: The literal head of an f-string building one: ``f"impactbandits.kernels.{name}"``.
_IMPORT_PATH_HEAD = re.compile(r"impactbandits\.(\w+)[.:]")


@dataclass(frozen=True)
class Edge:
    """``file`` (under src/impactbandits), line ``line``, imports part ``target`` from
    ``source``."""

    file: str
    line: int
    source: str
    target: str

    def __str__(self) -> str:
        return f"src/impactbandits/{self.file}:{self.line}  {self.source} → {self.target}"


def part_of(file: str) -> str:
    """The part a file (relative to src/impactbandits) belongs to."""
    head, _, rest = file.partition("/")
    if rest:
        return head
    return "impactbandits" if head == "__init__.py" else head.removesuffix(".py")


def package_parts() -> set[str]:
    """Every part of the package on disk: its sub-packages and top-level modules."""
    parts = {"impactbandits"}
    for child in PACKAGE.iterdir():
        if child.is_dir() and (child / "__init__.py").is_file():
            parts.add(child.name)
        elif child.suffix == ".py" and child.name != "__init__.py":
            parts.add(child.stem)
    return parts


def _module_of(file: str) -> tuple[str, bool]:
    """The dotted module name of ``file`` and whether it is a package's ``__init__``."""
    names = ["impactbandits", *file.removesuffix(".py").split("/")]
    if names[-1] == "__init__":
        return ".".join(names[:-1]), True
    return ".".join(names), False


def _imported_modules(
    node: ast.AST, module: str, is_package: bool, parts: Collection[str]
) -> list[str]:
    """The modules of the package that ``node`` imports (or names as an import path)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = module.split(".") if is_package else module.split(".")[:-1]
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        if base == "impactbandits":  # `from impactbandits import settings`: a part, or __init__
            return [f"impactbandits.{a.name}" if a.name in parts else base for a in node.names]
        return [base]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value.partition(":")[0]] if _IMPORT_PATH.fullmatch(node.value) else []
    if isinstance(node, ast.JoinedStr) and node.values:
        head = node.values[0]
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            match = _IMPORT_PATH_HEAD.match(head.value)
            if match:
                return [f"impactbandits.{match.group(1)}"]
    return []


def imports(source: str, file: str, parts: Collection[str]) -> list[Edge]:
    """Every import of another part of the package in ``source`` (the text of ``file``,
    relative to src/impactbandits), wherever it is."""
    module, is_package = _module_of(file)
    here = part_of(file)
    edges = []
    for node in ast.walk(ast.parse(source, filename=file)):
        for name in _imported_modules(node, module, is_package, parts):
            names = name.split(".")
            if names[0] != "impactbandits":
                continue
            target = names[1] if len(names) > 1 else "impactbandits"
            if target != here:
                edges.append(Edge(file, getattr(node, "lineno", 0), here, target))
    return sorted(set(edges), key=lambda e: (e.file, e.line, e.target))


def package_graph() -> list[Edge]:
    parts = package_parts()
    edges = []
    for path in sorted(PACKAGE.rglob("*.py")):
        file = path.relative_to(PACKAGE).as_posix()
        edges += imports(path.read_text(encoding="utf-8"), file, parts)
    return edges


def upward(edges: Iterable[Edge], layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[Edge]:
    """The edges that do not go down to a lower row of ``layers`` (highest row first); an edge
    from or to a part on no row is one of them."""
    row = {part: len(layers) - i for i, names in enumerate(layers) for part in names}
    return [e for e in edges if row.get(e.source, 0) <= row.get(e.target, len(layers) + 1)]


def cycles(edges: Iterable[Edge]) -> list[list[Edge]]:
    """For every set of parts that import one another in a circle, one shortest circle through
    its first part (by name): its edges, in order, each at the first place it is written."""
    first: dict[tuple[str, str], Edge] = {}
    for edge in edges:
        first.setdefault((edge.source, edge.target), edge)
    following: dict[str, list[str]] = {}
    for source, target in sorted(first):
        following.setdefault(source, []).append(target)

    def path(start: str, goal: str) -> list[str] | None:
        """A shortest path of parts from ``start`` to ``goal`` (breadth first), if any."""
        previous: dict[str, str] = {}
        queue = [start]
        for here in queue:
            for nxt in following.get(here, ()):
                if nxt not in previous:
                    previous[nxt] = here
                    if nxt == goal:
                        out = [goal]
                        while out[-1] != start or len(out) == 1:
                            out.append(previous[out[-1]])
                        return out[::-1]
                    queue.append(nxt)
        return None

    found, seen = [], set()
    for part in sorted(following):
        circle = None if part in seen else path(part, part)
        if circle is None:
            continue
        # every part on a path from and back to ``part`` is in its circle: report it once
        seen |= {p for p in following if path(part, p) and path(p, part)}
        found.append([first[pair] for pair in itertools.pairwise(circle)])
    return found


def _lines(edges: Iterable[Edge]) -> str:
    return "\n".join(f"  {edge}" for edge in edges)


# --- the package -------------------------------------------------------------------------------


def test_the_layer_table_names_every_part_once():
    listed = [part for row in LAYERS for part in row]
    assert len(listed) == len(set(listed)), "a part is on two rows of LAYERS"
    on_disk = package_parts()
    assert not on_disk - set(listed), (
        f"parts missing from LAYERS (place them, and in docs/architecture.md): "
        f"{sorted(on_disk - set(listed))}"
    )
    assert not set(listed) - on_disk, f"LAYERS names missing parts: {set(listed) - on_disk}"


def test_no_part_imports_its_own_row_or_upward():
    bad = upward(package_graph())
    assert not bad, (
        "imports that do not go down the layers of docs/architecture.md "
        f"(tests/test_layers.py: LAYERS):\n{_lines(bad)}"
    )


def test_the_package_graph_is_acyclic():
    found = cycles(package_graph())
    assert not found, "parts that import one another in a circle:\n" + "\n".join(
        _lines(circle) for circle in found
    )


def test_docs_state_the_same_layers():
    """The table under "Layers and packages" lists the rows of :data:`LAYERS`, highest first,
    each row's parts in its first column."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Layers and packages", 1)[1].split("\n## ", 1)[0]
    rows = [
        tuple(re.findall(r"`([\w]+)`", line.split("|")[1]))
        for line in section.splitlines()
        if line.startswith("| `")
    ]
    assert rows == list(LAYERS)
    assert "tests/test_layers.py" in section


# --- the checker, on planted sources -----------------------------------------------------------

PLANTED = textwrap.dedent(
    """\
    from __future__ import annotations

    import importlib
    from typing import TYPE_CHECKING

    import numpy as np

    from impactbandits.errors import SpecError
    from . import random
    from .. import settings

    if TYPE_CHECKING:
        from impactbandits.registry import resolve

    TABLE = {"x": "impactbandits.gym.env:make", "doc": "see impactbandits.cli for more"}


    def build(name):
        from ..experiments import runner
        import impactbandits.describe

        return importlib.import_module("impactbandits.cli"), f"impactbandits.kernels.{name}"
    """
)
PARTS = {"impactbandits", *(part for row in LAYERS for part in row)}


def test_the_checker_finds_every_kind_of_import():
    found = [(e.line, e.source, e.target) for e in imports(PLANTED, "core/planted.py", PARTS)]
    assert found == [
        (8, "core", "errors"),
        (10, "core", "settings"),
        (13, "core", "registry"),
        (15, "core", "gym"),
        (19, "core", "experiments"),
        (20, "core", "describe"),
        (22, "core", "cli"),
        (22, "core", "kernels"),
    ]


def test_the_checker_finds_a_planted_upward_import():
    edges = imports(PLANTED, "core/planted.py", PARTS)
    bad = [str(edge) for edge in upward(edges)]
    assert bad == [
        "src/impactbandits/core/planted.py:13  core → registry",
        "src/impactbandits/core/planted.py:15  core → gym",
        "src/impactbandits/core/planted.py:19  core → experiments",
        "src/impactbandits/core/planted.py:20  core → describe",
        "src/impactbandits/core/planted.py:22  core → cli",
        "src/impactbandits/core/planted.py:22  core → kernels",
    ]
    same_row = imports("from impactbandits.policies import UCB1\n", "envs/x.py", PARTS)
    assert [str(e) for e in upward(same_row)] == ["src/impactbandits/envs/x.py:1  envs → policies"]
    package = imports("from impactbandits import ExperimentSpec\n", "gym/x.py", PARTS)
    assert [str(e) for e in upward(package)] == [
        "src/impactbandits/gym/x.py:1  gym → impactbandits"
    ]


def test_the_checker_finds_a_planted_cycle():
    edges = [
        *imports("def f():\n    from impactbandits import experiments\n", "oracles/a.py", PARTS),
        *imports("from impactbandits.oracles import ranking\n", "experiments/b.py", PARTS),
        *imports("from impactbandits.core import policy\n", "experiments/c.py", PARTS),
    ]
    assert [[str(e) for e in circle] for circle in cycles(edges)] == [
        [
            "src/impactbandits/experiments/b.py:1  experiments → oracles",
            "src/impactbandits/oracles/a.py:2  oracles → experiments",
        ]
    ]
    assert not cycles(edges[1:])
