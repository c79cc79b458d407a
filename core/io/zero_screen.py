"""A screen of a text file's bytes for fields that may start with a zero and a digit.

:func:`core.io.read_text.read_text` reads the columns of whole numbers again, as
written, to keep codes such as 00094 as text, only when this screen finds a field that
may be one: most files of numbers have none, and the screen costs a pass over the bytes
where a second parse would cost far more.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.compiled import kernel

__all__ = ["compile_screen", "may_have_leading_zeros", "zero_led", "zero_led_compiled",
           "zero_led_numpy"]

_CHUNK = 32 * 2**20


def zero_led(data, delimiter):
    """Whether some field of ``data`` (bytes as uint8) may start with a zero followed by
    a digit: a 0 and a digit after a delimiter or line start (spaces, a sign or a quote
    between). A cheap screen: a hit (the header's names too) only means look closer."""
    for i in range(data.shape[0] - 1):
        if data[i] == 48 and 48 <= data[i + 1] <= 57:
            j = i - 1
            while j >= 0 and (data[j] == 32 or data[j] == 43 or data[j] == 45
                              or data[j] == 34):
                j -= 1
            if j < 0 or data[j] == delimiter or data[j] == 10 or data[j] == 13:
                return True
    return False


zero_led_compiled = kernel(zero_led)


def compile_screen() -> None:
    """Compile the screen for leading zeros (the warm-up's step for reading)."""
    if zero_led_compiled is not None:
        zero_led_compiled(np.frombuffer(b"1,01\n", np.uint8), ord(","))


def may_have_leading_zeros(path: Path, delimiter: str, *, text: str | None = None,
                           end: int | None = None) -> bool:
    """:func:`zero_led` over the file's rows, a chunk at a time (True when the
    delimiter is not one byte: no screen then). ``text``: the file decoded already
    (read instead of the bytes); ``end``: the bytes (or characters) the table fills, when
    not the whole file (:class:`~core.io.csv_dialect.Layout`'s ``text`` and ``end``)."""
    if len(delimiter) != 1 or ord(delimiter) > 127:
        return True
    code = ord(delimiter)
    screen = zero_led_compiled or zero_led_numpy
    if text is not None:
        data = text[:end].encode("utf-8")
        return bool(screen(np.frombuffer(data, np.uint8), code))
    with open(path, "rb") as handle:
        left, carry = end, b""
        while left is None or left > 0:
            chunk = handle.read(_CHUNK if left is None else min(_CHUNK, left))
            if not chunk:
                return False
            if left is not None:
                left -= len(chunk)
            if screen(np.frombuffer(carry + chunk, np.uint8), code):
                return True
            carry = chunk[-16:]  # a field's start may lie across the chunks' edge
    return False


def zero_led_numpy(data, delimiter):
    """A coarser :func:`zero_led` in numpy (no compiled kernels): a zero, a digit, and
    just before them a delimiter, a line start, a quote, a space or a sign. It finds
    every field :func:`zero_led` finds, and some more (it looks one byte back only)."""
    if data.shape[0] < 2:
        return False
    zero = (data[:-1] == 48) & (data[1:] >= 48) & (data[1:] <= 57)
    before = np.concatenate([[10], data[:-2]])
    return bool((zero & np.isin(before, [delimiter, 10, 13, 34, 32, 43, 45])).any())
