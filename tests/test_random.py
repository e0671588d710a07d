"""Randomness is explicit and independent of batching (ARCHITECTURE principle 5)."""

from __future__ import annotations

import numpy as np

from impactbandits.core.random import NOISE_BLOCK, BatchRNG, CommonNoise, generator_for


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
    # random access in a different order, crossing block boundaries
    idx = [0, NOISE_BLOCK + 5, 3, 2 * NOISE_BLOCK, 1]
    for i in idx:
        v_big = big.at(np.array([0, 3, 1]), np.array([i, i, i]))
        v_single = single.at(np.array([1]), np.array([i]))
        assert v_big[2] == v_single[0]
    # rows: all channels at the same index equal the indexed values
    row = big.row(NOISE_BLOCK + 5)
    assert row[2, 3] == big.at(np.array([0, 0, 3]), np.full(3, NOISE_BLOCK + 5))[2]


def test_common_noise_uniform_range_and_distribution():
    noise = CommonNoise(0, (1,), range(50), channels=2)
    values = np.concatenate([noise.at(np.zeros(50, int), np.full(50, i)) for i in range(200)])
    assert values.min() >= 0 and values.max() < 1
    assert abs(values.mean() - 0.5) < 0.01  # sd of mean = 0.29/100 = 0.0029
