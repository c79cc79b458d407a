"""Whether the quasi-identifiers' embedding leaves a run room in this computer's memory.

A nominal attribute of m categories is m columns of the embedding
(:mod:`core.data.encoding`), and a run holds the embedding several times over (the
method's spatial index, record linkage's search tree, the released table embedded for
the measures), so a census file of a million records with a few nominal attributes of
many categories can need more memory than the computer has. The encoding refuses it
before any work, with what to do instead (:func:`check_embedding_size`).
"""

from __future__ import annotations

import os
import sys

from core.errors import MicroaggError
from core.data.roles import Level

__all__ = ["MAX_EMBEDDING_BYTES", "MEMORY_SHARE", "RUN_MEMORY_FACTOR",
           "check_embedding_size", "embedding_limit", "physical_memory"]

MAX_EMBEDDING_BYTES = 1 << 30
"""The largest embedding (8 bytes per record and column) when the computer's memory is
not known (:func:`physical_memory`)."""

RUN_MEMORY_FACTOR = 4.5
"""A run's peak memory in embeddings: MDAV on 1,000,000 records of 124 embedded columns
(0.99 GB) peaked at 4.5 GB of process memory, on 300,000 at 1.57 GB for 0.28 GB."""


def physical_memory() -> int | None:
    """This computer's physical memory in bytes, or None when it cannot be read."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        if pages > 0 and size > 0:
            return int(pages) * int(size)
    except (AttributeError, ValueError, OSError):
        pass
    if sys.platform == "win32":
        try:
            import ctypes

            class _Status(ctypes.Structure):
                _fields_ = [("length", ctypes.c_ulong), ("load", ctypes.c_ulong)] + [
                    (name, ctypes.c_ulonglong) for name in (
                        "total", "available", "page_total", "page_available",
                        "virtual_total", "virtual_available", "extended")]

            status = _Status()
            status.length = ctypes.sizeof(_Status)
            if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
                return int(status.total)
        except (AttributeError, OSError):
            pass
    return None


MEMORY_SHARE = 0.75
"""The share of the computer's memory a run may take at its peak (the rest for the
system, the window and other programs)."""


def embedding_limit() -> tuple[int, str]:
    """The largest embedding a run may need, in bytes, and what sets it:
    :data:`MEMORY_SHARE` of the computer's memory over :data:`RUN_MEMORY_FACTOR`, or
    :data:`MAX_EMBEDDING_BYTES` when the memory cannot be read."""
    memory = physical_memory()
    if memory is None:
        return MAX_EMBEDDING_BYTES, f"the {MAX_EMBEDDING_BYTES / 2**30:g} GiB allowed"
    return (int(MEMORY_SHARE * memory / RUN_MEMORY_FACTOR),
            f"three quarters of this computer's {memory / 2**30:.0f} GiB of memory")


def check_embedding_size(attributes, n: int, width: int) -> None:
    """Refuse quasi-identifiers whose embedding (a column per category of a nominal
    one) would not leave a run room in memory (:func:`embedding_limit`)."""
    need = n * width * 8
    limit, what = embedding_limit()
    if need <= limit:
        return
    nominal = sorted((a for a in attributes if a.level is Level.NOMINAL),
                     key=lambda a: -len(a.categories))
    widest = ", ".join(f"'{a.name}' has {len(a.categories):,} categories"
                       for a in nominal[:3])
    raise MicroaggError(
        f"The quasi-identifiers make {width:,} columns, one per category of a nominal "
        f"one ({widest}): measuring {n:,} records on them needs {need / 2**30:.1f} GiB, "
        f"and a run about {RUN_MEMORY_FACTOR * need / 2**30:.0f} GiB, more than {what}. "
        "Recode the attributes with the most categories into fewer (e.g. the first "
        "digits of a postal code), declare an attribute ordinal if its categories have "
        "an order, or run in blocks (Method ▸ Advanced, or --engine dask).")
