"""Blocked microaggregation on Dask, for files beyond one machine.

A layer between ``report`` and ``pipeline``: it runs the registered methods through the
pipeline's own steps, one spatial block at a time, on a Dask cluster (a local one by
default). Dask is an optional extra (``pip install 'microagg-desktop[cluster]'``); this
package imports it only when a blocked run starts.

Modules: :mod:`.engine` (:func:`anonymize_blocked`, the stages), :mod:`.session` (the
cluster, progress and cancellation), :mod:`.partitioned` (folders of CSV or Parquet
parts in and out), :mod:`.standardize` (the whole table's measurement),
:mod:`.blocking` (the 2^d-tree), :mod:`.blockrun` (what a worker does),
:mod:`.verify` (global verification) and :mod:`.result` (:class:`BlockedResult`).

Example::

    from core import RoleSpec
    from core.cluster import anonymize_blocked
    result = anonymize_blocked("survey_parts/", RoleSpec(quasi_identifiers=("age", "income")),
                               "mdav", k=5, output="released_parts/", block_size=100_000)
    result.il, result.verification.passed
"""

from core.cluster.engine import DEFAULT_BLOCK_SIZE, anonymize_blocked
from core.cluster.result import BlockedResult
from core.cluster.session import INSTALL_HINT

__all__ = ["anonymize_blocked", "BlockedResult", "DEFAULT_BLOCK_SIZE", "INSTALL_HINT"]
