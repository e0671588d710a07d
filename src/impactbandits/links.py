"""Addresses of the documentation site, for user-facing text: a pip user has the package and
the site, not the source tree, so messages, docstrings and reports cite pages of the site."""

from __future__ import annotations

__all__ = ["DOCS_URL", "docs_page"]

#: The documentation site (``site_url`` of the site's configuration, tested equal).
DOCS_URL = "https://impactbandits.readthedocs.io/en/latest/"


def docs_page(page: str, anchor: str = "") -> str:
    """The address of a page of the site: ``docs_page("fidelity")`` →
    ``https://…/fidelity/`` (``page`` as in the site's navigation, without ``.md``)."""
    page = page.strip("/").removesuffix(".md")
    address = DOCS_URL + (f"{page}/" if page and page != "index" else "")
    return address + (f"#{anchor}" if anchor else "")
