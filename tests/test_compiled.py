"""core.compiled.kernel: a kernel called from another kernel with constant arguments is
compiled once for the arguments' types, not once per constant (each copy of a search
used to recompile everything below it), and still computes with the values given."""

from __future__ import annotations

import numpy as np
import pytest

from core.compiled import COMPILED, kernel

pytestmark = pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")

# Built from a string: a kernel without a source file is never cached on disk, so every
# test session compiles these afresh and sees the signatures they were compiled for.
_SOURCE = '''
def scale(values, factor, flag):
    return values * factor if flag else values

def callers(values):
    return (scale(values, 1, True), scale(values, 2, True), scale(values, 3, False))
'''


def _kernels():
    namespace: dict = {}
    exec(compile(_SOURCE, "<kernels under test>", "exec"), namespace)
    for name in ("scale", "callers"):
        namespace[name] = kernel(namespace[name])
    return namespace["scale"], namespace["callers"]


def test_constant_arguments_compile_the_callee_once_for_their_types():
    scale, callers = _kernels()
    values = np.array([1.0, 2.0])
    once, twice, kept = callers(values)
    np.testing.assert_array_equal(once, values)
    np.testing.assert_array_equal(twice, 2 * values)
    np.testing.assert_array_equal(kept, values)
    assert [str(a) for a in scale.signatures[0]] == ["array(float64, 1d, C)", "int64", "bool"]
    assert len(scale.signatures) == 1


def test_a_call_from_python_compiles_the_same_signature():
    scale, callers = _kernels()
    values = np.arange(3.0)
    np.testing.assert_array_equal(scale(values, 4, True), 4 * values)
    callers(values)
    assert len(scale.signatures) == 1
