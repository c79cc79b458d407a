"""The independent verifiers and the typed guarantees that use them.

A verifier reads only the original and the released table, never a partition. This
layer never imports :mod:`core.methods` (an import-linter contract enforces it).
"""

from core.verify.guarantees import Guarantee, GuaranteeCheck
from core.verify.kanonymity import Verification, verify_k_anonymity
from core.verify.multiplicative import MultiplicativeVerification, verify_multiplicative
from core.verify.tcloseness import TClosenessVerification, verify_t_closeness

__all__ = ["Guarantee", "GuaranteeCheck", "Verification", "verify_k_anonymity",
           "MultiplicativeVerification", "verify_multiplicative", "TClosenessVerification",
           "verify_t_closeness"]
