"""The report's summary table: one row per environment and policy at the largest horizon, with
readable estimates ("mean ± half-width" to the half-width's second significant digit), the
oracle's optimum beside the policies, and pulls as a compact share per arm (the table stays
page-wide at any number of arms)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from impactbandits.experiments.stats import Stats, table_stats

__all__ = [
    "MEAN_DIGITS",
    "SUMMARY_METRICS",
    "format_estimate",
    "pull_shares",
    "summary_from_stats",
    "summary_table",
]

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


#: Significant digits of a mean at most: an interval narrower than the mean's last digit at
#: that precision (rounding noise, a near-deterministic quantity) is shown as "< one unit" of it.
MEAN_DIGITS = 6


def format_estimate(mean: float, half: float | None = None) -> str:
    """``mean ± half``, one rule for every table of the library: the half-width to two
    significant digits and the mean to the same decimal place (thousands separated by a thin
    space), at most :data:`MEAN_DIGITS` significant digits of the mean — a half-width below
    that is written ``< 0.00001`` (ron-fig1's 2.1000000028 ± 0.0000000097 is
    ``2.10000 ± < 0.00001``). A mean alone (no interval, or one of floating-point rounding:
    at most 10⁻⁹ of the mean, or of 10⁻⁶ near 0) has four significant digits, or is a whole
    number from 1,000 on. NaN gives ``""``."""
    if mean is None or not math.isfinite(mean):
        return ""
    if half is None or not math.isfinite(half) or half <= 1e-9 * max(abs(mean), 1e-6):
        # no interval, or one of floating-point rounding (an oracle's value summed in another
        # order): the value alone
        if abs(mean) >= 1000:
            return _number(mean, 0)
        text = f"{mean:.4g}"
        if "e" in text:  # below 10⁻⁴: four significant digits without an exponent
            decimals = 3 - math.floor(math.log10(abs(mean)))
            text = _number(round(mean, decimals), decimals)
        return text
    decimals = 1 - math.floor(math.log10(half))  # negative: rounded to tens, hundreds, …
    if mean != 0:
        decimals = min(decimals, MEAN_DIGITS - 1 - math.floor(math.log10(abs(mean))))
    shown = max(decimals, 0)
    rounded = round(half, decimals)
    if rounded == 0:
        return f"{_number(round(mean, decimals), shown)} ± < {_number(10.0**-decimals, shown)}"
    return f"{_number(round(mean, decimals), shown)} ± {_number(rounded, shown)}"


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


def _needed(columns: Sequence[str], metrics: Sequence[str]) -> list[str]:
    """The columns whose statistics :func:`summary_from_stats` reads."""
    wanted = {*metrics, "optimum", "regret"}
    prefixes = tuple(p for m, p in (("pulls", "pulls_"), ("phases", "phase_")) if m in metrics)
    return [c for c in columns if c in wanted or c.startswith(prefixes)]


def summary_table(table: pd.DataFrame, metrics: Sequence[str] = SUMMARY_METRICS) -> pd.DataFrame:
    """Per environment and policy, at the environment's largest horizon: the metrics as
    ``mean ± 95% t half-width`` strings, ``optimum`` (the oracle's value, when there is one)
    after ``reward``, ``pulls`` as :func:`pull_shares` and ``phases`` as one column per phase
    (mean share). Column names are :data:`TITLES`; the policy with the lowest mean regret of
    each environment is listed first.

    The statistics of the tidy table's rows
    (:func:`~impactbandits.experiments.stats.table_stats`) made into text by
    :func:`summary_from_stats`, as the report does with those it reads from the store."""
    columns = [str(c) for c in table.columns]
    last = table[
        table["horizon"] == table.groupby("environment", observed=True)["horizon"].transform("max")
    ]
    stats = table_stats(last, ("environment", "policy", "horizon"), _needed(columns, metrics))
    has_optimum = "optimum" in table.columns and bool(table["optimum"].notna().any())
    return summary_from_stats(stats, columns, metrics, has_optimum)


def summary_from_stats(
    stats: Stats, columns: Sequence[str], metrics: Sequence[str], has_optimum: bool
) -> pd.DataFrame:
    """:func:`summary_table` from the statistics of its groups: ``stats`` by ``environment,
    policy, horizon`` (any horizons: the largest of each environment is shown), ``columns``
    those of the tidy table, ``has_optimum``: whether any of its rows has an optimum."""
    arms = [c for c in columns if c.startswith("pulls_")]
    phases = [c for c in columns if c.startswith("phase_") and c != "phase_switches"]
    wanted = [m for m in metrics if m in columns or m in ("pulls", "phases")]
    if "reward" in wanted and "optimum" in columns and has_optimum:
        wanted.insert(wanted.index("reward") + 1, "optimum")
    keys = stats.keys
    largest = keys.groupby("environment", observed=True)["horizon"].transform("max")
    last = stats.take((keys["horizon"] == largest).to_numpy())
    estimated = [c for c in (*wanted, *phases) if c in last.mean]
    # Python floats, read once: round() of a NumPy float rounds differently (scaled)
    means = {c: last.mean[c].to_numpy(dtype=float).tolist() for c in estimated}
    halves = {c: last.ci[c].to_numpy(dtype=float).tolist() for c in estimated}
    shares = last.mean[arms].to_numpy(dtype=float)
    orders = last.mean["regret"].tolist() if "regret" in columns else [0.0] * len(last)
    rows = []
    for i, key in enumerate(last.keys.itertuples(index=False)):
        row: dict[str, object] = {  # (pandas-stubs type a row's fields as any scalar)
            "environment": key.environment,
            "policy": key.policy,
            "T": int(key.horizon),  # type: ignore[arg-type]
            "seeds": int(key.seeds),  # type: ignore[arg-type]
        }
        for metric in wanted:
            if metric == "pulls":
                if arms:
                    row[TITLES["pulls"]] = pull_shares(shares[i])
            elif metric == "phases":
                for column in phases:
                    row[column] = format_estimate(means[column][i], halves[column][i])
            else:
                row[TITLES.get(metric, metric)] = format_estimate(
                    means[metric][i], halves[metric][i]
                )
        row["_order"] = float(orders[i])
        rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["_env"] = pd.Categorical(
        out["environment"], categories=list(dict.fromkeys(out["environment"]))
    )
    out = out.sort_values(["_env", "_order"], kind="stable", na_position="last")
    return out.drop(columns=["_env", "_order"]).reset_index(drop=True)
