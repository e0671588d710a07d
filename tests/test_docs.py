"""The documentation's code runs as written, and the site builds.

* Every page's code blocks run with the README's rules (tests/test_readme.py): ``sh`` lines run,
  ``# NAME.py`` / ``# NAME.toml`` blocks are written, other ``python`` blocks run as scripts.
  Each page runs in its own fresh directory whose ``.venv`` is the test interpreter's, with no
  ``PYTHONPATH``: a page that names its own module in a spec must say ``PYTHONPATH=.``, as a
  reader has to.
* ``text`` blocks are not run (full-scale reproductions, a Dask cluster, ``make`` itself), but
  the commands they show are checked: every ``impactbandits …`` line parses with the real
  command line (options, choices, a registered figure and one of its variants), every ``make``
  target exists and every ``pip install`` extra is declared.
* Every registered paper figure appears on a paper page (its ledger rows and an image).
* ``mkdocs build --strict`` succeeds (skipped when the docs extra is not installed: ``make test``
  installs the dev extras only, and CI's ``make docs`` builds the site right after).

The generated pages (``docs/fidelity.md``, ``docs/rested-benchmark.md``) are not run.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .test_readme import FENCE, FILE_HEADER, TIMEOUT, _venv

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GENERATED = ("fidelity.md", "rested-benchmark.md", "benchmark.md")
PAGES = sorted(
    p for p in DOCS.rglob("*.md") if p.name not in GENERATED and "fidelity" not in p.parts
)
#: Registered figures that are not a paper's (no paper page shows them).
NOT_PAPERS = {"demo-stationary", "rested-benchmark", "benchmark"}
#: The site build: ~15 s with the tutorials executed, ~4 s when their outputs are cached.
BUILD_TIMEOUT = 300


def _run(command: list[str], cwd: Path, what: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["MPLBACKEND"] = "Agg"
    proc = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert proc.returncode == 0, f"{what} failed ({proc.returncode}):\n{proc.stderr[-3000:]}"


def _blocks(page: Path) -> list[tuple[str, str]]:
    return FENCE.findall(page.read_text(encoding="utf-8"))


def test_every_block_declares_its_language():
    for page in PAGES:
        langs = {lang for lang, _ in _blocks(page)}
        assert langs <= {"sh", "toml", "python", "text"}, (page, langs)


@pytest.mark.parametrize("page", [p for p in PAGES if _blocks(p)], ids=lambda p: p.stem)
def test_page_runs_as_written(tmp_path, page):
    (tmp_path / ".venv").symlink_to(_venv(), target_is_directory=True)
    for index, (lang, body) in enumerate(_blocks(page)):
        first = body.splitlines()[0] if body.strip() else ""
        header = FILE_HEADER.fullmatch(first.strip())
        if lang in ("toml", "python") and header:
            (tmp_path / header.group(1)).write_text(body, encoding="utf-8")
        elif lang == "python":
            script = tmp_path / f"snippet_{index}.py"
            script.write_text(body, encoding="utf-8")
            _run(
                [str(tmp_path / ".venv/bin/python"), script.name], tmp_path, f"{page.name}:{index}"
            )
        elif lang == "sh":
            for line in body.splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    _run(["bash", "-c", line], tmp_path, f"{page.name}:{index}: {line}")


def _shown_commands() -> list[tuple[str, list[str]]]:
    """(page:line, argv) of every command line in the pages' ``text`` blocks (comments cut)."""
    found = []
    for page in PAGES:
        for lang, body in _blocks(page):
            if lang != "text":
                continue
            for line in body.splitlines():
                try:
                    words = shlex.split(line, comments=True)
                except ValueError:  # a diagram or formula, not a command
                    continue
                if words:
                    found.append((f"{page.relative_to(DOCS)}: {line.strip()}", words))
    return found


def test_shown_impactbandits_commands_parse():
    from impactbandits.cli import cli
    from impactbandits.experiments.figures import FIGURES, get_figure

    checked = 0
    for where, words in _shown_commands():
        if words[0] not in ("impactbandits", ".venv/bin/impactbandits") or len(words) < 2:
            continue
        name, args = words[1], words[2:]
        assert name in cli.commands, where
        command = cli.commands[name]
        context = command.make_context(name, list(args))  # raises on unknown options or values
        if name == "reproduce":
            figure = context.params["name"]
            assert figure in FIGURES, where
            assert context.params["variant"] in get_figure(figure).variants, where
        checked += 1
    assert checked >= 20


def test_shown_make_targets_and_extras_exist():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = set(pyproject["project"]["optional-dependencies"])
    for where, words in _shown_commands():
        if words[0] == "make":
            assert set(words[1:]) <= targets, where
        for word in words:
            match = re.fullmatch(r"(?:impactbandits)?\.?\[([\w,-]+)\]", word)
            if "install" in words and match:
                assert set(match.group(1).split(",")) <= extras, where


def test_every_paper_figure_has_its_page():
    from impactbandits.experiments.figures import FIGURES

    ledger = set()
    pages = list((DOCS / "papers").glob("*.md"))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for marker in re.findall(r"<!--\s*ledger:(.*?)-->", text):
            ledger.update(marker.split())
        for image in re.findall(r"!\[[^]]*\]\(([^)]+)\)", text):
            assert (page.parent / image).is_file(), (page.name, image)
    assert set(FIGURES) - NOT_PAPERS == ledger


def test_site_builds_strict(tmp_path):
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python", "mkdocs_jupyter"):
        pytest.importorskip(module, reason="the docs extra is not installed (make docs)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    problems = [line for line in proc.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert proc.returncode == 0 and not problems, "\n".join(problems) or proc.stderr[-3000:]
    assert (tmp_path / "site/index.html").is_file()
    assert (tmp_path / "site/api/core/index.html").is_file()
