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



def _borrowing_kernels(source: str, counted: str, borrowing: str):
    namespace: dict = {"np": np}
    exec(compile(source, "<borrowing kernels>", "exec"), namespace)
    namespace[borrowing] = kernel(namespace[borrowing], refcounts=False)
    namespace[counted] = kernel(namespace[counted])
    return namespace[counted], namespace[borrowing]


def test_a_kernel_without_reference_counts_refuses_to_return_an_array():
    """Its arrays are borrowed: one it returned would reach its caller uncounted and be
    freed too early, so such a signature is refused, called from Python or a kernel."""
    outer, inner = _borrowing_kernels('''
def inner(values):
    return values

def outer(values):
    return inner(values).sum()
''', "outer", "inner")
    with pytest.raises(Exception, match="must not return an array"):
        inner(np.arange(4.0))
    with pytest.raises(Exception, match="must not return an array"):
        outer(np.arange(4.0))


def test_the_searches_helpers_without_reference_counts_return_no_array():
    """The helpers the searches call in their inner loops are compiled without reference
    counts, and every one compiled by an MDAV and a t-closeness-first run returns
    scalars or nothing (else it would have been refused)."""
    from core.compiled import WITHOUT_REFCOUNTS
    from core.methods.mdav import mdav
    from core.methods.tfirst import tc_tfirst
    from core.privacy.attributes import tclose_attributes

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    mdav(X, k=3)
    tc_tfirst(X, tclose_attributes(X[:, 0] + rng.normal(size=3000)), k=3, t=0.2)
    names = {k.py_func.__name__ for k in WITHOUT_REFCOUNTS}
    assert {"_min_box2", "_insert", "_screen_leaf", "_push_cells", "_refresh_node"} <= names
    for helper in WITHOUT_REFCOUNTS:
        for signature in helper.nopython_signatures:
            assert "array" not in str(signature.return_type).lower()


def test_a_kernel_without_reference_counts_leaves_its_arrays_counted_as_before():
    """Called from a counting kernel many times, a helper without reference counts
    neither frees the caller's array nor keeps it alive: the array is intact afterwards
    and numba's allocations are all freed again."""
    from numba.core.runtime import _nrt_python as nrt
    from numba.core.runtime import rtsys

    total, _ = _borrowing_kernels('''
def norm2(values, i):
    return values[i] * values[i]

def total(n):
    values = np.arange(float(n))
    acc = 0.0
    for _ in range(50):
        for i in range(n):
            acc += norm2(values, i)
    return acc, values
''', "total", "norm2")
    total(3)
    counting = nrt.memsys_stats_enabled()
    nrt.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        acc, values = total(1000)
        assert acc == 50 * float(np.sum(np.arange(1000.0) ** 2))
        np.testing.assert_array_equal(values, np.arange(1000.0))
        del values
        after = rtsys.get_allocation_stats()
    finally:
        if not counting:
            nrt.memsys_disable_stats()
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free == 1


def test_runs_on_the_helpers_without_reference_counts_free_every_array():
    """An MDAV and a t-closeness-first run, whose searches call the helpers compiled
    without reference counts, free every array numba made for them: nothing is kept
    alive by a reference the helpers took, nor freed twice."""
    from numba.core.runtime import _nrt_python as nrt
    from numba.core.runtime import rtsys

    from core.methods.mdav import mdav
    from core.methods.tfirst import tc_tfirst
    from core.privacy.attributes import tclose_attributes

    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 4))
    attributes = tclose_attributes(X[:, 0] + rng.normal(size=3000))
    mdav(X, k=3), tc_tfirst(X, attributes, k=3, t=0.2)  # compiled or loaded first
    counting = nrt.memsys_stats_enabled()
    nrt.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        for _ in range(2):
            mdav(X, k=3)
            tc_tfirst(X, attributes, k=3, t=0.2)
        after = rtsys.get_allocation_stats()
    finally:
        if not counting:
            nrt.memsys_disable_stats()
    assert after.mi_alloc - before.mi_alloc > 0
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free
