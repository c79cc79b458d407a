"""Parser types and actions shared by the subcommands: checked while the options are read.

:func:`whole_number` is the type of a count or seed (an integer from a lowest value);
:class:`Columns` takes a list of column names and refuses one given twice.
"""

from __future__ import annotations

import argparse

__all__ = ["Columns", "whole_number"]


def whole_number(lowest: int, flag: str):
    """The ``type=`` of an option that takes an integer ≥ ``lowest``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = lowest - 1
        if value < lowest:
            raise argparse.ArgumentTypeError(
                f"{flag} must be a whole number from {lowest}; got '{text}'")
        return value
    return parse


class Columns(argparse.Action):
    """``nargs="+"`` column names, each at most once."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = set()
        for column in values:
            if column in seen:
                raise argparse.ArgumentError(
                    self, f"'{column}' is listed twice; give each column once")
            seen.add(column)
        setattr(namespace, self.dest, list(values))
