"""Paired comparisons from a finished run: is the reference policy better, beyond seed noise?

All policies of a run share common random numbers (the noise of the m-th pull of arm i in
replication r is the same for every policy), so per-seed differences of regret are paired
observations: their mean and Student-t 95% interval say more than two overlapping bands.

    .venv/bin/python benchmarks/fidelity/paired.py RUN_DIR [--reference SPO]
        [--horizons last|all|T1,T2] [--metric regret]

Prints, per environment and horizon, ``reference − other`` for every other policy: mean,
95% CI, the number of seeds, and a verdict: "better" (CI below 0), "worse" (above 0) or "tie".
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

from impactbandits import tidy_table


def paired_table(
    table, reference: str, metric: str = "regret", horizons: str = "last"
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for env, data in table.groupby("environment", observed=True):
        chosen = sorted(data["horizon"].unique())
        if horizons == "last":
            chosen = chosen[-1:]
        elif horizons != "all":
            wanted = {int(x) for x in horizons.split(",")}
            chosen = [h for h in chosen if h in wanted]
        for horizon in chosen:
            at = data[data["horizon"] == horizon].pivot_table(
                index="seed", columns="policy", values=metric, observed=True
            )
            if reference not in at.columns:
                continue
            for other in at.columns:
                if other == reference:
                    continue
                diff = (at[reference] - at[other]).dropna().to_numpy(float)
                n = diff.size
                if n < 2:
                    continue
                mean = float(diff.mean())
                half = float(stats.t.ppf(0.975, n - 1) * diff.std(ddof=1) / np.sqrt(n))
                verdict = "better" if mean + half < 0 else "worse" if mean - half > 0 else "tie"
                rows.append(
                    {
                        "environment": env,
                        "horizon": int(horizon),
                        "other": other,
                        "diff": mean,
                        "half": half,
                        "n": n,
                        "verdict": verdict,
                    }
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--reference", default="SPO")
    parser.add_argument("--metric", default="regret")
    parser.add_argument("--horizons", default="last")
    args = parser.parse_args()
    rows = paired_table(tidy_table(args.run_dir), args.reference, args.metric, args.horizons)
    print(f"{args.reference} − other, {args.metric}, paired by seed (mean ± 95% CI):")
    for r in rows:
        print(
            f"  {r['environment']!s:<32} T={r['horizon']:<6} vs {r['other']!s:<20} "
            f"{r['diff']:>10.2f} ± {r['half']:<9.2f} n={r['n']:<3} {r['verdict']}"
        )


if __name__ == "__main__":
    main()
