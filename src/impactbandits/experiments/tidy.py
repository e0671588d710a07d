"""The tidy results table: one row per (cell, seed, horizon), built from the store.

Columns: ``experiment, environment, policy, horizon, time, run_horizon, anytime, seed, reward,
expected_reward, optimum, regret, per_step_regret, switches, pulls_0 … pulls_{n−1}`` and, when a
policy reports phases, ``phase_<name>`` (share of rounds in that phase). ``reward`` is the
cumulative realised reward, ``expected_reward`` the cumulative expected reward of the actions
taken; ``optimum``/``regret`` are empty where the environment has no oracle. Arms are numbered
from 0.

Environments may add columns through ``summary_metrics`` (e.g. Ron et al.'s ``utility``,
``average_utility`` and ``required_<arm>``); where an environment names one of them as its
``regret_on`` target, ``regret`` is measured on it instead of ``expected_reward``.

With ``trajectories=True`` the table also holds the intra-run checkpoints (``time`` <
``horizon`` for horizon-aware runs) used for regret-vs-time plots.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from impactbandits.experiments.store import Store
from impactbandits.metrics import competitive_ratio, per_step, regret

__all__ = ["BASE_COLUMNS", "tidy_table"]

BASE_COLUMNS = (
    "experiment",
    "environment",
    "policy",
    "horizon",
    "time",
    "run_horizon",
    "anytime",
    "seed",
    "reward",
    "expected_reward",
    "optimum",
    "regret",
    "per_step_regret",
    "switches",
)


def tidy_table(run_dir: str | Path, trajectories: bool = False) -> pd.DataFrame:
    """Read ``run_dir``'s store into the tidy table (seeds of the latest run's spec)."""
    with Store.open_existing(run_dir) as store:
        spec = store.spec()
        cells = {c["cell"]: c for c in store.cells()}
        n_max = max((c["n_arms"] for c in cells.values()), default=0)
        parts: dict[str, list[np.ndarray]] = {}
        phase_names: list[str] = []
        extra_names: list[str] = []
        # text columns are stored as categorical codes: one small int per row, not an object
        categories: dict[str, list[str]] = {
            "experiment": [spec.name],
            "environment": [],
            "policy": [],
        }

        def code(column: str, value: str) -> int:
            labels = categories[column]
            if value not in labels:
                labels.append(value)
            return labels.index(value)

        def push(name: str, values: np.ndarray) -> None:
            parts.setdefault(name, []).append(values)

        for key, seed, p in store.results(seeds=spec.seeds):
            cell = cells[key]
            times = np.asarray(p["times"], dtype=np.int64)
            grid = set(json.loads(cell["grid"]))
            keep = np.ones(times.size, bool) if trajectories else np.isin(times, list(grid))
            m = int(keep.sum())
            anytime = cell["horizon"] is None
            horizon = times if anytime else np.full(times.size, cell["horizon"])
            optimum = (
                np.full(times.size, np.nan)
                if p["optimum"] is None
                else np.asarray(p["optimum"], dtype=float)
            )
            push("experiment", np.zeros(m, dtype=np.int32))
            push("environment", np.full(m, code("environment", cell["environment"]), np.int32))
            push("policy", np.full(m, code("policy", cell["policy"]), np.int32))
            push("horizon", horizon[keep])
            push("time", times[keep])
            push("run_horizon", np.full(m, cell["rounds"]))
            push("anytime", np.full(m, anytime))
            push("seed", np.full(m, seed))
            push("reward", np.asarray(p["reward"])[keep])
            push("expected_reward", np.asarray(p["expected"])[keep])
            push("optimum", optimum[keep])
            push("switches", np.asarray(p["switches"])[keep])
            phase_switches = p.get("phase_switches")
            push(
                "phase_switches",
                np.full(m, np.nan)
                if phase_switches is None
                else np.asarray(phase_switches, dtype=float)[keep],
            )
            pulls = np.full((times.size, n_max), np.nan)
            pulls[:, : cell["n_arms"]] = np.asarray(p["pulls"], dtype=float)
            for arm in range(n_max):
                push(f"pulls_{arm}", pulls[keep, arm])
            extras = p.get("extras") or {}
            target = extras.get(p.get("regret_on") or "", None)
            base = p["expected"] if target is None else target
            push("_regret_base", np.asarray(base, dtype=float)[keep])
            realised = extras.get(p.get("realised_on") or "", None)
            base = p["reward"] if realised is None else realised
            push("_realised_base", np.asarray(base, dtype=float)[keep])
            for name in extras:
                if name not in extra_names:
                    extra_names.append(name)
            for name in extra_names:
                values = extras.get(name)
                push(
                    f"extra:{name}",
                    np.full(m, np.nan) if values is None else np.asarray(values, dtype=float)[keep],
                )
            names = p.get("phase_names") or []
            for name in names:
                if name not in phase_names:
                    phase_names.append(name)
            for name in phase_names:
                if name in names and p["phases"] is not None:
                    counts = np.asarray(p["phases"], dtype=float)[:, names.index(name)]
                    push(f"phase_{name}", (counts / times)[keep])
                else:
                    push(f"phase_{name}", np.full(m, np.nan))
    if not parts:
        columns = [*BASE_COLUMNS, *(f"pulls_{a}" for a in range(n_max))]
        return pd.DataFrame(columns=columns)
    # phase columns that appeared late get NaN for the earlier rows
    lengths = sum(len(a) for a in parts["seed"])
    data = {}
    for name, arrays in parts.items():
        column = np.concatenate(arrays)
        if column.size < lengths:
            column = np.concatenate([np.full(lengths - column.size, np.nan), column])
        data[name] = column
    for column, labels in categories.items():
        data[column] = pd.Categorical.from_codes(data[column], categories=labels)
    regret_base = data.pop("_regret_base")
    realised_base = data.pop("_realised_base")
    data = {name.removeprefix("extra:"): values for name, values in data.items()}
    table = pd.DataFrame(data)
    table["regret"] = regret(table["optimum"], regret_base)
    table["realised_regret"] = regret(table["optimum"], realised_base)
    table["per_step_regret"] = per_step(table["regret"], table["time"])
    table["competitive_ratio"] = competitive_ratio(table["optimum"], regret_base)
    ordered = [*BASE_COLUMNS, *(c for c in table.columns if c not in BASE_COLUMNS)]
    return table[ordered]
