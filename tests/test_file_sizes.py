"""No Python file of the package is longer than :data:`MAX_LINES` lines (one idea per file).

A file that grows past the limit is split along a real seam into modules of one idea each,
rather than the limit being raised. The checker itself is tested on planted files, so the test
can fail.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "src"
#: The most lines a ``.py`` file under ``src/`` may have.
MAX_LINES = 500


def line_count(path: Path) -> int:
    """The number of lines of ``path``, as ``wc -l`` counts them for a file that ends with a
    newline (a last line without one counts too)."""
    return len(path.read_text(encoding="utf-8").splitlines())


def oversized(root: Path, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """``(path relative to root, line count)`` of every ``.py`` file under ``root`` longer than
    ``limit`` lines, longest first."""
    found = [
        (path.relative_to(root).as_posix(), line_count(path))
        for path in sorted(root.rglob("*.py"))
        if line_count(path) > limit
    ]
    return sorted(found, key=lambda item: (-item[1], item[0]))


def test_no_source_file_exceeds_the_line_limit():
    found = oversized(SOURCES)
    listing = "\n".join(f"  src/{name}: {lines} lines" for name, lines in found)
    assert not found, (
        f"{len(found)} file(s) under src/ exceed {MAX_LINES} lines; split each along a seam "
        f"into modules of one idea:\n{listing}"
    )


# --- the checker, on planted files -------------------------------------------------------------


def test_the_checker_names_each_oversized_file_and_its_line_count(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "at_limit.py").write_text("x = 1\n" * 500, encoding="utf-8")
    (tmp_path / "pkg" / "one_over.py").write_text("x = 1\n" * 501, encoding="utf-8")
    (tmp_path / "pkg" / "sub" / "long.py").write_text("x = 1\n" * 800, encoding="utf-8")
    (tmp_path / "pkg" / "no_newline.py").write_text("x = 1\n" * 500 + "y = 2", encoding="utf-8")
    (tmp_path / "pkg" / "notes.txt").write_text("line\n" * 900, encoding="utf-8")
    assert oversized(tmp_path / "pkg") == [
        ("sub/long.py", 800),
        ("no_newline.py", 501),
        ("one_over.py", 501),
    ]
    assert oversized(tmp_path / "pkg", limit=800) == []
