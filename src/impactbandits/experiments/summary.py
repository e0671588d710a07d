"""The report's summary table: one row per environment and policy at the largest horizon, with
readable estimates ("mean ± half-width" to the half-width's second significant digit), the
oracle's optimum beside the policies, and pulls as a compact share per arm (the table stays
page-wide at any number of arms)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from impactbandits.metrics import confidence_halfwidth

__all__ = ["SUMMARY_METRICS", "format_estimate", "pull_shares", "summary_table"]

SUMMARY_METRICS = ("reward", "regret", "per_step_regret", "switches")
#: Arms listed by name in the pulls column; the rest are summed as "others".
LISTED_ARMS = 3
#: Column titles of the summary table.
TITLES = {
    "reward": "reward",
    "optimum": "optimum",
    "regret": "regret",
    "per_step_regret": "regret / T",
    "switches": "switches",
    "pulls": "pulls by arm (share of T)",
}


def format_estimate(mean: float, half: float | None = None) -> str:
    """``mean ± half`` with the half-width to two significant digits and the mean to the same
    decimal place (thousands separated by a thin space); a mean alone (no interval) to four
    significant digits, or as a whole number from 1,000 on. NaN gives ``""``."""
    if mean is None or not math.isfinite(mean):
        return ""
    if half is None or not math.isfinite(half) or half <= 1e-9 * max(1.0, abs(mean)):
        # no interval, or one of rounding noise (e.g. an oracle's value summed in another order)
        return _number(mean, 0) if abs(mean) >= 1000 else f"{mean:.4g}"
    decimals = 1 - math.floor(math.log10(half))  # negative: rounded to tens, hundreds, …
    shown = max(decimals, 0)
    return f"{_number(round(mean, decimals), shown)} ± {_number(round(half, decimals), shown)}"


def _number(value: float, digits: int) -> str:
    return f"{value:,.{digits}f}".replace(",", "\u2009")


def pull_shares(shares: np.ndarray, listed: int = LISTED_ARMS) -> str:
    """``"#12 78% · #0 15% · 13 others 7%"``: the ``listed`` most pulled arms (numbered from
    0) and the rest together, as shares of all pulls; NaN entries (arms the environment does
    not have) are left out."""
    shares = np.asarray(shares, dtype=float)
    present = np.flatnonzero(np.isfinite(shares))  # NaN: arms another environment has
    if not present.size or shares[present].sum() <= 0:
        return ""
    shares = np.where(np.isfinite(shares), shares, 0.0) / shares[present].sum()
    order = present[np.argsort(-shares[present], kind="stable")]
    parts = [f"#{i} {shares[i]:.0%}" for i in order[:listed]]
    rest = order[listed:]
    if rest.size:
        parts.append(f"{rest.size} other{'s' if rest.size > 1 else ''} {shares[rest].sum():.0%}")
    return " · ".join(parts)


def _estimate(values: pd.Series, level: float = 0.95) -> str:
    data = values.dropna().to_numpy(dtype=float)
    if not data.size:
        return ""
    half = confidence_halfwidth(data, level) if data.size > 1 else None
    return format_estimate(float(data.mean()), half)


def summary_table(table: pd.DataFrame, metrics: Sequence[str] = SUMMARY_METRICS) -> pd.DataFrame:
    """Per environment and policy, at the environment's largest horizon: the metrics as
    ``mean ± 95% t half-width`` strings, ``optimum`` (the oracle's value, when there is one)
    after ``reward``, ``pulls`` as :func:`pull_shares` and ``phases`` as one column per phase
    (mean share). Column names are :data:`TITLES`; the policy with the lowest mean regret of
    each environment is listed first."""
    arms = [c for c in table.columns if c.startswith("pulls_")]
    phases = [c for c in table.columns if c.startswith("phase_") and c != "phase_switches"]
    last = table[
        table["horizon"] == table.groupby("environment", observed=True)["horizon"].transform("max")
    ]
    wanted = [m for m in metrics if m in table.columns or m in ("pulls", "phases")]
    if "reward" in wanted and "optimum" in table.columns and table["optimum"].notna().any():
        wanted.insert(wanted.index("reward") + 1, "optimum")
    rows = []
    for (env, policy), group in last.groupby(["environment", "policy"], sort=False, observed=True):
        row: dict[str, object] = {
            "environment": env,
            "policy": policy,
            "T": int(group["horizon"].iloc[0]),
            "seeds": int(group["seed"].nunique()),
        }
        for metric in wanted:
            if metric == "pulls":
                if arms:
                    row[TITLES["pulls"]] = pull_shares(group[arms].mean().to_numpy())
            elif metric == "phases":
                for column in phases:
                    row[column] = _estimate(group[column])
            else:
                row[TITLES.get(metric, metric)] = _estimate(group[metric])
        row["_order"] = float(group["regret"].mean()) if "regret" in group else 0.0
        rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["_env"] = pd.Categorical(
        out["environment"], categories=list(dict.fromkeys(out["environment"]))
    )
    out = out.sort_values(["_env", "_order"], kind="stable", na_position="last")
    return out.drop(columns=["_env", "_order"]).reset_index(drop=True)
