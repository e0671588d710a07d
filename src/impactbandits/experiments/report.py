"""``report.html``: what was run, how it went, the summary table and the figures of a run
directory.

Sections: the run (spec, seeds, every runner session with backend, start/end, wall and CPU
seconds, library and dependency versions, git commit), the summary at the largest horizon
(:func:`~impactbandits.experiments.summary.summary_table`: the oracle's optimum beside every
policy, readable estimates, pulls as shares), and the figures. A figure with a paper renderer
shows the renderer's panels (titled from the PNG's own title); otherwise one standard figure per
environment, ``RUN_DIR/figures/<stem>.png`` with
:func:`~impactbandits.experiments.filenames.figure_stem` (unique and stable per label): regret
against the round of the longest run and per-step regret against the horizon. Bands are 95%
Student-t intervals of the mean over seeds, clipped at 0 for counts (pulls, switches).

The summary and the figures show statistics over seeds only, so the report never builds the
tidy table: :func:`~impactbandits.experiments.aggregates.read_aggregates` streams the store once
and keeps one cell's values at a time, beyond a budget in a temporary file (stores of 10⁶
results: 0.23 to 0.37 GB peak, where the tidy table took 1.8 GB, measured with the project's
benchmarks); the numbers are those of the tidy table's route
(:func:`~impactbandits.experiments.summary.summary_table`, the ``plot_*`` functions).
"""

from __future__ import annotations

import contextlib
import dataclasses
import html
import json
import multiprocessing
import re
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from impactbandits import settings
from impactbandits.experiments.aggregates import AGGREGATES_MEMO, Aggregates
from impactbandits.experiments.figure_output import FigureOutput, save_figure
from impactbandits.experiments.filenames import figure_stems
from impactbandits.experiments.plots import draw_metric_vs_horizon, draw_metric_vs_time
from impactbandits.experiments.provenance import Session, sessions_from_meta
from impactbandits.experiments.run_files import make_dirs, write_text
from impactbandits.experiments.spec import SpecRecord
from impactbandits.experiments.stats import Stats
from impactbandits.experiments.store import Store
from impactbandits.experiments.summary import TITLES, summary_from_stats, summary_table
from impactbandits.experiments.tidy import (
    SeedCoverage,
    Seeds,
    seed_limit,
    store_coverage,
    warn_coverage,
)

__all__ = [
    "CPU_COUNTS",
    "figure_caption",
    "figure_of",
    "figure_title",
    "longest_cells",
    "maths_html",
    "summary_table",
    "write_report",
]

_STYLE = """
body{font-family:system-ui,sans-serif;max-width:1280px;margin:2em auto;padding:0 1em;
 color:#222;line-height:1.45}
h1{margin-bottom:.2em} h2{margin-top:1.6em;border-bottom:1px solid #ddd}
.lead{color:#555;margin-top:0}
nav a{margin-right:1em}
.wide{overflow-x:auto}
table{border-collapse:collapse;font-size:.9em}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:right;white-space:nowrap}
td:first-child,td:nth-child(2),th{text-align:left}
th{background:#f5f5f5;position:sticky;top:0;vertical-align:bottom}
table.summary th,td.text{white-space:normal} td.text{text-align:left;min-width:7em}
.nb{white-space:nowrap}
tr.first td{border-top:2px solid #999}
td.best{font-weight:600}
dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em} dt{color:#555}
pre{background:#f7f7f7;padding:.8em;overflow-x:auto;font-size:.85em}
figure{margin:1em 0} figure img{max-width:100%;border:1px solid #eee}
figcaption{color:#555;font-size:.9em;max-width:60em}
.banner{background:#fff4d6;border:1px solid #e0b84c;padding:.6em 1em;border-radius:4px}
"""


def longest_cells(store: Store, seeds: int | None) -> set[str]:
    """Per environment and policy, the cells of the longest run with results (seeds below
    ``seeds``): the rows :func:`~impactbandits.experiments.plots.plot_metric_vs_time` draws."""
    stored = store.samples(seeds=seeds)  # per cell, not per result: a few rows, not millions
    cells = [c for c in store.cells() if c["cell"] in stored]
    rounds: dict[tuple[str, str], int] = {}
    for c in cells:
        pair = (c["environment"], c["policy"])
        rounds[pair] = max(rounds.get(pair, 0), c["rounds"])
    return {c["cell"] for c in cells if c["rounds"] == rounds[c["environment"], c["policy"]]}


def _png_text(path: Path) -> dict[str, str]:
    """The text chunks of a PNG (empty if it cannot be read)."""
    try:
        from PIL import Image

        with Image.open(path) as image:
            return {str(k): str(v) for k, v in image.info.items() if isinstance(v, str)}
    except (OSError, ImportError):
        return {}


def figure_title(path: Path) -> str:
    """A figure's human title: the ``Title`` its renderer stored in the PNG (the figure's
    suptitle, :func:`~impactbandits.experiments.figures.save_png`), else its file name without
    the label hash, dashes as spaces."""
    title = _png_text(path).get("Title")
    if title:
        return title
    stem = re.sub(r"--[0-9a-f]{10}$", "", path.stem)
    return stem.replace("-", " ")


def figure_caption(path: Path) -> str | None:
    """What a figure shows, as its renderer stored it in the PNG (``Description``, written by
    :func:`~impactbandits.experiments.figures.save_png` for figures that are not lines with
    bands: a heat map); ``None`` for the others, which get the report's caption of lines."""
    return _png_text(path).get("Description") or None


#: Environments above which the standard figures are drawn by a pool of processes.
PARALLEL_FIGURES = 6
#: Environment variable: processes drawing the standard figures (default 1: in this process).
#: Measured on 40 environments (benchmarks/report_scale.py, 2 cores): 2 processes draw them
#: 1.5x faster but the process tree peaks at 2.7x the memory (each worker loads matplotlib and
#: pandas), so the pool is opt-in.
WORKERS_ENV = settings.REPORT_WORKERS


def _figure_workers() -> int:
    """:data:`WORKERS_ENV` (a positive integer; unset: 1); anything else is a one-line error."""
    return settings.report_workers()


def _draw_environment(
    job: tuple[Stats, Stats, str, str, bool, Path, FigureOutput, str],
) -> Path:
    """One standard figure: ``(statistics by horizon, by round of the longest runs, time
    metric, horizon metric, log x, path, output, title)``; the horizon panel only with several
    horizons (else it would be one point)."""
    rows, trajectory, metric_t, metric_h, wide, path, output, title = job
    single = rows.keys["horizon"].nunique() < 2
    with output.drawing():
        fig = Figure(layout="constrained")
        axes = fig.subplots(1, 1 if single else 2, squeeze=False)[0]
        draw_metric_vs_time(trajectory, axes[0], metric=metric_t)
        axes[0].set_title(f"{metric_t.replace('_', ' ')} against the round (longest run)")
        if not single:
            draw_metric_vs_horizon(rows, axes[1], metric=metric_h, log_x=wide)
            axes[1].set_title(f"{metric_h.replace('_', ' ')} against the horizon")
        fig.suptitle(title)
        save_figure(fig, path, dataclasses.replace(output, on_saved=None))
    return path


def _standard_figures(
    run_dir: Path, aggregates: Aggregates, workers: int, output: FigureOutput
) -> list[tuple[str, Path]]:
    figures_dir = run_dir / "figures"
    make_dirs(run_dir, "figures")  # never a link placed there (a received directory)
    table, trajectories = aggregates.horizons, aggregates.trajectories
    has_regret = bool((table.n["regret"] > 0).any())
    metric_h = "per_step_regret" if has_regret else "reward"
    metric_t = "regret" if has_regret else "reward"
    environments = [str(env) for env in table.keys["environment"].unique()]
    stems = figure_stems(environments)
    horizons = table.keys["horizon"]
    wide = bool(horizons.max() >= 30 * horizons.min())
    plain = dataclasses.replace(output, on_saved=None)
    jobs = [
        (table.where(environment=env).only([metric_h]),
         trajectories.where(environment=env).only([metric_t]), metric_t, metric_h, wide,
         figures_dir / f"{stems[env]}.png", plain, env)
        for env in environments
    ]  # fmt: skip
    with contextlib.ExitStack() as stack:
        drawn: Iterator[Path] = map(_draw_environment, jobs)
        if len(jobs) > PARALLEL_FIGURES and workers > 1:
            # matplotlib draws ~0.3 s per figure
            method = "forkserver" if sys.platform.startswith("linux") else "spawn"
            context = multiprocessing.get_context(method)
            pool = stack.enter_context(ProcessPoolExecutor(workers, mp_context=context))
            drawn = pool.map(_draw_environment, jobs, chunksize=4)
        paths = []
        for path in drawn:  # the progress callback runs here, as each figure is done
            paths.append(path)
            if output.on_saved is not None:
                output.on_saved(path)
    return list(zip(environments, paths, strict=True))


def _seconds(value: float) -> str:
    if value < 120:
        return f"{value:.1f} s"
    minutes, seconds = divmod(round(value), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {seconds:02d} s"


def _run_section(spec: SpecRecord, coverage: SeedCoverage, sessions: list[Session]) -> list[str]:
    esc = html.escape
    horizons = spec.horizons
    grid = f"{horizons[0]:,}" if len(horizons) == 1 else f"{horizons[0]:,} … {horizons[-1]:,}"
    facts = [
        ("experiment", spec.name),
        ("environments", str(len(spec.environments))),
        ("policies", str(len(spec.policies))),
        ("horizons", f"{grid} ({len(horizons)} value{'s' if len(horizons) > 1 else ''})"),
        ("seeds", f"{coverage.describe()}; root seed {spec.seed}"),
        ("intervals", "95% Student-t over seeds; bands clipped at 0 for counts"),
    ]
    if sessions:
        last = sessions[-1]
        total_wall = sum(s.wall_seconds for s in sessions)
        total_cpu = sum(s.cpu_seconds for s in sessions)
        machine = last.machine
        facts += [
            ("library", f"impactbandits {last.versions.get('impactbandits', '?')}"),
            ("git commit", last.commit or "not a git checkout"),
            (
                "dependencies",
                ", ".join(f"{k} {v}" for k, v in last.versions.items() if k != "impactbandits"),
            ),
            (
                "machine",
                f"{machine.get('cpu', '?')}; {machine.get('cores', '?')} cores; "
                f"{machine.get('os', '?')}"
                if machine
                else "not recorded (a store written before machines were recorded)",
            ),
            (
                "time",
                f"{_seconds(total_wall)} wall, {_seconds(total_cpu)} CPU "
                f"in {len(sessions)} session{'s' if len(sessions) > 1 else ''}",
            ),
            ("what the CPU time counts", CPU_COUNTS),
        ]
    out = ["<h2 id='run'>The run</h2>", "<dl>"]
    out += [f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in facts]
    out.append("</dl>")
    if sessions:
        rows = [
            {
                "started (UTC)": s.started.replace("T", " ").removesuffix("+00:00"),
                "finished (UTC)": s.finished.replace("T", " ").removesuffix("+00:00"),
                "outcome": s.outcome,
                "results": s.computed,
                "backend": f"{s.backend} × {s.workers}",
                "wall": _seconds(s.wall_seconds),
                "CPU": _seconds(s.cpu_seconds),
                "host": s.host,
            }
            for s in sessions
        ]
        out += ["<div class='wide'>", pd.DataFrame(rows).to_html(index=False), "</div>"]
    else:
        out.append("<p>No session records (a store written before sessions were recorded).</p>")
    spec_text = json.dumps(spec.to_dict(), indent=2, ensure_ascii=False)
    out.append(f"<details><summary>The spec</summary><pre>{esc(spec_text)}</pre></details>")
    return out


#: What the report's CPU seconds are
#: (:attr:`~impactbandits.experiments.provenance.Session.cpu_seconds`).
CPU_COUNTS = (
    "user + system CPU of the runner's process and of its workers' tasks, from the runner's "
    "start to its end (simulation, oracles, storing); not the interpreter's start-up, the "
    "workers' start-up, nor drawing this report"
)


def figure_of(name: str) -> str | None:
    """The registered figure a run's experiment ``name`` belongs to (``NAME``,
    ``NAME-quick``, ``NAME-VARIANT``, ``NAME-VARIANT-quick``), read from the name alone; else
    ``None``."""
    from impactbandits.experiments.figures import FIGURES

    base = name.removesuffix("-quick")
    for candidate in (base, *(base.removesuffix(f"-{v}") for v in _VARIANT_SUFFIXES)):
        if candidate in FIGURES:
            return candidate
    return None


_VARIANT_SUFFIXES = ("authors-code", "authors-ucb1")


def maths_html(text: str) -> str:
    """``text`` escaped for HTML, with TeX-style braces rendered: ``x^{2/3}`` as a
    superscript, ``s_{a}`` as a subscript (innermost first: ``γ^{s_{a}}``); a bare ``^`` or
    ``_`` (``f_uni``) is left as it is."""
    out = html.escape(text)
    for _ in range(4):  # nesting depth
        rendered = re.sub(r"_\{([^{}]*)\}", r"<sub>\1</sub>", out)
        rendered = re.sub(r"\^\{([^{}]*)\}", r"<sup>\1</sup>", rendered)
        if rendered == out:
            break
        out = rendered
    return out


def _banner(spec: SpecRecord) -> str:
    """A visible warning on runs below the paper's scale (``--quick``)."""
    if not spec.name.endswith("-quick"):
        return ""
    largest = f"{max(spec.horizons):,}" if spec.horizons else "?"
    return (
        "<p class='banner'><strong>Reduced grid (--quick):</strong> horizons up to "
        f"T = {largest} and {spec.seeds} seed{'s' if spec.seeds != 1 else ''}, below the "
        "paper's scale; a check of the implementation, not a reproduction. Run without "
        "<code>--quick</code> for the paper's figures.</p>"
    )


def _links(path: Path, run_dir: Path) -> str:
    """Links to the files written beside a figure's PNG: its data (CSV) and vector copies."""
    esc = html.escape
    parts = []
    for suffix, word in ((".csv", "data (CSV)"), (".pdf", "PDF"), (".svg", "SVG")):
        sibling = path.with_suffix(suffix)
        if sibling.is_file():
            rel = sibling.relative_to(run_dir) if sibling.is_relative_to(run_dir) else sibling
            parts.append(f"<a href='{esc(rel.as_posix())}'>{word}</a>")
    return " · ".join(parts)


def _caption(coverage: SeedCoverage, spec: SpecRecord) -> str:
    return (
        f"Lines: means over seeds ({coverage.describe()}; root seed {spec.seed}). Bands: 95% "
        "Student-t confidence intervals of the mean over seeds (clipped at 0 for counts)."
    )


def _cite_section(spec: SpecRecord) -> list[str]:
    from impactbandits.citations import figure_bibtex, library_bibtex

    figure = figure_of(spec.name)
    papers = figure_bibtex(figure) if figure else []
    text = "\n\n".join([*papers, library_bibtex()])
    lead = (
        f"The paper this run reproduces ({html.escape(figure or '')}) and the library:"
        if papers
        else "The library:"
    )
    return ["<h2 id='cite'>Cite</h2>", f"<p>{lead}</p>", f"<pre>{html.escape(text)}</pre>"]


#: Columns of the summary table that are text, not a number: they may wrap (at a space; a
#: share of the pulls column stays whole), so that the table fits the page whatever the
#: labels (the numbers never wrap).
TEXT_COLUMNS = ("environment", "policy", TITLES["pulls"])


def _summary_html(summary: pd.DataFrame) -> str:
    if summary.empty:
        return "<p>No results yet.</p>"
    esc = html.escape
    head = "".join(f"<th>{esc(str(c))}</th>" for c in summary.columns)
    text_columns = {i for i, c in enumerate(summary.columns) if c in TEXT_COLUMNS}
    pulls = list(summary.columns).index(TITLES["pulls"]) if TITLES["pulls"] in summary else -1
    body = []
    previous = None
    for record in summary.itertuples(index=False):
        env = record[0]
        first = env != previous
        previous = env
        cells = []
        for position, value in enumerate(record):
            text = "" if position == 0 and not first else esc(str(value))
            if position == pulls:  # "#3 47% · #4 11% · 17 others 33%": breaks between shares
                text = " · ".join(f"<span class='nb'>{s}</span>" for s in text.split(" · "))
            kinds = ["best"] if first and position == 1 else []
            kinds += ["text"] if position in text_columns else []
            attribute = f" class='{' '.join(kinds)}'" if kinds else ""
            cells.append(f"<td{attribute}>{text}</td>")
        body.append(f"<tr class='first'>{''.join(cells)}</tr>" if first else
                    f"<tr>{''.join(cells)}</tr>")  # fmt: skip
    return (
        "<div class='wide'><table class='summary'><thead><tr>" + head + "</tr></thead><tbody>"
        + "".join(body) + "</tbody></table></div>"
    )  # fmt: skip


def write_report(
    run_dir: str | Path,
    extra_figures: Sequence[Path] = (),
    seeds: Seeds = None,
    output: FigureOutput | None = None,
) -> Path:
    """Write ``RUN_DIR/report.html`` (and, without ``extra_figures``, the standard
    ``RUN_DIR/figures/*.png`` with their CSV and, as ``output`` asks, vector copies); return
    its path.

    The page: a banner on ``--quick`` runs (below the paper's scale), the summary table, each
    figure with a caption (seeds, what the bands are, links to its CSV and vector files), the
    run (machine, versions, sessions, what the CPU seconds count) and BibTeX of the paper
    reproduced (:func:`figure_of`) and of the library.

    ``extra_figures``: a paper renderer's PNGs, shown instead of the standard figures (they
    show the same runs the paper's way). With more than :data:`PARALLEL_FIGURES` environments
    and ``IMPACTBANDITS_REPORT_WORKERS`` above 1 the standard figures are drawn by a process
    pool. ``seeds`` as in
    :func:`~impactbandits.experiments.tidy.tidy_table` (``"all"``: every stored seed); the page
    states the seeds shown and stored, and the same facts are warned
    (:class:`~impactbandits.experiments.store.StoreWarning`) as by ``tidy_table``."""
    from impactbandits.experiments.arguments import run_dir_argument, seeds_argument

    run_dir = run_dir_argument(run_dir)
    seeds_argument(seeds)
    output = output or FigureOutput()
    workers = _figure_workers()  # a bad value is refused before anything is read or drawn
    with Store.open_existing(run_dir) as store:
        store.check()
        spec = store.spec()
        sessions = sessions_from_meta(store.meta("sessions"))
        coverage = store_coverage(store, spec, seeds)
        warn_coverage(coverage)
        # the statistics shown, not the table: the time panels show the longest run of every
        # policy (none with a renderer's figures), read in the same pass
        longest = set() if extra_figures else longest_cells(store, seed_limit(spec, seeds))
        aggregates = AGGREGATES_MEMO.read(run_dir, store, spec, seeds, longest)
    if extra_figures:
        images = [(figure_title(p), p) for p in extra_figures]
    elif len(aggregates):
        images = _standard_figures(run_dir, aggregates, workers, output)
    else:
        images = []
    summary = pd.DataFrame()
    if len(aggregates):
        has_optimum = bool((aggregates.horizons.n["optimum"] > 0).any())
        summary = summary_from_stats(
            aggregates.horizons, aggregates.columns, spec.metrics, has_optimum
        )
    largest = f"T = {max(spec.horizons):,}" if spec.horizons else "the largest horizon"
    # columns with one value throughout go to the heading: the table stays page-wide
    for column, word in (("T", None), ("seeds", "seeds")):
        if column in summary and summary[column].nunique() == 1:
            if word:
                largest += f", {summary[column].iloc[0]} {word}"
            summary = summary.drop(columns=column)
    esc = html.escape
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{esc(spec.name)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{esc(spec.name)}</h1>",
        _banner(spec),
        f"<p class='lead'>{maths_html(spec.description)}</p>" if spec.description else "",
        "<nav><a href='#summary'>Summary</a><a href='#figures'>Figures</a>"
        "<a href='#run'>The run</a><a href='#cite'>Cite</a></nav>",
        f"<h2 id='summary'>Summary at {esc(largest)}</h2>",
        "<p>Mean ± half-width of the 95% Student-t interval over seeds. <em>optimum</em> is the "
        "exact oracle's value (the benchmark of <em>regret</em>); within each environment the "
        "policy with the lowest mean regret comes first, in bold.</p>",
        _summary_html(summary),
        "<h2 id='figures'>Figures</h2>",
    ]
    lines = _caption(coverage, spec)
    for title, path in images:
        rel = path.relative_to(run_dir) if path.is_relative_to(run_dir) else path
        links = _links(path, run_dir)
        own = figure_caption(path)
        caption = f"{own} Seeds: {coverage.describe()}." if own else lines
        parts.append(
            f"<figure><h3>{esc(title)}</h3><img src='{esc(rel.as_posix())}' "
            f"alt='{esc(title)}' loading='lazy'><figcaption>{esc(caption)}"
            + (f" {links}" if links else "")
            + "</figcaption></figure>"
        )
    if not images:
        parts.append("<p>No figures yet.</p>")
    parts += _run_section(spec, coverage, sessions)
    parts += _cite_section(spec)
    parts.append("</body></html>")
    out = run_dir / "report.html"
    write_text(out, "\n".join(parts), root=run_dir)  # replaces a link there, never follows it
    return out
