"""The typed result of a run: :class:`AnonymizationResult`.

Every figure it carries describes :attr:`AnonymizationResult.masked`, the table that is
released, and was computed once, after that table was final (:mod:`core.pipeline.run`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core.verify.multiplicative import MultiplicativeVerification
from core.privacy.noise import DPResult
from core.errors import MicroaggError
from core.verify.guarantees import K_ANONYMITY, Guarantee, GuaranteeCheck
from core.measures.measure import Measures
from core.measures.partition import Metrics
from core.pipeline.warnings import ReleaseWarning
from core.data.roles import RoleSpec
from core.verify.tcloseness import TClosenessVerification
from core.verify.kanonymity import Verification

__all__ = ["AnonymizationResult", "GuaranteeNotMet"]


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
        Group id of every record: records with the same id have the same masked
        quasi-identifiers (with attribute blocks: the same group in every block).
    masked : DataFrame
        The table to release: same rows in the same order, identifiers dropped (to keep
        a column, give it the non-confidential role), quasi-identifiers replaced by
        their group aggregates, then strata recoded, noise added or the confidential
        attribute bucketed where the method says so. Nothing changes it afterwards.
    metrics : Metrics
        Group sizes of the partition; k', SSE, SST and IL of ``masked`` (the same
        figures as ``measures``).
    verification : Verification
        The independent verifier's findings on ``masked``.
    seconds : float
        Wall time of the whole run.
    blocks : tuple of column-name tuples
        The attribute blocks (one block of every quasi-identifier by default).
    block_labels : ndarray of shape (n_records, n_blocks)
        Group ids per block.
    guarantee : Guarantee
        What the method promises (:mod:`core.verify.guarantees`); equal to its name.
    tcloseness : TClosenessVerification or MultiplicativeVerification or None
        The closeness verifier's findings on ``masked``, for a closeness guarantee.
    measures : Measures
        Disclosure risk and utility of ``masked`` against the original.
    noise : DPResult or None
        The Laplace noise added to the confidential attributes, if asked.
    levels : dict
        Quasi-identifier → measurement level used (``"numeric"``, ``"ordinal"``,
        ``"nominal"``); ``orders`` the category order of each ordinal one.
    warnings : tuple of ReleaseWarning
        Why a verified release should still not be published as it is (a group holding
        most records, very high IL, unique records without a guarantee, a kept column
        that reveals a quasi-identifier, records released unmasked;
        :mod:`core.pipeline.warnings`). Empty when none.
    excluded : ndarray of int
        Positions of the records set aside for missing values (``missing="exclude"``)
        and released unmasked, flagged 1 in the column ``unmasked_missing``
        (:mod:`core.pipeline.missing`); ``labels`` is −1 for them. Empty when none.
        ``metrics``, ``measures``, ``verification`` and ``tcloseness`` then describe
        the other, masked records only.
    missing : str
        The run's ``missing`` option, ``"stop"`` or ``"exclude"``.
    options : dict
        The run options (blocks as given, merge_small_strata, intruder, known, seed,
        dp_epsilon, confidential_bounds, missing, noise_seed): with ``method`` and
        ``parameters``, and the noise's seed drawn (``noise.seed``) where none was given,
        exactly what reproduces the run (:meth:`core.project.RunSettings.from_result`).
    """

    method: str
    parameters: dict[str, Any]
    roles: RoleSpec
    labels: np.ndarray
    masked: pd.DataFrame
    metrics: Metrics
    verification: Verification
    seconds: float = 0.0
    blocks: tuple[tuple[str, ...], ...] = ()
    block_labels: np.ndarray | None = None
    guarantee: Guarantee = K_ANONYMITY
    strata_merges: tuple[str, ...] = ()
    tcloseness: TClosenessVerification | MultiplicativeVerification | None = None
    details: dict[str, int] = field(default_factory=dict)
    measures: Measures | None = None
    noise: DPResult | None = None
    levels: dict[str, str] = field(default_factory=dict)
    orders: dict[str, tuple] = field(default_factory=dict)
    warnings: tuple[ReleaseWarning, ...] = ()
    excluded: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    missing: str = "stop"
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def flag_column(self) -> str | None:
        """The name of the 0/1 column flagging records released unmasked, or None."""
        return str(self.masked.columns[-1]) if len(self.excluded) else None

    @property
    def multiplicative(self) -> bool:
        """True when ``tcloseness`` uses the multiplicative distance (t > 1)."""
        return isinstance(self.tcloseness, MultiplicativeVerification)

    @property
    def passed(self) -> bool:
        """True when every guarantee the method promises was verified on ``masked``."""
        closeness = self.tcloseness is None or self.tcloseness.passed
        return self.verification.passed and closeness

    @property
    def check(self) -> GuaranteeCheck:
        """The verifiers' findings as the guarantee reads them."""
        return GuaranteeCheck(self.guarantee, self.verification, self.tcloseness,
                              passed=self.passed or not self.guarantee.record_level)

    @property
    def guarantee_text(self) -> str:
        """One plain sentence on what this result guarantees."""
        return self.guarantee.describe(
            k=self.parameters.get("k"), t=self.parameters.get("t"), roles=self.roles,
            blocks=self.blocks, k_prime=self.metrics.k_prime,
            smallest_class=self.verification.smallest_class, noise=self.noise,
            unmasked=len(self.excluded), flag_column=self.flag_column)

    def _measures_summary(self) -> dict[str, Any]:
        if self.measures is None:
            return {}
        out = self.measures.summary()
        keys = ("il1", "dld", "id", "dr", "score", "interval", "il1_components",
                "max_record_risk", "mean_record_risk", "unique_records", "max_emd")
        return {key: out[key] for key in keys if key in out}

    def _closeness_summary(self) -> dict[str, Any]:
        out: dict[str, Any] = self.noise.summary() if self.noise is not None else {}
        closeness = self.guarantee.summary(self.check)
        if not closeness:
            return out
        details = {"n_buckets": self.details.get("n_buckets")} \
            if self.guarantee.t_kind == "multiplicative" \
            else {"merges": self.details.get("merges", 0),
                  "swaps": self.details.get("swaps", 0)}
        return {**out, **closeness, "cluster_size": self.details.get("cluster_size"),
                **details}

    def _coverage(self) -> dict[str, Any]:
        if not len(self.excluded):
            return {}
        return {"flag_column": self.flag_column,
                "n_released": int(len(self.masked)),
                "measures_cover": (
                    f"The verification and every measure cover the {self.metrics.n_records:,} "
                    f"masked records only; the {len(self.excluded):,} records released "
                    f"unmasked (flag column '{self.flag_column}' = 1) are not protected "
                    "and are not counted.")}

    def summary(self) -> dict[str, Any]:
        """A flat, JSON-ready summary (the CLI's ``--summary-json``)."""
        m, v = self.metrics, self.verification
        return {
            "method": self.method,
            **{name: value for name, value in self.parameters.items()},
            "n_records": m.n_records,
            "n_groups": m.n_groups,
            "quasi_identifiers": list(self.roles.quasi_identifiers),
            "levels": dict(self.levels),
            "ordinal_orders": {c: [str(v) for v in o] for c, o in self.orders.items()},
            "il": m.il,
            "sse": m.sse,
            "sst": m.sst,
            "min_group_size": m.min_group_size,
            "mean_group_size": m.mean_group_size,
            "max_group_size": m.max_group_size,
            "group_size_counts": {str(s): c for s, c in m.group_size_counts.items()},
            "n_classes": m.n_classes,
            "min_class_size": m.min_class_size,
            "max_class_size": m.max_class_size,
            "class_size_counts": {str(s): c for s, c in m.class_size_counts.items()},
            "k_prime": m.k_prime,
            "verified": self.passed,
            "guarantee": str(self.guarantee),
            "guarantee_text": self.guarantee_text,
            "blocks": [list(b) for b in self.blocks],
            "strata": list(self.roles.strata),
            "strata_merges": list(self.strata_merges),
            "smallest_class_by_block": list(v.smallest_by_block),
            **self._measures_summary(),
            **self._closeness_summary(),
            "smallest_class": v.smallest_class,
            "verifier_il": v.il,
            "verification_notes": list(v.notes),
            "missing": self.missing,
            "n_unmasked_missing": int(len(self.excluded)),
            **self._coverage(),
            "warnings": [w.message for w in self.warnings],
            "warning_kinds": [w.kind for w in self.warnings],
            "seconds": self.seconds,
        }
