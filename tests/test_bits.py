"""Bit-for-bit equality (core.data.bits), the check behind every "exactly the same"."""

from __future__ import annotations

import numpy as np
import pytest

from core.data.bits import same_bits


def test_equal_numbers_with_other_bits_are_not_the_same():
    assert same_bits(np.array([0.0, 1.0]), np.array([0.0, 1.0]))
    assert not same_bits(np.array([0.0, 1.0]), np.array([-0.0, 1.0]))  # equal, not same
    nan = np.array([np.nan])
    assert same_bits(nan, nan.copy())  # never equal, the same bits
    other_nan = nan.view(np.uint64) | np.uint64(1)
    assert not same_bits(nan, other_nan.view(np.float64))


def test_dtype_shape_and_layout():
    assert not same_bits(np.arange(3), np.arange(3.0))  # equal values, other dtype
    assert not same_bits(np.zeros((2, 3)), np.zeros((3, 2)))
    assert same_bits(np.arange(12.0).reshape(3, 4)[:, 1], np.array([1.0, 5.0, 9.0]))
    assert same_bits(1.5, np.float64(1.5)) and not same_bits(np.float32(1.5), 1.5)
    assert same_bits(np.array(["a", "b"]), np.array(["a", "b"]))


def test_objects_are_refused():
    with pytest.raises(TypeError, match="not objects"):
        same_bits(np.array([1, "a"], dtype=object), np.array([1, "a"], dtype=object))
