"""Re-running a saved run exactly, and the command line that does the same.

:func:`rerun` reads the project's table with its saved read options, refuses if the
file's SHA-256 is not the one saved (the run could not be reproduced exactly), and runs
:func:`core.pipeline.anonymize` with the run's roles and settings: the same input and
settings give the same release, bit for bit (every random choice is seeded).

:func:`command_line` writes the ``microagg anonymize`` command that reproduces a run,
every argument quoted for a POSIX shell (:func:`shlex.quote`).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pandas as pd

from core.data.roles import Level, RoleSpec
from core.errors import MicroaggError
from core.io.read import read_table_with_report, sheet_names
from core.pipeline import AnonymizationResult, anonymize
from core.progress import TaskState
from core.project.files import Project, file_sha256
from core.project.settings import ReadSettings, RunSettings

__all__ = ["check_project_data", "read_project_data", "rerun", "command_line"]


def check_project_data(project: Project, *, data_path: str | os.PathLike | None = None
                       ) -> str:
    """The SHA-256 of the project's data file, checked against the one saved with it.

    Raises
    ------
    MicroaggError
        The file is missing or has changed since the project was saved.
    """
    path = Path(data_path if data_path is not None else project.data_path)
    if not path.is_file():
        raise MicroaggError(f"The data file {path} does not exist. If it moved, give its "
                            "new location.")
    digest = file_sha256(path)
    if digest != project.data_sha256:
        raise MicroaggError(
            f"The data file {path} has changed since the project was saved (SHA-256 "
            f"{digest[:12]}…, saved {project.data_sha256[:12]}…); the run cannot be "
            "reproduced exactly.")
    return digest


def read_project_data(project: Project, *, data_path: str | os.PathLike | None = None
                      ) -> pd.DataFrame:
    """The project's table, read with its saved options after checking its SHA-256.

    Parameters
    ----------
    project : Project
    data_path : path, optional
        Where the table is now, if it moved; its checksum is still checked.

    Raises
    ------
    MicroaggError
        The file is missing, has changed since the project was saved or while it was
        read, or cannot be read.
    """
    digest = check_project_data(project, data_path=data_path)
    path = Path(data_path if data_path is not None else project.data_path)
    table, _ = read_table_with_report(path, **project.read_settings.kwargs())
    if file_sha256(path) != digest:  # the checked bytes must be the bytes read
        raise MicroaggError(f"The data file {path} changed while it was being read. Wait "
                            "until whatever writes it has finished, then run again.")
    return table


def rerun(project: Project, number: int, *, state: TaskState | None = None,
          data_path: str | os.PathLike | None = None) -> AnonymizationResult:
    """Run the project's run ``number`` again on its (unchanged) table.

    Raises
    ------
    MicroaggError
        No such run (the message lists the run numbers), or the data file is missing
        or changed (:func:`read_project_data`), or anything ``anonymize`` refuses.
    GuaranteeNotMet
        The verifier did not confirm the guarantee.

    Examples
    --------
    >>> result = rerun(load_project("study.microagg"), 2)  # doctest: +SKIP
    """
    entry = project.run(number)
    table = read_project_data(project, data_path=data_path)
    return anonymize(table, entry.roles, state=state, **entry.settings.kwargs())


_NAMED = {"\t": "tab", " ": "space", "": "none"}


def command_line(settings: RunSettings, roles: RoleSpec, input_path, output_path, *,
                 read_settings: ReadSettings | None = None) -> str:
    """The ``microagg anonymize`` command that reproduces a run.

    Every flag the run needs is given: roles (with ``--ordinal COL=v1,v2`` and
    ``--nominal COL``), strata, blocks, the method's parameters, seed, intruder, noise,
    strata merging, missing values and the read options.

    Raises
    ------
    MicroaggError
        A setting the command line cannot express (an ordinal category with a comma).

    Examples
    --------
    >>> s = RunSettings("mdav", {"k": 5, "growth": "nn", "refine": "none"})
    >>> command_line(s, RoleSpec(quasi_identifiers=("age", "pay day")), "in.csv", "out.csv")
    "microagg anonymize in.csv -o out.csv --method mdav --qi age 'pay day' --k 5 --growth nn --refine none --intruder all --seed 0 --missing stop"
    """
    args = ["microagg", "anonymize", str(input_path), "-o", str(output_path),
            "--method", settings.method, "--qi", *roles.quasi_identifiers]
    args += _level_args(roles)
    for flag, columns in (("--confidential", roles.confidential),
                          ("--identifier", roles.identifiers), ("--strata", roles.strata)):
        if columns:
            args += [flag, *columns]
    if settings.merge_small_strata:
        args.append("--merge-small-strata")
    if settings.blocks:
        args += ["--blocks", settings.blocks]
    for name, value in settings.parameters.items():
        args += ["--" + name.replace("_", "-"), _number(value)]
    args += ["--intruder", settings.intruder]
    if settings.known:
        args += ["--known", settings.known]
    args += ["--seed", str(settings.seed)]
    if settings.dp_epsilon is not None:
        args += ["--dp-epsilon", _number(settings.dp_epsilon)]
    if settings.confidential_bounds:
        args += ["--confidential-bounds", settings.confidential_bounds]
    if settings.noise_seed is not None:  # a secret: the command is for this agency only
        args += ["--noise-seed", str(settings.noise_seed)]
    args += ["--missing", settings.missing]
    args += _read_args(read_settings or ReadSettings(), input_path)
    return " ".join(shlex.quote(a) for a in args)


def _number(value) -> str:
    """Text the command line parses back to the same value (floats in full)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _category(value) -> str:
    """The text by which the engine matches a category to the data (whole floats as ints)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _level_args(roles: RoleSpec) -> list[str]:
    args: list[str] = []
    ordinal, nominal = [], []
    for column, level in roles.levels:
        if level is Level.ORDINAL:
            order = roles.order_of(column)
            if order is None:
                ordinal.append(column)
                continue
            texts = [_category(v) for v in order]
            if any("," in t or t != t.strip() or not t for t in texts):
                raise MicroaggError(
                    f"The order of '{column}' has a category with a comma or surrounding "
                    "spaces, which --ordinal cannot carry; recode the category.")
            ordinal.append(f"{column}={','.join(texts)}")
        elif level is Level.NOMINAL:
            nominal.append(column)
    # A declared numeric level is the command line's default for a column of numbers.
    if ordinal:
        args += ["--ordinal", *ordinal]
    if nominal:
        args += ["--nominal", *nominal]
    return args


def _read_args(read: ReadSettings, input_path) -> list[str]:
    args: list[str] = []
    sheet = read.sheet
    if isinstance(sheet, int):  # the command line names sheets
        sheet = sheet_names(input_path)[sheet]
    if sheet is not None:
        args += ["--sheet", str(sheet)]
    for name in ("delimiter", "thousands"):
        value = getattr(read, name)
        if value is not None:
            args += ["--" + name, _NAMED.get(value, value)]
    if read.decimal is not None:
        args += ["--decimal", read.decimal]
    if read.encoding is not None:
        args += ["--encoding", read.encoding]
    if read.skip_rows is not None:
        args += ["--skip-rows", str(read.skip_rows)]
    if read.header_row is not None:
        args += ["--header-row", str(read.header_row)]
    return args
