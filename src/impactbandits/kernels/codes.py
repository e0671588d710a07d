"""Numbers shared by the compiled loops and their Python side: the noise models of the pull
models and what the loops return. Importable without numba."""

from impactbandits.core.pull_model import (  # noise models of the pull tables (0: none)
    BERNOULLI,
    BETA,
    BETA_CONCENTRATION,
    BETA_MEAN,
    NORMAL,
)

__all__ = ["BERNOULLI", "BETA", "BETA_CONCENTRATION", "BETA_MEAN", "DONE", "INVALID", "NORMAL",
           "STOPPED"]  # fmt: skip


# what the long-running loops return: every round played; stopped early at the request of the
# ``stop`` flag (:mod:`impactbandits.kernels.stop`); or a policy's select returned no arm (the
# generic loop, :mod:`impactbandits.kernels.loop`). The outputs are unfinished but for DONE.
DONE, STOPPED, INVALID = 0, 1, 2
