"""An MkDocs hook: the ``<!-- gallery -->`` line of a page becomes one entry per registered
figure (:data:`impactbandits.experiments.figures.FIGURES`, in the registry's order): its title,
the paper it reproduces, the command that reproduces it, a link to its page and its image.

A figure's page is the paper page whose ``<!-- ledger: … -->`` marker names it (the marker the
ledger hook fills in), else a top-level page named after the figure (``benchmark.md``). Its
images are those of its page whose alt text starts with its name (``![metelli-synthetic: 2
arms, rested](…)``), with their alt text as caption, else ``assets/figures/NAME.png`` if there
is one. A figure with neither page nor image still gets its entry: the registry, not the pages,
decides what is listed."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from impactbandits.describe import plain
from impactbandits.experiments.figures import FIGURES, get_figure

MARKER = re.compile(r"^<!--\s*gallery\s*-->\s*$", re.M)
LEDGER = re.compile(r"<!--\s*ledger:\s*(.*?)\s*-->")
IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)\)")
TITLE = re.compile(r"^# (.+)$", re.M)


@dataclass(frozen=True)
class Entry:
    name: str
    title: str
    source: str
    variants: tuple[str, ...]
    page: str | None
    """Its page, relative to the docs directory (``papers/lindner.md``)."""
    page_title: str | None
    """That page's top heading."""
    images: tuple[tuple[str, str], ...]
    """``(path relative to the docs directory, alt text)`` of each image."""


def figure_pages(docs: Path) -> dict[str, str]:
    """Figure name → the page that shows it, relative to ``docs``."""
    pages: dict[str, str] = {}
    for page in sorted((docs / "papers").glob("*.md")):
        for names in LEDGER.findall(page.read_text(encoding="utf-8")):
            for name in names.split():
                pages.setdefault(name, page.relative_to(docs).as_posix())
    for name in FIGURES:
        if name not in pages and (docs / f"{name}.md").is_file():
            pages[name] = f"{name}.md"
    return pages


def _images_on(docs: Path, page: str, name: str) -> list[tuple[str, str]]:
    text = (docs / page).read_text(encoding="utf-8")
    found = []
    for match in IMAGE.finditer(text):
        alt = match.group("alt")
        if re.match(rf"{re.escape(name)}\b(?!-)", alt):
            path = posixpath.normpath(posixpath.join(posixpath.dirname(page), match.group("src")))
            found.append((path, alt))
    return found


def entries(docs: Path) -> list[Entry]:
    """One entry per registered figure, in the registry's order."""
    pages = figure_pages(docs)
    out = []
    for name in FIGURES:
        figure = get_figure(name)
        page = pages.get(name)
        images = _images_on(docs, page, name) if page else []
        own = f"assets/figures/{name}.png"
        if not images and (docs / own).is_file():
            images = [(own, f"{name}: {figure.title}")]
        title = TITLE.search((docs / page).read_text(encoding="utf-8")) if page else None
        out.append(
            Entry(
                name,
                figure.title,
                plain(figure.source),
                tuple(figure.variants),
                page,
                title.group(1).strip() if title else None,
                tuple(images),
            )
        )
    return out


def entry_markdown(entry: Entry, here: str) -> str:
    """``entry`` as Markdown for a page at ``here`` (relative to the docs directory)."""
    base = posixpath.dirname(here) or "."

    def link(path: str) -> str:
        return posixpath.relpath(path, base)

    lines = [f"## {entry.name}", "", f"**{entry.title}.** Source: {entry.source}."]
    if entry.page:
        lines[-1] += f" Its page: [{entry.page_title or entry.name}]({link(entry.page)})."
    lines += ["", "```text", f"impactbandits reproduce {entry.name}", "```"]
    others = [v for v in entry.variants if v != "paper"]
    if others:
        variants = ", ".join(f"`--variant {v}`" for v in others)
        lines += ["", f"Other variants: {variants}."]
    for path, alt in entry.images:
        lines += ["", f"![{alt}]({link(path)})"]
    return "\n".join(lines)


def gallery_markdown(docs: Path, here: str = "gallery.md") -> str:
    return "\n\n".join(entry_markdown(entry, here) for entry in entries(docs))


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if not MARKER.search(markdown):
        return markdown
    generated = gallery_markdown(Path(config["docs_dir"]), page.file.src_uri)
    return MARKER.sub(lambda _: generated, markdown)
