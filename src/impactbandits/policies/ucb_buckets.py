"""UCB1's compiled argmax with many arms: arms grouped by pull count and mean.

UCB1's index ``sums/counts + sqrt(c ln t / counts)`` of an arm depends on its pull count n and
its empirical mean only, and the bonus is the same for every arm pulled n times. So the arms
are kept in *buckets* of equal (n, mean) — equal computed means, so equal computed indices —
and each bucket holds its arms in a min-heap by arm index (a pairing heap: O(1) to join); the
buckets of one count n form a max-heap by mean (a skew heap). A round looks at the top bucket
of each distinct count (a handful: about 8 on average and 17 at most with 1,000 Bernoulli arms
over 10⁴ rounds, where the winning bucket holds about 100 exactly tied arms) instead of every
arm, and a pull moves one arm from one bucket to another in O(log K) amortised.

It returns exactly the full ``argmax`` (the lowest arm index among the maxima,
:func:`full_argmax`): every index is computed with the same operations as there, and the one thing
the buckets cannot see — two means of one count that differ yet give the same rounded index —
is detected (the second bucket of a count ties with the first), and that round falls back to
the full scan, after which the buckets are rebuilt. Both heaps live in preallocated arrays (a
node is an arm or a bucket) and the (n, mean) → bucket map is an open-addressing hash
table, so nothing is allocated per round.

:func:`bucket_state` allocates the structure for one replication and :func:`bucket_select`
is UCB1's ``select`` over it (:class:`~impactbandits.policies.classic.UCB1`'s compiled step);
both are inlined into the compiled loop, so the many state arrays cost no call per round.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impactbandits.core.compiled import kernel

#: From this many arms on, UCB1's compiled step selects through :func:`bucket_select`. Below it the
#: full scan is as fast or faster: fewer arms are pulled more often each, so nearly every arm has a
#: count of its own (measured on Bernoulli arms at T = 10⁴: equal at 50-80 arms, 2x faster at 16, 4x
#: slower at 300, 30x slower at 1,000).
UCB1_GROUP_ARMS = 64

# rows of the integer state: arms' heap links and bucket, buckets' heap links, arm-heap root,
# count, and the stack of free buckets
_ARM_LEFT, _ARM_RIGHT, _ARM_BUCKET, _B_LEFT, _B_RIGHT, _B_ROOT, _B_COUNT, _FREE = range(8)
#: splitmix64's multipliers, for the (count, mean bits) hash (int64 products wrap)
_MIX_A, _MIX_B = -4658895280553007687, -7723592293110705685


@kernel(inline=True)
def _link(a: int, b: int, ints: np.ndarray) -> int:
    """Link two pairing-heap roots (min by arm index): the larger becomes the first child."""
    if b < a:
        a, b = b, a
    ints[_ARM_RIGHT, b] = ints[_ARM_LEFT, a]
    ints[_ARM_LEFT, a] = b
    return a


@kernel(inline=True)
def _pop_min(root: int, ints: np.ndarray) -> int:
    """The pairing heap of ``root`` without its root (two-pass pairing of its children)."""
    pairs = -1
    x = ints[_ARM_LEFT, root]
    while x >= 0:
        y = ints[_ARM_RIGHT, x]
        if y < 0:
            following = -1
            merged = x
        else:
            following = ints[_ARM_RIGHT, y]
            ints[_ARM_RIGHT, y] = -1
            merged = _link(x, y, ints)
        ints[_ARM_RIGHT, merged] = pairs
        pairs = merged
        x = following
    result = -1
    while pairs >= 0:
        following = ints[_ARM_RIGHT, pairs]
        ints[_ARM_RIGHT, pairs] = -1
        result = pairs if result < 0 else _link(result, pairs, ints)
        pairs = following
    return result


@kernel(inline=True)
def _meld_buckets(a: int, b: int, ints: np.ndarray, mean: np.ndarray) -> int:
    """Meld two skew max-heaps of buckets by mean (distinct within a count)."""
    root = -1
    last = -1
    while a >= 0 and b >= 0:
        if mean[b] > mean[a]:
            a, b = b, a
        if last < 0:
            root = a
        else:
            ints[_B_LEFT, last] = a
        following = ints[_B_RIGHT, a]
        ints[_B_RIGHT, a] = ints[_B_LEFT, a]
        last = a
        a = following
    rest = a if a >= 0 else b
    if last < 0:
        return rest
    ints[_B_LEFT, last] = rest
    return root


@kernel(inline=True)
def _slot(n: int, value: float, scratch: np.ndarray, bits: np.ndarray, mask: int) -> int:
    """Home slot of the key (n, value); ``bits`` is an int64 view of the float ``scratch``."""
    scratch[0] = value
    h = bits[0] + n * _MIX_A
    h = (h ^ (h >> 30)) * _MIX_B
    h = (h ^ (h >> 27)) * _MIX_A
    return (h ^ (h >> 31)) & mask


@kernel(inline=True)
def _find(
    n: int,
    value: float,
    keys: np.ndarray,
    key_mean: np.ndarray,
    scratch: np.ndarray,
    bits: np.ndarray,
) -> int:
    """The table slot holding (n, value), or the empty slot where it would go (linear
    probing; ``keys[0]`` the count or −1 when empty, ``keys[1]`` the bucket)."""
    mask = keys.shape[1] - 1
    i = _slot(n, value, scratch, bits, mask)
    while keys[0, i] >= 0 and not (keys[0, i] == n and key_mean[i] == value):
        i = (i + 1) & mask
    return i


@kernel(inline=True)
def _delete(
    i: int, keys: np.ndarray, key_mean: np.ndarray, scratch: np.ndarray, bits: np.ndarray
) -> None:
    """Empty slot ``i``, shifting later entries of its probe run back (no tombstones)."""
    mask = keys.shape[1] - 1
    j = i
    while True:
        j = (j + 1) & mask
        if keys[0, j] < 0:
            break
        home = _slot(keys[0, j], key_mean[j], scratch, bits, mask)
        # j may fill the hole at i unless its home lies cyclically in (i, j]
        if (i <= j and (home <= i or home > j)) or (i > j and home <= i and home > j):
            keys[0, i] = keys[0, j]
            keys[1, i] = keys[1, j]
            key_mean[i] = key_mean[j]
            i = j
    keys[0, i] = -1


@kernel(inline=True)
def full_argmax(counts: np.ndarray, sums: np.ndarray, bonus: float) -> int:
    """:class:`~impactbandits.policies.classic.UCB1` (paper variant): the first unpulled arm,
    else ``argmax sums/counts + sqrt(bonus / counts)`` with ``bonus = c ln t``, ties to the
    lowest index."""
    best = 0
    best_value = -math.inf
    for i in range(counts.size):
        if counts[i] > 0:
            value = sums[i] / counts[i] + math.sqrt(bonus / counts[i])
        else:
            return i
        if value > best_value:
            best, best_value = i, value
    return best


# the scalars of the state (``flags``): whether the buckets hold every arm but the one pulled
# last round, that arm, the first arm maybe never pulled, the counts in use, the free buckets
_BUILT, _PENDING, _UNPULLED, _N_ACTIVE, _N_FREE = range(5)


@kernel(inline=True)
def bucket_state(k: int, rounds: int) -> Any:
    """The buckets of one replication with ``k`` arms (``k = 0``: none, a placeholder)."""
    horizon = rounds if k > 0 else 0
    ints = np.full((8, k), -1, dtype=np.int64)
    mean = np.zeros(k)  # a bucket's mean
    group_root = np.full(horizon + 2, -1, dtype=np.int64)  # top bucket of count n
    active = np.zeros((2, horizon + 2), dtype=np.int64)  # counts in use, position of count n
    scan = np.empty((2, min(k, horizon) + 1))  # index and bonus of each count in use
    size = 1
    while size < 4 * k:
        size *= 2
    keys = np.full((2, size), -1, dtype=np.int64)
    key_mean = np.zeros(size)
    scratch = np.zeros(1)
    bits = scratch.view(np.int64)
    flags = np.zeros(5, dtype=np.int64)
    return ints, mean, group_root, active, scan, keys, key_mean, scratch, bits, flags


@kernel(inline=True)
def bucket_pulled(buckets: Any, arm: int) -> None:
    """Record that ``arm`` was pulled: it joins the bucket of its new (count, mean) at the next
    :func:`bucket_select`."""
    buckets[-1][_PENDING] = arm


@kernel(inline=True)
def bucket_select(buckets: Any, counts: np.ndarray, sums: np.ndarray, c: float, t: int) -> int:
    """UCB1's arm in round ``t`` (exploration constant ``c``) through the buckets: round by
    round the same arm as :func:`full_argmax`. ``counts``/``sums`` include every pull so far;
    the arm pulled last round (``flags[_PENDING]``) joins its new bucket here."""
    ints, mean, group_root, active, scan, keys, key_mean, scratch, bits, flags = buckets
    k = counts.size
    unpulled = flags[_UNPULLED]
    while unpulled < k and counts[unpulled] > 0:
        unpulled += 1
    flags[_UNPULLED] = unpulled
    if unpulled < k:
        return unpulled  # the initial sweep: the first arm never pulled
    n_active = flags[_N_ACTIVE]
    n_free = flags[_N_FREE]
    lo, hi = flags[_PENDING], flags[_PENDING] + 1  # who joins a bucket: the arm pulled last round
    if flags[_BUILT] == 0:  # or every arm, from scratch
        for j in range(n_active):
            group_root[active[0, j]] = -1
        n_active = 0
        keys[0, :] = -1
        ints[:, :] = -1
        for b in range(k):
            ints[_FREE, b] = k - 1 - b
        n_free = k
        lo, hi = 0, k
        flags[_BUILT] = 1
    for i in range(lo, hi):  # the arm joins the bucket of its count and mean
        n = int(counts[i])
        mu = sums[i] / counts[i]
        if mu == 0.0:
            mu = 0.0  # −0.0 and 0.0 give the same index: one key
        slot = _find(n, mu, keys, key_mean, scratch, bits)
        if keys[0, slot] >= 0:
            b = keys[1, slot]
        else:
            n_free -= 1
            b = ints[_FREE, n_free]
            mean[b] = mu
            ints[_B_COUNT, b] = n
            ints[_B_ROOT, b] = -1
            ints[_B_LEFT, b] = -1
            ints[_B_RIGHT, b] = -1
            keys[0, slot] = n
            keys[1, slot] = b
            key_mean[slot] = mu
            if group_root[n] < 0:
                active[0, n_active] = n
                active[1, n] = n_active
                n_active += 1
            group_root[n] = _meld_buckets(group_root[n], b, ints, mean)
        ints[_ARM_LEFT, i] = -1
        ints[_ARM_RIGHT, i] = -1
        ints[_B_ROOT, b] = i if ints[_B_ROOT, b] < 0 else _link(ints[_B_ROOT, b], i, ints)
        ints[_ARM_BUCKET, i] = b
    bonus = c * math.log(t)
    a = -1
    best_value = -math.inf
    for j in range(n_active):
        n = active[0, j]
        b = group_root[n]
        extra = math.sqrt(bonus / float(n))
        index = mean[b] + extra
        scan[0, j] = index
        scan[1, j] = extra
        arm = ints[_B_ROOT, b]
        if index > best_value or (index == best_value and arm < a):
            a, best_value = arm, index
    for j in range(n_active):  # the second bucket of a count reaching the best value
        if scan[0, j] == best_value:
            b = group_root[active[0, j]]
            for child in (ints[_B_LEFT, b], ints[_B_RIGHT, b]):
                if child >= 0 and mean[child] + scan[1, j] == best_value:
                    a = -1  # two means of one count tie after rounding
    if a < 0:
        a = full_argmax(counts, sums, bonus)
        flags[_BUILT] = 0
    else:  # the winner leaves its bucket: the lowest index of the top bucket
        b = ints[_ARM_BUCKET, a]
        ints[_B_ROOT, b] = _pop_min(a, ints)
        if ints[_B_ROOT, b] < 0:  # the bucket empties
            n = ints[_B_COUNT, b]
            group_root[n] = _meld_buckets(ints[_B_LEFT, b], ints[_B_RIGHT, b], ints, mean)
            _delete(_find(n, mean[b], keys, key_mean, scratch, bits), keys, key_mean, scratch, bits)
            ints[_FREE, n_free] = b
            n_free += 1
            if group_root[n] < 0:  # swap-remove n from the counts in use
                n_active -= 1
                where = active[1, n]
                moved = active[0, n_active]
                active[0, where] = moved
                active[1, moved] = where
    flags[_N_ACTIVE] = n_active
    flags[_N_FREE] = n_free
    return a
