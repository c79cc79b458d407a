"""MicroAgg engine: microaggregation for statistical disclosure control.

Pure numpy/pandas; never imports Qt. Typical use::

    from core import read_table, RoleSpec, anonymize
    table = read_table("census.csv")
    result = anonymize(table, RoleSpec(quasi_identifiers=("AGI", "TAXINC")), "mdav", k=5)
    result.metrics.il, result.verification.passed
"""

from core.api import (AnonymizationResult, GuaranteeNotMet, RunPlan, anonymize,
                      prepare_run, run)
from core.errors import Cancelled, MicroaggError, SmallStratumError
from core.io import read_table, write_table
from core.progress import TaskState
from core.registry import get_method, methods
from core.roles import Level, Role, RoleSpec
from core.verify import Verification, verify_k_anonymity

__all__ = [
    "AnonymizationResult", "GuaranteeNotMet", "RunPlan", "anonymize", "prepare_run", "run",
    "Cancelled", "Level",
    "MicroaggError", "SmallStratumError",
    "read_table", "write_table", "TaskState", "get_method", "methods", "Role", "RoleSpec",
    "Verification", "verify_k_anonymity",
]
