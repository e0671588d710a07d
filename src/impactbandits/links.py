"""The project's addresses — the documentation site and the source repository — written here
and nowhere else by hand. User-facing text cites pages of the site (a pip user has the package
and the site, not the source tree).

The copies that cannot import this module are tested equal to it: ``[project.urls]`` of the
package metadata, ``site_url`` and ``repo_url`` of the site's configuration, ``url`` and
``repository-code`` of the citation file, and every link to the site or the repository in the
README, the docs pages and the docstrings. On the built site, a link to one of its own pages is
made relative, so that the site works wherever it is served."""

from __future__ import annotations

__all__ = ["DOCS_URL", "PROJECT_URLS", "REPO_URL", "docs_page"]

#: The documentation site (its pages' addresses: :func:`docs_page`).
DOCS_URL = "https://impactbandits.readthedocs.io/en/latest/"
#: The source repository (issues, the files of the source tree).
REPO_URL = "https://github.com/impactbandits/impactbandits"


def docs_page(page: str, anchor: str = "") -> str:
    """The address of a page of the site: ``docs_page("fidelity")`` →
    ``https://…/fidelity/`` (``page`` as in the site's navigation, without ``.md``)."""
    page = page.strip("/").removesuffix(".md")
    address = DOCS_URL + (f"{page}/" if page and page != "index" else "")
    return address + (f"#{anchor}" if anchor else "")


#: ``[project.urls]`` of the package metadata, as the package index shows them.
PROJECT_URLS = {
    "Documentation": DOCS_URL,
    "Source": REPO_URL,
    "Changelog": docs_page("changelog"),
    "Issues": f"{REPO_URL}/issues",
}
