"""The ``microagg measure`` subcommand: every measure of :mod:`core.measures.measure` for two files.

::

    microagg measure ORIGINAL MASKED --qi COL [COL ...] [--ordinal ...] [--nominal ...]
                     [--confidential COL ...] [--strata COL ...]
                     [--known "A,B;C,D" | --scenarios all|singles|pairs|every|random
                      [--scenario-size S] [--n-scenarios N] [--seed SEED]]
                     [--interval PERCENT] [--sheet NAME] [--summary-json PATH]

The masked table may come from any tool; both tables must hold the same records in the
same order. Wiring into :mod:`core.cli.main`: call :func:`add_measure_command` on the
subparsers object and dispatch ``args.command == "measure"`` to :func:`run_measure`.
Bad input raises :class:`~core.errors.MicroaggError` (the CLI's exit code 2).
"""

from __future__ import annotations

import argparse

from core.errors import MicroaggError
from core.cli.arguments import Columns, whole_number
from core.cli.released import add_missing_option, read_released, released_records
from core.cli.release import write_json
from core.io.read import read_table
from core.cli.levels import add_level_options, levels_from_args
from core.cli.outputs import check_destinations
from core.cli.read_options import add_read_options, read_options_from_args
from core.measures.scenarios import SCENARIO_PRESETS
from core.measures.measure import measure
from core.data.roles import RoleSpec

__all__ = ["add_measure_command", "run_measure"]


def add_measure_command(subparsers) -> argparse.ArgumentParser:
    """Add the ``measure`` subcommand to an ``add_subparsers()`` object; return its parser."""
    command = subparsers.add_parser(
        "measure", help="disclosure risk and information loss of a masked table",
        description="k', SSE, IL, IL1, DLD, ID, DR, score, class sizes and per-class EMD "
                    "of MASKED against ORIGINAL (Nin, Mic1D-k, Section 2.3).")
    command.add_argument("original", help="the original table (CSV, XLSX or DTA)")
    command.add_argument("masked", help="the masked table, same records in the same order")
    command.add_argument("--qi", nargs="+", action=Columns, required=True, metavar="COL",
                         help="quasi-identifier columns")
    add_level_options(command)
    add_read_options(command)  # for the original; a released file is read as written
    command.add_argument("--confidential", nargs="+", action=Columns, default=[],
                         metavar="COL",
                         help="confidential columns (EMD per equivalence class)")
    command.add_argument("--strata", nargs="+", action=Columns, default=[], metavar="COL",
                         help="the release's stratum columns: released as they are, so "
                              "the classes are those of the quasi-identifiers and strata "
                              "(as anonymize --strata measured them)")
    command.add_argument("--known", metavar='"A,B;C,D"',
                         help="the attribute sets the intruder knows (overrides --scenarios)")
    command.add_argument("--scenarios", choices=SCENARIO_PRESETS, default="all",
                         help="preset intruder scenarios (default: all quasi-identifiers)")
    command.add_argument("--scenario-size", type=int, default=None, metavar="S",
                         help="attributes per random scenario")
    command.add_argument("--n-scenarios", type=int, default=10, metavar="N",
                         help="number of random scenarios (default 10)")
    command.add_argument("--seed", type=whole_number(0, "--seed"), default=0,
                         help="seed of the random scenarios")
    command.add_argument("--interval", type=float, default=1.0, metavar="PERCENT",
                         help="interval disclosure: half-width in percent of the records, "
                              "in rank terms (default 1)")
    command.add_argument("--sheet", help="XLSX sheet of both tables (default: the first)")
    add_missing_option(command)
    command.add_argument("--summary-json", metavar="PATH", help="write the measures here")
    command.add_argument("--overwrite", action="store_true",
                         help="replace the summary file if it exists")
    return command


def run_measure(args: argparse.Namespace) -> int:
    """Run ``microagg measure``; print a short report; return the exit code (0)."""
    if args.known is None and args.scenarios == "random" and not (
            args.scenario_size is not None and 1 <= args.scenario_size <= len(args.qi)):
        raise MicroaggError(f"--scenarios random needs --scenario-size S, the attributes "
                            f"per scenario: a whole number from 1 to {len(args.qi)} (the "
                            "number of --qi columns).")
    check_destinations((args.original, args.masked), (args.summary_json,),
                       overwrite=args.overwrite)
    original = read_table(args.original, sheet=args.sheet, **read_options_from_args(args))
    masked = read_released(args.masked, sheet=args.sheet, original=original)
    original, masked, flagged, flag = released_records(
        original, masked, args.masked, args.missing, [*args.qi, *args.strata, *args.confidential])
    if flagged:
        print(f"{flagged} record(s) flagged 1 in '{flag}' were released unmasked and are "
              f"not measured; the figures describe the other {len(masked)}.")
    for column in args.strata:
        for name, path, frame in (("original", args.original, original),
                                  ("masked", args.masked, masked)):
            if column not in frame.columns:
                raise MicroaggError(f"Stratum column '{column}' is not in the {name} "
                                    f"table '{path}'.")
    levels, orders = levels_from_args(args)
    roles = RoleSpec(quasi_identifiers=tuple(args.qi), confidential=tuple(args.confidential),
                     strata=tuple(args.strata), levels=levels, orders=orders)
    result = measure(original, masked, roles, known=args.known, scenarios=args.scenarios,
                     scenario_size=args.scenario_size, n_scenarios=args.n_scenarios,
                     seed=args.seed, interval=args.interval)
    if args.summary_json:
        write_json(args.summary_json, result.summary())
    print(f"{result.n_records} records, {len(result.scenarios)} intruder scenario(s): "
          f"k' = {result.k_prime:.3f}, IL = {result.il:.4f}%, IL1 = {result.il1:.2f}, "
          f"DLD = {result.dld:.2f}%, ID = {result.id:.2f}%, DR = {result.dr:.2f}, "
          f"score = {result.score:.2f}")
    for name, value in result.max_emd.items():
        print(f"  largest class EMD of '{name}': {value:.4f}")
    return 0
