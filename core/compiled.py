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

Small helpers called in the searches' inner loops (a box's distance, a leaf's screen,
a candidate's place among the best) are compiled with ``refcounts=False``, without
numba's reference counts: numba otherwise adds and takes away a reference to every
array argument on each call, each an atomic operation, and after inlining many remain
in the loops (a fifth of t-closeness-first's time at 100,000 records, a tenth of
MDAV's). Such a helper borrows its arrays from its caller, so it must neither allocate
an array, nor return or keep one; such a kernel refuses to be compiled for arguments
that would make it return an array, and :data:`WITHOUT_REFCOUNTS` lists them.

numba keys a kernel's cache to its own source file alone: a kernel that calls a kernel
of another file keeps the machine code it was compiled with after the other file
changes (the code it called is built in), so a source installation brought up to date
could run stale code, give other answers or crash. The packaged application is safe
(numba stamps every cache entry with the executable there), so from source the cache
goes to a folder named by a digest of every engine file that defines kernels
(``core/__pycache__/numba-<digest>``, or under ``NUMBA_CACHE_DIR`` when that is set):
a change to any of them compiles everything once, and the folders of earlier digests
are removed once nothing has been written to them for a day.

A kernel that fills an array of the records' size takes it as an argument, made by
numpy, rather than allocate it: numpy backs a large array with large memory pages where
the system allows it, numba's allocator does not, and the first write to each small page
is a page fault (80 MB, a 1,000,000 × 10 table: about 20,000 faults, which cost 0.05 to
0.2 s on this machine, against a few dozen).

``MICROAGG_NO_COMPILE=1`` in the environment switches the compiled path off (every
method then takes its numpy reference path); ``COMPILED`` says which path is in use.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import shutil
import sys
import time
from pathlib import Path

__all__ = ["COMPILED", "WITHOUT_REFCOUNTS", "kernel", "kernel_sources_digest", "numba_version"]

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

    class _Borrowing(_Kernel):
        """A kernel without reference counts (module notes): refuses to be compiled, or
        loaded from the cache, for arguments that would make it return an array."""

        def add_overload(self, cres):
            if _holds_arrays(cres.signature.return_type):
                raise TypeError(
                    f"{self.py_func.__name__} is compiled without reference counts, so "
                    f"it must not return an array; it would return "
                    f"{cres.signature.return_type}.")
            super().add_overload(cres)

    def _holds_arrays(numba_type) -> bool:
        if isinstance(numba_type, (_types.Array, _types.ListType, _types.DictType,
                                   _types.List)):
            return True
        if isinstance(numba_type, _types.BaseTuple):
            return any(_holds_arrays(t) for t in numba_type.types)
        return False

COMPILED = _numba is not None and os.environ.get("MICROAGG_NO_COMPILE", "") in ("", "0")

_ENGINE = Path(__file__).resolve().parent
_DIGEST_PREFIX = "numba-"


def kernel_sources_digest(root: Path = _ENGINE) -> str:
    """A digest of the engine's files that define kernels (those importing this module),
    their paths and contents (module notes)."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        text = path.read_bytes()
        if b"core.compiled import" in text or path.name == "compiled.py":
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + text + b"\0")
    return digest.hexdigest()[:16]


def _cache_folder() -> Path:
    """Where a source installation caches its kernels (module notes). The first time a
    digest is seen, the folders of earlier digests in the engine's own ``__pycache__``
    are removed unless written in the last day, and so are the cache files numba keeps
    beside the sources by default."""
    name = _DIGEST_PREFIX + kernel_sources_digest(_ENGINE)
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return Path(given) / name
    folder = _ENGINE / "__pycache__"
    if not (folder / name).is_dir():  # new sources: what earlier ones cached goes
        for old in folder.glob(_DIGEST_PREFIX + "*"):
            if old.name != name and not _written_lately(old):  # a running process's stays
                shutil.rmtree(old, ignore_errors=True)
        for old in (*_ENGINE.rglob("__pycache__/*.nbi"), *_ENGINE.rglob("__pycache__/*.nbc")):
            old.unlink(missing_ok=True)  # numba's own cache beside the sources, from before
    return folder / name


_LATELY = 24 * 3600.0  # seconds


def _written_lately(folder: Path) -> bool:
    """Whether anything in ``folder`` was written in the last day: a process of the
    sources before may still be running and caching there, and numba cannot write to a
    folder taken away under it."""
    since = time.time() - _LATELY
    return any(path.stat().st_mtime > since for path in (folder, *folder.rglob("*")))


if COMPILED and not getattr(sys, "frozen", False):
    _numba.config.CACHE_DIR = str(_cache_folder())


WITHOUT_REFCOUNTS: list = []  # the kernels compiled with refcounts=False


def kernel(function, *, refcounts: bool = True):
    """``function`` compiled without the GIL and cached, or ``None`` when not compiled;
    with ``refcounts=False`` also without reference counts (module notes)."""
    if not COMPILED:
        return None
    options = {"nopython": True, "nogil": True, "boundscheck": None}
    if not refcounts:
        options["_nrt"] = False
    compiled = (_Kernel if refcounts else _Borrowing)(py_func=function, locals={},
                                                      targetoptions=options)
    if not refcounts:
        WITHOUT_REFCOUNTS.append(compiled)
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
