"""The ordered pipeline: plan (:mod:`.plan`), run (:mod:`.run`), result (:mod:`.result`).

partition → aggregate → post-process → the released table is final → measures and
verification on that table → result.
"""

from core.pipeline.plan import RunPlan, prepare_run
from core.pipeline.result import AnonymizationResult, GuaranteeNotMet
from core.pipeline.run import anonymize, run

__all__ = ["AnonymizationResult", "GuaranteeNotMet", "RunPlan", "anonymize", "prepare_run",
           "run"]
