"""Numbers of the compiled policies (:mod:`impactbandits.kernels.loops`), importable without
numba."""

GREEDY = 0
UCB1 = 1
EXP3 = 2
REXP3 = 3
DUCB = 4
SWUCB = 5
LAST_GREEDY = 6
ONE_STEP = 7
SPO = 8
PATIL = 9
HKR = 10

# noise models of the environments' pull models (0: none)
NORMAL = 1
BETA = 2
BERNOULLI = 3
BETA_MEAN = 4
