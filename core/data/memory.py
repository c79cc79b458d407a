"""Whether a run fits in this computer's memory, and how much it will need.

A run holds, beside the table, per-record arrays (labels, classes, the measures'
risks) and the quasi-identifiers' embedding several times over (the method's spatial
index, record linkage's search tree, the released table embedded for the measures). A
nominal attribute of m categories is m columns of the embedding
(:mod:`core.data.encoding`), so a census file with a few nominal attributes of many
categories, or simply tens of millions of records, can need more memory than the
computer has. :func:`run_peak_bytes` is the one model of a run's peak: the method tab
shows it, and the encoding refuses a run above :func:`run_memory_limit` before any
work (:func:`check_run_memory`), with what to do instead.
"""

from __future__ import annotations

import os
import sys

from core.errors import TooLargeForMemory
from core.data.roles import Level

__all__ = ["ASSUMED_MEMORY", "MEASURING", "MEMORY_SHARE", "OTHER_RUN_MEMORY",
           "REFINE_BYTES_PER_RECORD", "RUN_MEMORY", "TREE_AHEAD_BYTES", "VERIFYING",
           "check_run_memory", "physical_memory", "run_memory_limit", "run_peak_bytes",
           "tree_bytes"]

TREE_AHEAD_BYTES = 256 * 2**20
"""The largest search tree made while the method runs
(:class:`core.measures.ahead.MeasuresAhead`). A larger one (wide embeddings: nominal
quasi-identifiers of many categories, at census scale) is made when the measures begin,
once the method has let go of its own structures: held beside them, it set the run's
peak."""


def tree_bytes(rows: int, columns: int) -> int:
    """Memory of record linkage's search tree over ``rows`` × ``columns`` originals
    (:func:`core.measures.linkage.build_tree`): the rows in tree order and a box per
    node, about a node per four rows."""
    return 12 * rows * columns


MEASURING, VERIFYING = "measuring", "verifying"
"""The keys of :data:`RUN_MEMORY` for measuring a release on its own (``microagg
measure``: the measures' arrays, the original and the release embedded, record
linkage's tree built at once, inside its embeddings) and for verifying one
(``microagg verify``: the classes and the embedding). A PCP release measured at
300,000 × 10: 218 MB, verified 121 MB; at 100,000 × 124: 398 and 120 MB."""

RUN_MEMORY: dict[str, tuple[int, float]] = {
    # Peak RSS above the program's own, less the search tree made ahead, split into
    # bytes per record (labels, classes, the measures' per-record arrays) and copies of
    # the embedding (8 bytes per record and column), from runs at 300,000 × 10 numeric
    # and 100,000 × 124 embedded columns (two numeric and five nominal attributes);
    # GSMS, V-MDAV and tc-kfirst at 100,000 × 10 and 50,000 × 124. MDAV: 875 bytes per
    # record at 300,000 × 10, 4,133 at 300,000 × 124 (3.6 embeddings apart), 900 MB at
    # 1,000,000 × 10 with its 120 MB tree. tc-tfirst and tc-bucket keep an index of
    # everyone and one per subset or bucket: 891 and 911 MB at 100,000 × 124 against
    # MDAV's 619 MB; at 50,000 × 124 GSMS, with its neighbour lists, 551 MB, tc-kfirst
    # 426 MB, V-MDAV 287 MB and MDAV 314 MB. The verifier runs beside the measures
    # (core.pipeline.run): PCP, whose own peak is small, then peaked at 291 MiB at
    # 300,000 × 10 (248 MiB with the verifier after the measures), 776 MiB at
    # 1,000,000 × 10; z-scores 246 and 768 MiB, individual ranking 304 MiB, Mic1D-k
    # 297 MiB at 300,000. With IL1 beside the release's classes (core.measures.measure),
    # z-scores peaked at 287-288 MiB at 300,000 and 805 MiB at 1,000,000; PCP 266-288
    # and 866, individual ranking 343, Mic1D-k 337, MDAV 267 (300,000). tc-tfirst with
    # one confidential column at 300,000 × 10 peaked at 380-382 MiB, and at 352-389 MiB
    # with its indexes built side by side (core.methods.tfirst_loop.build_indexes),
    # above the 366 its 600 bytes a record gave: now 700 (395 MiB); tc-bucket 362-363.
    "mdav": (550, 3.8), "cbfs": (550, 3.8), "tfrp": (550, 3.8), "pcp": (600, 3.8),
    "zscores": (600, 3.8), "tc-merge": (550, 3.8), "optimal-univariate": (800, 3.8),
    "individual-ranking": (800, 3.8), "mic1d": (900, 3.8), "tc-tfirst": (700, 7.0),
    "tc-bucket": (600, 7.0), "tc-kfirst": (550, 6.5), "vmdav": (650, 3.8),
    "gsms": (800, 8.5), MEASURING: (450, 3.6), VERIFYING: (350, 1.0),
}
"""A run's peak by method: (bytes per record, embeddings)."""


OTHER_RUN_MEMORY = (1200, 8.5)
"""The peak of a method not measured: the most of those measured."""

REFINE_BYTES_PER_RECORD = {"tfrp2": 200, "igd": 1950}
"""What a refinement adds per record (MDAV + TFRP2 at 300,000: 174; + IGD at 100,000:
381). IGD's candidate lists grow fourfold where they fail, as after PCP or z-scores
(:func:`core.methods.refine_passes._lists_fail`): the refinement's peak after PCP was
1,804 bytes a record at 20,000 and at 100,000 (``tracemalloc``), after MDAV 714 at
20,000. A refinement that answers by sweeps (:mod:`core.methods.refine_way`) keeps no
lists until it goes back to them: after PCP at 20,000 its own peak was 802 bytes a
record for TFRP2 and 954 for IGD, whose lists came back short. IGD's skipped looks
(:mod:`core.methods.refine_track`) keep each record's answers: 80–100 bytes a record
more (IGD's own peak after PCP at 20,000: 1,052 against 955; after MDAV 895 against
816), so the worst case, lists of 64, is about 1,900."""


KEPT_BYTES_PER_RECORD = 40
"""What each column released as it is adds per record: the release warnings' ranks and
codes of it (:mod:`core.pipeline.follows`, :mod:`core.pipeline.relations`), made beside
the method and held to the end, and a confidential column's class EMDs. PCP at 300,000
× 10 peaked at 986, 1,113 and 1,221 bytes a record with 0, 3 and 6 kept columns."""


MEMORY_SHARE = 0.75
"""The share of the computer's memory a run may take at its peak (the rest for the
system, the window and other programs)."""

ASSUMED_MEMORY = 8 * 2**30
"""The memory taken for a computer whose memory cannot be read."""


def run_peak_bytes(n: int, width: int, method: str | None = None,
                   refine: str | None = None, base: str | None = None,
                   kept: int = 0) -> int:
    """A run's peak memory above the program's own: ``n`` records of ``width``
    embedded columns, with ``method`` (its :data:`RUN_MEMORY`, or
    :data:`OTHER_RUN_MEMORY`) and ``refine``, ``kept`` columns released as they are
    (:data:`KEPT_BYTES_PER_RECORD` each), and record linkage's search tree when it is
    made beside the method (:data:`TREE_AHEAD_BYTES`). A method run on another's
    partition (tc-merge's ``base``) needs the larger of the two, term by term.

    Examples
    --------
    >>> round(run_peak_bytes(1_000_000, 124, "mdav") / 2**30, 1)
    4.0
    >>> round(run_peak_bytes(1_000_000, 10, "mdav") / 2**30, 2)
    0.91
    """
    per_record, copies = RUN_MEMORY.get(method, OTHER_RUN_MEMORY)
    if base is not None:
        under = RUN_MEMORY.get(base, OTHER_RUN_MEMORY)
        per_record, copies = max(per_record, under[0]), max(copies, under[1])
    per_record += REFINE_BYTES_PER_RECORD.get(refine, 0)
    tree = tree_bytes(n, width)
    running = method not in (MEASURING, VERIFYING)
    ahead = running and tree <= TREE_AHEAD_BYTES
    if running:
        per_record += KEPT_BYTES_PER_RECORD * kept
    return int(n * (per_record + copies * 8 * width) + (tree if ahead else 0))


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


def run_memory_limit() -> tuple[int, str]:
    """The most a run may need at its peak, in bytes, and what sets it:
    :data:`MEMORY_SHARE` of the computer's memory, or of :data:`ASSUMED_MEMORY` when
    it cannot be read."""
    memory = physical_memory()
    if memory is None:
        return (int(MEMORY_SHARE * ASSUMED_MEMORY),
                f"three quarters of the {ASSUMED_MEMORY / 2**30:.0f} GiB assumed (this "
                "computer's memory could not be read)")
    return (int(MEMORY_SHARE * memory),
            f"three quarters of this computer's {memory / 2**30:.0f} GiB of memory")


def check_run_memory(attributes, n: int, width: int, method: str | None = None,
                     refine: str | None = None, base: str | None = None, *,
                     kept: int = 0) -> None:
    """Refuse a run whose peak (:func:`run_peak_bytes`) is above
    :func:`run_memory_limit`, naming the nominal attributes with the most categories
    when they widen the embedding, and the ways out."""
    need = run_peak_bytes(n, width, method, refine, base, kept)
    limit, what = run_memory_limit()
    if need <= limit:
        return
    nominal = sorted((a for a in attributes if a.level is Level.NOMINAL),
                     key=lambda a: -len(a.categories))
    doing = {None: "Working", MEASURING: "Measuring a release",
             VERIFYING: "Verifying a release"}.get(method, f"A run of {method}")
    text = (f"{doing} on {n:,} records would need about {need / 2**30:.1f} GiB of memory "
            f"at its peak, more than {what}.")
    if method in (MEASURING, VERIFYING):
        text += " Use a computer with more memory."
    elif nominal:
        widest = ", ".join(f"'{a.name}' has {len(a.categories):,} categories"
                           for a in nominal[:3])
        text += (f" The quasi-identifiers make {width:,} columns, one per category of a "
                 f"nominal one ({widest}). Recode the attributes with the most categories "
                 "into fewer (e.g. the first digits of a postal code), declare an "
                 "attribute ordinal if its categories have an order, or run in blocks "
                 "(Method ▸ Advanced, or --engine dask), which hold one block at a time.")
    else:
        text += (" Run in blocks (Method ▸ Advanced, or --engine dask), which hold one "
                 "block at a time, or use a computer with more memory.")
    raise TooLargeForMemory(text)
