"""MicroAgg engine: microaggregation for statistical disclosure control.

Pure numpy/pandas; never imports Qt. Typical use::

    from core import read_table, RoleSpec, anonymize
    table = read_table("census.csv")
    result = anonymize(table, RoleSpec(quasi_identifiers=("AGI", "TAXINC")), "mdav", k=5)
    result.metrics.il, result.verification.passed

The layers, top to bottom (each imports only those below it; see the README):
``cli`` → ``report`` → ``pipeline`` → ``methods`` | ``measures`` → ``verify`` →
``privacy`` → ``data`` | ``io``.
"""

from core.data.roles import Level, Role, RoleSpec
from core.errors import Cancelled, MicroaggError, SmallStratumError
from core.io.read import read_table
from core.io.write import write_table
from core.methods.registry import get_method
from core.pipeline import (AnonymizationResult, GuaranteeNotMet, RunPlan, anonymize,
                           prepare_run, run)
from core.progress import TaskState
from core.verify.kanonymity import Verification, verify_k_anonymity

__all__ = [
    "AnonymizationResult", "GuaranteeNotMet", "RunPlan", "anonymize", "prepare_run", "run",
    "Cancelled", "Level", "MicroaggError", "SmallStratumError", "read_table", "write_table",
    "TaskState", "get_method", "Role", "RoleSpec", "Verification", "verify_k_anonymity",
]
