"""``impactbandits benchmark``: the cross-setting leaderboard, and entering it with your own
policy (``--policy module:Class``)."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from impactbandits.errors import SpecError, combined, unknown_name

_PARAM = re.compile(r"^([A-Za-z_]\w*)=(.*)$", re.DOTALL)


def _params(pairs: tuple[str, ...]) -> dict[str, Any]:
    """``--param name=value`` pairs; a value is read as JSON when it parses (numbers, lists,
    true/false), else kept as text."""
    out: dict[str, Any] = {}
    for pair in pairs:
        match = _PARAM.match(pair)
        if match is None:
            raise SpecError("--param", f"{pair!r} is not NAME=VALUE (e.g. --param c=2.0)")
        name, text = match.groups()
        try:
            out[name] = json.loads(text)
        except json.JSONDecodeError:
            out[name] = text
    return out


def _checked_params(policy: str, params: dict[str, Any]) -> dict[str, Any]:
    """``--param`` values validated against ``--policy``'s signature before anything runs:
    every problem, one line each naming ``--param NAME`` (an unknown name gets the close
    ones)."""
    from impactbandits.registry import resolve, validate_params

    cls = resolve("policy", policy, "--policy")
    try:
        validate_params(cls, params, "--param")
    except SpecError as exc:
        problems = [
            type(e)(e.field.replace("--param.", "--param ", 1), e.message)
            if type(e) is SpecError
            else e
            for e in exc.errors
        ]
        raise (combined(problems) or exc) from None
    return params


def _number(value: float) -> str:
    return f"{value:.4g}"


def _print_entry(entry: Any) -> None:
    board, comparisons = entry.board, entry.comparisons
    click.echo(f"{entry.label} in the benchmark (ranks by paired comparisons; see entry.md):")
    mine = board[board["policy"] == entry.label]
    for _, row in mine.iterrows():
        part = board[(board["family"] == row.family) & (board["horizon"] == row.horizon)]
        shared = int((part["rank"] == row["rank"]).sum()) - 1
        tie = f", tied with {shared}" if shared else ""
        versus = comparisons[
            (comparisons["family"] == row.family) & (comparisons["horizon"] == row.horizon)
        ]
        counts = versus["verdict"].value_counts()
        click.echo(
            f"  {row.family}, T = {int(row.horizon):,}: per-step regret "
            f"{_number(row.per_step_regret)} [{_number(row.ci_low)}, {_number(row.ci_high)}], "
            f"rank {int(row['rank'])} of {len(part)}{tie}; better than "
            f"{int(counts.get('better', 0))}, worse than {int(counts.get('worse', 0))}, "
            f"not separated from {int(counts.get('not separated', 0))} "
            f"({int(row.seeds)} seeds)"
        )


def _entry_markdown(entry: Any, source: str) -> str:
    from impactbandits.experiments.leaderboard import to_markdown

    lines = [
        to_markdown(
            entry.board,
            title=f"{entry.label} in the impactbandits benchmark",
            against="against each setting's oracle",
        ),
        f"## {entry.label} against each built-in",
        "",
        f"Built-in results: {source} (not recomputed). Difference = {entry.label} − built-in "
        "(negative: lower regret); 95% interval over the paired seeds; p after Holm's "
        "correction.",
        "",
        "| setting | T | built-in | difference | interval | p (Holm) | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for _, r in entry.comparisons.iterrows():
        lines.append(
            f"| {r.family} | {int(r.horizon):,} | {r.policy} | {_number(r.mean_difference)} | "
            f"[{_number(r.ci_low)}, {_number(r.ci_high)}] | {r.p_holm:.3g} | {r.verdict} |"
        )
    return "\n".join(lines) + "\n"


Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def _settings() -> set[str]:
    """The benchmark's settings (what ``--setting`` takes)."""
    from impactbandits.experiments.leaderboard import family_of
    from impactbandits.experiments.papers import benchmark as definition

    return {family_of(e["label"]) for e in definition.environments(1_000)}


def _complete_setting(ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
    from click.shell_completion import CompletionItem

    return [CompletionItem(s) for s in sorted(_settings()) if s.startswith(incomplete)]


def _complete_dir(ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
    from click.shell_completion import CompletionItem

    return [CompletionItem(incomplete, type="dir")]


def register(
    cli: click.Group, run_options: Decorator, guard: Decorator, store_messages: Decorator
) -> None:
    """Add the ``benchmark`` command to ``cli`` (with the run options of ``reproduce``)."""

    @cli.command()
    @click.option("--quick", is_flag=True, help="Reduced grid: T = 300 and 1,000, 3 seeds.")
    @click.option(
        "--setting",
        "settings",
        multiple=True,
        metavar="NAME",
        shell_complete=_complete_setting,
        help="Only these settings (repeat; e.g. --setting rotting). The rested view: "
        "single-peaked, increasing, FICO, recommender, rising, rotting.",
    )
    @click.option(
        "--policy",
        default=None,
        metavar="MODULE:CLASS",
        help="Enter your own policy: it runs on every setting its actions fit and is ranked "
        "against the stored built-in results (not recomputed).",
    )
    @click.option(
        "--param",
        "param",
        multiple=True,
        metavar="NAME=VALUE",
        help="A parameter of --policy (repeat).",
    )
    @click.option("--label", default=None, help="Name of --policy in the tables (default: CLASS).")
    @click.option(
        "--results",
        default=None,
        metavar="DIR",
        shell_complete=_complete_dir,
        help="Built-in results for --policy: a run directory of `impactbandits benchmark` "
        "(default: the results shipped with the package).",
    )
    @run_options
    @guard
    @store_messages
    def benchmark(
        quick: bool,
        settings: tuple[str, ...],
        policy: str | None,
        param: tuple[str, ...],
        label: str | None,
        results: str | None,
        out: str | None,
        backend: str,
        workers: int | None,
        scheduler: str | None,
        seeds: int | None,
        batch_size: int | None,
        progress: bool | None,
    ) -> None:
        """One leaderboard across every setting of the library: every algorithm that applies,
        two horizons, regret against each setting's exact optimum (or certified bound, or the
        paper's benchmark where that is the paper's regret), ranks by paired comparisons.

        Writes leaderboard.csv, pairs.csv, ranks.csv, leaderboard.md and a report into the run
        directory. With --policy, runs only your policy and prints where it ranks."""
        from impactbandits.cli.drive import _execute, _show_report
        from impactbandits.experiments.papers import benchmark as definition

        known = _settings()
        unknown = [
            SpecError("--setting", unknown_name("setting", name, known))
            for name in settings
            if name not in known
        ]
        if unknown:
            raise combined(unknown) or unknown[0]
        bench = definition.spec(quick, settings or None)
        if seeds is not None:
            bench = bench.replace(seeds=seeds)

        def run(spec: Any) -> Path:
            return _execute(spec, out, backend, workers, scheduler, batch_size, progress)

        if policy is None:
            if param or label or results:
                raise SpecError("--param", "--param, --label and --results need --policy")
            run_dir = run(bench)

            def draw(output: Any) -> Path:
                from impactbandits.experiments.report import write_report

                figures = definition.render(run_dir, output=output)
                return write_report(run_dir, extra_figures=figures, output=output)

            flags = " --quick" if quick else ""
            flags += "".join(f" --setting {shlex.quote(s)}" for s in settings)
            redraw = f"impactbandits benchmark{flags} --out {shlex.quote(str(run_dir))}"
            from impactbandits.experiments.figure_output import FigureOutput

            _show_report(run_dir, redraw, draw, FigureOutput())
            return
        _enter(policy, param, label, results, quick, bench, run)


def _enter(
    policy: str,
    param: tuple[str, ...],
    label: str | None,
    results: str | None,
    quick: bool,
    bench: Any,
    run: Any,
) -> None:
    from impactbandits.experiments.entry import enter, packaged_scores, run_scores
    from impactbandits.usercode import IMPORT_PATH

    if not IMPORT_PATH.match(policy):
        raise SpecError(
            "--policy", f"{policy!r} is not MODULE:CLASS (e.g. mypkg.policies:MyPolicy)"
        )
    params = _checked_params(policy, _params(param))
    stored = run_scores(results) if results else packaged_scores(quick)
    name = label or policy.rsplit(":", 1)[1].rsplit(".", 1)[-1]
    entry = enter(policy, params, name, stored, bench, run)
    from impactbandits.experiments.run_files import write_file, write_text

    run_dir = entry.run_dir  # each file replaces a link at its name, never writes through it
    write_file(
        run_dir / "leaderboard.csv", lambda t: entry.board.to_csv(t, index=False), root=run_dir
    )
    write_file(
        run_dir / "entry.csv", lambda t: entry.comparisons.to_csv(t, index=False), root=run_dir
    )
    write_text(run_dir / "entry.md", _entry_markdown(entry, stored.source), root=run_dir)
    _print_entry(entry)
    click.echo(entry.run_dir / "entry.md")
