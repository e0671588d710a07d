"""BibTeX for the library and for every paper a registered figure reproduces: the report of a
run prints both, so that a figure put into a paper carries its references.

:data:`PAPERS` holds one entry per paper (only what we checked: authors, title, venue, year);
:data:`FIGURE_PAPERS` names the papers of each registered figure (tested to cover every
figure); :func:`library_bibtex` is the entry of ``CITATION.cff`` for the installed version.
"""

from __future__ import annotations

__all__ = ["FIGURE_PAPERS", "PAPERS", "figure_bibtex", "library_bibtex"]

#: BibTeX of the papers reproduced (and of the baselines the demo runs), by key.
PAPERS: dict[str, str] = {
    "lindner2021": """@inproceedings{lindner2021,
  author    = {Lindner, David and Heidari, Hoda and Krause, Andreas},
  title     = {Addressing the Long-term Impact of {ML} Decisions via Policy Regret},
  booktitle = {Proceedings of the Thirtieth International Joint Conference on Artificial
               Intelligence ({IJCAI})},
  year      = {2021},
}""",
    "patil2023": """@inproceedings{patil2023,
  author    = {Patil, Vishakha and Nair, Vineet and Ghalme, Ganesh and Khan, Arindam},
  title     = {Mitigating Disparity while Maximizing Reward: Tight Anytime Guarantee for
               Improving Bandits},
  booktitle = {Proceedings of the Thirty-Second International Joint Conference on Artificial
               Intelligence ({IJCAI})},
  year      = {2023},
}""",
    "tang2021": """@inproceedings{tang2021,
  author    = {Tang, Wei and Ho, Chien-Ju and Liu, Yang},
  title     = {Bandit Learning with Delayed Impact of Actions},
  booktitle = {Advances in Neural Information Processing Systems ({NeurIPS})},
  volume    = {34},
  year      = {2021},
}""",
    "ron2021": """@inproceedings{ron2021,
  author    = {Ron, Tom and Ben-Porat, Omer and Shalit, Uri},
  title     = {Corporate Social Responsibility via Multi-Armed Bandits},
  booktitle = {Proceedings of the 2021 {ACM} Conference on Fairness, Accountability, and
               Transparency ({FAccT})},
  year      = {2021},
}""",
    "cella2020": """@inproceedings{cella2020,
  author    = {Cella, Leonardo and Cesa-Bianchi, Nicol{\\`o}},
  title     = {Stochastic Bandits with Delay-Dependent Payoffs},
  booktitle = {Proceedings of the Twenty Third International Conference on Artificial
               Intelligence and Statistics ({AISTATS})},
  series    = {Proceedings of Machine Learning Research},
  volume    = {108},
  year      = {2020},
}""",
    "metelli2022": """@inproceedings{metelli2022,
  author    = {Metelli, Alberto Maria and Trov{\\`o}, Francesco and Pirola, Matteo and
               Restelli, Marcello},
  title     = {Stochastic Rising Bandits},
  booktitle = {Proceedings of the 39th International Conference on Machine Learning ({ICML})},
  series    = {Proceedings of Machine Learning Research},
  volume    = {162},
  year      = {2022},
}""",
    "seznec2019": """@inproceedings{seznec2019,
  author    = {Seznec, Julien and Locatelli, Andrea and Carpentier, Alexandra and
               Lazaric, Alessandro and Valko, Michal},
  title     = {Rotting Bandits are No Harder than Stochastic Ones},
  booktitle = {Proceedings of the Twenty-Second International Conference on Artificial
               Intelligence and Statistics ({AISTATS})},
  series    = {Proceedings of Machine Learning Research},
  volume    = {89},
  year      = {2019},
}""",
    "besson2022": """@article{besson2022,
  author  = {Besson, Lilian and Kaufmann, Emilie and Maillard, Odalric-Ambrym and
             Seznec, Julien},
  title   = {Efficient Change-Point Detection for Tackling Piecewise-Stationary Bandits},
  journal = {Journal of Machine Learning Research},
  volume  = {23},
  number  = {77},
  year    = {2022},
}""",
    "pikeburke2019": """@inproceedings{pikeburke2019,
  author    = {Pike-Burke, Ciara and Gr{\\"u}new{\\"a}lder, Steffen},
  title     = {Recovering Bandits},
  booktitle = {Advances in Neural Information Processing Systems ({NeurIPS})},
  volume    = {32},
  year      = {2019},
}""",
    "basu2019": """@inproceedings{basu2019,
  author    = {Basu, Soumya and Sen, Rajat and Sanghavi, Sujay and Shakkottai, Sanjay},
  title     = {Blocking Bandits},
  booktitle = {Advances in Neural Information Processing Systems ({NeurIPS})},
  volume    = {32},
  year      = {2019},
}""",
    "leqi2021": """@inproceedings{leqi2021,
  author    = {Leqi, Liu and K{\\i}l{\\i}n{\\c{c}}-Karzan, Fatma and Lipton, Zachary C. and
               Montgomery, Alan L.},
  title     = {Rebounding Bandits for Modeling Satiation Effects},
  booktitle = {Advances in Neural Information Processing Systems ({NeurIPS})},
  volume    = {34},
  year      = {2021},
}""",
    "auer2002": """@article{auer2002,
  author  = {Auer, Peter and Cesa-Bianchi, Nicol{\\`o} and Fischer, Paul},
  title   = {Finite-time Analysis of the Multiarmed Bandit Problem},
  journal = {Machine Learning},
  volume  = {47},
  number  = {2--3},
  pages   = {235--256},
  year    = {2002},
}""",
}

#: The papers of each registered figure (the library's own benchmarks cite none).
FIGURE_PAPERS: dict[str, tuple[str, ...]] = {
    "demo-stationary": ("auer2002",),
    "lindner-fig1": ("lindner2021",),
    "lindner-single-peaked": ("lindner2021",),
    "lindner-increasing": ("lindner2021",),
    "lindner-gaussian": ("lindner2021",),
    "lindner-fico": ("lindner2021",),
    "lindner-recommender": ("lindner2021",),
    "patil-heidari": ("patil2023",),
    "patil-random": ("patil2023",),
    "patil-potential": ("patil2023",),
    "patil-lower-bound": ("patil2023",),
    "ron-fig1": ("ron2021",),
    "ron-fig2": ("ron2021",),
    "cella-fig2": ("cella2020",),
    "cella-fig3": ("cella2020",),
    "tang-fig2": ("tang2021",),
    "tang-fig3": ("tang2021",),
    "metelli-synthetic": ("metelli2022",),
    "rotting-abrupt": ("seznec2019",),
    "rotting-smooth": ("seznec2019",),
    "piecewise-stationary": ("besson2022",),
    "rested-benchmark": (),
    "benchmark": (),
    "pikeburke-recovering": ("pikeburke2019",),
    "basu-blocking": ("basu2019",),
    "leqi-rebounding": ("leqi2021",),
}


def library_bibtex() -> str:
    """The library's BibTeX entry (``CITATION.cff``) with the installed version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("impactbandits")
    except PackageNotFoundError:  # pragma: no cover - a source tree on sys.path, not installed
        installed = "unknown"
    return f"""@misc{{impactbandits,
  author = {{{{The impactbandits developers}}}},
  title  = {{impactbandits: bandits whose own actions change future rewards}},
  year   = {{2026}},
  note   = {{Python library, version {installed}}},
}}"""


def figure_bibtex(name: str) -> list[str]:
    """The BibTeX entries of a registered figure's papers (``[]`` for other names)."""
    return [PAPERS[key] for key in FIGURE_PAPERS.get(name, ())]
