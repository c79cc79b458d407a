"""The ``microagg`` command line.

::

    microagg anonymize INPUT -o OUTPUT --method mdav --k 5 --qi COL [COL ...]
                       [--ordinal COL[=v1,v2,...] ...] [--nominal COL ...]
                       [--growth nn|nc] [--refine none|tfrp2|igd] [--gamma G]
                       [--confidential COL ...] [--identifier COL ...]
                       [--strata COL ... [--merge-small-strata]] [--blocks "A,B;C,D"]
                       [--sheet NAME] [--summary-json PATH] [--report PATH]
                       [--dp-epsilon E --confidential-bounds COL=LO:HI ... [--noise-seed S]]
                       [--intruder all|singles|pairs|random] [--known "A,B;C,D"]
                       [--missing stop|exclude]
    microagg anonymize INPUT -o FOLDER --engine dask [--scheduler ADDRESS] [--block-size N]
                       [--workers N] [--output-format parquet|csv] --method mdav --k 5
                       --qi COL [COL ...] ...   (core.cli.blocked)
    microagg rerun PROJECT --run N -o OUTPUT [--data PATH] [--summary-json PATH]
                   [--report PATH] [--overwrite]
    microagg verify ORIGINAL MASKED --qi COL ... --k 5 [--ordinal ...] [--nominal ...]
                    [--identifier COL ...]
                    [--confidential COL ... --t T]
    microagg measure ORIGINAL MASKED --qi COL ... [--confidential COL ...] [--strata COL ...]
                     [--known "A,B;C,D"]
                     [--summary-json PATH]
    microagg methods

Exit codes: 0 success (for ``verify``: the table is k-anonymous), 1 ``verify`` found the
table not k-anonymous (``rerun``: the guarantee was not met), 2 bad input (one line on stderr, never a traceback), 3 an
unexpected internal error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.pipeline import anonymize
from core.errors import Cancelled, MicroaggError
from core.progress import TaskState
from core.cli.arguments import Columns, whole_number
from core.cli.read_options import add_read_options, read_options_from_args
from core.cli.released import add_missing_option, read_released, released_records
from core.io.read import read_table, read_table_with_report
from core.io.write import check_table_path
from core.cli.blocked import add_cluster_options, check_engine_options, run_blocked
from core.cli.console import Progress, log_internal_error
from core.cli.levels import add_level_options, levels_from_args
from core.cli.measure import add_measure_command, run_measure
from core.cli.outputs import check_destinations
from core.cli.release import print_result, write_json, write_outputs
from core.cli.rerun import add_rerun_command, run_rerun
from core.pipeline.missing import MISSING_OPTIONS, MissingValuesError
from core.pipeline.partition import parse_blocks, resolve_blocks
from core.methods.contract import T
from core.methods.registry import Interval, Options, get_method, methods
from core.data.roles import RoleSpec
from core.verify.tcloseness import verify_t_closeness
from core.verify.kanonymity import verify_k_anonymity

__all__ = ["main"]

EXIT_OK, EXIT_NOT_VERIFIED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise MicroaggError(f"{message} (see '{self.prog} --help')")


def _parameter_options(parser: argparse.ArgumentParser) -> list[str]:
    """Add one ``--name`` option per registry parameter; return their names.

    Where methods give a parameter different meanings (k counts records for MDAV and
    values for Mic1D-k; t is an EMD bound for tc-merge and a ratio for tc-bucket), the
    help lists each meaning with the methods it belongs to.
    """
    declared: dict[str, list] = {}
    for method in methods():
        for p in method.parameters:
            declared.setdefault(p.name, []).append((method.name, p))
    group = parser.add_argument_group("method parameters (see 'microagg methods NAME')")
    for name, uses in declared.items():
        first = uses[0][1]
        flag = "--" + name.replace("_", "-")
        if isinstance(first.constraint, Options):
            values = tuple(dict.fromkeys(v for _, p in uses for v in p.constraint.values))
            group.add_argument(flag, dest=name, choices=values, default=None,
                               help=_meanings(uses))
        else:
            kind = first.constraint.kind if isinstance(first.constraint, Interval) else str
            group.add_argument(flag, dest=name, type=_typed(kind, flag), default=None,
                               metavar=name.upper(), help=_meanings(uses))
    return list(declared)


def _meanings(uses) -> str:
    """One help line per distinct meaning: "methods: help (allowed)"."""
    meanings: dict[tuple[str, str], list[str]] = {}
    for method, p in uses:
        meanings.setdefault((p.help, p.constraint.describe()), []).append(method)
    if len(meanings) == 1:
        (text, allowed), _ = next(iter(meanings.items()))
        return f"{text} ({allowed})"
    return " | ".join(f"{', '.join(names)}: {text} ({allowed})"
                      for (text, allowed), names in meanings.items())


def _typed(kind, flag):
    def convert(text):
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{flag} needs {'an integer' if kind is int else 'a number'}, got {text!r}"
            ) from None
    return convert


def build_parser() -> tuple[argparse.ArgumentParser, list[str]]:
    parser = _Parser(prog="microagg", description="Microaggregation for safe microdata release.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = commands.add_parser("anonymize", help="mask a table and verify the result")
    run.add_argument("input", help="CSV, XLSX or DTA file (never modified); with --engine "
                                   "dask a CSV or Parquet file or a folder of parts")
    run.add_argument("-o", "--output", required=True,
                     help="masked table, .csv or .xlsx; with --engine dask a folder")
    run.add_argument("--method", default="mdav", choices=[m.name for m in methods()])
    run.add_argument("--qi", nargs="+", action=Columns, required=True, metavar="COL",
                     help="quasi-identifier columns (numeric, ordinal or nominal)")
    add_level_options(run)
    run.add_argument("--confidential", nargs="+", action=Columns, default=[], metavar="COL")
    run.add_argument("--identifier", nargs="+", action=Columns, default=[], metavar="COL",
                     help="identifier columns (dropped from the output)")
    run.add_argument("--strata", nargs="+", action=Columns, default=[], metavar="COL",
                     help="group records only with records of the same stratum")
    run.add_argument("--merge-small-strata", action="store_true",
                     help="merge a stratum with fewer than k records into its nearest one")
    run.add_argument("--blocks", metavar='"A,B;C,D"',
                     help="microaggregate each block of quasi-identifiers separately "
                          "(k-anonymity then holds per block only)")
    run.add_argument("--sheet", help="XLSX sheet to read (default: the first)")
    add_read_options(run)
    run.add_argument("--summary-json", metavar="PATH", help="write a JSON summary here")
    run.add_argument("--overwrite", action="store_true",
                     help="replace output files that already exist (refused otherwise)")
    run.add_argument("--quiet", action="store_true",
                     help="no progress line on the terminal")
    run.add_argument("--report", metavar="PATH", help="write an HTML report here")
    run.add_argument("--intruder", choices=("all", "singles", "pairs", "random"),
                     default="all", help="what the intruder knows, for the risk measures")
    run.add_argument("--known", metavar='"A,B;C,D"',
                     help="explicit intruder scenarios (overrides --intruder)")
    run.add_argument("--seed", type=whole_number(0, "--seed"), default=0,
                     help="seed of the random intruder scenarios")
    run.add_argument("--noise-seed", type=whole_number(0, "--noise-seed"), default=None,
                     metavar="S",
                     help="seed of the Laplace noise, only to repeat a run (default: drawn "
                          "afresh from the operating system; a secret, never reported: "
                          "whoever knows it can subtract the noise)")
    run.add_argument("--dp-epsilon", type=_typed(float, "--dp-epsilon"), metavar="E",
                     help="add Laplace noise with scale (HI-LO)/E to every confidential "
                          "column after a k-anonymity method")
    run.add_argument("--confidential-bounds", action="append", metavar="COL=LO:HI",
                     help="bounds of a confidential column for --dp-epsilon (required for "
                          "each one; never taken from the data)")
    run.add_argument("--missing", choices=MISSING_OPTIONS, default="stop",
                     help="records with a missing value in a quasi-identifier, stratum or "
                          "needed confidential column: stop with an error (default), or "
                          "exclude them from masking and release them unmasked, flagged "
                          "in the column 'unmasked_missing' (they are not protected)")
    add_cluster_options(run, _typed)
    parameter_names = _parameter_options(run)

    check = commands.add_parser("verify", help="check that a masked table is k-anonymous")
    check.add_argument("original")
    check.add_argument("masked")
    check.add_argument("--qi", nargs="+", action=Columns, required=True, metavar="COL")
    add_level_options(check)
    check.add_argument("--k", type=_typed(int, "--k"), required=True)
    check.add_argument("--confidential", nargs="+", action=Columns, default=[],
                       metavar="COL", help="with --t: also check t-closeness of these columns")
    check.add_argument("--t", type=_typed(float, "--t"), help="EMD bound for t-closeness")
    check.add_argument("--identifier", nargs="+", action=Columns, default=[], metavar="COL")
    check.add_argument("--strata", nargs="+", action=Columns, default=[], metavar="COL")
    check.add_argument("--blocks", metavar='"A,B;C,D"', help="check each block separately")
    check.add_argument("--sheet", help="XLSX sheet of both tables (default: the first)")
    add_read_options(check)  # for the original; a released file is read as written
    add_missing_option(check)
    check.add_argument("--summary-json", metavar="PATH")
    check.add_argument("--overwrite", action="store_true",
                       help="replace the summary file if it exists")

    add_measure_command(commands)
    add_rerun_command(commands)
    listing = commands.add_parser("methods", help="list the methods and their parameters")
    listing.add_argument("name", nargs="?", help="show one method only")
    return parser, parameter_names


def _anonymize(args, parameter_names) -> int:
    check_engine_options(args)
    if args.engine == "dask":
        levels, orders = levels_from_args(args)
        return run_blocked(args, parameter_names, RoleSpec(
            quasi_identifiers=tuple(args.qi), confidential=tuple(args.confidential),
            identifiers=tuple(args.identifier), strata=tuple(args.strata),
            levels=levels, orders=orders))
    check_destinations((args.input,), (args.output, args.summary_json, args.report),
                       overwrite=args.overwrite, table=args.output, report=args.report)
    table, read = read_table_with_report(args.input, sheet=args.sheet,
                                         **read_options_from_args(args))
    for note in read.notes:
        print(f"microagg: read {Path(args.input).name}: {note}", file=sys.stderr)
    check_table_path(args.output, rows=len(table))  # the release has the table's rows
    levels, orders = levels_from_args(args)
    roles = RoleSpec(quasi_identifiers=tuple(args.qi), confidential=tuple(args.confidential),
                     identifiers=tuple(args.identifier), strata=tuple(args.strata),
                     levels=levels, orders=orders)
    params = {name: getattr(args, name) for name in parameter_names
              if getattr(args, name) is not None}
    progress = Progress(sys.stderr, quiet=args.quiet, n_records=len(table))
    try:
        result = anonymize(table, roles, args.method, state=TaskState(progress),
                           blocks=args.blocks, merge_small_strata=args.merge_small_strata,
                           intruder=args.intruder, known=args.known, seed=args.seed,
                           dp_epsilon=args.dp_epsilon, noise_seed=args.noise_seed,
                           confidential_bounds=(",".join(args.confidential_bounds)
                                                if args.confidential_bounds else None),
                           missing=args.missing, **params)
    except MissingValuesError as error:
        raise MicroaggError(f"{error} On the command line: --missing exclude.") from None
    finally:
        progress.done()
    write_outputs(result, args.output, source=Path(args.input).name,
                  summary_json=args.summary_json, report=args.report,
                  input_path=args.input, original=table)
    print_result(result, args.output)
    return EXIT_OK


def _verify(args) -> int:
    if args.k < 1:
        raise MicroaggError(f"--k must be at least 1, got {args.k}.")
    if args.t is not None or args.confidential:
        if args.t is None or not args.confidential:
            raise MicroaggError("t-closeness needs both --t and --confidential.")
        if not T.constraint.accepts(args.t):  # the bound anonymize's methods take
            raise MicroaggError(f"--t must be {T.constraint.describe()}, got {args.t:g}.")
    levels, orders = levels_from_args(args)
    roles = RoleSpec(quasi_identifiers=tuple(args.qi), identifiers=tuple(args.identifier),
                     confidential=tuple(args.confidential), strata=tuple(args.strata),
                     levels=levels, orders=orders)
    # anonymize's rule: every quasi-identifier in exactly one block (MDAV stands for
    # any method that takes blocks).
    blocks = (resolve_blocks(roles, parse_blocks(args.blocks), get_method("mdav"))
              if args.blocks else None)
    check_destinations((args.original, args.masked), (args.summary_json,),
                       overwrite=args.overwrite)
    original = read_table(args.original, sheet=args.sheet, **read_options_from_args(args))
    masked = read_released(args.masked, sheet=args.sheet, original=original)
    original, masked, flagged, flag = released_records(
        original, masked, args.masked, args.missing, [*args.qi, *args.strata, *args.confidential])
    roles.validate(original)
    verification = verify_k_anonymity(original, masked, roles, args.k, blocks=blocks)
    if flagged:
        print(f"{flagged} record(s) flagged 1 in '{flag}' were released unmasked and are "
              f"not checked; the check covers the other {len(masked)}.")
    print(verification.describe())
    for note in verification.notes:
        print(f"  - {note}")
    closeness = None
    if args.t is not None:
        # The classes of k-anonymity's check: an intruder who knows a record's stratum
        # (released as it is) tells the strata's classes apart.
        closeness = verify_t_closeness(masked, [*args.qi, *args.strata], args.confidential,
                                       args.t, kinds=roles.confidential_kinds,
                                       original=original)
        print(closeness.describe())
    if args.summary_json:
        write_json(args.summary_json, {
            "k": args.k, "verified": verification.passed,
            "smallest_class": verification.smallest_class,
            "n_classes": verification.n_classes, "k_prime": verification.k_prime,
            "il": verification.il, "notes": list(verification.notes),
            "unmasked_records_not_checked": flagged,
            **({"t": closeness.t, "t_verified": closeness.passed,
                "max_emd": closeness.max_emd_by_attribute} if closeness else {}),
        })
    passed = verification.passed and (closeness is None or closeness.passed)
    return EXIT_OK if passed else EXIT_NOT_VERIFIED


def _methods(name: str | None = None) -> int:
    chosen = [get_method(name)] if name else methods()
    for method in chosen:
        print(f"{method.name}  ({method.label})")
        print(f"    guarantees: {method.guarantee.label}"
              + ("" if method.guarantee.record_level else " (no record-level guarantee)"))
        print(f"    {method.description}")
        print(f"    reference: {method.reference}")
        print(f"    quasi-identifiers: {', '.join(method.qi_levels)}")
        for p in method.parameters:
            print(f"    --{p.name.replace('_', '-')}: {p.constraint.describe()}, "
                  f"default {p.default!r}. {p.help}")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    try:
        parser, parameter_names = build_parser()
        args = parser.parse_args(argv)
        if args.command == "anonymize":
            return _anonymize(args, parameter_names)
        if args.command == "verify":
            return _verify(args)
        if args.command == "measure":
            return run_measure(args)
        if args.command == "rerun":
            return run_rerun(args)
        return _methods(args.name)
    except MicroaggError as error:
        print(f"microagg: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (Cancelled, KeyboardInterrupt):
        print("microagg: interrupted; nothing was written", file=sys.stderr)
        return 130
    except Exception as error:  # the user gets one line; the details go to the log
        logged = log_internal_error(error, list(sys.argv[1:] if argv is None else argv))
        where = (f" The details are in {logged}." if logged is not None
                 else " The details could not be written to a log file.")
        print(f"microagg: internal error ({type(error).__name__}: {error}).{where} "
              "Please report it with the command you ran.", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
