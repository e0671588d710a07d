"""Nothing user-facing points into the repository.

A pip user has the installed package and the documentation site, not the source tree, so no
text the package shows (docstrings, error messages, printed or reported text, the command
line's help) may cite a path of the repository (``docs/fidelity.md``, ``tests/test_layers.py``,
``benchmarks/bench_simplex.py``, ``examples/...``, ``.ci/...``, ``src/impactbandits/...``):
pages of the documentation are cited by their site address (:mod:`impactbandits.links`), and
which script or test measured or checks something is a ``#`` comment beside the code.

Every string constant of every module of the installed package is read with :mod:`ast`
(docstrings, messages, the literal parts of f-strings); comments are not strings, so they are
not read. Paths of the authors' own repositories (``src/algorithms/R_ed_UCB.py``) are not ours
and do not match.

Nor does any file of the repository name an absolute path of a machine (a home, work or
temporary folder); the rule is stated above :data:`MACHINE_ROOTS`."""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import impactbandits
from impactbandits.cli import cli

#: A path into this repository: a token starting with one of its top-level folders (not
#: preceded by a word character, dot, slash or hyphen, so ``readthedocs.io/...``,
#: ``impactbandits/data/...`` and ``src/algorithms/...`` do not match; a sentence's full stop
#: after the path is not part of it), or the package's own source folder.
REPO_PATH = re.compile(
    r"(?<![\w./-])(?:docs|examples|benchmarks|tests|\.ci)/[\w./-]*[\w/]|src/impactbandits"
)

PACKAGE = Path(impactbandits.__file__).resolve().parent


def offenders_in_text(text: str) -> list[str]:
    """The repository paths ``text`` mentions."""
    return [match.group(0) for match in REPO_PATH.finditer(text)]


def string_constants(source: str) -> Iterator[tuple[int, str]]:
    """(first line, value) of every string constant of a module's source: docstrings, messages
    and the literal parts of f-strings (an f-string's parts are ``Constant`` nodes of its
    ``JoinedStr``). Byte strings are not text shown to a user."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def offenders_in_source(source: str, name: str) -> list[str]:
    """``name:line: match`` for every repository path in the string constants of ``source``."""
    return [
        # the line of the match itself when the string spans lines (a docstring)
        f"{name}:{line + value[: match.start()].count(chr(10))}: {match.group(0)}"
        for line, value in string_constants(source)
        for match in REPO_PATH.finditer(value)
    ]


def package_modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


# ---- the checker can fail ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("the fidelity ledger (docs/fidelity.md)", ["docs/fidelity.md"]),
        ("``docs/architecture.md``", ["docs/architecture.md"]),
        ("``examples/gym_policy.py`` checks it", ["examples/gym_policy.py"]),
        ("Measured (2 cores, ``benchmarks/bench_simplex.py``)", ["benchmarks/bench_simplex.py"]),
        ("enforced by tests/test_layers.py.", ["tests/test_layers.py"]),
        (
            "see docs/how-to/own-policy.md, then examples/gym_policy.py",
            ["docs/how-to/own-policy.md", "examples/gym_policy.py"],
        ),
        ("see .ci/wheel.sh", [".ci/wheel.sh"]),
        ("in src/impactbandits/core/philox.py", ["src/impactbandits"]),
        ("the fidelity ledger (https://impactbandits.readthedocs.io/en/latest/fidelity/)", []),
        ("the authors' ``src/algorithms/R_ed_UCB.py`` and their tests/ folder", []),
        ("package data ``impactbandits/data/fico`` and my-docs/x.md", []),
        ("docs, examples and tests of the project", []),
    ],
)
def test_the_pattern_finds_repository_paths_and_only_those(text, found):
    assert offenders_in_text(text) == found


def test_the_checker_reads_docstrings_messages_and_f_strings_but_not_comments():
    planted = (
        '"""Module (docs/fidelity.md)."""\n'
        "def f(x):\n"
        '    """See ``tests/test_x.py``."""\n'
        "    # benchmarks/bench.py measured this: a comment is fine\n"
        '    raise ValueError(f"{x} is bad, see examples/run.py")\n'
        'OK = "https://impactbandits.readthedocs.io/en/latest/fidelity/"\n'
    )
    assert offenders_in_source(planted, "m.py") == [
        "m.py:1: docs/fidelity.md",
        "m.py:3: tests/test_x.py",
        "m.py:5: examples/run.py",
    ]


# ---- the installed package -------------------------------------------------------------------


def test_the_package_is_found():
    names = {path.relative_to(PACKAGE).as_posix() for path in package_modules()}
    assert {"__init__.py", "links.py", "cli/__init__.py"} <= names


def test_no_string_of_the_package_cites_a_repository_path():
    found = [
        line
        for path in package_modules()
        for line in offenders_in_source(
            path.read_text(encoding="utf-8"),
            f"impactbandits/{path.relative_to(PACKAGE).as_posix()}",
        )
    ]
    assert not found, "repository paths in user-facing strings:\n" + "\n".join(found)


# ---- the command line's help -------------------------------------------------------------------


def _commands(group: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The argument paths of the command line and of every (sub)command under it."""
    yield path
    if isinstance(group, click.Group):
        context = click.Context(group, info_name="impactbandits")
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            if command is not None and not command.hidden:
                yield from _commands(command, (*path, name))


def test_the_help_texts_cite_no_repository_path():
    runner = CliRunner()
    commands = list(_commands(cli))
    assert len(commands) > 1  # the subcommands were found
    found = []
    for path in commands:
        result = runner.invoke(cli, [*path, "--help"], prog_name="impactbandits")
        assert result.exit_code == 0, (path, result.output)
        found += [
            f"impactbandits {' '.join((*path, '--help'))}: {match}"
            for match in offenders_in_text(result.output)
        ]
    assert not found, "repository paths in the help:\n" + "\n".join(found)


# ---- no path of a machine in the repository ----------------------------------------------------
#
# The rule: no file of the repository (tracked, or new and not ignored) names an absolute path of
# a machine — a folder at the root of a file system that belongs to one machine or user: a home
# (home, root, Users), a work or scratch area (work, scratch, srv, mnt, media, opt) or a
# temporary folder (tmp, var/tmp, var/folders, private). Code asks for them instead (an
# environment variable with no machine default, ``tempfile.gettempdir()``, which honours
# ``$TMPDIR``, or a path relative to the repository or ``$HOME``), and examples in text use
# relative paths (``runs/copy``, ``~/spb``, ``"$TMPDIR"/x``). Interfaces of the operating system,
# the same on every machine (``/dev/null``, ``/proc``, ``/usr/bin/env``, ``/bin/sh``), are not
# machine paths. Binary files are read too (a stored fixture must not carry the path of the
# machine that made it).

MACHINE_ROOTS = (
    "home", "root", "Users", "work", "scratch", "srv", "mnt", "media", "opt", "tmp",
    "var/tmp", "var/folders", "private",
)  # fmt: skip
#: A machine path: one of :data:`MACHINE_ROOTS` right after the file system's root, not part of
#: a longer path, a URL or a word (``$SRC/home/x``, ``~/work``, ``https://x.org/home``,
#: ``${HOME}/work`` do not match), or a Windows user folder.
MACHINE_PATH = re.compile(
    r"(?<![\w.~})/\\])/(?:" + "|".join(MACHINE_ROOTS) + r")(?![\w.-])"
    r"|(?<![\w])[A-Za-z]:\\(?:Users|Documents and Settings)\\"
)


def _p(rest: str) -> str:
    """An absolute path, written so that this file does not name one."""
    return "/" + rest


def machine_paths(text: str) -> list[str]:
    return [match.group(0) for match in MACHINE_PATH.finditer(text)]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (f'MIRROR="${{AUTHORS_MIRROR:-{_p("work/.mirror")}}}"', [_p("work")]),
        (f"Protocol (see {_p('work/shared/BENCHMARKS.md')}):", [_p("work")]),
        (f'default=Path("{_p("tmp/impactbandits-report-large")}")', [_p("tmp")]),
        (f'parser.add_argument("--scratch", default="{_p("tmp")}")', [_p("tmp")]),
        (f"TMP=${{TMPDIR:-{_p('tmp')}}}", [_p("tmp")]),
        (f"cd {_p('home/alice/src')} && {_p('root/.cache')}", [_p("home"), _p("root")]),
        (f"open('{_p('Users/bob/x.csv')}')", [_p("Users")]),
        (f"{_p('var/folders/xy/T')} and {_p('var/tmp/z')}", [_p("var/folders"), _p("var/tmp")]),
        ("C:\\Users\\carol\\runs", ["C:\\Users\\"]),
        # not machine paths: the system's interfaces, relative paths, URLs, variables
        (f"{_p('usr/bin/env')} bash > {_p('dev/null')}; cat {_p('proc/cpuinfo')}", []),
        (f'mkdir -p "$SRC{_p("home/.config")}" ~/work/x ${{HOME}}{_p("work")}', []),
        (f"https://example.org{_p('home/')} and docs/how-to/tmp.md", []),
        (f"{_p('tmpfs')} {_p('homes')} runs/tmp/x", []),
        (f"$(pyenv root){_p('versions/2.7')}", []),
    ],
)
def test_the_pattern_finds_machine_paths_and_only_those(text, found):
    assert machine_paths(text) == found


ROOT = Path(__file__).resolve().parents[1]


def repository_files() -> list[str]:
    """The files of the repository, relative to it: tracked, and new files git does not
    ignore."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, check=True,
        )  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    names = [name for name in listed.stdout.decode().split("\0") if name]
    return [name for name in names if (ROOT / name).is_file()]


def test_no_file_of_the_repository_names_a_path_of_a_machine():
    files = repository_files()
    assert len(files) > 100  # the repository was found
    found = []
    for name in files:
        text = (ROOT / name).read_bytes().decode("utf-8", errors="replace")
        for match in MACHINE_PATH.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(f"{name}:{line}: {match[0]}")
    assert not found, "absolute paths of a machine in the repository:\n" + "\n".join(found)
