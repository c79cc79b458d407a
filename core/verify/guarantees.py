"""What a method promises about the released table: the typed guarantee contract.

Every registered method declares one :class:`Guarantee`. A guarantee knows how to check
a released table (with the independent verifiers, which read only the original and the
released table, never a partition) and how to say in plain words what it promises, so
the API, the command line, the report and the GUI ask it instead of branching on names.

The members:

:data:`K_ANONYMITY`
    Every record shares its released quasi-identifiers with at least k − 1 others
    (within its stratum; per attribute block when there are several blocks).
:data:`T_CLOSENESS`
    k-anonymity, and in every class the distribution of each confidential attribute is
    within earth mover's distance t of the whole table's (Soria-Comas et al. 2015).
:data:`T_CLOSENESS_MULTIPLICATIVE`
    k-anonymity, and every bucket of the confidential attribute is at most t and at
    least 1/t times as frequent in a class as in the table (Domingo-Ferrer & Soria-Comas
    2015, Definition 4); ε = 2·ln t by Proposition 3.
:data:`NO_GUARANTEE`
    No record-level promise (per-attribute methods, Mic1D-k): the verifier's k′ and
    smallest class are the figures that count.

A guarantee is a ``str`` subclass equal to its name (``"k-anonymity"``, ...), so it is
JSON-ready and compares with the plain names older summaries used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from core.verify.multiplicative import MultiplicativeVerification, verify_multiplicative
from core.data.roles import RoleSpec
from core.verify.tcloseness import TClosenessVerification, verify_t_closeness
from core.verify.kanonymity import Verification, verify_k_anonymity

__all__ = ["Guarantee", "GuaranteeCheck", "K_ANONYMITY", "T_CLOSENESS",
           "T_CLOSENESS_MULTIPLICATIVE", "NO_GUARANTEE", "GUARANTEES", "guarantee_named"]


@dataclass(frozen=True)
class GuaranteeCheck:
    """What the verifiers found on a released table, for one guarantee.

    ``passed`` is true when the guarantee holds (always true for :data:`NO_GUARANTEE`,
    whose verification only measures). ``closeness`` is the t-closeness finding of the
    closeness guarantees, None otherwise.
    """

    guarantee: "Guarantee"
    verification: Verification
    closeness: TClosenessVerification | MultiplicativeVerification | None = None
    passed: bool = True
    failure: str = ""

    def lines(self) -> list[str]:
        """The verifiers' findings, one plain sentence each (the command line)."""
        out = [] if not self.guarantee.record_level else [self.verification.describe()]
        if self.closeness is not None:
            out.append(self.closeness.describe())
        if isinstance(self.closeness, MultiplicativeVerification) and self.closeness.passed:
            out.append(self.closeness.proposition3_text())
        return out

    def report_rows(self) -> list[tuple[str, Any]]:
        """(item, value) rows of the closeness findings for the summary sheet and report."""
        c = self.closeness
        if isinstance(c, MultiplicativeVerification):
            return ([("t-closeness (multiplicative)", c.describe())]
                    + [(f"Largest multiplicative distance of '{name}'", round(value, 6))
                       for name, value in c.max_distance_by_attribute.items()]
                    + [("Differential privacy (Proposition 3)", c.proposition3_text())])
        if isinstance(c, TClosenessVerification):
            return ([("t-closeness", c.describe())]
                    + [(f"Largest EMD of '{name}' ({kind} distance)", round(emd, 6))
                       for name, kind, emd in zip(c.attributes, c.kinds, c.max_emd)])
        return []

    def banner(self) -> str:
        """The closeness figures in one sentence for the results banner ("" without)."""
        c = self.closeness
        if isinstance(c, MultiplicativeVerification):
            distances = ", ".join(f"{name} {value:.4f}"
                                  for name, value in c.max_distance_by_attribute.items())
            return (f"Largest multiplicative distance: {distances} (t = {c.t:g}; "
                    f"ε = 2·ln t = {c.epsilon:.4g} by Proposition 3).")
        if isinstance(c, TClosenessVerification):
            emds = ", ".join(f"{name} {emd:.4f}"
                             for name, emd in c.max_emd_by_attribute.items())
            return f"Largest EMD per confidential attribute: {emds} (t = {c.t:g})."
        return ""


class Guarantee(str):
    """A guarantee: its name, a group label for people, and how it is checked.

    Attributes
    ----------
    label : str
        How the GUI groups methods by what they promise.
    record_level : bool
        True when every released record is promised to be indistinguishable from
        k − 1 others (the verifier's k-anonymity check must pass).
    t_kind : str or None
        ``"emd"`` or ``"multiplicative"`` for the closeness guarantees.
    accepts_noise : bool
        Laplace noise on the confidential attributes can follow (Proposition 1 needs
        k-anonymous classes and the raw confidential values).
    """

    label: str = ""
    record_level: bool = True
    t_kind: str | None = None
    accepts_noise: bool = False

    def __new__(cls, name: str, label: str, *, record_level: bool = True,
                t_kind: str | None = None, accepts_noise: bool = False):
        self = super().__new__(cls, name)
        self.label, self.record_level, self.t_kind = label, record_level, t_kind
        self.accepts_noise = accepts_noise
        return self

    def __reduce__(self):
        return (guarantee_named, (str(self),))

    @property
    def name(self) -> str:
        return str(self)

    def check(self, original: pd.DataFrame, released: pd.DataFrame, roles: RoleSpec, *,
              k: int | None, t: float | None = None, blocks=None,
              encoding=None, checkpoint=None, classes=None, values=None) -> GuaranteeCheck:
        """Verify ``released`` against ``original`` for this guarantee.

        Parameters
        ----------
        original, released : DataFrame
            The same records in the same order; neither is modified.
        roles : RoleSpec
        k : int or None
            The group size promised (the smallest meaningful class, 2, when the method
            promises none).
        t : float, optional
            The closeness level, for the closeness guarantees.
        blocks : sequence of column tuples, optional
            Attribute blocks, each checked on its own.
        encoding : Encoding, optional
            ``original``'s quasi-identifiers measured, when the caller has it (the
            verifier makes it otherwise; it depends on the original table only).
        checkpoint : callable, optional
            Called between the verifiers' passes over the records; whatever it raises
            (a Cancel) stops the check.
        classes : callable, optional
            Gives the classes of ``released`` (:func:`~core.verify.rows.frame_classes`
            of its quasi-identifiers and strata) when the caller finds them once for
            the measures too (:func:`verify_k_anonymity`).
        values : (ndarray, dict), optional
            ``encoding.values_of(released)``, when the caller has made it.
        """
        verification = verify_k_anonymity(original, released, roles, k or 1,
                                          blocks=blocks, encoding=encoding,
                                          checkpoint=checkpoint, classes=classes,
                                          values=values)
        if not self.record_level:
            return GuaranteeCheck(self, verification)
        failure = ""
        if not verification.passed:
            failure = (f"not a verified {k}-anonymous table: "
                       + " ".join(verification.notes))
        closeness = None
        # The classes of k-anonymity's check: the released quasi-identifiers together
        # with the strata (released as they are, so known to an intruder).
        qi = [*roles.quasi_identifiers, *roles.strata]
        confidential = list(roles.confidential)
        if self.t_kind == "emd":
            closeness = verify_t_closeness(released, qi, confidential, t,
                                           kinds=roles.confidential_kinds,
                                           original=original, checkpoint=checkpoint)
        elif self.t_kind == "multiplicative":
            closeness = verify_multiplicative(released, qi, confidential, t,
                                              checkpoint=checkpoint)
        if closeness is not None and not closeness.passed and not failure:
            failure = f"not a verified t-close table: {closeness.describe()}"
        return GuaranteeCheck(self, verification, closeness, passed=not failure,
                              failure=failure)

    def describe(self, *, k: int | None, t: float | None = None, roles: RoleSpec,
                 blocks=(), k_prime: float = 0.0, smallest_class: int = 0,
                 noise: Any = None, unmasked: int = 0, flag_column: str | None = None) -> str:
        """One plain sentence on what a release under this guarantee promises.

        Each part of the promise is said, in this order: k-anonymity (within strata, or
        within attribute blocks only), closeness, the Laplace noise, and, when
        ``unmasked`` records were released as they are (``missing="exclude"``, flagged
        in ``flag_column``), that the promise covers the masked records only and those
        are not protected.

        Examples
        --------
        >>> K_ANONYMITY.describe(k=5, roles=RoleSpec(quasi_identifiers=("age",)))
        'Every released record is indistinguishable from at least 4 others.'
        >>> K_ANONYMITY.describe(k=5, roles=RoleSpec(quasi_identifiers=("age",)),
        ...                      unmasked=3, flag_column="unmasked_missing")[:60]
        'Every masked record is indistinguishable from at least 4 oth'
        """
        after = ""
        if unmasked:
            after = (f" The {unmasked:,} record(s) released unmasked for missing values "
                     f"(flag column '{flag_column}' = 1) are not protected and are not "
                     "covered by this guarantee.")
        if not self.record_level:
            return (f"No k-anonymity guarantee: this method does not group whole records. "
                    f"Real anonymity k' = {k_prime:.2f}; the smallest class has "
                    f"{smallest_class} record(s).{after}")
        confidential = ", ".join(roles.confidential)
        among = "in the whole table" if not unmasked else "among all the masked records"
        whose = "the whole table's" if not unmasked else "all the masked records'"
        if len(blocks) > 1:
            text = (f"{k}-anonymity holds within each of the {len(blocks)} attribute "
                    f"blocks only, not for the combination of all quasi-identifiers "
                    f"(whole-table k' = {k_prime:.2f})")
        else:
            strata = f" within strata of {', '.join(roles.strata)}" if roles.strata else ""
            who = "Every released record" if not unmasked else "Every masked record"
            text = f"{who} is indistinguishable from at least {k - 1} others{strata}"
        if self.t_kind == "multiplicative":
            text += (f", and in every class each bucket of {confidential} is at most "
                     f"{t:g} times and at least 1/{t:g} times as frequent as {among} "
                     f"(multiplicative distance, t = {t:g}; not an earth mover's distance)")
        elif self.t_kind == "emd":
            text += (f", and in every class the distribution of {confidential} is "
                     f"within earth mover's distance t = {t:g} of {whose}")
        if noise is not None:
            text += (f"; the confidential attributes carry Laplace noise with "
                     f"epsilon = {noise.epsilon:g} each (stochastic t = "
                     f"{noise.stochastic_t:.4g}, Proposition 1")
            if len(noise.scale) > 1:
                text += (f"; all {len(noise.scale)} together: epsilon = "
                         f"{len(noise.scale) * noise.epsilon:g}, stochastic t = "
                         f"{noise.stochastic_t_joint:.4g}")
            text += ")"
        return text + "." + after

    def summary(self, check: GuaranteeCheck) -> dict[str, Any]:
        """The closeness figures of ``check`` for a JSON summary (empty otherwise)."""
        c = check.closeness
        if c is None:
            return {}
        if isinstance(c, MultiplicativeVerification):
            return {"t": c.t, "t_kind": "multiplicative", "t_verified": c.passed,
                    "max_multiplicative_distance": c.max_distance_by_attribute,
                    "epsilon_prop3": c.epsilon, "proposition3": c.proposition3_text()}
        return {"t": c.t, "t_kind": "emd", "t_verified": c.passed,
                "max_emd": c.max_emd_by_attribute,
                "emd_distance": dict(zip(c.attributes, c.kinds))}


K_ANONYMITY = Guarantee("k-anonymity", "k-anonymity", accepts_noise=True)
T_CLOSENESS = Guarantee("t-closeness", "t-closeness", t_kind="emd")
T_CLOSENESS_MULTIPLICATIVE = Guarantee(
    "t-closeness-multiplicative", "t-closeness by buckets / differential privacy",
    t_kind="multiplicative")
NO_GUARANTEE = Guarantee("none", "no record-level guarantee", record_level=False)
GUARANTEES = (K_ANONYMITY, T_CLOSENESS, T_CLOSENESS_MULTIPLICATIVE, NO_GUARANTEE)


def guarantee_named(name: str) -> Guarantee:
    """The guarantee called ``name`` (``"k-anonymity"``, ``"t-closeness"``, ...)."""
    for g in GUARANTEES:
        if g == name:
            return g
    raise KeyError(f"no guarantee named {name!r}")
