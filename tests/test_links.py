"""The project's addresses are written once (:mod:`impactbandits.links`); every copy agrees with
it — ``[project.urls]``, the site's ``site_url`` and ``repo_url``, the citation file, and each
link to the site or the repository in the README, the docs pages, the docstrings and the docs
hooks — and the built site links its own pages relatively (it works wherever it is served)."""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from impactbandits.links import DOCS_URL, PROJECT_URLS, REPO_URL, docs_page

ROOT = Path(__file__).resolve().parents[1]
#: An absolute address in a text.
URL = re.compile(r"https?://[^\s<>\"'`)\]}]+")


def _project(url: str) -> bool:
    """``url`` names the project's site or repository: "impactbandits" in its host, or as
    the owner of a path on a code host (github.com/impactbandits/...)."""
    host, _, path = url.split("://", 1)[1].partition("/")
    return "impactbandits" in host or path.split("/")[0] == "impactbandits"


def _texts() -> dict[str, str]:
    """What a reader is shown with links in it: README, CONTRIBUTING, CHANGELOG, CITATION.cff,
    the docs pages and hooks, mkdocs.yml, pyproject.toml and every module of the package."""
    paths = [
        ROOT / name
        for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md", "CITATION.cff", "mkdocs.yml")
    ]
    paths += [ROOT / "pyproject.toml"]
    paths += sorted((ROOT / "docs").rglob("*.md")) + sorted((ROOT / "docs" / "hooks").glob("*.py"))
    paths += sorted((ROOT / "src" / "impactbandits").rglob("*.py"))
    return {
        path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
        for path in paths
        if path.is_file()
    }


def _line(text: str, pattern: str) -> str:
    found = re.search(pattern, text, re.M)
    assert found is not None, pattern
    return found.group(1).strip().strip('"')


def test_pyproject_urls_are_the_package_s():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["urls"] == PROJECT_URLS
    assert set(PROJECT_URLS) == {"Documentation", "Source", "Changelog", "Issues"}


def test_the_site_configuration_and_the_citation_file_agree():
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert _line(mkdocs, r"^site_url:\s*(\S+)") == DOCS_URL
    assert _line(mkdocs, r"^repo_url:\s*(\S+)") == REPO_URL
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert _line(cff, r"^url:\s*(\S+)") == DOCS_URL
    assert _line(cff, r"^repository-code:\s*(\S+)") == REPO_URL


def test_every_link_to_the_site_or_the_repository_uses_the_one_address():
    wrong = [
        f"{name}: {url}"
        for name, text in _texts().items()
        if name != "src/impactbandits/links.py"
        for url in URL.findall(text)
        if _project(url)
        and not url.startswith(DOCS_URL)
        and not (url == REPO_URL or url.startswith(REPO_URL + "/"))
    ]
    assert wrong == []


def test_the_docs_pages_link_their_own_pages_relatively():
    absolute = [
        f"{name}: {url}"
        for name, text in _texts().items()
        if name.startswith("docs/") and name.endswith(".md")
        for url in URL.findall(text)
        if url.startswith(DOCS_URL)
    ]
    assert absolute == []


def test_a_cited_page_exists():
    assert docs_page("fidelity") == DOCS_URL + "fidelity/"
    assert PROJECT_URLS["Changelog"] == docs_page("changelog")
    assert (ROOT / "docs" / "changelog.md").is_file()


def _hook(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"docs_hooks_{name}", ROOT / "docs" / "hooks" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("target", "page", "expected"),
    [
        (DOCS_URL + "fidelity/", "how-to/fast-policy/", "../../fidelity/"),
        (DOCS_URL + "fidelity/#lindner-fig1", "", "fidelity/#lindner-fig1"),
        (DOCS_URL, "api/kernels/", "../../"),
        (DOCS_URL, "", "./"),
        (DOCS_URL + "api/core/", "api/envs/", "../core/"),
        ("https://gymnasium.farama.org/", "api/gym/", "https://gymnasium.farama.org/"),
        (REPO_URL + "/issues", "index/", REPO_URL + "/issues"),
        ("#seeding", "api/gym/", "#seeding"),
    ],
)
def test_the_built_site_links_its_own_pages_relatively(target, page, expected):
    site_links = _hook("site_links")
    assert site_links.relative(target, DOCS_URL, page) == expected
    html = f'<p>see <a href="{target}">there</a></p>'
    assert site_links.rewrite(html, DOCS_URL, page) == f'<p>see <a href="{expected}">there</a></p>'


def test_the_site_links_hook_is_configured_and_handles_file_urls():
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(r"^\s*- docs/hooks/site_links\.py\s*$", mkdocs, re.M)
    relative = _hook("site_links").relative
    assert relative(DOCS_URL + "fidelity/", DOCS_URL, "how-to/dask.html", False) == (
        "../fidelity.html"
    )
    assert relative(DOCS_URL, DOCS_URL, "index.html", False) == "index.html"


def test_the_changelog_hook_links_files_in_the_one_repository():
    assert _hook("changelog").BLOB == REPO_URL + "/blob/main/"
