"""Randomness is explicit and independent of batching (ARCHITECTURE principle 5)."""

from __future__ import annotations

import numpy as np

from impactbandits.core.random import BatchRNG, CommonNoise, generator_for


def test_batch_rng_values_do_not_depend_on_batch_or_block_size():
    alone = BatchRNG.from_key(7, (1, 2), [4])
    batch = BatchRNG.from_key(7, (1, 2), [0, 4, 9])
    tiny_blocks = BatchRNG([generator_for(7, (1, 2, 4))], block=3)
    a = np.concatenate([alone.random(), alone.random(5)[0], alone.random(2000)[0]])
    b = np.concatenate([batch.random()[[1]], batch.random(5)[1], batch.random(2000)[1]])
    c = np.concatenate(
        [tiny_blocks.random(), tiny_blocks.random(5)[0], tiny_blocks.random(2000)[0]]
    )
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_batch_rng_categorical_matches_inverse_cdf_and_frequencies():
    rng = BatchRNG.from_key(0, (5,), range(20000))
    p = np.tile([0.2, 0.5, 0.3], (20000, 1))
    draws = rng.categorical(p)
    freq = np.bincount(draws, minlength=3) / draws.size
    # binomial standard error ≈ 0.0035: 5 sigma tolerance
    np.testing.assert_allclose(freq, [0.2, 0.5, 0.3], atol=0.018)


def test_common_noise_is_a_function_of_replication_channel_index():
    big = CommonNoise(1, (3,), [0, 1, 2], channels=4, distribution="normal")
    single = CommonNoise(1, (3,), [2], channels=4, distribution="normal")
    many_arms = CommonNoise(1, (3,), [2, 7], channels=1000, distribution="normal")
    far = big.window * 7 + 5
    # random access in a different order, crossing window boundaries
    idx = [0, far, 3, 2 * far, 1, far + 1]
    for i in idx:
        v_big = big.at(np.array([0, 3, 1]), np.array([i, i, i]))
        v_single = single.at(np.array([1]), np.array([i]))
        v_many = many_arms.at(np.array([1, 0]), np.array([i, i]))
        assert v_big[2] == v_single[0] == v_many[0]
    # rows: all channels at the same index equal the indexed values
    row = big.row(far)
    assert row[2, 3] == big.at(np.array([0, 0, 3]), np.full(3, far))[2]


def test_common_noise_is_philox_at_the_documented_counter():
    """Value m of (replication r, channel c) is Philox4x32-10 at counter (m div 2, 0, c, r)
    under the stream key: computed here from the raw words, not through the table."""
    from impactbandits.core.philox import philox4x32, stream_key

    noise = CommonNoise(5, (9, 1), [4, 8], channels=3)
    got = noise.at(np.array([2, 1]), np.array([6, 7]))
    key = stream_key(5, (9, 1))
    for r, c, m, value in [(4, 2, 6, got[0]), (8, 1, 7, got[1])]:
        w = philox4x32((np.array([m // 2]), np.array([0]), np.array([c]), np.array([r])), key)
        lo, hi = (w[0], w[1]) if m % 2 == 0 else (w[2], w[3])
        assert value == ((int(hi[0]) << 32 | int(lo[0])) >> 11) / 2**53


def test_common_noise_sequential_pulls_match_direct_evaluation():
    """The look-ahead windows (refilled in batches) never change a value: a long run of
    sequential pulls of random arms equals the direct, window-free evaluation."""
    reps, arms, rounds = 5, 40, 600
    noise = CommonNoise(2, (1,), range(reps), channels=arms)
    rng = np.random.default_rng(0)
    pulls = np.zeros((reps, arms), dtype=np.int64)
    rows = np.arange(reps)
    for _ in range(rounds):
        a = rng.integers(0, arms // (1 + rng.integers(0, 4)), size=reps)
        got = noise.at(a, pulls[rows, a])
        np.testing.assert_array_equal(got, noise.values(rows, a, pulls[rows, a]))
        pulls[rows, a] += 1


def test_common_noise_memory_is_bounded_whatever_the_number_of_arms():
    """O(R·K) scalars plus at most about 2^20 look-ahead values: the old scheme held 1024
    floats per (replication, arm), 819 MB at R = 100, K = 1000."""
    noise = CommonNoise(0, (1,), range(100), channels=1000)
    noise.at(np.arange(100) % 1000, np.zeros(100, dtype=np.int64))
    assert noise._values is not None
    assert noise._values.nbytes <= 16 * 1024 * 1024
    assert noise.window >= 16


def test_common_noise_uniform_range_and_distribution():
    noise = CommonNoise(0, (1,), range(50), channels=2)
    values = np.concatenate([noise.at(np.zeros(50, int), np.full(50, i)) for i in range(200)])
    assert values.min() >= 0 and values.max() < 1
    assert abs(values.mean() - 0.5) < 0.01  # sd of mean = 0.29/100 = 0.0029
