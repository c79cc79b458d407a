"""Compiled kernels: numba when it is installed and not switched off, else none.

Kernels are the inner loops numpy cannot express (a spatial index with deletions, a
linear-time ordered partition). Each one has a plain numpy reference beside it that
gives the same result; the tests compare the two on random and tie-heavy data.

``kernel`` compiles a function with ``numba.njit(cache=True, nogil=True)``: the GIL is
released while it runs, so the window stays responsive, and the machine code is cached
on disk so only the first run pays the compilation. A kernel called from another kernel
with a constant argument (``_nearest(q, 1, ...)``) is compiled for the argument's type,
never once more for the constant itself: numba's default would specialise on the value,
and each such copy of a search recompiles everything below it (that doubled the first
run's compilation, from 21 s to 52 s for the sample). The packaged application keeps
that cache in the user's cache folder (its own folder may be read-only); where a
kernel's source file is not on disk, it is compiled without the cache. A kernel must return to Python
every fraction of a second so progress is reported and Cancel is honoured; the callers
loop over bounded steps.

``MICROAGG_NO_COMPILE=1`` in the environment switches the compiled path off (every
method then takes its numpy reference path); ``COMPILED`` says which path is in use.
"""

from __future__ import annotations

import inspect
import os
import sys

__all__ = ["COMPILED", "kernel", "numba_version"]

if getattr(sys, "frozen", False) and "NUMBA_CACHE_DIR" not in os.environ:
    # The packaged application's folder may be read-only: cache in the user's own folder.
    _base = os.environ.get("LOCALAPPDATA") or os.environ.get("XDG_CACHE_HOME") or \
        os.path.join(os.path.expanduser("~"), ".cache")
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(_base, "microagg-desktop", "numba")

try:  # numba is a binary-wheel dependency; a platform without wheels runs the reference.
    import numba as _numba
    from numba.core import types as _types
    from numba.core.registry import CPUDispatcher as _CPUDispatcher
except Exception:  # pragma: no cover - numba missing, or its LLVM library cannot load
    _numba = None
else:
    class _Kernel(_CPUDispatcher):
        """numba's CPU dispatcher, typing calls from other kernels by the arguments'
        types rather than their constant values (``Literal[int](1)`` becomes int64)."""

        def get_call_template(self, args, kws):
            return super().get_call_template(
                tuple(_types.unliteral(a) for a in args),
                {name: _types.unliteral(a) for name, a in kws.items()})

COMPILED = _numba is not None and os.environ.get("MICROAGG_NO_COMPILE", "") in ("", "0")


def kernel(function):
    """``function`` compiled without the GIL and cached, or ``None`` when not compiled."""
    if not COMPILED:
        return None
    compiled = _Kernel(py_func=function, locals={},
                       targetoptions={"nopython": True, "nogil": True, "boundscheck": None})
    if _cacheable(function):
        compiled.enable_caching()
    return compiled


def _cacheable(function) -> bool:
    """numba's on-disk cache is keyed to the source file, which must exist."""
    try:
        return os.path.isfile(inspect.getsourcefile(function) or "")
    except TypeError:
        return False


def numba_version() -> str | None:
    return _numba.__version__ if _numba is not None else None
