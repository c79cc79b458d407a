"""The ``microagg rerun`` subcommand: one run of a saved project, again, exactly.

::

    microagg rerun PROJECT --run N -o OUTPUT [--data PATH] [--overwrite]
                   [--summary-json PATH] [--report PATH] [--quiet]

``N`` is the run's number as the window's history shows it. The project's table is read
with its saved options and refused if its SHA-256 changed since the project was saved;
``--data`` gives its new location if it moved (the checksum is still checked). The
outputs are written as ``microagg anonymize`` writes them. Wiring into
:mod:`core.cli.main`: :func:`add_rerun_command` on the subparsers object, dispatch
``args.command == "rerun"`` to :func:`run_rerun`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.cli.console import Progress
from core.cli.outputs import check_destinations
from core.cli.release import print_result, write_outputs
from core.errors import MicroaggError
from core.pipeline import GuaranteeNotMet
from core.progress import TaskState
from core.project import load_project, rerun

__all__ = ["add_rerun_command", "run_rerun"]

EXIT_NOT_VERIFIED = 1


def add_rerun_command(subparsers) -> argparse.ArgumentParser:
    """Add the ``rerun`` subcommand to an ``add_subparsers()`` object; return its parser."""
    command = subparsers.add_parser(
        "rerun", help="run a saved project's run again, exactly",
        description="Re-run run N of a .microagg project on its data file (refused if the "
                    "file changed since the project was saved).")
    command.add_argument("project", help="the .microagg project file")
    command.add_argument("--run", required=True, type=_run_number, metavar="N",
                         help="the run's number, as the window's history shows it")
    command.add_argument("-o", "--output", required=True, help="masked table, .csv or .xlsx")
    command.add_argument("--data", metavar="PATH",
                         help="the data file, if it moved (its checksum is still checked)")
    command.add_argument("--summary-json", metavar="PATH", help="write a JSON summary here")
    command.add_argument("--report", metavar="PATH", help="write an HTML report here")
    command.add_argument("--overwrite", action="store_true",
                         help="replace output files that already exist (refused otherwise)")
    command.add_argument("--quiet", action="store_true", help="no progress line on the terminal")
    return command


def _run_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--run needs a run number, got {text!r}") from None


def run_rerun(args: argparse.Namespace) -> int:
    """Run ``microagg rerun``; return the exit code: 0, or 1 when the verifier did not
    confirm the guarantee (nothing is written). Bad input raises MicroaggError."""
    project = load_project(args.project)
    entry = project.run(args.run)
    data = args.data if args.data is not None else project.data_path
    check_destinations((args.project, data), (args.output, args.summary_json, args.report),
                       overwrite=args.overwrite, table=args.output, report=args.report)
    if not Path(data).is_file() and args.data is None:
        raise MicroaggError(f"The data file {data} does not exist. If it moved, give its "
                            "new location with --data PATH.")
    progress = Progress(sys.stderr, quiet=args.quiet)
    try:
        result = rerun(project, entry.number, state=TaskState(progress), data_path=data)
    except GuaranteeNotMet as error:
        print(f"microagg: {error}", file=sys.stderr)
        return EXIT_NOT_VERIFIED
    finally:
        progress.done()
    source = Path(data).name
    write_outputs(result, args.output, source=source, summary_json=args.summary_json,
                  report=args.report, input_path=data)
    print(f"{Path(args.project).name}: run {entry.number} ({entry.label})")
    print_result(result, args.output)
    return 0
