"""Redraw the documentation's figure images (``docs/assets/figures/*.png``, shown on the paper
pages and in the gallery) from full-scale runs with the current code, so that they are what a
report draws today.

For every image the paper pages show, :data:`IMAGES` names the registered figure and the PNG of
its renderer (by its title, the figure's suptitle, or its file name: exactly one of them must
contain the text).
Each figure is run at full scale with ``impactbandits reproduce NAME --out RUNS/NAME`` (a
finished store in ``RUNS/NAME`` is reused: only the figures are drawn again), then the PNG is
copied. Full scale takes about 1,000 CPU s for these 23 figures (``docs/fidelity/timings.toml``).

    .venv/bin/python benchmarks/gallery_images.py [--runs DIR] [NAME ...]

``--runs`` defaults to ``runs/full`` (the folder ``make figures`` and ``make ledger`` use);
``NAME``: only these figures.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from impactbandits.experiments.report import figure_title

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
ASSETS = DOCS / "assets" / "figures"
CLI = str(Path(sys.executable).with_name("impactbandits"))

#: docs image → (registered figure, text of the title of the renderer's PNG it shows, or of its
#: file name for a PNG without a title).
IMAGES: dict[str, tuple[str, str]] = {
    "basu-blocking.png": ("basu-blocking", "20 arms, delays U{1..10}"),
    "cella-fig2.png": ("cella-fig2", "7 arms, unit switching cost"),
    "cella-fig3.png": ("cella-fig3", "g(1) = g(2), unit switching cost"),
    "leqi-rebounding.png": ("leqi-rebounding", "satiation noise σ_z = 0.1"),
    "lindner-fico.png": ("lindner-fico", "FICO score change, σ=0.05"),
    "lindner-fig1.png": ("lindner-fig1", "instance 3"),
    "lindner-gaussian.png": ("lindner-gaussian", "10 arms, σ=0.05"),
    "lindner-increasing.png": ("lindner-increasing", "inc_1 α=0.5"),
    "lindner-recommender.png": ("lindner-recommender", "instance A, noise-free"),
    "lindner-single-peaked.png": ("lindner-single-peaked", "instance 2, σ=0.05"),
    "metelli-2-arms.png": ("metelli-synthetic", "2 arms, rested"),
    "metelli-15-arms.png": ("metelli-synthetic", "15 arms, rested"),
    "patil-heidari.png": ("patil-heidari", "inc_1 α=0.1"),
    "patil-lower-bound.png": ("patil-lower-bound", "lower bound"),
    "patil-potential.png": ("patil-potential", "random k=5 seed 0"),
    "patil-random.png": ("patil-random", "late bloomer k=5 seed 0"),
    "piecewise-stationary-1.png": ("piecewise-stationary", "Problem 1"),
    "piecewise-stationary-2.png": ("piecewise-stationary", "Problem 2"),
    "pikeburke-recovering.png": ("pikeburke-recovering", "ℓ = 2"),
    "ron-fig1.png": ("ron-fig1", "ron-fig1"),
    "ron-fig2.png": ("ron-fig2", "ron-fig2"),
    "rotting-abrupt.png": ("rotting-abrupt", "10 arms, abrupt decay"),
    "rotting-smooth.png": ("rotting-smooth", "10 arms, smooth decay"),
    "tang-fig2.png": ("tang-fig2", "tang-fig2"),
    "tang-fig3.png": ("tang-fig3", "tang-fig3"),
}


def shown_images() -> set[str]:
    """The images of ``docs/assets/figures`` that a documentation page shows."""
    found = set()
    for page in DOCS.rglob("*.md"):
        found |= set(re.findall(r"assets/figures/([^)\s]+\.png)", page.read_text("utf-8")))
    return found


def chosen(run_dir: Path, text: str) -> Path:
    """The one PNG of the renderer whose title (or, without one, file name) contains
    ``text``."""
    pngs = sorted((run_dir / "figures" / "paper").glob("*.png"))
    matches = [p for p in pngs if text in figure_title(p).splitlines()[0] or text in p.stem]
    if len(matches) != 1:
        titles = "; ".join(figure_title(p).splitlines()[0] for p in pngs)
        raise SystemExit(f"{run_dir.name}: {len(matches)} PNGs titled with {text!r} ({titles})")
    return matches[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="figures (default: every one with an image)")
    parser.add_argument("--runs", type=Path, default=ROOT / "runs" / "full")
    args = parser.parse_args()
    missing = shown_images() - set(IMAGES)
    if missing:
        raise SystemExit(f"no entry in IMAGES for {', '.join(sorted(missing))}")
    figures = list(dict.fromkeys(name for name, _ in IMAGES.values()))
    unknown = set(args.names) - set(figures)
    if unknown:
        raise SystemExit(f"no image shows {', '.join(sorted(unknown))}")
    for name in args.names or figures:
        run_dir = args.runs / name
        start = time.perf_counter()
        subprocess.run([CLI, "reproduce", name, "--out", str(run_dir), "--no-progress"],
                       check=True, stdout=subprocess.DEVNULL)  # fmt: skip
        for image, (figure, text) in IMAGES.items():
            if figure == name:
                shutil.copyfile(chosen(run_dir, text), ASSETS / image)
                print(f"{image}: {name} ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
