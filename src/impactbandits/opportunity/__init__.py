"""Reward-opportunity bandits (Ron, Ben-Porat & Shalit 2021): fairness functions, the Lemma-1
optimum and the utility objective."""
