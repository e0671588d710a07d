"""The documentation site's structure and build-time machinery, without building the site.

* Every page of the navigation exists, the pages a pip user needs are in it (installing, the
  figure gallery, the changelog, citing), and ``site_url`` is the address the package cites
  (:data:`impactbandits.links.DOCS_URL`).
* The hooks (``docs/hooks/``): the gallery lists every registered figure with its command, its
  page and its images; the changelog page is ``CHANGELOG.md``; the docstrings' reST roles
  become links to the API entry of their target, or inline code when the target is outside the
  package or unknown; every registered component's entry gets ``impactbandits describe``'s
  parameter table, and every registered component has an entry.
* What a pip user reads does not send them into the source tree, and the README (the PyPI
  page) links absolutely, to pages of the site that exist.

``tests/test_docs.py`` runs the pages' code and builds the site in strict mode.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from impactbandits.experiments.figures import FIGURES
from impactbandits.links import DOCS_URL

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
HOOKS = DOCS / "hooks"
#: Registered figures that are not a paper's (no paper page shows an image of them).
NOT_PAPERS = {"demo-stationary", "rested-benchmark", "benchmark"}
#: Pages that describe the project's own source tree or measurements, for contributors: they
#: may name repository paths. Every other page is for a reader with the package and the site.
CONTRIBUTOR_PAGES = {"architecture.md", "benchmark.md", "rested-benchmark.md", "fidelity.md"}
#: A path into the repository (as ``tests/test_no_repo_paths.py`` defines it).
REPO_PATH = re.compile(
    r"(?<![\w./-])(?:docs|examples|benchmarks|tests|\.ci)/[\w./-]+|src/impactbandits"
)


def load_hook(name: str) -> ModuleType:
    """A module of ``docs/hooks/`` (imported as MkDocs and mkdocstrings import them)."""
    spec = importlib.util.spec_from_file_location(f"docs_hooks_{name}", HOOKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def mkdocs_config() -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def nav_pages(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    return []


# ---- configuration and navigation -------------------------------------------------------------


def test_every_page_of_the_navigation_exists():
    pages = nav_pages(mkdocs_config()["nav"])
    assert len(pages) > 40
    missing = [page for page in pages if not (DOCS / page).is_file()]
    assert not missing


def test_the_new_pages_are_in_the_navigation():
    pages = set(nav_pages(mkdocs_config()["nav"]))
    assert {"install.md", "gallery.md", "changelog.md", "citing.md"} <= pages


def test_site_url_is_the_address_the_package_cites():
    assert mkdocs_config()["site_url"] == DOCS_URL


def test_the_configured_hooks_and_extensions_exist():
    config = mkdocs_config()
    for hook in config["hooks"]:
        assert (ROOT / hook).is_file(), hook
    (mkdocstrings,) = [p["mkdocstrings"] for p in config["plugins"] if "mkdocstrings" in p]
    options = mkdocstrings["handlers"]["python"]["options"]
    for extension in options["extensions"]:
        path, _, name = extension.partition(":")
        assert f"class {name}(" in (ROOT / path).read_text(encoding="utf-8"), extension
    # classes show their constructor's signature
    assert options["merge_init_into_class"] and options["show_signature_annotations"]


# ---- the gallery ------------------------------------------------------------------------------


def test_the_gallery_lists_every_registered_figure():
    gallery = load_hook("gallery")
    page = (DOCS / "gallery.md").read_text(encoding="utf-8")
    assert gallery.MARKER.search(page)
    text = gallery.gallery_markdown(DOCS, "gallery.md")
    headings = re.findall(r"^## (\S+)$", text, re.M)
    assert headings == list(FIGURES)
    for name in FIGURES:
        assert f"\nimpactbandits reproduce {name}\n" in text
    for entry in gallery.entries(DOCS):
        if entry.page is not None:
            assert (DOCS / entry.page).is_file()
        for image, _ in entry.images:
            assert image.startswith("assets/figures/") and (DOCS / image).is_file()
        if entry.name not in NOT_PAPERS:
            assert entry.page and entry.page.startswith("papers/"), entry.name
            assert entry.images, entry.name


def test_the_gallery_links_relative_to_its_page():
    gallery = load_hook("gallery")
    (entry,) = [e for e in gallery.entries(DOCS) if e.name == "lindner-fig1"]
    text = gallery.entry_markdown(entry, "more/gallery.md")
    assert "](../papers/lindner.md)" in text
    assert "](../assets/figures/lindner-fig1.png)" in text


def test_the_gallery_hook_fills_in_its_marker_only():
    gallery = load_hook("gallery")
    config = {"docs_dir": str(DOCS)}
    page = SimpleNamespace(file=SimpleNamespace(src_uri="gallery.md"))
    out = gallery.on_page_markdown("# G\n\n<!-- gallery -->\n", page, config, None)
    assert "## lindner-fig1" in out and "<!-- gallery -->" not in out
    assert gallery.on_page_markdown("# Other\n", page, config, None) == "# Other\n"


# ---- the changelog ------------------------------------------------------------------------------


def test_the_changelog_page_is_changelog_md():
    changelog = load_hook("changelog")
    assert changelog.MARKER.search((DOCS / "changelog.md").read_text(encoding="utf-8"))
    source = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    config = {"config_file_path": str(ROOT / "mkdocs.yml")}
    page = SimpleNamespace(file=SimpleNamespace(src_uri="changelog.md"))
    out = changelog.on_page_markdown("# Changelog\n\n<!-- changelog -->\n", page, config, None)
    # everything but its top heading (the page has its own), in order
    headings = re.findall(r"^#{2,} .+$", source, re.M)
    assert headings and re.findall(r"^#{2,} .+$", out, re.M) == headings
    assert out.count("\n# ") == 0
    body = source.split("\n", 1)[1].strip()
    if "](" not in body:  # no link to rewrite: the text itself
        assert body in out


def test_changelog_links_point_at_the_site_or_github():
    changelog = load_hook("changelog")
    rewrite = changelog.rewrite_link
    assert rewrite("docs/fidelity.md#lindner-fig1", "changelog.md") == "fidelity.md#lindner-fig1"
    assert rewrite("docs/how-to/dask.md", "changelog.md") == "how-to/dask.md"
    assert rewrite("CONTRIBUTING.md", "changelog.md") == changelog.BLOB + "CONTRIBUTING.md"
    assert rewrite("https://example.org/x", "changelog.md") == "https://example.org/x"
    assert rewrite("#unreleased", "changelog.md") == "#unreleased"


# ---- reST roles as links ---------------------------------------------------------------------


def _toy_package(root: Path) -> None:
    package = root / "toypkg"
    package.mkdir()
    (package / "__init__.py").write_text('"""The toy: :mod:`toypkg.env`."""\n', encoding="utf-8")
    (package / "env.py").write_text(
        '"""Environments: :class:`~toypkg.env.BanditEnv`, :meth:`BanditEnv.feedback\n'
        "<toypkg.env.BanditEnv.feedback>`, a :class:`gymnasium.Env`, :func:`toypkg.nowhere`,\n"
        ':data:`LIMIT` and ``literal``."""\n'
        "\n"
        "LIMIT = 3\n"
        '"""A limit."""\n'
        "\n"
        "\n"
        "class BanditEnv:\n"
        '    """See :meth:`feedback` and :class:`ValueError`."""\n'
        "\n"
        "    def feedback(self):\n"
        '        """Its feedback; :class:`BanditEnv` again."""\n',
        encoding="utf-8",
    )


def test_a_known_role_becomes_a_link_and_an_unknown_target_inline_code():
    pytest.importorskip("griffe")  # the hook's module needs the docs extra (make docs)
    rest_roles = load_hook("rest_roles")
    known = {"toypkg.env.BanditEnv": "toypkg.env.BanditEnv"}
    text = rest_roles.convert(":class:`~toypkg.env.BanditEnv` or :class:`gymnasium.Env`", known.get)
    assert text == (
        '<autoref identifier="toypkg.env.BanditEnv" optional><code>BanditEnv</code></autoref>'
        " or `gymnasium.Env`"
    )
    # `text <target>` shows the text; without a resolver every role is code
    assert rest_roles.convert(":meth:`the env <toypkg.env.BanditEnv>`", known.get).endswith(
        "<code>the env</code></autoref>"
    )
    assert rest_roles.convert(":class:`toypkg.env.BanditEnv`") == "`toypkg.env.BanditEnv`"
    assert rest_roles.convert(":ref:`a label`", known.get) == "`a label`"
    assert rest_roles.convert("Write ``x`` like this::\n\n    x = 1\n") == (
        "Write `x` like this:\n\n    x = 1\n"
    )


def test_the_links_resolve_when_a_page_documents_the_target_else_show_code():
    """The link is an optional mkdocs-autorefs reference: a link where the target has an entry,
    inline code where it has none, never a broken reference."""
    autorefs = pytest.importorskip("mkdocs_autorefs")
    rest_roles = load_hook("rest_roles")
    html = rest_roles.autoref("BanditEnv", "toypkg.env.BanditEnv")
    other = rest_roles.autoref("helper", "toypkg.env._helper")

    def url(identifier: str) -> tuple[str, str | None]:
        if identifier == "toypkg.env.BanditEnv":
            return "api/#toypkg.env.BanditEnv", None
        raise KeyError(identifier)

    fixed, unmapped = autorefs.fix_refs(f"{html} {other}", url)
    assert not unmapped
    assert '<a class="autorefs autorefs-internal"' in fixed
    assert 'href="api/#toypkg.env.BanditEnv"><code>BanditEnv</code></a>' in fixed
    assert '<span title="toypkg.env._helper"><code>helper</code></span>' in fixed


def test_roles_are_resolved_from_the_docstrings_scope(tmp_path):
    griffe = pytest.importorskip("griffe")
    rest_roles = load_hook("rest_roles")
    _toy_package(tmp_path)
    package = griffe.load(
        "toypkg",
        search_paths=[str(tmp_path)],
        extensions=griffe.load_extensions(rest_roles.ReSTRoles()),
    )
    module = package["env"].docstring.value
    assert '<autoref identifier="toypkg.env.BanditEnv" optional><code>BanditEnv</code>' in module
    # a role broken over two lines, shown as its text
    assert (
        '<autoref identifier="toypkg.env.BanditEnv.feedback" optional>'
        "<code>BanditEnv.feedback</code>" in module
    )
    assert "a `gymnasium.Env`" in module  # outside the package
    assert "`toypkg.nowhere`" in module and 'toypkg.nowhere"' not in module  # no such object
    assert '<autoref identifier="toypkg.env.LIMIT" optional>' in module  # a module name
    assert "`literal`" in module
    cls = package["env.BanditEnv"].docstring.value
    assert '<autoref identifier="toypkg.env.BanditEnv.feedback" optional>' in cls  # a member
    assert "`ValueError`" in cls
    method = package["env.BanditEnv.feedback"].docstring.value
    assert '<autoref identifier="toypkg.env.BanditEnv" optional>' in method  # a parent's name
    assert '<autoref identifier="toypkg.env" optional>' in package.docstring.value


def test_no_role_markup_is_left_in_the_package_docstrings():
    griffe = pytest.importorskip("griffe")
    rest_roles = load_hook("rest_roles")
    package = griffe.load(
        "impactbandits",
        search_paths=[str(ROOT / "src")],
        extensions=griffe.load_extensions(rest_roles.ReSTRoles()),
    )
    links = left = 0
    for obj in rest_roles.objects(package):
        if obj.docstring is not None:
            links += obj.docstring.value.count("<autoref ")
            left += len(rest_roles.ROLE.findall(obj.docstring.value))
    assert left == 0
    assert links > 500  # the package cross-references a lot


# ---- registered components' parameters ------------------------------------------------------


def test_every_registered_component_has_an_api_entry():
    """Its module is on an API page (or under a package shown with its submodules)."""
    from impactbandits.registry import ENVIRONMENTS, ORACLES, POLICIES

    directives = "\n".join(p.read_text(encoding="utf-8") for p in (DOCS / "api").glob("*.md"))
    shown = set(re.findall(r"^::: ([\w.]+)$", directives, re.M))
    with_submodules = {
        name
        for name, options in re.findall(r"^::: ([\w.]+)\n((?:    .*\n)*)", directives, re.M)
        if "show_submodules: true" in options
    }
    for table in (ENVIRONMENTS, POLICIES, ORACLES):
        for name, path in table.items():
            module = path.partition(":")[0]
            parents = {module.rsplit(".", n)[0] for n in range(module.count("."))}
            assert module in shown or parents & with_submodules, (name, module)


def test_each_registered_class_gets_describes_parameter_table():
    pytest.importorskip("griffe")
    spec_parameters = load_hook("spec_parameters")
    from impactbandits.describe import description
    from impactbandits.registry import ENVIRONMENTS, ORACLES, POLICIES

    found = spec_parameters.registered()
    names = {d.name for about in found.values() for d in about}
    assert names == {*ENVIRONMENTS, *POLICIES, *ORACLES}
    for path, about in found.items():
        block = spec_parameters.registered_block(about)
        first = description(about[0].name)
        assert f'`kind = "{first.name}"`' in block
        if first.parameters is None:  # a function: its signature shows its arguments
            assert first.role == "oracle" and "|" not in block
            continue
        rows = [line for line in block.splitlines() if line.startswith("| `")]
        assert len(rows) == len(first.parameters), path
        for row, parameter in zip(rows, first.parameters, strict=True):
            cells = [cell.strip() for cell in row.strip("|").split(" | ")]
            assert cells[0] == f"`{parameter.name}`"
            assert parameter.type in row and parameter.allowed in row
            assert parameter.default in row or parameter.required


def test_the_parameter_table_has_describes_columns():
    pytest.importorskip("griffe")
    spec_parameters = load_hook("spec_parameters")
    from impactbandits.describe import as_text, description

    about = description("ucb1")
    text = as_text(about)
    header = next(line for line in text.splitlines() if line.split()[:1] == ["name"])
    assert tuple(header.split()) == spec_parameters.HEAD
    table = spec_parameters.parameter_table(about.parameters)
    assert table.splitlines()[0] == "| name | type | default | allowed |"
    assert "| `c` | `float` | `2.0` |" in table


# ---- what a pip user reads -----------------------------------------------------------------------


def test_reader_pages_do_not_send_the_reader_into_the_repository():
    pages = [
        page
        for page in DOCS.rglob("*.md")
        if page.relative_to(DOCS).as_posix() not in CONTRIBUTOR_PAGES
        and page.parts[len(DOCS.parts)] not in ("fidelity", "papers")
    ]
    found = [
        f"{page.relative_to(DOCS)}: {match.group(0)}"
        for page in pages
        for match in REPO_PATH.finditer(page.read_text(encoding="utf-8"))
    ]
    assert not found, found


def test_the_install_page_covers_the_extras_and_the_kernels():
    text = (DOCS / "install.md").read_text(encoding="utf-8")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = set(pyproject["project"]["optional-dependencies"])
    listed = set(re.findall(r"^\| `([\w-]+)` \|", text, re.M))
    assert listed == extras
    assert "pip install impactbandits" in text
    assert "python -m impactbandits.kernels.build" in text
    assert "impactbandits --version" in text
    assert "impactbandits reproduce lindner-fig1 --quick" in text


def test_shell_completion_is_explained_for_bash_zsh_and_fish():
    text = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    for shell in ("bash", "zsh", "fish"):
        assert f"_IMPACTBANDITS_COMPLETE={shell}_source impactbandits" in text


def test_the_readme_links_absolutely_to_pages_that_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", readme) + re.findall(r"<(https?://[^>]+)>", readme)
    assert targets
    blob = "https://github.com/impactbandits/impactbandits/blob/main/"
    for target in targets:
        assert target.startswith(("https://", "http://")), target
        if target.startswith(DOCS_URL):
            address, _, anchor = target[len(DOCS_URL) :].partition("#")
            page = DOCS / (address.strip("/") + ".md" if address.strip("/") else "index.md")
            assert page.is_file(), target
            if anchor:
                headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
                slugs = {re.sub(r"[^\w]+", "-", h.lower()).strip("-") for h in headings}
                assert anchor in slugs, target
        elif target.startswith(blob):
            assert (ROOT / target[len(blob) :]).is_file(), target
