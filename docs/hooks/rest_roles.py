"""A griffe extension for the API pages: the docstrings' reStructuredText markup becomes Markdown.

* A cross-reference role — ``:class:`~pkg.mod.Name```, ``:func:`pkg.f```, ``:meth:`step```,
  ``:meth:`Env.feedback <pkg.env.Env.feedback>```, ``:mod:``, ``:data:``, ``:attr:``,
  ``:exc:``, ``:obj:`` — becomes a link to the target's entry on its API page: the short name
  after ``~``, the text before ``<target>``, the target as written otherwise, shown as code. A
  name without the package's prefix is looked up as Python would from the docstring's object
  (its members, then its class's and its module's, imported names included). The link is an
  *optional* mkdocs-autorefs reference, the kind mkdocstrings writes for the types in a
  signature: when no API page documents the target (a private helper, a module shown without
  its members) it renders as inline code, never as a broken link. A target outside the package
  (``gymnasium.Env``, ``numpy.ndarray``, ``ValueError``), one that does not exist, and a
  ``:ref:`` are inline code from the start.
* ````text```` becomes ```text```, and a literal-block marker ``text::`` becomes ``text:``, so
  mkdocstrings renders them as code instead of showing the markup.

The conversion runs when the package is loaded (``on_package``), on every docstring of it, so
that every module is there to look names up in; the docstrings in ``src/`` are not changed.
"""

from __future__ import annotations

import html
import importlib
import re
from collections.abc import Callable, Iterator

import griffe

#: A Sphinx cross-reference role; ``body`` is ``target``, ``~target`` or ``text <target>``.
ROLE = re.compile(
    r":(?P<role>class|func|meth|mod|data|attr|obj|exc|const|type|ref):`(?P<body>[^`]+)`"
)
TITLED = re.compile(r"(?P<text>.*?)\s*<(?P<target>[^<>]+)>\s*", re.S)
DOUBLE = re.compile(r"``([^`]+)``")
#: reST's literal-block marker: "text::" shows as "text:", a "::" line alone disappears (the
#: indented block after it is a Markdown code block either way)
LITERAL = re.compile(r"(\S)::$", re.M)
BARE_LITERAL = re.compile(r"^[ \t]*::[ \t]*\n", re.M)

#: Resolves a role's target to the full path of a documented-or-documentable object, or None.
Resolver = Callable[[str], str | None]


def split_role(body: str) -> tuple[str, str]:
    """``(shown text, target)`` of a role's body: ``~a.b.C`` → ``("C", "a.b.C")``, ``text
    <a.b.C>`` → ``("text", "a.b.C")``, ``a.b.C`` → ``("a.b.C", "a.b.C")`` (a line break inside
    a dotted target dropped, other whitespace collapsed; Sphinx's ``!`` "do not link" prefix
    dropped)."""
    titled = TITLED.fullmatch(body.strip())
    if titled:
        return " ".join(titled.group("text").split()), "".join(titled.group("target").split())
    # a dotted target broken over two lines joins up again; other whitespace collapses
    target = " ".join(re.sub(r"\.\s+", ".", body).split()).lstrip("!")
    if target.startswith("~"):
        target = target[1:]
        return target.rsplit(".", 1)[-1], target
    return target, target


def code(text: str) -> str:
    """``text`` as Markdown inline code."""
    return f"``{text}``" if "`" in text else f"`{text}`"


def autoref(text: str, identifier: str) -> str:
    """An optional cross-reference: a link to ``identifier``'s entry when a page documents it,
    else ``text`` as inline code (mkdocs-autorefs resolves it once every page is rendered)."""
    return (
        f'<autoref identifier="{html.escape(identifier)}" optional>'
        f"<code>{html.escape(text)}</code></autoref>"
    )


def convert(text: str, resolve: Resolver | None = None) -> str:
    """``text`` with its reST markup as Markdown: a role whose target ``resolve`` knows becomes a
    link (:func:`autoref`), any other role inline code; literals and literal-block markers as
    the module docstring says. Without ``resolve`` every role is inline code."""

    def role(match: re.Match[str]) -> str:
        shown, target = split_role(match.group("body"))
        no_link = match.group("body").lstrip().startswith("!")
        if match.group("role") == "ref" or no_link or resolve is None:
            return code(shown)
        identifier = resolve(target)
        return code(shown) if identifier is None else autoref(shown, identifier)

    text = LITERAL.sub(r"\1:", DOUBLE.sub(r"`\1`", ROLE.sub(role, text)))
    return BARE_LITERAL.sub("", text)


def _runtime_path(path: str) -> str | None:
    """Where the object ``path`` names is defined, by importing it: the package exports some
    names lazily (a module ``__getattr__``), which reading the source does not see."""
    module_name, _, attr = path.rpartition(".")
    while module_name:
        try:
            obj: object = importlib.import_module(module_name)
        except ImportError:  # not a module: the last part is an attribute of its parent
            module_name, _, head = module_name.rpartition(".")
            attr = f"{head}.{attr}"
            continue
        except Exception:  # a module that fails to import documents nothing more
            return None
        try:
            for part in attr.split("."):
                obj = getattr(obj, part)
        except Exception:  # a lazy export may raise anything; the name is then unknown
            return None
        module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        return f"{module}.{qualname}" if module and qualname else None
    return None


def resolver(obj: griffe.Object, package: griffe.Module) -> Resolver:
    """The :data:`Resolver` for the docstrings of ``obj``, an object of ``package``."""
    prefix = package.name

    def inside(path: str) -> bool:
        return path == prefix or path.startswith(prefix + ".")

    def lookup(path: str) -> str | None:
        try:
            found = package.modules_collection[path]
            return str(found.canonical_path)
        except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return None

    def resolve(target: str) -> str | None:
        target = target.removesuffix("()")
        head, _, rest = target.partition(".")
        if head != prefix:
            try:
                path = obj.resolve(head)
            except (griffe.NameResolutionError, griffe.AliasResolutionError):
                return None
            target = f"{path}.{rest}" if rest else path
        if not inside(target):
            return None
        found = lookup(target)
        if found is None:
            runtime = _runtime_path(target)
            found = lookup(runtime) if runtime and inside(runtime) else None
        return found if found is not None and inside(found) else None

    return resolve


def objects(obj: griffe.Object) -> Iterator[griffe.Object]:
    """``obj`` and every object defined in it (aliases, i.e. imported names, left out)."""
    yield obj
    for member in obj.members.values():
        if isinstance(member, griffe.Object):
            yield from objects(member)


class ReSTRoles(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: object) -> None:
        for obj in objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = convert(obj.docstring.value, resolver(obj, pkg))
