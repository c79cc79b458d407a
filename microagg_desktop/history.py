"""The run history: every run of a session, its settings and its headline measures.

No Qt here: :class:`History` is a plain state class that the history panel, the compare
view and the window read. Vocabulary:

- a *request* is the dictionary the window runs (``roles``, ``method``, ``blocks``,
  ``merge_small_strata``, ``intruder``, noise options, the method's parameters, and any
  other run option): everything needed to run it again;
- a *record* (:class:`RunRecord`) is one finished run: its number (1-based, never
  reused), label, request, result and headline measures, read from the result, never
  recomputed;
- going back to a run (undo) is selecting it: :meth:`History.select` gives back its
  request, from which the window restores the roles and parameters.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from core import AnonymizationResult, MicroaggError, RoleSpec, get_method
from core.pipeline.stored import StoredResult
from core.project.settings import blocks_text
from core.report.summary import SECRET_OPTIONS
from core.report.run_plots import RunPoint

__all__ = ["Measure", "MEASURES", "RunRecord", "History", "describe_changes",
           "headline_measures", "method_short_name", "best_columns", "guaranteed_columns"]


@dataclass(frozen=True)
class Measure:
    """A headline measure: its key, the row name people read, and which way is better.

    ``better`` is ``"low"``, ``"high"`` or ``None`` (neither, e.g. time).
    """

    key: str
    name: str
    better: str | None


MEASURES: tuple[Measure, ...] = (
    Measure("il", "Information loss IL (%)", "low"),
    Measure("il1", "Information loss IL1 (%)", "low"),
    Measure("k_prime", "k′ (records per QI tuple)", "high"),
    Measure("dld", "Linkage disclosure DLD (%)", "low"),
    Measure("id", "Interval disclosure ID (%)", "low"),
    Measure("dr", "Disclosure risk DR (%)", "low"),
    Measure("max_emd", "Largest class EMD (confidential)", "low"),
    Measure("verified", "Verified", "high"),
    Measure("warnings", "Release warnings", "low"),
    Measure("unmasked", "Records released unmasked", "low"),
    Measure("seconds", "Time (s)", None),
)
"""The measures every record carries, in the order they are shown."""

_OPTION_NAMES = {
    "method": "method", "blocks": "attribute blocks", "merge_small_strata":
    "merge small strata", "intruder": "intruder scenario", "known": "intruder knows",
    "dp_epsilon": "differential privacy ε", "confidential_bounds": "confidential bounds",
    "seed": "seed", "missing": "missing values",
}


def method_short_name(name: str) -> str:
    """The method's label if short ("MDAV"), else its registry name ("tc-kfirst")."""
    try:
        label = get_method(name).label
    except MicroaggError:
        return str(name)
    return label if len(label) <= 20 else name


def headline_measures(result: AnonymizationResult) -> dict[str, Any]:
    """The :data:`MEASURES` of ``result``, read from it (None where it has none)."""
    m = result.measures
    emd = m.summary().get("max_emd") if m is not None else None
    return {
        "il": result.metrics.il,
        "il1": m.il1 if m is not None else None,
        "k_prime": result.metrics.k_prime,
        "dld": m.dld if m is not None else None,
        "id": m.id if m is not None else None,
        "dr": m.dr if m is not None else None,
        "max_emd": max(emd.values()) if emd else None,
        "verified": bool(result.passed),
        "record_level": bool(result.guarantee.record_level),
        "unmasked": len(getattr(result, "excluded", ())),
        "warnings": len(result.warnings),
        "seconds": result.seconds,
    }


def _key_parameters(method: str, parameters: Mapping[str, Any]) -> str:
    """k and t always, other parameters where they differ from the default."""
    try:
        defaults = {p.name: p.default for p in get_method(method).parameters}
    except MicroaggError:
        defaults = {}
    shown = [f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"
             for name, value in parameters.items()
             if name in ("k", "t") or defaults.get(name, object()) != value]
    return " ".join(shown)


def _release_options(result) -> str:
    """The run's options read from its result: the Laplace noise's ε, attribute blocks,
    merged strata, records released unmasked, and an intruder who knows less than
    every quasi-identifier (which changes DLD and ID, not the table)."""
    shown = []
    options = result.options or {}
    if result.noise is not None:
        shown.append(f"ε={result.noise.epsilon:g}")
    if options.get("blocks"):  # as asked (a per-attribute method's own are not shown)
        shown.append(f"blocks={blocks_text(options['blocks'])}")
    if result.strata_merges:
        shown.append("strata merged")
    if len(result.excluded):
        shown.append(f"{len(result.excluded):,} unmasked")
    if options.get("known"):
        shown.append(f"intruder knows {blocks_text(options['known'])}")
    elif options.get("intruder", "all") != "all":
        shown.append(f"intruder: {options['intruder']}")
    return " ".join(shown)


@dataclass
class RunRecord:
    """One finished run.

    Attributes
    ----------
    number : int
        1-based, in the order runs were added; never reused after a removal.
    request : dict
        The settings that produced it (a copy; roles included).
    stored : StoredResult
        The result, its released quasi-identifiers kept once per class
        (:mod:`core.pipeline.stored`); :attr:`result` gives it back as the run gave it.
    created : datetime
    exported : bool
        True once the window exported it.
    measures : dict
        The headline measures (:data:`MEASURES` keys), read from ``result``.
    """

    number: int
    request: dict[str, Any]
    stored: StoredResult
    created: _dt.datetime = field(default_factory=_dt.datetime.now)
    exported: bool = False
    measures: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, number: int, request: Mapping[str, Any], result: AnonymizationResult
           ) -> "RunRecord":
        """A record of ``result``: its headline measures read, then stored compactly."""
        return cls(number, dict(request), StoredResult(result),
                   measures=headline_measures(result))

    @property
    def result(self) -> AnonymizationResult:
        """The run's result, its released table as the run gave it (rebuilt when kept
        compactly: about 0.055 s at 1,000,000 × 10)."""
        return self.stored.result()

    @property
    def method(self) -> str:
        """The short name of the method that ran."""
        return method_short_name(self.stored.summary.method)

    @property
    def parameters_text(self) -> str:
        """The key parameters, e.g. ``"k=5 refine=igd"``, then what else made this
        release or its figures differ from a plain run (:func:`_release_options`), so
        two runs of one method and k are told apart in the history: ``"k=5 ε=1"``."""
        summary = self.stored.summary
        return " ".join(part for part in (self._key_text, _release_options(summary))
                        if part)

    @property
    def label(self) -> str:
        """E.g. ``"#3 MDAV k=5"``: the number, the method and its key parameters, short
        enough for the compare view's column heads and the plots' legends (the compare
        view lists the other settings that differ)."""
        return " ".join(part for part in (f"#{self.number}", self.method, self._key_text)
                        if part)

    @property
    def _key_text(self) -> str:
        """:func:`_key_parameters` of the run."""
        summary = self.stored.summary
        return _key_parameters(summary.method, summary.parameters)


class History:
    """The runs of a session, in order, with one selected run.

    Examples
    --------
    >>> history = History()
    >>> history.records
    ()
    """

    def __init__(self):
        self._records: list[RunRecord] = []
        self._next = 1
        self._selected: int | None = None

    @property
    def records(self) -> tuple[RunRecord, ...]:
        """Every run still in the history, oldest first."""
        return tuple(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def add(self, request: Mapping[str, Any], result: AnonymizationResult, *,
            number: int | None = None) -> RunRecord:
        """Record a finished run and select it.

        ``number`` keeps the number a run had when it was saved in a project; by default
        the next free one.
        """
        if number is None:
            number = self._next
        elif any(r.number == number for r in self._records):
            raise MicroaggError(f"The history already has a run #{number}.")
        if result.noise is not None:  # the seed it drew, so a project recomputes it
            request = {**request, "noise_seed": result.noise.seed}
        record = RunRecord.of(number, request, result)
        self._next = max(self._next, number + 1)
        self._records.append(record)
        self._selected = record.number
        return record

    def reserve(self, numbers: Iterable[int]) -> None:
        """Keep ``numbers`` (a project's saved runs, recomputed or not) from new runs:
        the next run is numbered after all of them."""
        self._next = max([self._next, *(int(n) + 1 for n in numbers)])

    def get(self, number: int) -> RunRecord:
        """The run numbered ``number``; :class:`MicroaggError` if there is none."""
        for record in self._records:
            if record.number == number:
                return record
        have = ", ".join(f"#{r.number}" for r in self._records) or "none"
        raise MicroaggError(f"There is no run #{number} in the history (runs: {have}). "
                            "Choose a run from the list.")

    def select(self, number: int) -> RunRecord:
        """Make run ``number`` the selected one; its ``request`` restores its settings."""
        record = self.get(number)
        self._selected = number
        return record

    @property
    def selected(self) -> RunRecord | None:
        """The selected run, or None."""
        return None if self._selected is None else self.get(self._selected)

    def remove(self, number: int) -> RunRecord:
        """Take run ``number`` out of the history (its number is not reused)."""
        record = self.get(number)
        self._records.remove(record)
        if self._selected == number:
            self._selected = None
        return record

    def mark_exported(self, number: int) -> None:
        """Remember that run ``number`` was exported."""
        self.get(number).exported = True

    def unexported(self) -> list[RunRecord]:
        """Runs never exported (what the window asks about on closing)."""
        return [r for r in self._records if not r.exported]

    def points(self) -> list[RunPoint]:
        """Every run as a point of the risk–utility map, the selected one marked."""
        return [RunPoint(r.label, r.measures["il"], r.measures["dld"], r.measures["dr"],
                         r.measures["verified"], r.number == self._selected)
                for r in self._records]

    def compare(self, numbers: Iterable[int]) -> pd.DataFrame:
        """The measures of the runs side by side, then the settings that differ.

        Returns
        -------
        DataFrame
            Rows are the :data:`MEASURES` names, then ``"Setting: <name>"`` rows for every
            request entry that is not the same in every run (roles one row per column);
            columns are the run labels, in the order given.
        """
        records = [self.get(n) for n in numbers]
        if not records:
            raise MicroaggError("Choose at least one run to compare.")
        # A method that promises no record-level guarantee has nothing to verify: "—".
        data = {r.label: [None if m.key == "verified" and not r.measures.get(
            "record_level", True) else r.measures[m.key] for m in MEASURES]
            for r in records}
        frame = pd.DataFrame(data, index=[m.name for m in MEASURES], dtype=object)
        settings = [_settings(r.request) for r in records]
        names = list(dict.fromkeys(name for s in settings for name in s))
        differing = [n for n in names if len({s.get(n, "—") for s in settings}) > 1]
        if differing:
            extra = pd.DataFrame({r.label: [s.get(n, "—") for n in differing]
                                  for r, s in zip(records, settings)},
                                 index=[f"Setting: {n}" for n in differing], dtype=object)
            frame = pd.concat([frame, extra])
        return frame


def guaranteed_columns(frame: pd.DataFrame) -> list[str]:
    """The runs of a :meth:`History.compare` frame that promise a record-level guarantee
    (their Verified cell is not "—")."""
    verified = next(m.name for m in MEASURES if m.key == "verified")
    if verified not in frame.index:
        return list(frame.columns)
    return [c for c, v in frame.loc[verified].items() if v is not None]


_MEASURED_ON = ("intruder scenario", "intruder knows")
"""Settings that change what the risk measures assume the intruder knows."""


def incomparable(frame: pd.DataFrame) -> str | None:
    """Why the runs of a :meth:`History.compare` frame cannot be ranked on their loss
    and risk, or None: they are not measured on the same records (different numbers
    released unmasked), on the same attributes (the roles differ) or against the same
    intruder (the scenarios differ)."""
    unmasked = next(m.name for m in MEASURES if m.key == "unmasked")
    if unmasked in frame.index and len(set(frame.loc[unmasked])) > 1:
        return "they release different numbers of records unmasked"
    settings = [row.removeprefix("Setting: ") for row in frame.index
                if row.startswith("Setting: ")]
    if any(name.startswith("role of ") for name in settings):
        return "their roles differ, so loss and risk are measured on different attributes"
    if any(name in _MEASURED_ON for name in settings):
        return "their intruder scenarios differ, so their risks answer different questions"
    return None


def best_columns(frame: pd.DataFrame) -> dict[str, list[str]]:
    """For every measure row of :meth:`History.compare`, the columns holding its best value.

    Rows where nothing is better (time, settings) or every run is equal are left out,
    and every row but the unmasked count when the runs are not comparable
    (:func:`incomparable`). Beside runs with a record-level guarantee, a run without one (Mic1D-k, individual
    ranking: its information loss is tiny because it protects no record) is never called
    best: the best is chosen among the guaranteed runs.
    """
    better = {m.name: m.better for m in MEASURES}
    unmasked = next(m.name for m in MEASURES if m.key == "unmasked")
    comparable = incomparable(frame) is None
    candidates = set(guaranteed_columns(frame) or frame.columns)
    out: dict[str, list[str]] = {}
    for row in frame.index:
        way = better.get(row)
        if way is None or (not comparable and row != unmasked):
            continue
        values = {c: float(v) for c, v in frame.loc[row].items()
                  if v is not None and c in candidates}
        if len(set(values.values())) < 2:
            continue
        best = (min if way == "low" else max)(values.values())
        out[row] = [c for c, v in values.items() if v == best]
    return out


def _text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_text(v)}" for k, v in value.items())
    return str(value)


def _role_words(roles: RoleSpec) -> dict[str, str]:
    words = {c: r.value for c, r in roles.as_mapping().items()}
    for column in roles.strata:
        words[column] = f"{words.get(column, 'non-confidential')}, stratum"
    for column, level in roles.levels:
        if column in roles.quasi_identifiers:
            words[column] = f"{words[column]}, {level.value}"
        elif column in roles.confidential:
            words[column] = f"{words[column]}, {level.value} distance"
    return words


def _settings(request: Mapping[str, Any]) -> dict[str, str]:
    """A request as readable name → text, roles one entry per column."""
    out: dict[str, str] = {}
    for key, value in request.items():
        if key in SECRET_OPTIONS:
            continue
        if key == "roles" and isinstance(value, RoleSpec):
            out.update({f"role of '{c}'": w for c, w in _role_words(value).items()})
        elif key == "method":
            out["method"] = method_short_name(value)
        else:
            out[_OPTION_NAMES.get(key, key)] = _text(value)
    return out


def describe_changes(request_a: Mapping[str, Any], request_b: Mapping[str, Any]) -> list[str]:
    """What changed from ``request_a`` to ``request_b``, one sentence each.

    Examples
    --------
    >>> a = {"roles": RoleSpec(quasi_identifiers=("age", "wage")), "method": "mdav", "k": 5}
    >>> b = {"roles": RoleSpec(quasi_identifiers=("wage",), confidential=("age",)),
    ...      "method": "cbfs", "k": 7}
    >>> describe_changes(a, b)
    ["'age' is now confidential (was quasi-identifier)", 'method: MDAV → CBFS', 'k: 5 → 7']
    """
    changes: list[str] = []
    roles_a, roles_b = request_a.get("roles"), request_b.get("roles")
    if isinstance(roles_a, RoleSpec) and isinstance(roles_b, RoleSpec):
        before, after = _role_words(roles_a), _role_words(roles_b)
        for column in dict.fromkeys([*before, *after]):
            old = before.get(column, "non-confidential")
            new = after.get(column, "non-confidential")
            if old != new and column in roles_a.confidential and \
                    column in roles_b.confidential:  # only its t-closeness distance
                distance_a = getattr(roles_a.level_of(column), "value", "default")
                distance_b = getattr(roles_b.level_of(column), "value", "default")
                changes.append(f"'{column}' is now compared by the {distance_b} distance "
                               f"(was {distance_a})")
            elif old != new:
                changes.append(f"'{column}' is now {new} (was {old})")
    elif roles_a != roles_b:
        changes.append("the roles changed")
    for key in dict.fromkeys([*request_a, *request_b]):
        if key == "roles" or key in SECRET_OPTIONS:  # the noise's seed: drawn per run
            continue
        old, new = request_a.get(key), request_b.get(key)
        if old == new:
            continue
        if key == "method":
            old, new = method_short_name(old), method_short_name(new)
        changes.append(f"{_OPTION_NAMES.get(key, key)}: {_text(old)} → {_text(new)}")
    return changes
