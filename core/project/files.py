"""The ``.microagg`` project file: a saved session, as JSON.

A project names its input table (absolute path and SHA-256, so a re-run can tell that
the file changed), the options it was read with, the current roles, and every run: its
number, label, roles and settings, and a few headline figures for the history. The
file is UTF-8 JSON (never pickle: opening a project runs no code) with two keys that
say what it is::

    {"format": "microagg-project", "version": 1, "data": {...}, "roles": {...},
     "runs": [...], "selected": 2}

:func:`save_project` writes it atomically; :func:`load_project` refuses, with the key or
the problem named, a file that is not JSON, not a project, of another version, or
incomplete.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.data.roles import RoleSpec
from core.errors import MicroaggError
from core.io.write import atomic_write
from core.project.settings import (ReadSettings, RunSettings, plain, roles_from_dict,
                                   roles_to_dict)

__all__ = ["FORMAT", "VERSION", "SUFFIX", "ProjectRun", "Project", "save_project",
           "load_project", "file_sha256", "headline"]

FORMAT = "microagg-project"
VERSION = 1
SUFFIX = ".microagg"
_CHUNK = 1 << 20


def file_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes, as 64 hex digits, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except OSError as error:
        raise MicroaggError(f"Cannot read '{path}': {error.strerror or error}.") from None
    return digest.hexdigest()


def _json_number(value):
    """A value JSON can hold: numpy scalars as Python ones, NaN and infinity as None."""
    value = plain(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def headline(result) -> dict[str, Any]:
    """A few figures of a result for the history (informational; never re-checked)."""
    m, ms = result.metrics, result.measures

    return {"il": _json_number(m.il), "k_prime": _json_number(m.k_prime),
            "dld": None if ms is None else _json_number(ms.dld),
            "passed": bool(result.passed), "n_records": int(m.n_records)}


@dataclass(frozen=True)
class ProjectRun:
    """One run of the history.

    Attributes
    ----------
    number : int
        As the window's history shows it (1, 2, ...); ``microagg rerun --run N``.
    label : str
    settings : RunSettings
    roles : RoleSpec
        The roles the run used (they may differ from the project's current roles).
    created : str
        ISO 8601 time the run was made.
    headline : dict
        ``il``, ``k_prime``, ``dld``, ``passed``, ``n_records``: informational only.
    """

    number: int
    label: str
    settings: RunSettings
    roles: RoleSpec
    created: str = field(default_factory=lambda: _dt.datetime.now().isoformat(
        timespec="seconds"))
    headline: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_result(cls, number: int, result, *, label: str = "") -> ProjectRun:
        """Record ``result`` as run ``number``."""
        return cls(number, label or f"Run {number}", RunSettings.from_result(result),
                   result.roles, headline=headline(result))

    @classmethod
    def from_record(cls, record, *, label: str = "") -> ProjectRun:
        """From a history record with ``number``, ``request`` (the window's run request,
        roles included), ``created`` (a datetime or ISO text) and ``measures``."""
        created = record.created
        created = created.isoformat(timespec="seconds") if hasattr(created, "isoformat") \
            else str(created)
        measures = {key: _json_number(value) for key, value in
                    dict(getattr(record, "measures", {}) or {}).items()}
        return cls(record.number, label or getattr(record, "label", "") or
                   f"Run {record.number}", RunSettings.from_request(record.request),
                   record.request["roles"], created, measures)

    def request(self) -> dict[str, Any]:
        """The window's run request that reproduces this run (roles included)."""
        return self.settings.request(self.roles)

    def to_dict(self) -> dict[str, Any]:
        return {"number": self.number, "label": self.label,
                "settings": self.settings.to_dict(), "roles": roles_to_dict(self.roles),
                "created": self.created, "headline": plain(dict(self.headline))}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProjectRun:
        _require(data, ("number", "label", "settings", "roles", "created", "headline"),
                 "a run")
        if not isinstance(data["number"], int) or isinstance(data["number"], bool):
            raise MicroaggError(f"A run's 'number' must be an integer, not "
                                f"{data['number']!r}.")
        return cls(data["number"], str(data["label"]), RunSettings.from_dict(data["settings"]),
                   roles_from_dict(data["roles"]), str(data["created"]),
                   dict(data["headline"]))


@dataclass
class Project:
    """A saved session.

    Attributes
    ----------
    data_path : str
        Absolute path of the input table.
    data_sha256 : str
        Its SHA-256 when the project was saved (:func:`file_sha256`).
    read_settings : ReadSettings
    roles : RoleSpec
        The current roles.
    runs : list of ProjectRun
    selected : int or None
        The number of the run shown, if any.
    """

    data_path: str
    data_sha256: str
    read_settings: ReadSettings = field(default_factory=ReadSettings)
    roles: RoleSpec = field(default_factory=RoleSpec)
    runs: list[ProjectRun] = field(default_factory=list)
    selected: int | None = None

    @classmethod
    def for_data(cls, path: str | os.PathLike, *, read_settings: ReadSettings | None = None,
                 roles: RoleSpec | None = None) -> Project:
        """A new project on the table at ``path`` (its checksum taken now)."""
        return cls(str(Path(path).resolve()), file_sha256(path),
                   read_settings or ReadSettings(), roles or RoleSpec())

    def run(self, number: int) -> ProjectRun:
        """The run with ``number``; an error listing the numbers there are otherwise."""
        for entry in self.runs:
            if entry.number == number:
                return entry
        there = ", ".join(str(r.number) for r in self.runs) or "none"
        raise MicroaggError(f"The project has no run {number}. Its runs: {there}.")

    def add_run(self, result, *, label: str = "") -> ProjectRun:
        """Append ``result`` to the history under the next number and select it."""
        number = max((r.number for r in self.runs), default=0) + 1
        entry = ProjectRun.from_result(number, result, label=label)
        self.runs.append(entry)
        self.selected = number
        return entry

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION,
                "data": {"path": self.data_path, "sha256": self.data_sha256,
                         "read_settings": self.read_settings.to_dict()},
                "roles": roles_to_dict(self.roles),
                "runs": [r.to_dict() for r in self.runs],
                "selected": self.selected}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Project:
        _require(data, ("format", "version", "data", "roles", "runs", "selected"),
                 "the project")
        if data["format"] != FORMAT:
            raise MicroaggError(f"This is not a MicroAgg project (format "
                                f"{data['format']!r}, expected {FORMAT!r}).")
        if data["version"] != VERSION:
            raise MicroaggError(f"The project has version {data['version']!r}; this "
                                f"program reads version {VERSION}. Open it with the "
                                "version of MicroAgg that saved it.")
        _require(data["data"], ("path", "sha256", "read_settings"), "the project's 'data'")
        if not isinstance(data["runs"], list):
            raise MicroaggError("The project's 'runs' must be a list.")
        runs = [ProjectRun.from_dict(r) for r in data["runs"]]
        numbers = [r.number for r in runs]
        twice = sorted({n for n in numbers if numbers.count(n) > 1})
        if twice:
            raise MicroaggError(
                f"The project has two runs numbered #{twice[0]}; a run's number names it "
                "(microagg rerun --run N), so the project cannot say which is meant. "
                "Open an earlier copy of the project.")
        return cls(str(data["data"]["path"]), str(data["data"]["sha256"]),
                   ReadSettings.from_dict(data["data"]["read_settings"]),
                   roles_from_dict(data["roles"]), runs, data["selected"])


def _require(data, keys, what: str) -> None:
    if not isinstance(data, Mapping):
        raise MicroaggError(f"In {what}: expected a JSON object.")
    for key in keys:
        if key not in data:
            raise MicroaggError(f"{what[0].upper()}{what[1:]} has no '{key}' key.")


def save_project(project: Project, path: str | os.PathLike) -> Path:
    """Write ``project`` to ``path`` as UTF-8 JSON, atomically; return the path."""
    text = json.dumps(project.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)

    def write(temporary):
        with open(temporary, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text + "\n")
    return atomic_write(path, write)


def load_project(path: str | os.PathLike) -> Project:
    """Read a project file.

    Raises
    ------
    MicroaggError
        The file cannot be read, is not JSON, is not a MicroAgg project, has another
        version, or lacks a key (named); the message starts with the file name.
    """
    name = Path(path).name
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MicroaggError(f"Project file '{path}' does not exist.") from None
    except UnicodeDecodeError:
        raise MicroaggError(f"{name}: not a MicroAgg project (the file is not UTF-8 "
                            "text).") from None
    except OSError as error:
        raise MicroaggError(f"Cannot read '{path}': {error.strerror or error}.") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise MicroaggError(f"{name}: not a MicroAgg project (not valid JSON: "
                            f"{error.msg} at line {error.lineno}).") from None
    try:
        return Project.from_dict(data)
    except MicroaggError as error:
        raise MicroaggError(f"{name}: {error}") from None
    except (TypeError, ValueError) as error:
        raise MicroaggError(f"{name}: the project file is damaged ({error}).") from None
