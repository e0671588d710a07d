"""Every timing statement of the README, the docs, the Makefile and ``--help``, from one table.

``docs/fidelity/timings.toml`` is the table. It holds one entry per registered figure
(``time_figures.py`` measures each at full paper scale and, with ``--quick``, at quick scale)
and one ``_NAME`` entry per measurement of ``timing_measurements.py``: the command a reader
would type, its wall and CPU seconds (user + system of the whole process tree, exact), peak RSS,
the load average when it started and the date.

Each sentence of :data:`STATEMENTS` is rendered from the table and must appear, as rendered, in
each of its places; ``--write`` puts it there (replacing its earlier wording, found by its
shape). A statement of a duration that is not one of them — anything :data:`PHRASE` finds in
the texts of :func:`texts` — must be one of :data:`QUALITATIVE`, each with the comparison with
the table that makes it true. ``tests/test_timing_statements.py`` fails while any text
disagrees.

    .venv/bin/python benchmarks/fidelity/timing_statements.py --measure readme-two-arms
    .venv/bin/python benchmarks/fidelity/timing_statements.py --measure all   # ~30 min
    .venv/bin/python benchmarks/fidelity/time_figures.py lindner-fig1        # a figure
    .venv/bin/python benchmarks/fidelity/timing_statements.py --write         # update texts
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TIMINGS = ROOT / "docs" / "fidelity" / "timings.toml"

Table = Mapping[str, Mapping[str, Any]]


# == the sentences ==============================================================================


def load(path: Path = TIMINGS) -> dict[str, dict[str, Any]]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def figure_entries(table: Table) -> dict[str, Mapping[str, Any]]:
    return {name: entry for name, entry in table.items() if not name.startswith("_")}


def _n(value: float) -> str:
    """A measured number as the texts give it: whole above 10 (with thousands separators),
    else one decimal."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def _cpu(table: Table, name: str, key: str = "cpu_s") -> float:
    return float(table[name][key])


def _quick_by_figure(table: Table) -> dict[str, float]:
    return {k: float(v["quick_cpu_s"]) for k, v in figure_entries(table).items()}


def _quick(table: Table, but: str = "") -> list[float]:
    return [v for k, v in _quick_by_figure(table).items() if k != but]


def _figures(table: Table) -> str:
    cpu = [float(v["cpu_s"]) for v in figure_entries(table).values()]
    return (
        f"{_n(sum(cpu))} CPU s for all {len(cpu)} registered figures at full paper scale "
        f"({_n(min(cpu))} to {_n(max(cpu))} CPU s each)"
    )


def _validation_us(table: Table) -> str:
    """Microseconds a round that validating a user policy's actions costs (one replication,
    two arms: UCB1 and greedy), as a range."""
    entry = table["_validate-actions"]
    rounds = float(entry["horizon"])
    cost = [
        1e6 * (float(entry[f"{policy}_every_s"]) - float(entry[f"{policy}_first_s"])) / rounds
        for policy in ("ucb1", "greedy")
    ]
    low, high = f"{min(cost):.1f}", f"{max(cost):.1f}"
    return low if low == high else f"{low}–{high}"


def _startup(table: Table) -> tuple[float, float]:
    """MB and CPU seconds a process spends on numba's JIT runtime (import, typing tables,
    loading its cached loops) beyond the same run on the module built ahead of time."""
    jit, aot = table["_startup-jit"], table["_startup-aot"]
    return float(jit["peak_rss_mb"]) - float(aot["peak_rss_mb"]), float(jit["cpu_s"]) - float(
        aot["cpu_s"]
    )


@dataclass(frozen=True)
class Statement:
    render: Callable[[Table], str]
    places: tuple[str, ...]
    shape: str
    """The sentence with its numbers left open: how ``--write`` finds the earlier wording."""


STATEMENTS: dict[str, Statement] = {
    "figures": Statement(
        _figures,
        (
            "README.md",
            "Makefile",
            "src/impactbandits/cli/__init__.py",
            "docs/getting-started.md",
        ),
        r"[\d,.]+ CPU s for all \d+ registered figures at full paper scale "
        r"\(\S+ to \S+ CPU s each\)",
    ),
    "figures-quick": Statement(
        lambda t: f"`--quick` runs take {_n(min(_quick(t)))} to {_n(max(_quick(t)))} CPU s each",
        ("README.md", "src/impactbandits/cli/__init__.py"),
        r"`--quick` runs take \S+ to \S+ CPU s each",
    ),
    "kernels": Statement(
        lambda t: f"about {_n(_cpu(t, '_kernels'))} CPU s to build the compiled loops",
        (
            "README.md",
            "Makefile",
            "src/impactbandits/kernels/build.py",
            "docs/install.md",
            "docs/api/kernels.md",
        ),
        r"about [\d,.]+ CPU s to build the compiled loops",
    ),
    "make-demo": Statement(
        lambda t: (
            f"{_n(_cpu(t, '_make-demo'))} CPU s on a fresh clone, pip's install included "
            f"({_n(_cpu(t, '_make-demo', 'wall_s'))} s of wall time on 2 cores at load "
            f"{float(t['_make-demo']['load']):.0f})"
        ),
        ("README.md", "Makefile", "docs/install.md", "docs/getting-started.md"),
        r"[\d,.]+ CPU s on a fresh clone, pip's install included \([\d,.]+ s of wall time on 2 "
        r"cores at load \d+\)",
    ),
    "lindner-fig1": Statement(
        lambda t: f"--out runs/fig1      # full paper scale, {_n(_cpu(t, 'lindner-fig1'))} CPU s",
        ("README.md",),
        r"--out runs/fig1 +# full paper scale, [\d,.]+ CPU s",
    ),
    "compiled": Statement(
        lambda t: (
            f"full `lindner-fig1` takes {_n(_cpu(t, 'lindner-fig1'))} CPU s instead of "
            f"{_n(_cpu(t, '_lindner-fig1-numpy'))}"
        ),
        ("README.md",),
        r"full `lindner-fig1` takes [\w\s,.]+? CPU s(?:econds)? instead of [\d,]*\d",
    ),
    "lindner-fig1-quick": Statement(
        lambda t: f"--out runs/fig1-quick   # {_n(_cpu(t, '_lindner-fig1-quick'))} CPU s",
        ("README.md",),
        r"--out runs/fig1-quick +# ~?[\d,.]+ (?:CPU )?s",
    ),
    "readme-two-arms": Statement(
        lambda t: (
            f"--out runs/two-arms    # {_n(_cpu(t, '_readme-two-arms'))} CPU s, then report.html"
        ),
        ("README.md",),
        r"--out runs/two-arms +# ~?[\d,.]+ (?:CPU )?s, then report\.html",
    ),
    "readme-my-policy": Statement(
        lambda t: f"--out runs/my-policy    # {_n(_cpu(t, '_readme-my-policy'))} CPU s",
        ("README.md",),
        r"--out runs/my-policy +# ~?[\d,.]+ (?:CPU )?s",
    ),
    "readme-benchmark-quick": Statement(
        lambda t: f"--param c=0.5 --quick   # {_n(_cpu(t, '_readme-benchmark-quick'))} CPU s",
        ("README.md",),
        r"--param c=0\.5 --quick +# [\d,.]+ CPU s",
    ),
    "benchmark-quick": Statement(
        lambda t: f"T = 300 and 1,000, 3 seeds: {_n(_cpu(t, 'benchmark', 'quick_cpu_s'))} CPU s",
        ("docs/benchmark.md",),
        r"T = 300 and 1,000, 3 seeds: [\d,.]+ CPU s",
    ),
    "validate-actions": Statement(
        lambda t: f"about {_validation_us(t)} µs a round",
        ("README.md",),
        r"about [\d.]+(?:–[\d.]+)? µs a round",
    ),
    "startup": Statement(
        lambda t: (
            f"saves about {_n(_startup(t)[0])} MB and {_n(_startup(t)[1])} CPU s of "
            "start-up per process"
        ),
        ("README.md",),
        r"saves about [\d,.]+ MB and [\d,.]+ CPU s of start-up per process",
    ),
    "test-slow": Statement(
        lambda t: f"marked `slow`, {_n(_cpu(t, '_test-slow'))} CPU s",
        ("README.md",),
        r"marked `slow`, [\w\s,.]+?(?:CPU s|minutes)",
    ),
    "dask": Statement(
        lambda t: (
            f"{_n(100 * (_cpu(t, '_lindner-fig1-dask') / _cpu(t, 'lindner-fig1') - 1))} % "
            f"more CPU on Dask than on the process pool ({_n(_cpu(t, '_lindner-fig1-dask'))} "
            f"against {_n(_cpu(t, 'lindner-fig1'))} CPU s)"
        ),
        ("docs/how-to/dask.md",),
        r"[\d,.]+ % more CPU on Dask than on the process pool \([^)]*\)",
    ),
    "fast-policy": Statement(
        lambda t: (
            f"take {_n(_cpu(t, '_fast-policy', 'compiled_cpu_s'))} CPU s compiled, "
            f"numba's first compilation included, against "
            f"{_n(_cpu(t, '_fast-policy', 'readable_cpu_s'))} readable"
        ),
        ("docs/how-to/fast-policy.md",),
        r"take [\w\s,.]+? CPU s(?:econds)? compiled, numba's first compilation included, "
        r"against [\w\s,.]+? readable",
    ),
    "glr-klucb": Statement(
        lambda t: (
            f"{_n(_cpu(t, '_glr-klucb'))} CPU s for one environment at T = 10,000 with 30 seeds"
        ),
        ("docs/benchmark.md",),
        r"[\d,.]+ CPU s for one environment at T = 10,000 with 30 seeds",
    ),
}


# == durations said in words ====================================================================


def _pulls_per_cpu_second(table: Table) -> float:
    """Simulated rounds per CPU second of full-scale ``demo-stationary`` (UCB1, EXP3, ETC,
    greedy, compiled), start-up and report included: a lower bound of the loops' rate."""
    from impactbandits.experiments.cells import cell_count
    from impactbandits.experiments.figures import get_figure

    spec = get_figure("demo-stationary").spec(False)
    rounds = cell_count(spec)[1] * spec.seeds
    return rounds / float(table["demo-stationary"]["cpu_s"])


@dataclass(frozen=True)
class Qualitative:
    """A duration said in words where it is, and the comparison with the table that makes it
    true."""

    places: tuple[str, ...]
    phrase: str
    holds: Callable[[Table], bool]
    why: str


#: Every duration of the texts that is not a rendered statement.
QUALITATIVE: tuple[Qualitative, ...] = (
    Qualitative(
        ("docs/gallery.md", "docs/getting-started.md"),
        r"reduced grid (?:that runs )?in seconds \(in minutes for `benchmark`\)",
        lambda t: (
            max(_quick(t, but="benchmark")) < 60 <= _cpu(t, "benchmark", "quick_cpu_s") < 3600
        ),
        "every figure's --quick run but the benchmark's takes less than a CPU minute; the "
        "benchmark's takes minutes",
    ),
    Qualitative(
        ("docs/papers/lindner.md",),
        r"a reduced grid in seconds",
        lambda t: max(v for k, v in _quick_by_figure(t).items() if "lindner" in k) < 60,
        "Lindner et al.'s figures' --quick runs take less than a CPU minute each",
    ),
    Qualitative(
        ("docs/papers/lindner.md",),
        r"seconds to minutes",
        lambda t: all(
            1 <= float(v["cpu_s"]) < 3600 for k, v in figure_entries(t).items() if "lindner" in k
        ),
        "Lindner et al.'s figures take 1 CPU s to an hour at full scale",
    ),
    Qualitative(
        ("docs/install.md",),
        r"reduced grid in a few seconds",
        lambda t: float(t["_lindner-fig1-quick"]["cpu_s"]) < 10,
        "make demo's quick lindner-fig1 takes less than 10 CPU s",
    ),
    Qualitative(
        ("docs/api/kernels.md", "docs/how-to/fast-policy.md", "docs/install.md"),
        r"loads? it in a fraction of a second",
        lambda t: _startup(t)[1] < 1,
        "numba's runtime with cached loops costs a process less than a CPU second",
    ),
    Qualitative(
        ("docs/install.md",),
        r"compiled on its first use \(a few seconds\)",
        lambda t: float(t["_startup-jit-cold"]["cpu_s"]) - float(t["_startup-jit"]["cpu_s"]) < 30,
        "compiling the loops of a run (three policies) takes less than 30 CPU s",
    ),
    Qualitative(
        ("impactbandits run --help",),
        r"10\^6-10\^7 pulls per CPU second",
        lambda t: 1e6 <= _pulls_per_cpu_second(t) <= 1e7,
        "full demo-stationary simulates between 10^6 and 10^7 rounds per CPU second",
    ),
    Qualitative(
        ("docs/getting-started.md",),
        r"at most 5 million planned pulls, at most a couple of CPU seconds of compiled loop",
        lambda t: 5e6 / _pulls_per_cpu_second(t) <= 2,
        "5 million rounds at demo-stationary's rate (start-up and report included) take at "
        "most two CPU seconds",
    ),
    Qualitative(
        ("docs/how-to/dask.md",),
        r"the sweep's hours are shared out",
        lambda t: True,
        "a cluster of several machines serves sweeps of hours: a use, not a measurement",
    ),
    Qualitative(
        ("README.md",),
        r"stops within about half a second too",
        lambda t: True,
        "the compiled loops poll for a stop every 4,096 rounds (test_readme_counts.py checks "
        "the constant), a few milliseconds at their rate; test_interrupt.py checks the stop",
    ),
    Qualitative(
        ("README.md",),
        r"sampled every 0\.5 s",
        lambda t: True,
        "the sampling interval of benchmarks/peak_rss.py (test_readme_counts.py checks it)",
    ),
    Qualitative(
        ("README.md", "Makefile"),
        r"(?:wall|CPU) (?:seconds|time)|wall/CPU seconds|CPU seconds",
        lambda t: True,
        "names a unit; states no duration",
    ),
)


# == the texts ==================================================================================

#: A duration: a number or a quantity in words, then a unit; or a unit in words on its own.
NUMBER = (
    r"(?:\d[\d,.]*(?:\s?[–-]\s?\d[\d,.]*)?|a few|several|two|three|four|five|ten|twenty|"
    r"half a|a fraction of a|a couple of)"
)
UNIT = r"(?:CPU[ -]?)?(?:s|secs?|seconds?|minutes?|min|hours?|h|ms|µs|us)"
PHRASE = re.compile(
    rf"(?<![\w.^])(?:~\s?)?{NUMBER}\s?{UNIT}(?![\w/])"
    r"|\b(?:seconds|minutes|hours)\b|per (?:CPU )?second"
)
#: Pages made from measured tables (the fidelity ledger) and their sources: not prose.
GENERATED = ("docs/fidelity.md", "docs/fidelity/")


def _flatten(text: str) -> str:
    """``text`` with line breaks, Makefile ``##`` and docstring indentation joined into single
    spaces: a sentence may be wrapped anywhere."""
    return re.sub(r"\s*\n\s*(?:#+ ?)?", " ", text)


def help_texts() -> Iterator[tuple[str, str]]:
    """``impactbandits [COMMAND] --help`` for the command line and each command."""
    import click
    from click.testing import CliRunner

    from impactbandits.cli import cli

    context = click.Context(cli, info_name="impactbandits")
    for path in [(), *((name,) for name in cli.list_commands(context))]:
        shown = CliRunner().invoke(
            cli, [*path, "--help"], prog_name="impactbandits", terminal_width=200
        )
        yield " ".join(["impactbandits", *path, "--help"]), shown.output


def texts(root: Path = ROOT) -> Iterator[tuple[str, str]]:
    """(name, flattened text) of every text a reader is shown: the README, CONTRIBUTING.md,
    the documentation pages, the Makefile's comments and the command line's help."""
    pages = [root / "README.md", root / "CONTRIBUTING.md", *sorted((root / "docs").rglob("*.md"))]
    for page in pages:
        name = page.relative_to(root).as_posix()
        if not name.startswith(GENERATED):
            yield name, _flatten(page.read_text(encoding="utf-8"))
    makefile = (root / "Makefile").read_text(encoding="utf-8").splitlines()
    yield "Makefile", _flatten("\n".join(line for line in makefile if line.startswith("#")))
    for name, text in help_texts():
        yield name, _flatten(text)


def _spans(text: str, pattern: str) -> list[tuple[int, int]]:
    return [match.span() for match in re.finditer(pattern, text)]


def check(root: Path = ROOT, table: Table | None = None) -> list[str]:
    """Disagreements between the texts and the table, one line each (none: all agree)."""
    from impactbandits.experiments.figures import FIGURES

    table = load(root / TIMINGS.relative_to(ROOT)) if table is None else table
    problems = []
    figures = figure_entries(table)
    if set(figures) != set(FIGURES):
        problems.append(
            f"timings.toml: figures {sorted(set(FIGURES) - set(figures))} not measured, "
            f"{sorted(set(figures) - set(FIGURES))} not registered"
        )
        return problems
    rendered: dict[str, str] = {}
    for key, statement in STATEMENTS.items():
        try:
            rendered[key] = statement.render(table)
        except KeyError as missing:
            problems.append(f"{key}: {missing} is not in the table (measure it)")
    shown = dict(texts(root))
    covered: dict[str, list[tuple[int, int]]] = {name: [] for name in shown}
    for key, sentence in rendered.items():
        for place in STATEMENTS[key].places:
            text = shown.get(place) or _flatten((root / place).read_text(encoding="utf-8"))
            if sentence not in text:
                problems.append(f"{place}: does not say {sentence!r}")
        for name, text in shown.items():  # (a source file's sentence shows in --help)
            covered[name] += _spans(text, re.escape(sentence))
    for said in QUALITATIVE:
        for place in said.places:
            spans = _spans(shown[place], said.phrase)
            if not spans:
                problems.append(
                    f"{place}: no longer says {said.phrase!r} (drop it from QUALITATIVE)"
                )
            covered[place] += spans
        try:
            holds = said.holds(table)
        except KeyError as missing:
            problems.append(f"{said.phrase!r}: {missing} is not in the table (measure it)")
            continue
        if not holds:
            problems.append(f"{said.places[0]}: {said.phrase!r} is not true: {said.why}")
    for name, text in shown.items():
        for match in PHRASE.finditer(text):
            if not any(a <= match.start() and match.end() <= b for a, b in covered[name]):
                context = text[max(0, match.start() - 60) : match.end() + 20]
                problems.append(f"{name}: a duration that is not from the table: {context!r}")
    return problems


def _keep_breaks(old: str, new: str) -> str:
    """``new`` with the line breaks (and indentation, a Makefile's ``## ``) of ``old`` where
    they were, when both have as many words (a number changed); else ``new`` as it is."""
    separators = re.findall(r"\s*\n\s*(?:#+ ?)?|\s+", old)
    words = new.split(" ")
    if len(words) != len(separators) + 1:
        return new
    return "".join(w + s for w, s in zip(words, [*separators, ""], strict=True))


def write(root: Path = ROOT) -> None:
    """Replace each statement's earlier wording (found by its shape, across line breaks) by
    the table's; a text where a statement's shape is missing is reported, not guessed."""
    table = load()
    for statement in STATEMENTS.values():
        try:
            wanted = statement.render(table)
        except KeyError:
            continue
        # the shape with every space allowed to be a line break (and a Makefile's "## ")
        shape = statement.shape.replace(" ", r"(?:\s*\n\s*(?:#+ ?)?|\s)")
        for name in statement.places:
            path = root / name
            text = path.read_text(encoding="utf-8")
            new, count = re.subn(shape, lambda m, w=wanted: _keep_breaks(m[0], w), text)
            if count == 0 and wanted not in _flatten(text):
                print(f"{name}: no statement to update; add: {wanted}")
            path.write_text(new, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--measure", nargs="+", metavar="NAME", default=[],
        help="measure these (the names of timing_measurements.py, or all) into the table",
    )  # fmt: skip
    parser.add_argument("--kernels", action="store_true", help="same as --measure kernels")
    parser.add_argument(
        "--root", type=Path, default=ROOT,
        help="the source tree to measure (default: this one; e.g. a `git archive` of a commit "
        "whose .venv links an environment that imports it)",
    )  # fmt: skip
    parser.add_argument("--write", action="store_true", help="update the texts")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from time_figures import write as write_timings
    from timing_measurements import MEASUREMENTS, measure

    names = list(MEASUREMENTS) if args.measure == ["all"] else args.measure
    names += ["kernels"] * args.kernels
    unknown = sorted(set(names) - set(MEASUREMENTS))
    if unknown:
        raise SystemExit(f"error: --measure: unknown {unknown}; one of {', '.join(MEASUREMENTS)}")
    if names:
        for name in names:
            entry = measure(name, args.root.resolve())
            write_timings({f"_{name}": entry})
            print(f"{name}: wall {entry['wall_s']} s, CPU {entry['cpu_s']} s", flush=True)
    if args.write:
        write()
    problems = check()
    print("\n".join(problems) if problems else "every timing statement agrees with the table")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    main()
