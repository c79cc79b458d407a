"""How a text table is laid out: encoding, delimiter, header line, and what to refuse.

Vocabulary
----------
line
    A physical line of the file, 1-based, as a text editor numbers it. ``\\n``, ``\\r\\n``
    and a lone ``\\r`` (old Mac files) all end a line.
record
    One row of fields as the CSV rules split it; a quoted field may span lines, and a
    blank line is a record with one empty field.
sample
    The first 256 KiB of the file (more when the header is longer), cut at a line end.
    Detection looks at the sample only; the NUL-byte check scans every byte.
byte mode, text mode
    Encodings in which the delimiters, quotes and line ends are single ASCII bytes
    (UTF-8, Latin-1, cp1252, ...) are handled on the bytes; others (UTF-16, UTF-32) are
    decoded whole first.

:func:`sniff` returns a :class:`Layout`; it raises :class:`~core.errors.MicroaggError` for
a file that cannot be read right (NUL bytes, undecodable text, a title row above the
header, a row with more fields than the header); a row with fewer fields is refused
after the parse by :func:`core.io.short_rows.check_short_records`.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path

from core.errors import MicroaggError

__all__ = ["Layout", "Record", "sniff", "split_records", "DELIMITERS", "line_of_offset",
           "detect_encoding"]

# In the order that wins a tie: a file that splits as well on ';' as on ',' is one with
# decimal commas.
DELIMITERS = ("\t", ";", "|", ",")
SAMPLE_BYTES = 256 * 1024
_MAX_SAMPLE_BYTES = 64 * 1024 * 1024
_CHUNK = 8 * 1024 * 1024
_SAMPLE_RECORDS = 2000
_MIN_LINES = 20
# UTF-32 LE starts with the UTF-16 LE mark, so it is tested first.
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
         (b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Record:
    """A record's first line (1-based) and its fields, unquoted and stripped."""

    line: int
    fields: tuple[str, ...]

    @property
    def blank(self) -> bool:
        return self.fields == ("",)

    @property
    def filled(self) -> int:
        return sum(1 for field in self.fields if field)


@dataclass(frozen=True)
class Layout:
    """What :func:`sniff` found; ``source`` values are ``'given'`` or ``'detected'``.

    ``skip`` counts the records (blank ones included) before the header, as pandas'
    ``skiprows`` does; ``data`` holds the sample's complete records after the header;
    ``text`` is the whole decoded file in text mode, else ``None``; ``end`` is where the
    trailing empty rows start (a byte offset, or a character offset in text mode), or
    ``None`` when there are none; ``dot_after_sample`` says whether a ``'.'`` occurs after
    the records examined (at most 2,000), where a number could hide that they did not show.
    """

    encoding: str
    encoding_source: str
    delimiter: str
    delimiter_source: str
    skip: int
    header_line: int
    header: tuple[str, ...]
    data: tuple[Record, ...]
    text: str | None
    end: int | None
    trailing_empty: int
    dot_after_sample: bool


def sniff(path: Path, *, encoding: str | None = None, delimiter: str | None = None,
          skip_rows: int | None = None) -> Layout:
    """Find the encoding, delimiter and header of a text table; refuse what would misread.

    Parameters
    ----------
    path : Path
        The file; it is only read.
    encoding, delimiter : str, optional
        Given by the user; detected when ``None``.
    skip_rows : int, optional
        Lines before the header, given by the user. When ``None`` a title line above the
        header is refused with the ``--skip-rows`` value that skips it.
    """
    raw, whole_file = _read_sample(path, skip_rows or 0)
    if not raw.strip(b" \t\r\n\x00"):
        raise MicroaggError(f"'{path.name}' is empty.")
    encoding, encoding_source = _encoding(raw, encoding, whole_file, path)
    full_text = _decode_all(path, encoding) if _is_text_mode(encoding) else None
    if full_text is not None:
        nul = full_text.find("\x00")
        if nul >= 0:
            _refuse_nul(path, len(_LINE_END.findall(full_text, 0, nul)) + 1)
        sample = _text_sample(full_text, skip_rows or 0)
        whole_file = len(sample) == len(full_text)
        dot_after = "." in full_text[len(sample):]
    else:
        if not whole_file:
            # Cut at a line end: never inside a multi-byte character or a partial line.
            raw = raw[:max(raw.rfind(b"\n"), raw.rfind(b"\r")) + 1] or raw
        nul, dot_after = _scan_bytes(path, len(raw))
        if nul is not None:
            _refuse_nul(path, line_of_offset(path, nul))
        sample = _decode_sample(path, raw, encoding, encoding_source)
    if delimiter is None:
        delimiter, delimiter_source = _detect_delimiter(sample), "detected"
    else:
        delimiter_source = "given"
    records, used = split_records(sample, delimiter, _SAMPLE_RECORDS)
    if used < len(sample):
        dot_after = dot_after or "." in sample[used:]
    elif not whole_file and len(records) > 1:
        # The sample may end inside a quoted field: leave that record to pandas.
        dot_after = dot_after or any("." in field for field in records[-1].fields)
        records = records[:-1]
    index = _header_index(path, records, skip_rows)
    header = records[index]
    data = tuple(r for r in records[index + 1:] if not r.blank)
    _check_widths(path, header, data)
    end, trailing = _trailing_empty(path, full_text, delimiter)
    return Layout(encoding, encoding_source, delimiter, delimiter_source, index,
                  header.line, header.fields, data, full_text, end, trailing, dot_after)


def split_records(text: str, delimiter: str, limit: int | None = None
                  ) -> tuple[list[Record], int]:
    """Split CSV text into records (RFC 4180 quoting, any line end, no field size limit).

    Returns the first ``limit`` records and the number of characters they take. The
    standard library's reader stops at 128 KiB per field and at a lone ``\\r``; a
    20,000-column header read with the wrong delimiter is one such field.
    """
    d = re.escape(delimiter)
    space = "" if delimiter == " " else " *"
    field = re.compile(rf'{space}"((?:[^"]|"")*)"([^{d}\r\n]*)|([^{d}\r\n]*)')
    records, position, line, size = [], 0, 1, len(text)
    while position < size and (limit is None or len(records) < limit):
        first_line, fields = line, []
        while True:
            match = field.match(text, position)
            if match.group(1) is not None:
                quoted = match.group(1)
                if "\r" in quoted or "\n" in quoted:
                    line += len(_LINE_END.findall(quoted))
                fields.append((quoted.replace('""', '"') + match.group(2)).strip())
            else:
                fields.append(match.group(3).strip())
            position = match.end()
            if position >= size:
                break
            if text[position] == delimiter:
                position += 1
                continue
            position += 2 if text.startswith("\r\n", position) else 1
            line += 1
            break
        records.append(Record(first_line, tuple(fields)))
    return records, position


def line_of_offset(path: Path, offset: int) -> int:
    """The 1-based line holding byte ``offset`` of a byte-mode file."""
    newlines = returns = crlf = 0
    previous_cr = False
    with open(path, "rb") as handle:
        read = 0
        while read < offset:
            chunk = handle.read(min(_CHUNK, offset - read))
            if not chunk:
                break
            newlines += chunk.count(b"\n")
            returns += chunk.count(b"\r")
            crlf += chunk.count(b"\r\n") + (previous_cr and chunk.startswith(b"\n"))
            previous_cr = chunk.endswith(b"\r")
            read += len(chunk)
    return newlines + returns - crlf + 1


def _read_sample(path: Path, skip: int) -> tuple[bytes, bool]:
    # A 20,000-column header can be longer than the usual sample: read on until the
    # header and some data lines are in, or the file ends.
    with open(path, "rb") as handle:
        raw = handle.read(SAMPLE_BYTES)
        while len(raw) < _MAX_SAMPLE_BYTES:
            if max(raw.count(b"\n"), raw.count(b"\r")) >= skip + _MIN_LINES:
                break
            more = handle.read(len(raw))
            if not more:
                return raw, True
            raw += more
        return raw, not handle.read(1)


def detect_encoding(path: Path) -> str:
    """The encoding :func:`sniff` detects for ``path`` (the import preview reads only the
    head of a large file, and must name the encoding the whole read uses)."""
    raw, whole_file = _read_sample(path, 0)
    return _encoding(raw, None, whole_file, path)[0]


def _encoding(raw: bytes, given: str | None, whole_file: bool, path: Path
              ) -> tuple[str, str]:
    if given is not None:
        if codecs.lookup(given).name == "utf-8" and raw.startswith(b"\xef\xbb\xbf"):
            return "utf-8-sig", "given"  # the mark must not start the first column name
        return given, "given"
    for mark, name in _BOMS:
        if raw.startswith(mark):
            return name, "detected"
    if b"\x00" in raw:
        return "utf-8", "detected"  # refused below, naming the line of the NUL byte
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        # A sample cut inside a multi-byte character is still UTF-8.
        if whole_file or not (error.start >= len(raw) - 3
                              and error.reason == "unexpected end of data"):
            return _single_byte_encoding(path, raw, whole_file), "detected"
    return "utf-8", "detected"


_C1 = bytes(range(0x80, 0xA0))
_NOT_C1 = bytes(b for b in range(256) if b not in _C1)
_CP1252_UNDEFINED = frozenset(b"\x81\x8d\x8f\x90\x9d")


def _single_byte_encoding(path: Path, raw: bytes, whole_file: bool) -> str:
    """``'cp1252'`` when the file has bytes 0x80-0x9F and cp1252 defines them all.

    Latin-1 reads those bytes as control characters, Windows-1252 as the euro sign and
    curly quotes (``Prix 5€ “ok”``); a byte cp1252 leaves undefined means the file is
    Latin-1 (or something else) after all. The two agree on every other byte, so only
    these bytes are looked at, in the whole file: a euro sign may come late.
    """
    found = set(raw.translate(None, _NOT_C1))
    if not whole_file:
        with open(path, "rb") as handle:
            handle.seek(len(raw))
            while not found & _CP1252_UNDEFINED and (chunk := handle.read(_CHUNK)):
                found.update(chunk.translate(None, _NOT_C1))
    return "cp1252" if found and not found & _CP1252_UNDEFINED else "latin-1"


def _is_text_mode(encoding: str) -> bool:
    name = codecs.lookup(encoding).name
    if name == "utf-8-sig":
        return False
    return name.startswith(("utf-16", "utf-32")) or "\r\n,;\t|\"." .encode(
        name, errors="replace") != b"\r\n,;\t|\"."


def _decode_all(path: Path, encoding: str) -> str:
    data = path.read_bytes()
    try:
        return data.decode(encoding).lstrip("\ufeff")
    except UnicodeDecodeError as error:
        before = data[:error.start].decode(encoding, errors="replace")
        line = len(_LINE_END.findall(before)) + 1
        raise MicroaggError(
            f"'{path.name}' is not valid {encoding} text (line {line}). Pass the encoding "
            "it was saved in with --encoding.") from None


def _text_sample(text: str, skip: int) -> str:
    end = SAMPLE_BYTES
    for count, match in enumerate(_LINE_END.finditer(text), start=1):
        if count >= skip + _MIN_LINES:
            end = max(end, match.end())
            break
    else:
        return text
    if end >= len(text):
        return text
    sample = text[:end]
    cut = max(sample.rfind("\n"), sample.rfind("\r")) + 1
    return sample[:cut] if cut else sample


def _decode_sample(path: Path, raw: bytes, encoding: str, source: str) -> str:
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as error:
        line = len(_LINE_END.findall(raw[:error.start].decode("latin-1"))) + 1
        hint = "" if source == "given" else " (the encoding its first lines suggest)"
        raise MicroaggError(
            f"'{path.name}' is not valid {encoding} text{hint}: line {line} has a byte "
            f"(0x{raw[error.start]:02X}) that {encoding} does not allow. Pass the encoding "
            "it was saved in with --encoding (e.g. latin-1 or cp1252).") from None


def _scan_bytes(path: Path, sample_size: int) -> tuple[int | None, bool]:
    # memchr-speed scans: a NUL byte anywhere is refused (pandas would copy it into a
    # value), and a '.' after the sample could be a number the sample did not show.
    dot_after, offset = False, 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            position = chunk.find(b"\x00")
            if position >= 0:
                return offset + position, dot_after
            if not dot_after and offset + len(chunk) > sample_size:
                dot_after = chunk.find(b".", max(0, sample_size - offset)) >= 0
            offset += len(chunk)
    return None, dot_after


def _refuse_nul(path: Path, line: int) -> None:
    raise MicroaggError(
        f"'{path.name}' is not a text file: it contains a NUL byte on line {line}. "
        "Export the table again as CSV; if it is UTF-16 text without a byte-order mark, "
        "pass --encoding utf-16-le (or utf-16-be).")


def _detect_delimiter(text: str) -> str:
    best, best_score = ",", (0, 0)
    for delimiter in DELIMITERS:
        widths = [len(r.fields) for r in split_records(text, delimiter, 60)[0] if not r.blank]
        if not widths:
            continue
        # The most common width, not the first line's: a title line has one field.
        mode = max(set(widths), key=lambda w: (widths.count(w), w))
        if mode < 2:
            continue
        score = (widths.count(mode), mode)
        if score > best_score:
            best, best_score = delimiter, score
    return best


def _header_index(path: Path, records: list[Record], skip: int | None) -> int:
    start = skip or 0
    filled = [i for i in range(start, len(records)) if not records[i].blank]
    if not filled:
        raise MicroaggError(f"'{path.name}' has no header line after the first {start} "
                            "lines." if start else f"'{path.name}' is empty.")
    index = filled[0]
    if skip is None and records[index].filled == 1:
        # A title ("Survey 2023, table 4") above the header: one cell, then a wide line.
        wide = next((i for i in filled[1:10] if records[i].filled >= 2), None)
        if wide is not None:
            title, line = records[index], records[wide].line
            text = next(f for f in title.fields if f)
            raise MicroaggError(
                f"'{path.name}' line {title.line} looks like a title ('{text[:40]}'), not a "
                f"header: it has one cell and line {line} has {records[wide].filled}. Pass "
                f"--skip-rows {line - 1} to start at the header on line {line} (or "
                f"--skip-rows {start} to read line {title.line} as the header).")
    return index


def _check_widths(path: Path, header: Record, data: tuple[Record, ...]) -> None:
    for record in data:
        # An empty row with extra delimiters holds nothing to misplace; trailing ones are
        # dropped, and pandas stops at one in the middle.
        if len(record.fields) > len(header.fields) and record.filled:
            extra = record.fields[len(header.fields):]
            hint = (" It ends with an extra delimiter." if not any(extra) else
                    " Check the delimiter, or quote the value that contains it.")
            raise MicroaggError(
                f"'{path.name}' line {record.line} has {len(record.fields)} fields but the "
                f"header (line {header.line}) has {len(header.fields)}.{hint}")


def _trailing_empty(path: Path, text: str | None, delimiter: str) -> tuple[int | None, int]:
    # Spreadsheets leave ",,,,," lines below the table; only those at the very end go.
    if text is not None:
        end, count, _ = _empty_tail(text, delimiter, 0)
        return end, count
    size, length = path.stat().st_size, 64 * 1024
    with open(path, "rb") as handle:
        while True:
            start = max(0, size - length)
            handle.seek(start)
            tail = handle.read().decode("latin-1")  # delimiters and line ends are ASCII
            end, count, reached_top = _empty_tail(tail, delimiter, start)
            if start == 0 or not reached_top:
                return end, count
            length *= 8


def _empty_tail(text: str, delimiter: str, base: int) -> tuple[int | None, int, bool]:
    """Where the trailing delimiter-only lines of ``text`` start, how many there are, and
    whether they reach the top of a tail that starts mid-file (read a longer one)."""
    empty = set(delimiter + ' "\t')
    starts = [0] + [match.end() for match in _LINE_END.finditer(text)]
    count, cut = 0, None
    for start, stop in reversed(list(zip(starts, starts[1:] + [len(text)]))):
        if start == 0 and base > 0:
            break  # possibly a partial line
        content = text[start:stop].rstrip("\r\n")
        if not content.strip(" \t"):
            continue  # a blank line: pandas skips it anyway
        if set(content) - empty:
            return (None if cut is None else base + cut), count, False
        count, cut = count + 1, start
    return (None if cut is None else base + cut), count, base > 0
