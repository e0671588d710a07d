"""Leaderboards across environment families: per family, mean per-step policy regret at each
horizon with confidence intervals, ranks, and an overall rank table (``rested-benchmark``).

Environment labels carry their family as a prefix, ``"<family> / <name>"``
(:data:`FAMILY_SEPARATOR`). For one family, horizon and policy, a replication's score is its
per-step policy regret averaged over the family's environments (seed ``s`` of every
environment: the environments of a family are weighted equally), and the family's entry is the
mean over replications with a Student-t interval
(:func:`~impactbandits.metrics.confidence_halfwidth`).
Policies are ranked per (family, horizon) by that mean (1 = lowest regret; ties share the
average rank); the overall table averages each policy's ranks over the families, per horizon.
A policy that did not run on every environment of a family gets no entry there (and no rank).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FAMILY_SEPARATOR",
    "LEADERBOARD_COLUMNS",
    "family_of",
    "leaderboard",
    "plot_ranks",
    "rank_table",
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
)


def family_of(label: str) -> str:
    """The family of an environment label ``"<family> / <name>"`` (the label itself if it has
    no separator)."""
    return label.split(FAMILY_SEPARATOR, 1)[0]


def leaderboard(table: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """The per-(family, horizon, policy) leaderboard of a tidy table (module docstring)."""
    import pandas as pd

    from impactbandits.metrics import confidence_halfwidth

    final = table[(table["time"] == table["horizon"]) & table["per_step_regret"].notna()]
    final = final.assign(family=final["environment"].astype(str).map(family_of))
    env_count = final.groupby("family", observed=True)["environment"].nunique()
    per_seed = (
        final.groupby(["family", "horizon", "policy", "seed"], observed=True)
        .agg(score=("per_step_regret", "mean"), environments=("environment", "nunique"))
        .reset_index()
    )
    rows: list[dict[str, Any]] = []
    # (pandas-stubs type the group keys as Hashable: family is a str, horizon an integer)
    for (family, horizon, policy), group in per_seed.groupby(
        ["family", "horizon", "policy"], observed=True, sort=True
    ):
        complete = group[group["environments"] == env_count[family]]  # type: ignore[call-overload]
        if complete.empty:
            continue
        scores = complete["score"].to_numpy(dtype=float)
        half = confidence_halfwidth(scores, level) if scores.size > 1 else float("nan")
        mean = float(scores.mean())
        rows.append(
            {
                "family": family,
                "horizon": int(horizon),  # type: ignore[call-overload]
                "policy": str(policy),
                "per_step_regret": mean,
                "ci_low": mean - half,
                "ci_high": mean + half,
                "seeds": int(scores.size),
                "environments": int(env_count[family]),  # type: ignore[call-overload]
            }
        )
    out = pd.DataFrame(rows, columns=[c for c in LEADERBOARD_COLUMNS if c != "rank"])
    out["rank"] = out.groupby(["family", "horizon"])["per_step_regret"].rank(method="average")
    return out.sort_values(["family", "horizon", "rank", "policy"], ignore_index=True)


def rank_table(board: pd.DataFrame) -> pd.DataFrame:
    """Policies × (horizon, family) ranks with the mean rank per horizon, best first (by the
    mean rank at the longest horizon)."""
    wide = board.pivot_table(index="policy", columns=["horizon", "family"], values="rank")
    means = board.groupby(["policy", "horizon"])["rank"].mean().unstack("horizon")
    for horizon in means.columns:
        wide[(horizon, "mean rank")] = means[horizon]
    wide = wide.sort_index(axis=1, level=0, sort_remaining=False)
    longest = max(means.columns)
    return wide.sort_values((longest, "mean rank"))


def _number(value: float) -> str:
    return "–" if not np.isfinite(value) else f"{value:.4f}"


def to_markdown(board: pd.DataFrame, title: str = "Rested-bandit benchmark") -> str:
    """The leaderboard as Markdown: the overall rank table, then one table per family."""
    import pandas as pd

    ranks = rank_table(board)
    horizons = sorted(board["horizon"].unique())
    families = sorted(board["family"].unique())
    lines = [f"# {title}", ""]
    lines += [
        "Mean per-step policy regret (regret against the exact optimal policy, divided by the "
        "horizon T) at each horizon, with 95% confidence intervals over replications; ranks "
        "per family and horizon (1 = lowest regret) and their mean over families.",
        "",
        "## Overall ranks",
        "",
    ]
    for horizon in horizons:
        lines += [f"**T = {horizon:,}**", ""]
        header = ["policy", *families, "mean rank"]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        order = ranks[(horizon, "mean rank")].sort_values().index
        for policy in order:
            cells = [ranks.get((horizon, f), pd.Series(dtype=float)).get(policy) for f in families]
            text = ["–" if c is None or pd.isna(c) else f"{c:g}" for c in cells]
            mean = ranks.loc[policy, (horizon, "mean rank")]
            lines.append(f"| {policy} | " + " | ".join(text) + f" | {mean:.2f} |")
        lines.append("")
    for family in families:
        part = board[board["family"] == family]
        count = int(part["environments"].iloc[0])
        lines += [f"## {family}", "", f"{count} environment(s).", ""]
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
                entries.append(
                    f"{_number(r.per_step_regret)} [{_number(r.ci_low)}, {_number(r.ci_high)}]"
                    f" (#{r['rank']:g})"
                )
            lines.append(f"| {policy} | " + " | ".join(entries) + " |")
        lines.append("")
    return "\n".join(lines)


def plot_ranks(board: pd.DataFrame, ax: Any, horizon: int) -> Any:
    """Heat map of the ranks at ``horizon``: policies (rows, best mean rank first) × families."""
    part = board[board["horizon"] == horizon]
    wide = part.pivot_table(index="policy", columns="family", values="rank")
    wide = wide.loc[wide.mean(axis=1).sort_values().index]
    image = ax.imshow(wide.to_numpy(dtype=float), cmap="viridis_r", aspect="auto")
    ax.set_xticks(range(wide.shape[1]), wide.columns, rotation=30, ha="right")
    ax.set_yticks(range(wide.shape[0]), wide.index)
    for (i, j), value in np.ndenumerate(wide.to_numpy(dtype=float)):
        if np.isfinite(value):
            ax.text(j, i, f"{value:g}", ha="center", va="center", color="white", fontsize=8)
    ax.set_title(f"rank per family at T = {horizon:,} (1 = lowest per-step policy regret)")
    return image


def write_leaderboard(table: pd.DataFrame, run_dir: str | Path) -> list[Path]:
    """``leaderboard.csv``, ``ranks.csv`` and ``leaderboard.md`` in ``run_dir``, and a rank
    heat map per horizon in ``figures/paper/``; returns the PNG paths."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from impactbandits.experiments.figures import save_png

    run_dir = Path(run_dir)
    board = leaderboard(table)
    board.to_csv(run_dir / "leaderboard.csv", index=False)
    ranks = rank_table(board)
    # (horizon, name) pairs: rank_table's columns are a MultiIndex, typed by pandas-stubs as str
    ranks.columns = [f"T={h} {name}" for h, name in ranks.columns]  # type: ignore[str-unpack]
    ranks.to_csv(run_dir / "ranks.csv")
    (run_dir / "leaderboard.md").write_text(to_markdown(board), encoding="utf-8")
    paths = []
    for horizon in sorted(board["horizon"].unique()):
        fig, ax = plt.subplots(figsize=(8, 5), layout="constrained")
        plot_ranks(board, ax, int(horizon))
        paths.append(save_png(fig, run_dir, f"ranks-T{int(horizon)}"))
        plt.close(fig)
    return paths
