"""The command line's options for reading input files (what detection would guess).

::

    --delimiter CHAR      field delimiter: one character, or 'tab'
    --decimal {.,,}       decimal mark
    --thousands CHAR      thousands separator: . , ' space, or none
    --encoding NAME       text encoding, e.g. utf-8, latin-1, cp1252, utf-16
    --skip-rows N         lines (sheet rows) before the header
    --header-row N        1-based line (sheet row) of the header; or --skip-rows, not both

Each option overrides what :func:`core.io.read.read_table` would detect; left out, it
detects. Shared by every command that reads a table (``--sheet`` is the command's own).
"""

from __future__ import annotations

import argparse

from core.cli.arguments import whole_number
from core.errors import MicroaggError

__all__ = ["add_read_options", "read_options_from_args"]

# Characters a shell makes awkward to type, by name.
_NAMED = {"tab": "\t", "\\t": "\t", "space": " ", "none": "", "semicolon": ";",
          "comma": ",", "pipe": "|", "apostrophe": "'"}


def add_read_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--delimiter``, ``--decimal``, ``--thousands``, ``--encoding``,
    ``--skip-rows`` and ``--header-row`` to ``parser``, in an argument group of their own.
    """
    group = parser.add_argument_group(
        "reading the input (detected when left out; the report says what was used)")
    group.add_argument("--delimiter", metavar="CHAR", default=None,
                       help="field delimiter, one character (e.g. ';'), or 'tab'")
    group.add_argument("--decimal", choices=(".", ","), default=None,
                       help="decimal mark of the numbers")
    group.add_argument("--thousands", metavar="CHAR", default=None,
                       help="thousands separator: '.', ',', \"'\" or 'space'; 'none' when "
                            "numbers are not grouped")
    group.add_argument("--encoding", metavar="NAME", default=None,
                       help="text encoding, e.g. utf-8, latin-1, cp1252, utf-16")
    rows = group.add_mutually_exclusive_group()
    rows.add_argument("--skip-rows", metavar="N", type=whole_number(0, "--skip-rows"), default=None,
                      help="lines (sheet rows) before the header, e.g. a title")
    rows.add_argument("--header-row", metavar="N", type=whole_number(1, "--header-row"),
                      default=None, help="1-based line (sheet row) of the header")


def read_options_from_args(args: argparse.Namespace) -> dict:
    """The keyword arguments for :func:`~core.io.read.read_table` that the options give.

    Options left out are left out here too, so ``read_table`` detects them.

    Examples
    --------
    >>> ns = argparse.Namespace(delimiter="tab", decimal=",", thousands="space",
    ...                         encoding=None, skip_rows=2, header_row=None)
    >>> read_options_from_args(ns)
    {'delimiter': '\\t', 'decimal': ',', 'thousands': ' ', 'skip_rows': 2}
    """
    options = {}
    for name in ("delimiter", "decimal", "thousands", "encoding", "skip_rows", "header_row"):
        value = getattr(args, name, None)
        if value is None:
            continue
        if name in ("delimiter", "thousands"):
            value = _NAMED.get(value.lower(), value)
            if name == "delimiter" and value == "":
                raise MicroaggError("--delimiter none: give the character that separates "
                                    "the fields, e.g. --delimiter ';' or --delimiter tab.")
        options[name] = value
    return options

