"""Leaderboards across settings: per setting ("family"), mean per-step policy regret at each
horizon with confidence intervals, ranks by paired comparisons, and an overall rank table
(``benchmark``, and its rested view ``rested-benchmark``).

Environment labels carry their family as a prefix, ``"<family> / <name>"``
(:data:`FAMILY_SEPARATOR`). For one family, horizon and policy, a replication's score is its
per-step policy regret averaged over the family's environments (seed ``s`` of every
environment: the environments of a family are weighted equally), and the family's entry is the
mean over replications with a Student-t interval
(:func:`~impactbandits.metrics.confidence_halfwidth`).
Policies are ranked per (family, horizon) by paired comparisons of those per-seed scores
(:mod:`~impactbandits.experiments.paired_ranks`: policies that no significant paired difference
separates share a rank), over the seeds every ranked policy has; ``seeds_needed`` says after
how many seeds the ranking settled. The overall table averages each policy's ranks over the
families, per horizon. A policy that did not run on every environment of a family gets no entry
there (and no rank).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from impactbandits.experiments.figure_output import FigureOutput

__all__ = [
    "ALPHA",
    "FAMILY_SEPARATOR",
    "LEADERBOARD_COLUMNS",
    "PAIR_COLUMNS",
    "RANK_CAPTION",
    "family_of",
    "leaderboard",
    "pairs",
    "plot_ranks",
    "rank_map_size",
    "rank_table",
    "ranked",
    "seed_scores",
    "to_markdown",
    "write_leaderboard",
]

FAMILY_SEPARATOR = " / "
#: Columns of ``leaderboard.csv`` (a public contract: keep them).
LEADERBOARD_COLUMNS = (
    "family",
    "horizon",
    "policy",
    "per_step_regret",
    "ci_low",
    "ci_high",
    "seeds",
    "environments",
    "rank",
    "seeds_needed",
)
#: Columns of ``pairs.csv``: every paired comparison behind the ranks (``a`` minus ``b``).
PAIR_COLUMNS = (
    "family",
    "horizon",
    "policy_a",
    "policy_b",
    "mean_difference",
    "ci_low",
    "ci_high",
    "seeds",
    "p_value",
    "p_holm",
    "significant",
)
#: Family-wise error level of the paired comparisons.
ALPHA = 0.05


def family_of(label: str) -> str:
    """The family of an environment label ``"<family> / <name>"`` (the label itself if it has
    no separator)."""
    return label.split(FAMILY_SEPARATOR, 1)[0]


def seed_scores(table: pd.DataFrame) -> pd.DataFrame:
    """Per (family, horizon, policy, seed), the mean per-step policy regret over the family's
    environments (column ``score``), for the policies that ran on all of them; from the final
    rows (``time == horizon``) of a tidy table."""
    final = table[(table["time"] == table["horizon"]) & table["per_step_regret"].notna()]
    final = final.assign(
        family=final["environment"].astype(str).map(family_of),
        policy=final["policy"].astype(str),
    )
    env_count = final.groupby("family", observed=True)["environment"].nunique()
    per_seed = (
        final.groupby(["family", "horizon", "policy", "seed"], observed=True)
        .agg(score=("per_step_regret", "mean"), environments=("environment", "nunique"))
        .reset_index()
    )
    complete = per_seed["environments"] == per_seed["family"].map(env_count)
    return per_seed[complete].reset_index(drop=True)


def _paired(group: pd.DataFrame) -> tuple[pd.DataFrame, Any]:
    """The policy × seed matrix over the seeds every policy has, and its paired ranking."""
    from impactbandits.experiments.paired_ranks import paired_ranking

    wide = group.pivot_table(index="policy", columns="seed", values="score", observed=True)
    wide = wide.dropna(axis=1).sort_index()
    if wide.shape[1] == 0:  # no seed common to every policy: rank on each one's own mean
        wide = group.groupby("policy")["score"].mean().to_frame()
    return wide, paired_ranking(wide.to_numpy(dtype=float), ALPHA)


def _policy_rows(
    key: tuple[str, int],
    group: pd.DataFrame,
    ranks: dict[str, int],
    needed: int,
    envs: int,
    level: float,
) -> list[dict[str, Any]]:
    """The leaderboard rows of one (family, horizon)."""
    from impactbandits.metrics import confidence_halfwidth

    rows = []
    for policy, own in group.groupby("policy", sort=True):
        values = own["score"].to_numpy(dtype=float)
        half = confidence_halfwidth(values, level) if values.size > 1 else float("nan")
        mean = float(values.mean())
        rows.append(
            {
                "family": key[0],
                "horizon": key[1],
                "policy": str(policy),
                "per_step_regret": mean,
                "ci_low": mean - half,
                "ci_high": mean + half,
                "seeds": int(values.size),
                "environments": envs,
                "rank": int(ranks[str(policy)]),
                "seeds_needed": needed,
            }
        )
    return rows


def _pair_rows(
    key: tuple[str, int], wide: pd.DataFrame, ranking: Any, level: float
) -> list[dict[str, Any]]:
    """The paired comparisons of one (family, horizon), each pair once (``a`` before ``b``)."""
    from impactbandits.metrics import confidence_halfwidth

    values = wide.to_numpy(dtype=float)
    names = [str(name) for name in wide.index]
    rows = []
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            diff = values[a] - values[b]
            half = confidence_halfwidth(diff, level) if diff.size > 1 else float("nan")
            mean = float(ranking.mean_difference[a, b])
            rows.append(
                {
                    "family": key[0],
                    "horizon": key[1],
                    "policy_a": names[a],
                    "policy_b": names[b],
                    "mean_difference": mean,
                    "ci_low": mean - half,
                    "ci_high": mean + half,
                    "seeds": int(diff.size),
                    "p_value": float(ranking.p_value[a, b]),
                    "p_holm": float(ranking.p_holm[a, b]),
                    "significant": bool(ranking.significant[a, b]),
                }
            )
    return rows


def ranked(table: pd.DataFrame, level: float = 0.95) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`leaderboard` and :func:`pairs` of a tidy table, each (family, horizon) ranked
    once."""
    import pandas as pd

    scores = seed_scores(table)
    env_count = scores.groupby("family")["environments"].max()
    board: list[dict[str, Any]] = []
    compared: list[dict[str, Any]] = []
    for (family, horizon), group in scores.groupby(["family", "horizon"], sort=True):
        key = (str(family), int(horizon))  # type: ignore[call-overload]
        wide, ranking = _paired(group)
        ranks = {str(name): int(r) for name, r in zip(wide.index, ranking.ranks, strict=True)}
        envs = int(env_count[family])  # type: ignore[call-overload]
        board += _policy_rows(key, group, ranks, int(ranking.seeds_needed), envs, level)
        compared += _pair_rows(key, wide, ranking, level)
    out = pd.DataFrame(board, columns=list(LEADERBOARD_COLUMNS))
    out = out.sort_values(["family", "horizon", "rank", "policy"], ignore_index=True)
    return out, pd.DataFrame(compared, columns=list(PAIR_COLUMNS))


def leaderboard(table: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """The per-(family, horizon, policy) leaderboard of a tidy table (module docstring)."""
    return ranked(table, level)[0]


def pairs(table: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Every paired comparison behind :func:`leaderboard`'s ranks (:data:`PAIR_COLUMNS`): the
    mean per-seed difference ``a − b`` with its Student-t interval, the paired t-test's p-value,
    Holm's adjusted p-value and whether it is significant at :data:`ALPHA`."""
    return ranked(table, level)[1]


def rank_table(board: pd.DataFrame) -> pd.DataFrame:
    """Policies × (horizon, family) ranks with, per horizon, the number of families the policy
    is ranked in and its mean rank over them. Mean ranks compare only policies ranked in the
    same families, so the rows are ordered by that number (most first), then by the mean rank
    at the longest horizon."""
    wide = board.pivot_table(index="policy", columns=["horizon", "family"], values="rank")
    grouped = board.groupby(["policy", "horizon"])["rank"]
    means, counts = grouped.mean().unstack("horizon"), grouped.count().unstack("horizon")
    for horizon in means.columns:
        wide[(horizon, "families")] = counts[horizon]
        wide[(horizon, "mean rank")] = means[horizon]
    wide = wide.sort_index(axis=1, level=0, sort_remaining=False)
    longest = max(means.columns)
    order = np.lexsort(
        (wide[(longest, "mean rank")].to_numpy(), -wide[(longest, "families")].to_numpy())
    )
    return wide.iloc[order]


#: What the regret of the rested families is measured against.
EXACT_REGRET = "regret against the exact optimal policy"


def to_markdown(
    board: pd.DataFrame, title: str = "Rested-bandit benchmark", against: str = EXACT_REGRET
) -> str:
    """The leaderboard as Markdown: the overall rank table, then one table per family
    (``against``: what the regret is measured against, a phrase for the introduction)."""
    import pandas as pd

    from impactbandits.experiments.paired_ranks import METHOD
    from impactbandits.experiments.summary import format_estimate

    ranks = rank_table(board)
    horizons = sorted(board["horizon"].unique())
    families = sorted(board["family"].unique())
    lines = [f"# {title}", ""]
    lines += [
        f"Mean per-step policy regret ({against}, divided by the horizon T) at each horizon "
        "± the half-width of its 95% confidence interval over replications; ranks per family "
        "and horizon (1 = lowest regret) and their mean over the families where the policy ran "
        "(rows ordered by how many families that is: mean ranks compare like with like). Ranking: "
        + METHOD.format(alpha=ALPHA)
        + ' (every comparison is in pairs.csv). "seeds needed": after how many seeds the '
        "ranking stopped changing.",
        "",
        "## Overall ranks",
        "",
    ]
    for horizon in horizons:
        lines += [f"**T = {horizon:,}**", ""]
        header = ["policy", *families, "families", "mean rank"]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        ranked = ranks[ranks[(horizon, "mean rank")].notna()]
        order = np.lexsort(
            (ranked[(horizon, "mean rank")].to_numpy(), -ranked[(horizon, "families")].to_numpy())
        )
        for policy in ranked.index[order]:
            cells = [ranks.get((horizon, f), pd.Series(dtype=float)).get(policy) for f in families]
            text = ["–" if c is None or pd.isna(c) else f"{c:g}" for c in cells]
            mean = ranks.loc[policy, (horizon, "mean rank")]
            count = int(ranks.loc[policy, (horizon, "families")])
            lines.append(f"| {policy} | " + " | ".join(text) + f" | {count} | {mean:.2f} |")
        lines.append("")
    for family in families:
        part = board[board["family"] == family]
        count = int(part["environments"].iloc[0])
        settled = ", ".join(
            f"{int(g['seeds_needed'].iloc[0])} of {int(g['seeds'].max())} at T = {h:,}"
            for h, g in part.groupby("horizon", sort=True)
        )
        lines += [f"## {family}", "", f"{count} environment(s); seeds needed: {settled}.", ""]
        lines += ["| policy | " + " | ".join(f"T = {h:,}" for h in horizons) + " |"]
        lines.append("|---|" + "---|" * len(horizons))
        for policy in part.sort_values(["horizon", "rank"])["policy"].unique():
            entries: list[str] = []
            for horizon in horizons:
                row = part[(part["policy"] == policy) & (part["horizon"] == horizon)]
                if row.empty:
                    entries.append("–")
                    continue
                r = row.iloc[0]
                half = (r.ci_high - r.ci_low) / 2
                entries.append(f"{format_estimate(r.per_step_regret, half)} (#{r['rank']:g})")
            lines.append(f"| {policy} | " + " | ".join(entries) + " |")
        lines.append("")
    return "\n".join(lines)


def plot_ranks(board: pd.DataFrame, ax: Any, horizon: int) -> Any:
    """Heat map of the ranks at ``horizon``: policies (rows, in :func:`rank_table`'s order) ×
    families, each cell's rank written on it in black or white, whichever contrasts more with
    the cell's colour (:func:`~impactbandits.experiments.plots.text_colour`), "–" where the
    policy has no rank, and a colour bar; the title says what rank 1 is (the horizon is the
    caller's to say, as :func:`write_leaderboard`'s suptitle does)."""
    from matplotlib.colors import Normalize

    from impactbandits.experiments.plots import text_colour

    part = board[board["horizon"] == horizon]
    wide = part.pivot_table(index="policy", columns="family", values="rank")
    # as rank_table orders them: the most families ranked in first (mean ranks compare like
    # with like), then by mean rank
    order = np.lexsort((wide.mean(axis=1).to_numpy(), -wide.notna().sum(axis=1).to_numpy()))
    wide = wide.iloc[order]
    values = wide.to_numpy(dtype=float)
    worst = float(np.nanmax(values)) if np.isfinite(values).any() else 1.0
    norm = Normalize(vmin=1.0, vmax=max(worst, 2.0))
    image = ax.imshow(values, cmap="viridis_r", norm=norm, aspect="auto", interpolation="nearest")
    ax.set_xticks(range(wide.shape[1]), [str(c) for c in wide.columns], rotation=30, ha="right",
                  rotation_mode="anchor")  # fmt: skip
    ax.set_yticks(range(wide.shape[0]), [str(p) for p in wide.index])
    ax.set_xlabel("family")
    ax.set_ylabel("policy")
    for (i, j), value in np.ndenumerate(values):
        if np.isfinite(value):
            colour = text_colour(image.cmap(norm(value)))
            ax.text(j, i, f"{value:g}", ha="center", va="center", color=colour, fontsize="small")
        else:  # on the axes' background
            ax.text(j, i, "–", ha="center", va="center", color="0.3", fontsize="small")
    ax.figure.colorbar(image, ax=ax, label="rank")
    ax.set_title("1 = lowest per-step policy regret; – = not run on every environment")
    return image


def rank_map_size(board: pd.DataFrame) -> tuple[float, float]:
    """Inches of a :func:`plot_ranks` figure: a row per policy and a column per family, with
    room for their names, so that no text leaves the figure."""
    policies = board["policy"].astype(str)
    families = board["family"].astype(str)
    name_width = 0.075 * max((len(p) for p in policies), default=4)  # 8-point names
    label_height = 0.05 * max((len(f) for f in families), default=4)  # at 30°
    width = 1.2 + name_width + 0.55 * families.nunique() + 0.9  # + the colour bar
    height = 1.3 + label_height + 0.24 * policies.nunique()
    return max(width, 6.0), max(height, 3.0)


#: The report's caption of a rank heat map.
RANK_CAPTION = (
    "Colours and numbers: each policy's rank in each family at T = {horizon:,} on the mean "
    "per-step policy regret over the family's environments (1 = lowest; {method}). Rows: the "
    "policies ranked in the most families first, then by mean rank; – where a policy did not "
    "run on every environment of the family. Every comparison behind the ranks is in "
    "pairs.csv."
)


def write_leaderboard(
    table: pd.DataFrame,
    run_dir: str | Path,
    output: FigureOutput | None = None,
    **markdown: str,
) -> list[Path]:
    """``leaderboard.csv``, ``pairs.csv``, ``ranks.csv`` and ``leaderboard.md`` (``markdown``:
    :func:`to_markdown`'s ``title`` and ``against``) in ``run_dir``, and a rank heat map per
    horizon in ``figures/paper/``; returns the PNG paths."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from impactbandits.experiments.figures import save_png
    from impactbandits.experiments.run_files import write_file, write_text

    run_dir = Path(run_dir)
    board, compared = ranked(table)
    # each file replaces a link at its name, never writes through it (a received directory)
    write_file(run_dir / "leaderboard.csv", lambda t: board.to_csv(t, index=False), root=run_dir)
    ranks = rank_table(board)
    # (horizon, name) pairs: rank_table's columns are a MultiIndex, typed by pandas-stubs as str
    ranks.columns = [f"T={h} {name}" for h, name in ranks.columns]  # type: ignore[str-unpack]
    write_file(run_dir / "ranks.csv", lambda t: ranks.to_csv(t), root=run_dir)
    write_file(run_dir / "pairs.csv", lambda t: compared.to_csv(t, index=False), root=run_dir)
    write_text(run_dir / "leaderboard.md", to_markdown(board, **markdown), root=run_dir)
    paths = []
    from impactbandits.experiments.paired_ranks import METHOD

    method = METHOD.format(alpha=ALPHA)
    for horizon in sorted(board["horizon"].unique()):
        T = int(horizon)
        fig, ax = plt.subplots(figsize=rank_map_size(board), layout="constrained")
        plot_ranks(board, ax, T)
        fig.suptitle(f"Ranks per family at T = {T:,}")
        caption = RANK_CAPTION.format(horizon=T, method=method)
        paths.append(save_png(fig, run_dir, f"ranks-T{T}", output, caption=caption))
        plt.close(fig)
    return paths
