"""Reading a CSV/TSV/TXT table: layout sniffed, numbers checked per column, pandas parses.

The steps, each refusing what it cannot read right:

1. :func:`core.io.csv_dialect.sniff` finds the encoding, delimiter and header line; after
   the parse, :func:`core.io.short_rows.check_short_records` refuses a row with fewer
   fields than the header (pandas would fill it with missing values).
2. The sample's columns get a verdict from :func:`core.io.number_format.classify`; the
   decimal mark that columns show is the file's, and it settles ambiguous columns.
3. pandas' C parser reads the file with that decimal mark. Columns written with
   thousands separators (or another decimal mark) are read as text and converted here,
   after checking the *whole* column; pandas' own ``thousands`` option would drop the
   separator anywhere (``1.5`` would become 15).
4. A column the sample showed as numbers that came back as text, or (when no decimal mark
   is known) as fractions, is checked whole in the same way: a value the sample did not
   show cannot be misread.
5. pandas infers each block of rows on its own (about 2^17 to 2^18 lines), so in a large
   file a column can come back as numbers in some blocks and text in others: codes
   whose later blocks hold only digits ('00123' read as 123, beside '00123' as text:
   two categories for one code), or numbers with one stray word. Such a column is read
   again whole as text, as written, before the checks (:func:`_mixed_blocks`); pandas'
   warning about it is not shown, as the column is read right.
"""

from __future__ import annotations

import codecs
import io
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import MicroaggError
from core.io.csv_dialect import Layout, line_of_offset, sniff
from core.io.number_format import (
    SPACES,
    Verdict,
    classify,
    describe_separator,
    fits_all,
    to_numbers,
)
from core.io.progress_source import progress_source
from core.io.read_report import (DOTTED_CODE, ZERO_LED_CODE, Recorder, column_names,
                                 missing_marks_note)
from core.io.short_rows import check_short_records
from core.io.zero_screen import may_have_dotted_codes, may_have_leading_zeros
from core.progress import TaskState

__all__ = ["read_text"]

# pandas warns of a column read as numbers in some blocks of rows and as text in
# others; _check_columns reads such a column again whole (module notes, step 5).
warnings.filterwarnings("ignore", category=pd.errors.DtypeWarning, module=__name__)

_EXPECTED_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_OPEN_QUOTE = re.compile(r"EOF inside string starting at row (\d+)")


def read_text(path: Path, *, encoding: str | None, delimiter: str | None,
              decimal: str | None, thousands: str | None, skip_rows: int | None,
              recorder: Recorder, state: TaskState | None = None) -> pd.DataFrame:
    """Read a delimited text file; see the module docstring for the steps.

    ``thousands`` is ``''`` for "no thousands separator" and ``None`` for "detect".
    What was used goes into ``recorder``. ``state`` receives the fraction of the file's
    bytes parsed and stops the read (:class:`~core.errors.Cancelled`) when cancelled.
    """
    layout = sniff(path, encoding=encoding, delimiter=delimiter, skip_rows=skip_rows)
    names = column_names(layout.header, path.name)
    verdicts, file_decimal = _sample_verdicts(path, layout, names, decimal, thousands)
    parse_decimal = decimal or file_decimal or "."
    as_text = [n for n, v in verdicts.items() if _needs_conversion(v, parse_decimal)]
    parsing = state.sub(0.02, 0.95) if state is not None else None
    table = _parse(path, layout, names, parse_decimal, as_text, state=parsing)
    if len(names) > 1 and table[names[-1]].isna().any():
        # A short row leaves the last column missing: only then is the file scanned.
        check_short_records(path, layout, len(names), len(table))
    if state is not None:
        state.step(0.95, "Checking the columns")
    notes: list[str] = []
    checked = _check_columns(path, layout, names, table, verdicts, as_text,
                             decimal=decimal, thousands=thousands, file_decimal=file_decimal,
                             known_decimal=bool(decimal or file_decimal), notes=notes)
    recorder.set("delimiter", layout.delimiter, layout.delimiter_source)
    recorder.set("encoding", layout.encoding, layout.encoding_source)
    recorder.set("header_line", layout.header_line,
                 "given" if skip_rows is not None else "detected")
    recorder.set("decimal", parse_decimal, "given" if decimal else
                 "detected" if file_decimal else "default")
    used = sorted({v.format.thousands for v in checked.values() if v.format.thousands})
    recorder.set("thousands", (thousands or None) if thousands is not None else
                 (used[0] if len(used) == 1 else None),
                 "given" if thousands is not None else "detected")
    for name, verdict in checked.items():
        note = _format_note(name, verdict, parse_decimal)
        if note:
            recorder.note(note)
    for note in _leading_zeros(path, layout, names, table):
        recorder.note(note)
    for note in notes:
        recorder.note(note)
    for note in _missing_markers(path, layout, names, table):
        recorder.note(note)
    if layout.trailing_empty:
        rows = "row" if layout.trailing_empty == 1 else "rows"
        recorder.note(f"Dropped {layout.trailing_empty} empty {rows} at the end of the file.")
    return table


def _whole_floats(column: pd.Series) -> bool:
    """Whether a float column holds whole numbers only (and one at least); its first
    values are looked at first, so a column of fractions costs nothing."""
    if not pd.api.types.is_float_dtype(column):
        return False
    values = column.to_numpy()
    for part in (values[:1000], values):
        part = part[~np.isnan(part)]
        if not (np.isfinite(part).all() and np.array_equal(part, np.round(part))):
            return False
    return bool((~np.isnan(values)).any())


def _leading_zeros(path: Path, layout: Layout, names: list[str],
                   table: pd.DataFrame) -> list[str]:
    """Columns read as whole numbers whose cells are written with leading zeros
    (postcodes, codes such as 00094), and columns read as numbers with a cell written
    with a leading zero and a dot (codes such as 01.10, :data:`DOTTED_CODE`), are read
    as text instead, as written, so that no zero is lost and 01.10 stays apart from
    01.1; a note for each. A column of whole numbers with empty cells, which pandas
    reads as floats, holding one from 2^53 on is read as nullable integers, every digit
    kept. The columns are read again only when a screen of the file's bytes finds a
    field that may start with a zero (and a dot, for columns of fractions), or for such
    large numbers."""
    whole = [n for n in names if pd.api.types.is_integer_dtype(table[n])
             or _whole_floats(table[n])]
    large = [n for n in whole if pd.api.types.is_float_dtype(table[n])
             and bool((table[n].abs() >= 2.0 ** 53).any())]
    fractions = [n for n in names if pd.api.types.is_float_dtype(table[n]) and n not in whole]
    screen = {"delimiter": layout.delimiter, "text": layout.text, "end": layout.end}
    zero_led = bool(whole or fractions) and may_have_leading_zeros(path, **screen)
    dotted = zero_led and bool(fractions) and may_have_dotted_codes(path, **screen)
    again = (whole if zero_led else large) + (fractions if dotted else [])
    if not again:
        return []
    written = _parse(path, layout, names, ".", again, usecols=again, as_written=True)
    notes = []
    for name in again:
        text = written[name].str.strip()
        code = text.str.fullmatch(ZERO_LED_CODE if name in whole else DOTTED_CODE)
        zeros = code.to_numpy(dtype=bool, na_value=False)
        if not zeros.any():
            digits = text.where(table[name].notna(), None)
            if name in large and digits.dropna().str.fullmatch(r"[+-]?[0-9]+").all():
                # Whole numbers beside empty cells come back as floats, which hold no
                # integer beyond 2^53 exactly: read them as nullable integers instead.
                table[name] = pd.array(digits, dtype="Int64")
            continue
        row = int(np.flatnonzero(zeros)[0])
        table[name] = text.where(table[name].notna(), None)
        notes.append(f"Column '{name}' has values written with leading zeros, such as "
                     f"'{text.iloc[row]}' (data row {row + 1}); it is read as text (codes) "
                     "so that no zero is lost. If it holds numbers, remove the zeros in the "
                     "file and open it again.")
    return notes


def _missing_markers(path: Path, layout: Layout, names: list[str],
                     table: pd.DataFrame) -> list[str]:
    """A note for every text column in which cells that are not empty were read as
    missing values: pandas' markers ('NA', 'None', 'null', ...), which may also be a
    value (NA for North America, Namibia's country code). Only text columns with a
    missing value are read again, as written, and columns read as numbers with no value
    at all (a column of 'NA' alone is one)."""
    text = [n for n in names if ((table[n].dtype == object or
                                  pd.api.types.is_string_dtype(table[n]))
                                 and table[n].isna().any())
            or (pd.api.types.is_float_dtype(table[n]) and table[n].isna().all())]
    if not text:
        return []
    written = _parse(path, layout, names, ".", text, usecols=text, as_written=True)
    notes = []
    for name in text:
        cells = written[name][table[name].isna().to_numpy() & written[name].notna()
                              .to_numpy()].str.strip()
        cells = cells[cells != ""]
        if not cells.empty:
            notes.append(missing_marks_note(name, cells.value_counts().to_dict()))
    return notes


def _sample_verdicts(path: Path, layout: Layout, names: list[str], decimal, thousands
                     ) -> tuple[dict[str, Verdict], str | None]:
    columns = {name: [r.fields[j] for r in layout.data if j < len(r.fields)]
               for j, name in enumerate(names)}
    verdicts = {n: classify(v, decimal=decimal, thousands=thousands) for n, v in columns.items()}
    shown = {v.shows_decimal for v in verdicts.values() if v.shows_decimal}
    file_decimal = decimal or (shown.pop() if len(shown) == 1 else None)
    for name, verdict in verdicts.items():
        if verdict.kind == "ambiguous" and file_decimal:
            verdicts[name] = verdict = classify(columns[name], decimal=decimal,
                                                thousands=thousands, file_decimal=file_decimal)
        if verdict.kind in ("ambiguous", "mixed"):
            lines = {value: _first_line(layout, names.index(name), value)
                     for value in verdict.examples}
            raise MicroaggError(_refusal(path, name, verdict, decimal, thousands,
                                         {v: f"line {n}" for v, n in lines.items()}))
    return verdicts, file_decimal


def _needs_conversion(verdict: Verdict, parse_decimal: str) -> bool:
    f = verdict.format
    return verdict.kind == "numbers" and (
        bool(f.thousands) or (verdict.shows_decimal is not None and f.decimal != parse_decimal))


def _parse(path: Path, layout: Layout, names: list[str], decimal: str, as_text: list[str],
           usecols: list[str] | None = None, state: TaskState | None = None,
           as_written: bool = False) -> pd.DataFrame:
    """The file's rows as pandas reads them; ``as_written``: only empty cells missing
    (pandas' markers such as 'NA' kept as text), for :func:`_missing_markers`."""
    if layout.text is not None:
        source, encoding = io.StringIO(layout.text[:layout.end]), None
    elif layout.end is not None:
        with open(path, "rb") as handle:
            source, encoding = io.BytesIO(handle.read(layout.end)), layout.encoding
    else:
        source, encoding = path, layout.encoding
    if state is not None:
        if layout.text is not None:  # decoded whole already: progress by characters
            source = io.BytesIO(source.getvalue().encode("utf-8"))
            encoding = "utf-8"
        source = progress_source(source, state, "Reading the rows")
    try:
        # header=None with our names: pandas would rename a repeated or empty name.
        # pandas >= 3 parses floats round-trip: a masked value written by us reads back
        # bit for bit, so the verifier's equivalence classes are the same after export.
        return pd.read_csv(source, sep=layout.delimiter, encoding=encoding, decimal=decimal,
                           header=None, names=names, skiprows=layout.skip + 1,
                           index_col=False, skipinitialspace=True, usecols=usecols,
                           dtype={name: object if as_written else str
                                  for name in as_text} or None,
                           **({"keep_default_na": False, "na_values": [""]} if as_written
                              else {}))
    except pd.errors.ParserError as error:
        raise MicroaggError(_parser_message(path, layout, str(error))) from None
    except UnicodeDecodeError:
        raise MicroaggError(_decode_message(path, layout.encoding)) from None
    finally:
        if state is not None:
            source.close()


def _check_columns(path, layout, names, table, verdicts, as_text, *, decimal, thousands,
                   file_decimal, known_decimal, notes) -> dict[str, Verdict]:
    """Convert the text-read columns and check the rest whole; the formats used, by column."""
    mixed = _mixed_blocks(table, names)
    if mixed:  # numbers in some blocks of rows, text in others: the text as written
        again = _parse(path, layout, names, ".", mixed, usecols=mixed)
        for name in mixed:
            table[name] = again[name]
    suspicious = [n for n in names if n not in as_text and _hides_numbers(
        table[n], verdicts[n], layout, known_decimal)]
    if suspicious:
        # Fractions the sample never showed, read while no decimal mark was known:
        # '1.000' might be one thousand; read those columns again as text to tell.
        again = _parse(path, layout, names, ".", suspicious, usecols=suspicious)
        for name in suspicious:
            table[name] = again[name]
    used = {}
    for name in names:
        column = table[name]
        if name not in as_text and name not in suspicious and (
                verdicts[name].kind == "text" or not _is_text(column)):
            continue
        known = verdicts[name]
        if name in as_text and fits_all(column, known.format):
            # The sample's one reading fits every value: no other format that fits them
            # all can read them differently (it would have read the sample differently).
            verdict = known
        else:
            verdict = classify(column.to_numpy(), decimal=decimal, thousands=thousands,
                               file_decimal=file_decimal)
        if verdict.kind in ("ambiguous", "mixed"):
            rows = {v: f"data row {_first_row(column, v)}" for v in verdict.examples}
            raise MicroaggError(_refusal(path, name, verdict, decimal, thousands, rows))
        wide = _first_wide_integer(column, verdict.format) if verdict.kind in (
            "numbers", "plain") else None
        if wide is not None:
            # No 64-bit integer holds it and a float would drop digits: kept as written.
            table[name] = column.astype("str")
            notes.append(f"Column '{name}' has {str(column.iloc[wide]).strip()} (data row "
                         f"{wide + 1}), a whole number too large for 64 bits; the column is "
                         "read as text so that no digit is lost.")
        elif verdict.kind == "numbers":
            table[name] = to_numbers(column, verdict.format)
            used[name] = verdict
        elif verdict.kind in ("plain", "empty"):
            table[name] = pd.to_numeric(column.str.strip() if _is_text(column) else column)
        else:
            # Codes such as postcodes can start with digits and go on with letters: text
            # is what the column is, and reading it as text misreads nothing.
            example = verdict.examples[0]
            notes.append(f"Column '{name}' has numbers in the first rows but also "
                         f"'{example}' (data row {_first_row(column, example)}); it is "
                         "read as text.")
    return used


_INTEGER = re.compile(r" *[+-]?[0-9]+ *")


def _first_wide_integer(column: pd.Series, number_format) -> int | None:
    """The position of the first whole number beyond int64 and uint64, or ``None``.

    pandas reads such a column as Python ints (or as text beside other values), and
    ``to_numeric`` would round them to floats.
    """
    text = column.astype("str")
    candidates = np.flatnonzero(text.str.len().to_numpy(dtype=float, na_value=0) >= 19)
    separator = number_format.thousands if number_format is not None else None
    for position in candidates:  # 19 characters at least: few values, if any
        value = text.iloc[position]
        if separator:
            value = re.sub("[ \u00a0\u202f]", "", value) if separator in SPACES else \
                value.replace(separator, "")
        if _INTEGER.fullmatch(value) and not -2 ** 63 <= int(value) < 2 ** 64:
            return int(position)
    return None


def _hides_numbers(column: pd.Series, verdict: Verdict, layout: Layout, known: bool) -> bool:
    return (not known and layout.dot_after_sample and verdict.kind in ("plain", "empty")
            and pd.api.types.is_float_dtype(column))


def _mixed_blocks(table: pd.DataFrame, names: list[str]) -> list[str]:
    """Columns pandas read as values of more than one kind (module notes, step 5): an
    object column that holds something besides text. pandas reads a column of text in
    one piece as text alone, so only a large file's blocks of rows read differently (or
    whole numbers too large for 64 bits, which the checks read as text anyway) give
    one."""
    return [n for n in names if table[n].dtype == object
            and pd.api.types.infer_dtype(table[n], skipna=True) not in ("string", "empty")]


def _is_text(column: pd.Series) -> bool:
    return pd.api.types.is_string_dtype(column) or column.dtype == object


def _refusal(path: Path, name: str, verdict: Verdict, decimal, thousands,
             where: dict[str, str]) -> str:
    shown = [f"'{v}' ({where.get(v, '?')})" for v in verdict.examples]
    if verdict.kind == "ambiguous":
        separator = "." if any("." in v for v in verdict.examples) else ","
        other = "," if separator == "." else "."
        first, second = verdict.readings
        return (f"Column '{name}' in '{path.name}' has numbers such as {shown[0]} that read "
                f"as {first} or {second} depending on the decimal mark, and the file does "
                f"not show which it uses. Pass --decimal '{other}' --thousands '{separator}' "
                f"if '{separator}' separates thousands, or --decimal '{separator}' if it is "
                "the decimal mark.")
    if decimal or thousands is not None:
        given = " and ".join(
            part for part in (f"decimal mark '{decimal}'" if decimal else "",
                              f"thousands separator {describe_separator(thousands)}"
                              if thousands is not None else "") if part)
        return (f"Column '{name}' in '{path.name}' has {shown[0]}, which is not a number "
                f"written with {given} as given. Correct the value or the options.")
    return (f"Column '{name}' in '{path.name}' mixes number formats: {' and '.join(shown)} "
            "cannot both be right with one decimal mark and thousands separator. Correct "
            "the file, or pass --decimal and --thousands to say how numbers are written.")


def _format_note(name: str, verdict: Verdict, parse_decimal: str) -> str | None:
    """What a converted column's numbers are written with, or None when nothing is
    worth saying (plain numbers read as text first, e.g. for a late ``-0.0``)."""
    parts = []
    if verdict.format.thousands:
        parts.append(f"{describe_separator(verdict.format.thousands)} as thousands separator")
    if verdict.shows_decimal and verdict.shows_decimal != parse_decimal:
        parts.append(f"'{verdict.shows_decimal}' as decimal mark")
    return f"Column '{name}' uses {' and '.join(parts)}." if parts else None


def _first_line(layout: Layout, index: int, value: str) -> int | str:
    for record in layout.data:
        if index < len(record.fields) and record.fields[index] == value:
            return record.line
    return "?"


def _first_row(column: pd.Series, value: str) -> int:
    matches = np.flatnonzero(column.astype(str).str.strip().to_numpy() == value)
    return int(matches[0]) + 1 if matches.size else 0


def _parser_message(path: Path, layout: Layout, text: str) -> str:
    fields = _EXPECTED_FIELDS.search(text)
    if fields:
        expected, line, saw = fields.groups()
        return (f"'{path.name}' line {line} has {saw} fields but the header (line "
                f"{layout.header_line}) has {expected}. Check the delimiter, or quote the "
                "value that contains it.")
    quote = _OPEN_QUOTE.search(text)
    if quote:
        return (f"'{path.name}' has a quote (\") that is never closed, starting on line "
                f"{int(quote.group(1)) + 1}. Close or remove it.")
    return f"'{path.name}' could not be read as a delimited table. Check the delimiter."


def _decode_message(path: Path, encoding: str) -> str:
    decoder, offset = codecs.getincrementaldecoder(encoding)(), 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as error:
                offset += max(error.start, 0)
                break
            offset += len(chunk)
    return (f"'{path.name}' is not valid {encoding} text: line {line_of_offset(path, offset)} "
            f"has a byte that {encoding} does not allow. Pass the encoding it was saved in "
            "with --encoding (e.g. latin-1 or cp1252).")
