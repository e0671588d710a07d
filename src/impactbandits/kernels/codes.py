"""Numbers shared by the compiled loops and their Python side: the noise models of the pull
models and what the loops return. Importable without numba."""

# noise models of the environments' pull models (0: none)
NORMAL = 1
BETA = 2
BERNOULLI = 3
BETA_MEAN = 4
BETA_CONCENTRATION = 5


# what the long-running loops return: every round played; stopped early at the request of the
# ``stop`` flag (:mod:`impactbandits.kernels.stop`); or a policy's select returned no arm (the
# generic loop, :mod:`impactbandits.kernels.loop`). The outputs are unfinished but for DONE.
DONE, STOPPED, INVALID = 0, 1, 2
