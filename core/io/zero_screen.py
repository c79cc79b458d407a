"""Screens of a text file's bytes: fields that may start with a zero and a digit, fields
that may be codes with a leading zero and a dot (01.10), and fields that may be whole
numbers of 16 digits or more.

:func:`core.io.read_text.read_text` reads the columns of whole numbers again, as
written, to keep codes such as 00094 as text, only when the first screen finds a field
that may be one; the Dask engine (:mod:`core.cluster.partitioned`) uses both before it
looks at its parts. Most files of numbers have neither, and a screen costs a pass over
the bytes where a second parse would cost far more.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.compiled import kernel

__all__ = ["compile_screen", "may_have_codes_or_long_integers", "may_have_dotted_codes",
           "may_have_leading_zeros", "zero_led", "zero_led_compiled", "zero_led_numpy",
           "long_integer", "long_integer_compiled", "long_integer_numpy", "dotted_zero",
           "dotted_zero_compiled", "dotted_zero_numpy"]

_CHUNK = 32 * 2**20


def _field_start(data, i, delimiter):
    """Whether byte i begins a field's value: only spaces, signs or quotes between it and
    a delimiter, a line end or the start of ``data``."""
    j = i - 1
    while j >= 0 and (data[j] == 32 or data[j] == 43 or data[j] == 45 or data[j] == 34):
        j -= 1
    return j < 0 or data[j] == delimiter or data[j] == 10 or data[j] == 13


_field_start_compiled = kernel(_field_start)
if _field_start_compiled is not None:
    _field_start = _field_start_compiled


def zero_led(data, delimiter):
    """Whether some field of ``data`` (bytes as uint8) may start with a zero followed by
    a digit: a 0 and a digit after a delimiter or line start (spaces, a sign or a quote
    between). A cheap screen: a hit (the header's names too) only means look closer."""
    for i in range(data.shape[0] - 1):
        if data[i] == 48 and 48 <= data[i + 1] <= 57 and _field_start(data, i, delimiter):
            return True
    return False


zero_led_compiled = kernel(zero_led)


def dotted_zero(data, delimiter):
    """Whether some field of ``data`` (bytes as uint8) may be a code with a leading zero
    and a dot (01.10, :data:`~core.io.read_report.DOTTED_CODE`): at a field's start
    (after spaces, a sign or a quote) a 0, digits, a dot and digits up to the field's
    end (a delimiter, a line end, a quote or a space), so a date such as 01.02.2020 is
    none. Digits that reach the end of ``data`` count (the field may go on). A screen:
    a hit only means look closer."""
    n = data.shape[0]
    for i in range(n - 1):
        if not (data[i] == 48 and 48 <= data[i + 1] <= 57 and _field_start(data, i, delimiter)):
            continue
        k = i + 1
        while k < n and 48 <= data[k] <= 57:
            k += 1
        if k == n:  # a run of digits at the end: the field may go on
            return True
        if data[k] == 46:  # the fraction's digits, then the field's end
            k += 1
            while k < n and 48 <= data[k] <= 57:
                k += 1
            if k == n or data[k] == delimiter or data[k] == 10 or data[k] == 13 \
                    or data[k] == 34 or data[k] == 32:
                return True
    return False


dotted_zero_compiled = kernel(dotted_zero)


def compile_screen() -> None:
    """Compile the screens (the warm-up's step for reading)."""
    data = np.frombuffer(b"1,01\n", np.uint8)
    for screen in (zero_led_compiled, long_integer_compiled, dotted_zero_compiled):
        if screen is not None:
            screen(data, ord(","))


def may_have_leading_zeros(path: Path, delimiter: str, *, text: str | None = None,
                           end: int | None = None) -> bool:
    """:func:`zero_led` over the file's rows, a chunk at a time (True when the
    delimiter is not one byte: no screen then). ``text``: the file decoded already
    (read instead of the bytes); ``end``: the bytes (or characters) the table fills, when
    not the whole file (:class:`~core.io.csv_dialect.Layout`'s ``text`` and ``end``)."""
    return _scan(path, delimiter, (zero_led_compiled or zero_led_numpy,), text, end)[0]


def may_have_dotted_codes(path: Path, delimiter: str, *, text: str | None = None,
                          end: int | None = None) -> bool:
    """:func:`dotted_zero` over the file's rows, as :func:`may_have_leading_zeros`. Every
    field it finds, :func:`zero_led` finds too, so it is asked only after that one has
    found a field: a file of numbers alone is read once."""
    return _scan(path, delimiter, (dotted_zero_compiled or dotted_zero_numpy,), text, end)[0]


def may_have_codes_or_long_integers(path: Path, delimiter: str) -> tuple[bool, bool, bool]:
    """``(zero-led, dotted, long)``: :func:`zero_led` and :func:`long_integer` over the
    file's rows in one pass over its bytes, as :func:`may_have_leading_zeros`, then
    :func:`dotted_zero` when the first found a field."""
    zero, long = _scan(path, delimiter, (zero_led_compiled or zero_led_numpy,
                                         long_integer_compiled or long_integer_numpy))
    return zero, zero and may_have_dotted_codes(path, delimiter), long


def _scan(path: Path, delimiter: str, screens, text=None, end=None) -> list[bool]:
    """Whether each of ``screens`` finds a field, over the file's bytes a chunk at a
    time, each chunk after the last bytes of the one before (a field may lie across
    their edge; 64 hold the start of any field a screen looks for, or 16 digits of it);
    all True when the delimiter is not one byte (no screen then)."""
    if len(delimiter) != 1 or ord(delimiter) > 127:
        return [True] * len(screens)
    code = ord(delimiter)
    if text is not None:
        data = np.frombuffer(text[:end].encode("utf-8"), np.uint8)
        return [bool(screen(data, code)) for screen in screens]
    found = [False] * len(screens)
    with open(path, "rb") as handle:
        left, carry = end, b""
        while (left is None or left > 0) and not all(found):
            chunk = handle.read(_CHUNK if left is None else min(_CHUNK, left))
            if not chunk:
                break
            if left is not None:
                left -= len(chunk)
            data = np.frombuffer(carry + chunk, np.uint8)
            found = [hit or bool(screen(data, code)) for hit, screen in zip(found, screens)]
            carry = chunk[-64:]
    return found


def zero_led_numpy(data, delimiter):
    """A coarser :func:`zero_led` in numpy (no compiled kernels): a zero, a digit, and
    just before them a delimiter, a line start, a quote, a space or a sign. It finds
    every field :func:`zero_led` finds, and some more (it looks one byte back only)."""
    if data.shape[0] < 2:
        return False
    zero = (data[:-1] == 48) & (data[1:] >= 48) & (data[1:] <= 57)
    before = np.concatenate([[10], data[:-2]])
    return bool((zero & np.isin(before, [delimiter, 10, 13, 34, 32, 43, 45])).any())


def dotted_zero_numpy(data, delimiter):
    """A coarser :func:`dotted_zero` in numpy (no compiled kernels): a field start as
    :func:`zero_led_numpy` sees one, and a dot anywhere (or a digit last: the field may
    go on). It finds every field :func:`dotted_zero` finds, and some more."""
    return zero_led_numpy(data, delimiter) and bool((data == 46).any()
                                                    or 48 <= data[-1] <= 57)


_LONG = 16  # digits: every whole number from 2^53 on has 16 at least


def long_integer(data, delimiter):
    """Whether some field of ``data`` (bytes as uint8) may be a whole number of 16 digits
    or more, which a float64 does not hold exactly from 2^53 on: at a field's start
    (after spaces, a sign or a quote) 16 digits or more, then no '.', 'e' or 'E'. A
    run of digits that reaches the end of ``data`` counts (the field may go on). A
    screen: a hit only means look closer."""
    n = data.shape[0]
    i = 0
    start = True
    while i < n:
        b = data[i]
        if b == delimiter or b == 10 or b == 13:
            start = True
            i += 1
        elif start and (b == 32 or b == 43 or b == 45 or b == 34):
            i += 1
        elif start and 48 <= b <= 57:
            j = i
            while j < n and 48 <= data[j] <= 57:
                j += 1
            if j - i >= _LONG and (j == n or (data[j] != 46 and data[j] != 101
                                               and data[j] != 69)):
                return True
            start = False
            i = j
        else:
            start = False
            i += 1
    return False


long_integer_compiled = kernel(long_integer)


def long_integer_numpy(data, delimiter):
    """A coarser :func:`long_integer` in numpy (no compiled kernels): 16 digits in a
    row anywhere. It finds every field :func:`long_integer` finds, and some more."""
    if data.shape[0] < _LONG:
        return False
    digits = (data >= 48) & (data <= 57)
    runs = np.lib.stride_tricks.sliding_window_view(digits, _LONG)
    return bool(runs.all(axis=1).any())
