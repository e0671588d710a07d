"""Numbers of the compiled policies, noise models and SRUM's fairness functions and reward models
(:mod:`impactbandits.kernels.loops`, :mod:`impactbandits.kernels.srum`), and what the loops
return; importable without numba."""

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

# SRUM (:mod:`impactbandits.kernels.srum`): fairness functions with a compiled f and range oracle
# (the ``kind`` argument of ``run_srum``) and reward models of the reward-opportunity bandit
CONSTANT, MONOTONE, SOFTMAX = 0, 1, 2
BERNOULLI_REWARDS, BETA_REWARDS = 0, 1

# what the long-running loops return: every round played, or stopped early at the request of the
# ``stop`` flag (:mod:`impactbandits.kernels.stop`; their outputs are then unfinished)
DONE, STOPPED = 0, 1
