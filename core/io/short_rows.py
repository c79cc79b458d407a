"""Rows with fewer fields than the header: refused, naming the line.

pandas fills the missing fields of a short row with missing values; a ``;`` row in a
``,`` file becomes one value and blanks. :func:`check_short_records` runs after the parse,
and only when the last column has a missing value (which every short row leaves).
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import numpy as np

from core.errors import MicroaggError
from core.io.csv_dialect import _CHUNK, _LINE_END, Layout, line_of_offset

__all__ = ["check_short_records"]


def check_short_records(path: Path, layout: Layout, width: int, rows: int) -> None:
    """Refuse a record with fewer fields than the header's ``width``; ``rows`` were read.

    pandas fills the missing fields of a short row with missing values, which silently
    shifts nothing but loses the row's meaning (a ``;`` row in a ``,`` file is one field).
    Blank lines and rows of delimiters only hold nothing to misplace and are allowed.
    An unquoted file whose separators add up to the rows read needs no more; otherwise
    it is scanned with numpy, 8 MiB at a time: a field separator or line end inside
    quotes is masked by the parity of the quotes before it (RFC 4180: ``""`` toggles
    twice). A quote that is not at a field's edge (``5" pipe``, literal to pandas), or a
    space delimiter, is left to the standard library's reader, which is slower but reads
    such quotes as pandas does.
    """
    if width < 2:
        return
    if layout.text is not None:
        data = layout.text[:layout.end].encode("utf-8")

        def chunks():
            return (data[i:i + _CHUNK] for i in range(0, len(data), _CHUNK))

        def line_of(offset: int) -> int:
            return len(_LINE_END.findall(data[:offset].decode("utf-8", "replace"))) + 1
    else:
        def chunks():
            return _file_chunks(path, layout.end)

        def line_of(offset: int) -> int:
            return line_of_offset(path, offset)
    if layout.delimiter == " ":
        _check_short_with_csv(path, layout, width)
    elif not _widths_add_up(chunks(), layout, width, rows) and not _scan_short(
            chunks(), layout, width, line_of, path):
        _check_short_with_csv(path, layout, width)


def _widths_add_up(chunks, layout: Layout, width: int, rows: int) -> bool:
    """Whether an unquoted file holds exactly ``width - 1`` separators per row read.

    pandas refuses a row with too many fields, so any short row makes the count fall
    short; counting bytes is several times quicker than the line-by-line scan.
    """
    total, before_data = 0, None
    for chunk in chunks:
        if b'"' in chunk:
            return False
        if before_data is None:
            head = chunk.decode("latin-1")  # separators and line ends are ASCII
            ends = [m.end() for _, m in zip(range(layout.header_line),
                                            _LINE_END.finditer(head))]
            if len(ends) < layout.header_line:
                return False
            before_data = head.count(layout.delimiter, 0, ends[-1])
        total += chunk.count(layout.delimiter.encode())
    return total == (before_data or 0) + (width - 1) * rows


def _file_chunks(path: Path, end: int | None):
    with open(path, "rb") as handle:
        read = 0
        while chunk := handle.read(_CHUNK if end is None else min(_CHUNK, end - read)):
            read += len(chunk)
            yield chunk


def _scan_short(chunks, layout: Layout, width: int, line_of, path: Path) -> bool:
    """The numpy scan; ``False`` when a quote is not at a field's edge (scan otherwise)."""
    delimiter = ord(layout.delimiter)
    edges = np.zeros(256, bool)
    edges[[delimiter, 10, 13, 32]] = True
    carry, base = b"", 0
    for chunk in [*chunks, None]:
        data = carry + (chunk or b"")
        if not data:
            break
        a = np.frombuffer(data, np.uint8)
        quote = a == 34
        quotes = np.flatnonzero(quote)
        ends, separators = (a == 10) | (a == 13), a == delimiter
        if quotes.size:  # inside quotes: an odd number of quotes up to here
            inside = np.bitwise_xor.accumulate(quote.view(np.uint8)).view(bool)
            ends &= ~inside
            separators &= ~inside
        ends, separators = np.flatnonzero(ends), np.flatnonzero(separators)
        if chunk is not None:  # the bytes after the last line end go with the next chunk
            if not ends.size:
                carry = data
                continue
            cut = int(ends[-1]) + 1
        else:
            cut = len(a)
            if not ends.size or ends[-1] != len(a) - 1:
                ends = np.append(ends, len(a))
        if quotes.size and not _quotes_at_edges(a, quotes[quotes < cut], edges):
            return False
        starts = np.concatenate(([0], ends[:-1] + 1))
        # No separator sits on a line end: the separators before each end, differenced.
        counts = np.diff(np.searchsorted(separators, ends), prepend=0)
        for i in np.flatnonzero((counts < width - 1) & (ends > starts)):
            content = data[starts[i]:ends[i]].strip(layout.delimiter.encode() + b' \t"')
            if content:  # not a blank line, nor a row of delimiters only
                line = line_of(base + int(starts[i]))
                if line > layout.header_line:
                    _refuse_short(path, layout, line, int(counts[i]) + 1, width)
        carry, base = data[cut:], base + cut
    return True


def _quotes_at_edges(a: np.ndarray, quotes: np.ndarray, edges: np.ndarray) -> bool:
    # With the buffer starting outside quotes, even-numbered quotes open a field and the
    # others close it; an escaped quote ("") closes and opens at once.
    opening, closing = quotes[0::2], quotes[1::2]
    before = opening[opening > 0] - 1
    after = closing[closing < len(a) - 1] + 1
    return bool((edges[a[before]] | (a[before] == 34)).all()
                and (edges[a[after]] | (a[after] == 34)).all())


def _check_short_with_csv(path: Path, layout: Layout, width: int) -> None:
    limit = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)  # a 200 KiB cell is a cell, not an error
    try:
        if layout.text is not None:
            handle = io.StringIO(layout.text[:layout.end], newline="")
        else:
            handle = open(path, encoding=layout.encoding, newline="", errors="replace")
        with handle:
            reader, first = csv.reader(handle, delimiter=layout.delimiter,
                                       skipinitialspace=True), 1
            for record in reader:
                if (first > layout.header_line and len(record) < width
                        and any(field.strip() for field in record)):
                    _refuse_short(path, layout, first, len(record), width)
                first = reader.line_num + 1
    finally:
        csv.field_size_limit(limit)


def _refuse_short(path: Path, layout: Layout, line: int, found: int, width: int) -> None:
    raise MicroaggError(
        f"'{path.name}' line {line} has {found} field{'s' if found != 1 else ''} but the "
        f"header (line {layout.header_line}) has {width}. Check the delimiter, or add the "
        "missing fields (an empty field between delimiters is a missing value).")
