"""The one public entry point: :func:`anonymize`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core.aggregate import aggregate
from core.errors import MicroaggError
from core.metrics import Metrics, compute_metrics
from core.prepare import check_group_size, standardize
from core.progress import TaskState
from core.registry import MethodInput, get_method
from core.roles import RoleSpec
from core.verify import Verification, verify_k_anonymity

__all__ = ["AnonymizationResult", "anonymize", "GuaranteeNotMet"]


class GuaranteeNotMet(MicroaggError):
    """The verifier found that a result does not meet the guarantee its method promises."""


@dataclass(frozen=True)
class AnonymizationResult:
    """Everything one run produced.

    Attributes
    ----------
    method : str
        Registry name of the method.
    parameters : dict
        The parameters used, defaults filled in.
    roles : RoleSpec
    labels : ndarray of shape (n_records,)
        Group id of every record.
    masked : DataFrame
        The table to release: same rows in the same order, identifiers dropped (to keep
        a column, give it the non-confidential role), quasi-identifiers replaced by
        their group means.
    metrics : Metrics
    verification : Verification
        The independent verifier's findings on ``masked``; always ``passed`` for a
        method whose guarantee is k-anonymity (otherwise :func:`anonymize` raises).
    seconds : float
        Wall time of the algorithm, aggregation and verification.
    """

    method: str
    parameters: dict[str, Any]
    roles: RoleSpec
    labels: np.ndarray
    masked: pd.DataFrame
    metrics: Metrics
    verification: Verification
    seconds: float = 0.0
    input_name: str = field(default="")

    def summary(self) -> dict[str, Any]:
        """A flat, JSON-ready summary (the CLI's ``--summary-json``)."""
        m, v = self.metrics, self.verification
        return {
            "method": self.method,
            **{name: value for name, value in self.parameters.items()},
            "n_records": m.n_records,
            "n_groups": m.n_groups,
            "quasi_identifiers": list(self.roles.quasi_identifiers),
            "il": m.il,
            "sse": m.sse,
            "sst": m.sst,
            "min_group_size": m.min_group_size,
            "mean_group_size": m.mean_group_size,
            "max_group_size": m.max_group_size,
            "group_size_counts": {str(s): c for s, c in m.group_size_counts.items()},
            "k_prime": m.k_prime,
            "verified": v.passed,
            "smallest_class": v.smallest_class,
            "verifier_il": v.il,
            "verification_notes": list(v.notes),
            "seconds": self.seconds,
        }


def anonymize(table: pd.DataFrame, roles: RoleSpec, method: str = "mdav", *,
              state: TaskState | None = None, **params) -> AnonymizationResult:
    """Microaggregate ``table`` with a registered method and verify the result.

    Parameters
    ----------
    table : DataFrame
        The original data. Never modified.
    roles : RoleSpec
        Which columns are identifiers, quasi-identifiers, confidential.
    method : str
        A name from :func:`core.registry.methods` (``"mdav"``, ...).
    state : TaskState, optional
        Progress and cancellation.
    **params
        The method's parameters, e.g. ``k=5``.

    Raises
    ------
    MicroaggError
        Bad roles, data or parameters (the message names the column or parameter).
    GuaranteeNotMet
        The verifier did not confirm the method's guarantee on the output.
    Cancelled
        ``state.cancel()`` was called.

    Examples
    --------
    >>> t = pd.DataFrame({"age": [20, 21, 40, 41], "wage": [1, 2, 9, 8]})
    >>> r = anonymize(t, RoleSpec(quasi_identifiers=("age", "wage")), k=2)
    >>> r.masked["age"].tolist()
    [20.5, 20.5, 40.5, 40.5]
    """
    started = time.perf_counter()
    spec = get_method(method)
    resolved = spec.resolve(params)
    if not isinstance(table, pd.DataFrame):
        raise MicroaggError("The table must be a pandas DataFrame.")
    if not isinstance(roles, RoleSpec):
        raise MicroaggError("The roles must be a RoleSpec.")
    roles.validate(table, numeric_qi=spec.numeric_qi)
    if "k" in resolved:
        check_group_size(len(table), resolved["k"])
    state = state or TaskState()
    state.step(0.0, f"{spec.label}: preparing")
    standardized = standardize(table, roles.quasi_identifiers)
    labels = np.asarray(
        spec.function(MethodInput(standardized.X, table, roles), state=state, **resolved),
        dtype=np.int64,
    )
    if labels.shape != (len(table),) or (labels < 0).any():
        raise GuaranteeNotMet(f"{spec.label} left records without a group (internal error).")
    _, labels = np.unique(labels, return_inverse=True)
    state.check()
    masked = aggregate(table, labels, roles.quasi_identifiers, drop=roles.identifiers)
    metrics = compute_metrics(standardized.X, labels, masked, roles.quasi_identifiers)
    state.check()
    verification = verify_k_anonymity(table, masked, roles, resolved.get("k", 1))
    if spec.guarantee == "k-anonymity" and not verification.passed:
        raise GuaranteeNotMet(
            f"{spec.label} did not produce a verified {resolved.get('k')}-anonymous table: "
            + " ".join(verification.notes) + " Nothing was released."
        )
    state.step(1.0, f"{spec.label}: done")
    return AnonymizationResult(
        method=spec.name, parameters=resolved, roles=roles, labels=labels.astype(np.int64),
        masked=masked, metrics=metrics, verification=verification,
        seconds=time.perf_counter() - started,
    )
