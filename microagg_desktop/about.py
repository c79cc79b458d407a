"""What the Help menu says about the application: version, licences, bill of materials.

Qt-free. In the packaged bundle the bill of materials written by ``installer/build.py``
(``BILL_OF_MATERIALS.csv`` beside the executable) is read as it is; in an installed
environment it is worked out from the installed distributions that the application
requires, directly or through another requirement. Nothing is fetched: every text comes
from the installation itself.
"""

from __future__ import annotations

import csv
import importlib.metadata as metadata
import platform
import re
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Component", "application_version", "bill_of_materials", "licence_of",
           "licence_text", "APPLICATION_LICENCE"]

DISTRIBUTION = "microagg-desktop"
APPLICATION_LICENCE = "GPL-3.0-or-later"
BOM_FILE = "BILL_OF_MATERIALS.csv"
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class Component:
    """One distribution the application runs on."""

    name: str
    version: str
    licence: str


def application_version() -> str:
    """The installed version of MicroAgg Desktop ("0.1.0" in a plain checkout)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0.1.0"


def licence_of(distribution: metadata.Distribution) -> str:
    """An SPDX expression where the metadata has one, else the short licence field or
    the trove classifiers (also what ``installer/build.py`` writes in the bill of
    materials)."""
    meta = distribution.metadata
    expression = meta.get("License-Expression")
    if expression:
        return expression.strip()
    short = (meta.get("License") or "").strip()
    if short and "\n" not in short and len(short) <= 80:
        return short
    classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or ()
                   if c.startswith("License ::")]
    if classifiers:
        return " / ".join(classifiers)
    return "see licence text" if short else "UNKNOWN"


def _requirements(distribution: metadata.Distribution) -> list[str]:
    names = []
    for requirement in distribution.requires or ():
        if "extra ==" in requirement:  # optional extras (test, cluster) are not run
            continue
        match = _REQUIREMENT_NAME.match(requirement)
        if match:
            names.append(match.group(1))
    return names


def _installed_closure() -> list[Component]:
    """The application's distribution and everything it requires, recursively."""
    seen: dict[str, Component] = {}
    pending = [DISTRIBUTION]
    while pending:
        name = pending.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        licence = APPLICATION_LICENCE if key == DISTRIBUTION else licence_of(distribution)
        seen[key] = Component(distribution.metadata["Name"], distribution.version, licence)
        pending.extend(_requirements(distribution))
    return sorted(seen.values(), key=lambda c: c.name.lower())


def _bundle_file() -> Path | None:
    if not getattr(sys, "frozen", False):
        return None
    folder = Path(sys.executable).resolve().parent
    for candidate in (folder / BOM_FILE, folder.parent / BOM_FILE):
        if candidate.is_file():
            return candidate
    return None


def _read_bundle_file(path: Path) -> list[Component]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    out = []
    for row in rows:
        lowered = {str(k).lower(): v for k, v in row.items()}
        out.append(Component(lowered.get("name", ""), lowered.get("version", ""),
                             lowered.get("licence") or lowered.get("license") or ""))
    return out


def bill_of_materials(bundle_file: Path | None = None) -> list[Component]:
    """Every component the application runs on, with its version and licence.

    Parameters
    ----------
    bundle_file : Path, optional
        A ``BILL_OF_MATERIALS.csv``; by default the bundle's own when running frozen.

    Returns
    -------
    list of Component
        Python itself first, then the distributions by name.
    """
    path = bundle_file or _bundle_file()
    components = _read_bundle_file(path) if path is not None else _installed_closure()
    python = Component("Python", platform.python_version(), "PSF-2.0")
    return [python] + [c for c in components if c.name.lower() != "python"]


def licence_text(name: str = "LICENSE-GPL-3.0.txt") -> str:
    """The text of a licence shipped in ``resources/`` (the application's GPL, Qt's LGPL)."""
    from microagg_desktop.paths import resource_path

    return resource_path(name).read_text(encoding="utf-8")
