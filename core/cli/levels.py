"""The command line's ``--ordinal`` and ``--nominal`` options (measurement levels).

::

    --ordinal COL[=v1,v2,...] [COL[=...] ...]   ordered categories, lowest first; without
                                                a list, the column's sorted values (or its
                                                Stata value-label order)
    --nominal COL [COL ...]                     unordered categories (0/1 distance)

A text quasi-identifier is nominal without either option; a column of numbers is numeric.
Shared by ``anonymize``, ``verify`` and ``measure``.
"""

from __future__ import annotations

import argparse

from core.errors import MicroaggError
from core.data.roles import Level

__all__ = ["add_level_options", "levels_from_args"]


def add_level_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--ordinal`` and ``--nominal`` to ``parser``."""
    parser.add_argument(
        "--ordinal", nargs="+", action="extend", default=[], metavar="COL[=v1,v2,...]",
        help="quasi-identifiers with ordered categories (rank distance, released as the "
             "median category); give the order lowest first, or leave it out to sort the "
             "values")
    parser.add_argument(
        "--nominal", nargs="+", action="extend", default=[], metavar="COL",
        help="quasi-identifiers with unordered categories (0/1 distance, released as the "
             "most frequent category), and confidential columns of codes stored as numbers "
             "(t-closeness by the equal distance, not the ordered one); text columns are "
             "nominal by default")


def levels_from_args(args: argparse.Namespace) -> tuple[dict[str, Level], dict[str, tuple]]:
    """The ``levels`` and ``orders`` of a :class:`~core.data.roles.RoleSpec` from the options.

    Examples
    --------
    >>> ns = argparse.Namespace(ordinal=["grade=low,mid,high"], nominal=["sex"])
    >>> levels_from_args(ns)
    ({'grade': <Level.ORDINAL: 'ordinal'>, 'sex': <Level.NOMINAL: 'nominal'>}, {'grade': ('low', 'mid', 'high')})
    """
    levels: dict[str, Level] = {}
    orders: dict[str, tuple] = {}
    for item in getattr(args, "ordinal", []) or []:
        column, _, listed = item.partition("=")
        column = column.strip()
        if not column:
            raise MicroaggError(f"--ordinal '{item}': give a column name, e.g. "
                                "--ordinal education=primary,secondary,tertiary.")
        levels[column] = Level.ORDINAL
        if listed.strip():
            orders[column] = tuple(v.strip() for v in listed.split(","))
            if any(not v for v in orders[column]):
                raise MicroaggError(f"--ordinal '{item}': the order has an empty "
                                    "category; separate categories by single commas.")
    for column in getattr(args, "nominal", []) or []:
        if column in levels:
            raise MicroaggError(f"Column '{column}' is given both --ordinal and --nominal; "
                                "choose one.")
        levels[column] = Level.NOMINAL
    return levels, orders
