"""Bit-for-bit equality of arrays: the check behind every "exactly the same" in the engine.

Equal numbers are not always the same release: 0.0 and −0.0 are equal yet written
differently, and two NaNs are never equal. Where the engine keeps or reuses something
only if it is exactly what it replaces (a stored run rebuilt, classes or an encoding
found once and handed on), it compares dtypes, shapes and bytes (:func:`same_bits`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["same_bits"]


def same_bits(u, v) -> bool:
    """True when ``u`` and ``v`` (arrays or numbers, not of objects) have the same dtype,
    shape and bytes: 0.0 and −0.0 apart, NaNs alike when their bits are. Contiguous
    arrays are compared without a copy.

    Examples
    --------
    >>> same_bits(np.array([0.0, 1.0]), np.array([0.0, 1.0])), same_bits(0.0, -0.0)
    (True, False)
    """
    u, v = np.asarray(u), np.asarray(v)
    if u.dtype.hasobject or v.dtype.hasobject:
        raise TypeError("same_bits compares numbers' bytes, not objects.")
    return (u.dtype == v.dtype and u.shape == v.shape
            and np.array_equal(np.ascontiguousarray(u).reshape(-1).view(np.uint8),
                               np.ascontiguousarray(v).reshape(-1).view(np.uint8)))
