"""Atomic loads, stores and compare-and-swap on 8-byte array elements, for compiled
kernels that share arrays between threads (:mod:`core.methods.spatial_parallel`).

Compiled, they are LLVM's atomic instructions with acquire (loads), release (stores)
and acquire-release (compare-and-swap) order, so what a thread wrote before a release
store is seen by a thread whose acquire load reads that store, on every processor
numba supports. Without compiled kernels they are the plain operations (one thread).
"""

from __future__ import annotations

from core.compiled import COMPILED

__all__ = ["load", "store", "swap"]

if COMPILED:
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    def _pointer(context, builder, sig, args):
        array = context.make_array(sig.args[0])(context, builder, args[0])
        return cgutils.get_item_pointer(context, builder, sig.args[0], array, [args[1]])

    @intrinsic
    def _load(typingctx, array, index):
        """``array[index]`` read with acquire order (an 8-byte element)."""
        def codegen(context, builder, sig, args):
            return builder.load_atomic(_pointer(context, builder, sig, args), "acquire", 8)
        return array.dtype(array, index), codegen

    @intrinsic
    def _store(typingctx, array, index, value):
        """``array[index] = value`` written with release order (an 8-byte element)."""
        def codegen(context, builder, sig, args):
            value = context.cast(builder, args[2], sig.args[2], sig.args[0].dtype)
            builder.store_atomic(value, _pointer(context, builder, sig, args), "release", 8)
            return context.get_dummy_value()
        return types.none(array, index, value), codegen

    @intrinsic
    def _swap(typingctx, array, index, expected, new):
        """Compare-and-swap of ``array[index]`` from ``expected`` to ``new``; True if done."""
        def codegen(context, builder, sig, args):
            dtype = sig.args[0].dtype
            old = context.cast(builder, args[2], sig.args[2], dtype)
            value = context.cast(builder, args[3], sig.args[3], dtype)
            pair = builder.cmpxchg(_pointer(context, builder, sig, args), old, value,
                                   "acq_rel", "acquire")
            return builder.extract_value(pair, 1)
        return types.boolean(array, index, expected, new), codegen
else:  # pragma: no cover - one thread: the plain operations
    def _load(array, index):
        return array[index]

    def _store(array, index, value):
        array[index] = value

    def _swap(array, index, expected, new):
        if array[index] != expected:
            return False
        array[index] = new
        return True



load, store, swap = _load, _store, _swap
