"""UCB1 with many arms inside the compiled loops: a max-heap of per-epoch upper bounds.

The index of every arm only grows between its pulls (through ln t), so a bound computed for
the end of an epoch, with the same monotone float operations, caps the index through the
epoch; a depth-first walk of the heap skips every subtree whose bound is below the best index
found so far and returns exactly the full ``argmax`` (the lowest index among the maxima).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: From this many arms on, UCB1 selects through upper bounds (:func:`_ucb1_pruned`).
UCB1_PRUNE_ARMS = 16


@njit(cache=True, nogil=True)
def ucb1_epoch(
    counts: np.ndarray,
    sums: np.ndarray,
    c: float,
    t: int,
    rounds: int,
    upper: np.ndarray,
    heap: np.ndarray,
    position: np.ndarray,
) -> tuple[int, float]:
    """Start an epoch of UCB1's upper bounds at round ``t``: until round ``end`` every arm's
    index ``sums/counts + sqrt(c ln t' / counts)`` (t' ≤ end) is at most
    ``upper = sums/counts + sqrt(c ln end / counts)``, computed with the same operations (each
    is monotone: ln over integers, ×, /, sqrt and + correctly rounded), so the bound holds for
    the computed values themselves. Arms go into a binary max-heap on the bound. Returns
    ``(end, c ln end)``."""
    end = min(rounds, t + max(1, t // 32))
    b = c * math.log(end)
    k = counts.size
    for i in range(k):
        upper[i] = sums[i] / counts[i] + math.sqrt(b / counts[i])
        heap[i] = i
        position[i] = i
    for j in range(k // 2 - 1, -1, -1):
        sift_down(j, upper, heap, position)
    return end, b


@njit(cache=True, nogil=True)
def sift_down(j: int, upper: np.ndarray, heap: np.ndarray, position: np.ndarray) -> None:
    k = heap.size
    while True:
        child = 2 * j + 1
        if child >= k:
            return
        if child + 1 < k and upper[heap[child + 1]] > upper[heap[child]]:
            child += 1
        if upper[heap[child]] <= upper[heap[j]]:
            return
        heap[j], heap[child] = heap[child], heap[j]
        position[heap[j]] = j
        position[heap[child]] = child
        j = child


@njit(cache=True, nogil=True)
def ucb1_move(arm: int, bound: float, upper: np.ndarray, heap: np.ndarray, position: np.ndarray):
    """Give ``arm`` the new upper bound ``bound`` and restore the heap."""
    upper[arm] = bound
    j = position[arm]
    while j > 0 and upper[heap[(j - 1) // 2]] < bound:
        parent = (j - 1) // 2
        heap[j] = heap[parent]
        position[heap[j]] = j
        j = parent
    heap[j] = arm
    position[arm] = j
    sift_down(j, upper, heap, position)


@njit(cache=True, nogil=True)
def ucb1_pruned(
    counts: np.ndarray,
    sums: np.ndarray,
    bonus: float,
    upper: np.ndarray,
    heap: np.ndarray,
    stack: np.ndarray,
) -> int:
    """``loops._ucb1`` once every arm has been pulled: a depth-first walk of the heap of upper
    bounds that skips every subtree whose bound is below the best index found so far — the
    same arm (the lowest index among the maxima), usually after a handful of arms."""
    best = -1
    best_value = -math.inf
    top = 0
    stack[0] = 0
    while top >= 0:
        j = stack[top]
        top -= 1
        i = heap[j]
        if upper[i] < best_value:
            continue  # nothing below this node can reach the best index
        value = sums[i] / counts[i] + math.sqrt(bonus / counts[i])
        if value > best_value or (value == best_value and i < best):
            best, best_value = i, value
        for child in (2 * j + 1, 2 * j + 2):
            if child < heap.size:
                top += 1
                stack[top] = child
    return best
