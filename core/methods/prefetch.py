"""A hint to the processor: start reading the memory a kernel is about to read.

A search at a million records waits on memory: a leaf's float32 rows
(:func:`core.methods.spatial_tree.screen_blocks`) are about twenty cache lines away
in main memory, and reading them line after line pays the latency several times. Asking
for every line first lets the reads overlap. Compiled, :func:`prefetch` is LLVM's
``llvm.prefetch`` (a read, kept in every cache level); it changes no value, only when
the memory arrives. It is an intrinsic, so it can only be called from a compiled kernel
(where it costs one instruction); without compiled kernels it does nothing.
"""

from __future__ import annotations

from core.compiled import COMPILED

__all__ = ["prefetch"]

if COMPILED:
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def prefetch(typingctx, array, index):
        """Ask for the cache line of ``array[index]`` (``index`` a tuple, one per axis)."""
        if not isinstance(index, types.BaseTuple) or len(index) != array.ndim:
            return None

        def codegen(context, builder, sig, args):
            data = context.make_array(sig.args[0])(context, builder, args[0])
            indices = cgutils.unpack_tuple(builder, args[1], count=sig.args[0].ndim)
            pointer = cgutils.get_item_pointer(context, builder, sig.args[0], data, indices)
            byte = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            hint = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [byte, i32, i32, i32]),
                "llvm.prefetch.p0i8")
            # read (0), keep in every cache level (3), data cache (1)
            builder.call(hint, [builder.bitcast(pointer, byte), ir.Constant(i32, 0),
                                ir.Constant(i32, 3), ir.Constant(i32, 1)])
            return context.get_dummy_value()
        return types.none(array, index), codegen
else:  # pragma: no cover - no compiled kernels: nothing to hint
    def prefetch(array, index):
        """Start reading ``array[index]``: nothing to do in plain Python."""
        return None
