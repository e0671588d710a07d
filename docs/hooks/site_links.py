"""An MkDocs hook: a link to a page of this site written as an absolute address (the
docstrings cite the site by its address, :data:`impactbandits.links.DOCS_URL`, since a pip user
reads them in a terminal) becomes a link relative to the page it is on. The built site then
works wherever it is served — under ``mkdocs serve``, from another host, from a copy — not only
at the address the package cites, which nobody may be able to reach."""

from __future__ import annotations

import posixpath
import re
from typing import Any

#: An ``href`` attribute of the rendered page: ``href="..."``.
HREF = re.compile(r'href="(?P<target>[^"]*)"')


def relative(target: str, site_url: str, page_url: str, directory_urls: bool = True) -> str:
    """``target`` relative to the page at ``page_url`` (as MkDocs writes it: ``""`` for the
    home page, ``how-to/dask/`` or ``how-to/dask.html``) when it is an address under
    ``site_url``; any other target unchanged."""
    if not site_url or not target.startswith(site_url):
        return target
    path, hash_, anchor = target[len(site_url) :].partition("#")
    if directory_urls:
        directory = not path or path.endswith("/")
    else:  # pages are files: dir/ -> dir.html, the home page index.html
        path, directory = (path.rstrip("/") + ".html") if path.strip("/") else "index.html", False
    base = page_url if page_url.endswith("/") else posixpath.dirname(page_url)
    out = posixpath.relpath(path or ".", base.strip("/") or ".")
    if directory:
        out = out.rstrip("/") + "/"  # "." -> "./"
    return out + (hash_ + anchor)


def rewrite(html: str, site_url: str, page_url: str, directory_urls: bool = True) -> str:
    """Every ``href`` of ``html`` under ``site_url`` made relative to ``page_url``."""
    return HREF.sub(
        lambda m: f'href="{relative(m.group("target"), site_url, page_url, directory_urls)}"',
        html,
    )


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    return rewrite(
        html, config.get("site_url") or "", page.url, bool(config.get("use_directory_urls", True))
    )
