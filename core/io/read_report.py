"""What a read did: the settings it used and plain-language notes (:class:`ReadReport`).

Every reader fills a :class:`Recorder`; :func:`core.io.read.read_table_with_report` hands
the frozen :class:`ReadReport` to the caller, so a user can see (and repeat with options)
what was detected. Also the one place that turns a header into column names.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from core.errors import MicroaggError

__all__ = ["ReadReport", "Recorder", "column_names", "SETTINGS", "LEADING_ZERO",
           "DOTTED_CODE", "ZERO_LED_CODE", "missing_marks_note"]

SETTINGS = ("delimiter", "decimal", "thousands", "encoding", "header_line", "sheet")
LEADING_ZERO = r"\s*[+-]?0[0-9]+\s*"
"""A code written with leading zeros (00094, "01"), which the readers keep as text."""
DOTTED_CODE = r"\s*[+-]?0[0-9]+\.[0-9]*\s*"
"""A code written with a leading zero and a dot (NACE 01.10 beside 01.1, ICD 001.9): no
number is written so, and as numbers two such codes become one (01.10 and 01.1 both
1.1), so the readers keep a column holding one as text, fractions and all."""
ZERO_LED_CODE = f"(?:{LEADING_ZERO})|(?:{DOTTED_CODE})"
"""Either code (00094, 01.10): what keeps a column of whole numbers as text."""


def missing_marks_note(name: str, marks: dict[str, int]) -> str:
    """The note for column ``name``, whose cells saying ``marks`` (text → count, most
    frequent first) were read as missing values ('NA', 'None', 'null', ...)."""
    shown = ", ".join(f"'{mark}' ({count:,})" for mark, count in marks.items())
    return (f"Column '{name}': {sum(marks.values()):,} cell(s) were read as missing values "
            f"because they say {shown}, the usual marks of a missing value. If they are "
            "values (NA for North America, say), recode them in the file and open it "
            "again.")


@dataclass(frozen=True)
class ReadReport:
    """The settings a read used and what it noticed.

    Attributes
    ----------
    settings : dict
        One entry per name in :data:`SETTINGS`: ``{"value": ..., "source": ...}``, the
        source being ``"given"`` (an option), ``"detected"``, ``"default"`` (nothing to
        detect from: e.g. no number with a decimal part) or ``"not applicable"`` (a
        delimiter for a workbook). ``header_line`` is the 1-based line (or sheet row) of
        the header.
    notes : tuple of str
        Plain sentences, e.g. ``"Dropped 3 empty rows at the end of the file."``.

    Examples
    --------
    >>> report = ReadReport({"delimiter": {"value": ";", "source": "detected"}}, ())
    >>> report.settings["delimiter"]["value"]
    ';'
    """

    settings: dict
    notes: tuple[str, ...] = ()


@dataclass
class Recorder:
    """Collects settings and notes while a file is read; :meth:`report` freezes them."""

    settings: dict = field(default_factory=lambda: {
        name: {"value": None, "source": "not applicable"} for name in SETTINGS})
    notes: list[str] = field(default_factory=list)

    def set(self, name: str, value, source: str) -> None:
        self.settings[name] = {"value": value, "source": source}

    def note(self, sentence: str) -> None:
        self.notes.append(sentence)

    def report(self) -> ReadReport:
        return ReadReport({k: dict(v) for k, v in self.settings.items()}, tuple(self.notes))


def column_names(header: Iterable, file_name: str) -> list[str]:
    """The header's names as the table's columns: stripped, blanks named ``column_<i>``.

    A repeated name is refused (pandas would silently rename it ``name.1``).
    """
    names = [str(c).strip() if c is not None else "" for c in header]
    for i, name in enumerate(names):
        if not name or name.startswith("Unnamed: "):
            names[i] = f"column_{i + 1}"
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise MicroaggError(
                f"'{file_name}' has two columns named '{name}'. Rename one of them."
            )
        seen.add(name)
    return names
