"""The public entry points, gathered: plan, run, result."""

from core.plan import RunPlan, prepare_run
from core.result import AnonymizationResult, GuaranteeNotMet
from core.run import anonymize, run

__all__ = ["AnonymizationResult", "GuaranteeNotMet", "RunPlan", "anonymize", "prepare_run",
           "run"]
