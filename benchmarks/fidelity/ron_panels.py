"""Read the average utilities off Ron et al.'s published Figure 1 panels.

The authors' repository (tomron/CSRviaMAB@cb90260) holds the paper's Figure 1 as three images,
``resources/lam_0.0.jpg``, ``lam_0.4.jpg`` and ``lam_0.8.jpg``, drawn by its
``templates/lam_0.0.tex`` (pgfplots): y from 0.45 to 1 (``ymin``/``ymax``), a log x axis, and
per fairness function one line — blue f_uni (``CartesianEqualPortion1``), green dashed f_lin
(``CartesianMuPortion1``), red dotted f_sft (``Softmax``) — with error bars at
T = 10³, 5·10³, 10⁴, 5·10⁴, 10⁵, 2·10⁵.

This script finds the plot frame (the long dark lines), maps y linearly from the frame's bottom
(0.45) to its top (1), finds the x of 10³, 10⁴ and 10⁵ from the centres of the tick labels
under the frame (least squares on log10 T), and at each T takes the median row of the pixels
of each line's colour within ±4 columns (the error bar is symmetric about the point). One pixel
is 0.55/frame height ≈ 0.0008 of utility; the lines are ~6 pixels thick. A value hidden under
another line is reported as ``nan``.

    .venv/bin/python benchmarks/fidelity/ron_panels.py [--src DIR]

``--src``: a checkout of the authors' repository (default: the one
``benchmarks/fidelity/authors_env.sh ron`` makes). Prints the table that
``impactbandits.experiments.papers.ron_claims.PAPER_PANELS`` holds.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
HORIZONS = (1_000, 5_000, 10_000, 50_000, 100_000, 200_000)
LAMBDAS = ("0.0", "0.4", "0.8")
#: the lines' colours in the pgfplots template: (name, test on an RGB pixel)
COLOURS = {
    "f_uni": lambda r, g, b: (b > 150) & (r < 110) & (g < 110),
    "f_lin": lambda r, g, b: (g > 150) & (r < 130) & (b < 130),
    "f_sft": lambda r, g, b: (r > 150) & (g < 110) & (b < 110),
}
Y_MIN, Y_MAX = 0.45, 1.0


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of each run of True in a 1-d mask."""
    edges = np.flatnonzero(np.diff(np.r_[0, mask.astype(int), 0]))
    return list(zip(edges[::2], edges[1::2] - 1, strict=True))


def read_panel(path: Path) -> dict[str, list[float]]:
    from matplotlib.image import imread

    image = imread(path).astype(float)[:, :, :3]
    r, g, b = image[:, :, 0], image[:, :, 1], image[:, :, 2]
    dark = (r < 80) & (g < 80) & (b < 80)
    rows = np.flatnonzero(dark.mean(axis=1) > 0.6)
    cols = np.flatnonzero(dark.mean(axis=0) > 0.6)
    top, bottom, left, right = rows.min(), rows.max(), cols.min(), cols.max()
    # tick labels 10^3, 10^4, 10^5: the three clusters of dark columns just under the frame
    band = dark[bottom + 5 : bottom + 55, left:right]
    clusters: list[tuple[int, int]] = []
    for a, z in _runs(band.any(axis=0)):  # the glyphs of one label are < 15 columns apart
        if clusters and a - clusters[-1][1] < 15:
            clusters[-1] = (clusters[-1][0], z)
        else:
            clusters.append((a, z))
    if len(clusters) < 3:
        raise SystemExit(f"{path.name}: found {len(clusters)} x tick labels, expected 3")
    centres = np.array([left + (a + z) / 2 for a, z in clusters[:3]])
    slope, intercept = np.polyfit([3.0, 4.0, 5.0], centres, 1)
    values: dict[str, list[float]] = {}
    for name, test in COLOURS.items():
        mask = test(r, g, b)
        out = []
        for t in HORIZONS:
            x = int(np.rint(intercept + slope * math.log10(t)))
            found = np.flatnonzero(mask[top:bottom, x - 4 : x + 5].any(axis=1))
            if found.size == 0:
                out.append(float("nan"))
                continue
            row = top + float(np.median(found))
            out.append(Y_MIN + (Y_MAX - Y_MIN) * (bottom - row) / (bottom - top))
        values[name] = out
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=HERE / ".authors" / "ron" / "src")
    args = parser.parse_args(argv)
    if not (args.src / "resources").is_dir():
        print(
            f"error: --src: no resources/ in {args.src}; run benchmarks/fidelity/authors_env.sh "
            "ron first",
            file=sys.stderr,
        )
        return 2
    print(f"# read off tomron/CSRviaMAB resources/lam_*.jpg; T = {HORIZONS}")
    print("PAPER_PANELS = {")
    for lam in LAMBDAS:
        for name, values in read_panel(args.src / "resources" / f"lam_{lam}.jpg").items():
            text = ", ".join("nan" if math.isnan(v) else f"{v:.3f}" for v in values)
            print(f'    ({float(lam):g}, "{name}"): ({text}),')
    print("}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
