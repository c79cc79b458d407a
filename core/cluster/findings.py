"""The release warnings of a blocked run (:func:`blocked_warnings`).

A blocked run's release is verified over the whole table; it gets the same warnings as
a run on this computer (:func:`core.pipeline.warnings.release_warnings`) wherever the
table is held whole:

in memory
    A table given as a DataFrame (the window's Advanced choice, a script): the release
    is read back whole on the client and every check runs, the kept columns' among
    them, on the table and the release as written.
in parts
    A file or a folder of parts, never held whole: the checks the class figures give
    alone run (a dominant group, a high information loss, unique records across
    attribute blocks; :func:`core.pipeline.warnings.class_warnings`, from the global
    verification's counts), and the columns released as they are get a warning of
    their own, ``kept-columns-not-checked``: whether one is a record number, or reveals
    or follows a quasi-identifier, is looked for on a table held whole, and was not, so
    the release board is told to check them before publishing.
"""

from __future__ import annotations

import pandas as pd

from core.cluster.verify import ClassFigures
from core.data.roles import RoleSpec
from core.pipeline.warnings import ReleaseWarning, class_warnings, release_warnings
from core.verify.rows import frame_classes

__all__ = ["blocked_warnings"]


def blocked_warnings(original: pd.DataFrame | None, released, roles: RoleSpec, *,
                     il: float, whole: ClassFigures, record_level: bool, blocks: int,
                     columns, encode=None, state=None) -> tuple[ReleaseWarning, ...]:
    """The warnings on a blocked run's release (module notes).

    ``original`` is the table when it is held in memory (None when it was read in
    parts); ``released`` the release as written (a Dask frame) or, in memory, a
    DataFrame; ``whole`` the global verification's class figures over every
    quasi-identifier (and stratum); ``columns`` the table's columns; ``encode`` makes
    the original's :class:`~core.data.encoding.Encoding` (an ordinal quasi-identifier
    is ranked by its order); ``state`` (a TaskState) is checked between the checks.
    """
    n = whole.rows
    if original is not None:
        table = original.reset_index(drop=True)
        masked = (released if isinstance(released, pd.DataFrame) else
                  released.compute()).reset_index(drop=True)
        keys = [*roles.quasi_identifiers, *roles.strata]
        classes = frame_classes(masked, keys)
        encoding = encode(table) if encode is not None else None
        return release_warnings(
            table, masked, roles, group_sizes=classes.counts, il=il,
            k_prime=len(masked) / max(1, classes.n_classes),
            unique_records=int((classes.counts == 1).sum()), record_level=record_level,
            constant=encoding.constant if encoding is not None else (),
            blocks=blocks, classes=classes.inverse, state=state, encoding=encoding)
    found = class_warnings(n, whole.largest, il=il, k_prime=n / max(1, whole.classes),
                           unique_records=whole.alone, record_level=record_level,
                           blocks=blocks)
    kept = roles.kept(columns)
    if kept:
        named = ", ".join(f"'{c}'" for c in kept[:4]) + (
            f" and {len(kept) - 4:,} more" if len(kept) > 4 else "")
        found.append(ReleaseWarning(
            "kept-columns-not-checked",
            f"The columns released as they are ({named}) were not checked: the table was "
            "read in parts and never held whole. Before publishing, check that none of "
            "them is a record or case number or gives a quasi-identifier away (a coding "
            "of it, a copy with noise, a total of two): run the local engine on a sample "
            "of the records, which checks them, or make them quasi-identifiers too."))
    return tuple(found)
