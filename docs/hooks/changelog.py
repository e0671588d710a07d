"""An MkDocs hook: the ``<!-- changelog -->`` line of a page becomes the repository's
``CHANGELOG.md`` (beside ``mkdocs.yml``), so the site shows the one changelog without a second
copy. Its top heading is the page's own and is left out.

The changelog is written for the repository: a relative link in it to a documentation page
(``docs/fidelity.md#lindner-fig1``) becomes a link to that page of the site, and a link to any
other file of the repository (``CONTRIBUTING.md``, ``src/…``) a link to the file on GitHub.
``mkdocs serve`` rebuilds the page when the changelog changes."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from impactbandits.links import REPO_URL

MARKER = re.compile(r"^<!--\s*changelog\s*-->\s*$", re.M)
#: An inline Markdown link or image target: ](target) or ](target "title").
LINK = re.compile(r"\]\((?P<target>[^)\s]+)(?P<rest>[^)]*)\)")
TOP_HEADING = re.compile(r"\A\s*# [^\n]*\n")
#: The repository's files on GitHub, branch main (the address is written once, in
#: :mod:`impactbandits.links`).
BLOB = f"{REPO_URL}/blob/main/"
#: The changelog, relative to the directory of mkdocs.yml.
SOURCE = "CHANGELOG.md"


def rewrite_link(target: str, here: str, docs_dir: str = "docs") -> str:
    """A link target of the changelog as a page at ``here`` (relative to the docs directory)
    needs it: absolute addresses and anchors unchanged, ``docs/…`` relative to ``here``,
    other repository paths on GitHub."""
    if re.match(r"^[a-z][a-z0-9+.-]*:|^#|^/", target):
        return target
    path = posixpath.normpath(target)
    if path.startswith(docs_dir + "/"):
        inside = path[len(docs_dir) + 1 :]
        return posixpath.relpath(inside, posixpath.dirname(here) or ".")
    return BLOB + path


def changelog_markdown(root: Path, here: str = "changelog.md") -> str:
    """The changelog's text for the page at ``here``, without its top heading."""
    text = (root / SOURCE).read_text(encoding="utf-8")
    text = TOP_HEADING.sub("", text, count=1)
    return LINK.sub(
        lambda m: f"]({rewrite_link(m.group('target'), here)}{m.group('rest')})",
        text,
    )


def _root(config: Any) -> Path:
    return Path(config["config_file_path"]).resolve().parent


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if not MARKER.search(markdown):
        return markdown
    text = changelog_markdown(_root(config), page.file.src_uri)
    return MARKER.sub(lambda _: text, markdown)


def on_serve(server: Any, config: Any, builder: Any) -> Any:
    server.watch(str(_root(config) / SOURCE))
    return server
