"""The documentation's code runs as written: every page's blocks, with the README's rules
(tests/test_readme.py): ``sh`` lines run, ``# NAME.py`` / ``# NAME.toml`` blocks are written,
other ``python`` blocks run as scripts, ``text`` blocks are not run. Each page runs in its own
fresh directory. The site itself (strict, tutorials executed) is built by ``make docs`` in CI."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_readme import FENCE, FILE_HEADER, _run, _venv

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    p
    for p in (ROOT / "docs").rglob("*.md")
    if p.name not in ("fidelity.md", "rested-benchmark.md") and "fidelity" not in p.parts
)


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
