"""Locating bundled resources (sample data, icons) wherever the application runs.

Three layouts are supported, tried in this order:

1. a frozen PyInstaller bundle: ``sys._MEIPASS/resources``;
2. an installed copy: the package ``microagg_desktop.resources`` (``resources/`` is
   mapped onto it by ``pyproject.toml``);
3. a plain source checkout: ``<repository>/resources``.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["resource_path"]


def _candidates(name: str) -> list[Path]:
    candidates = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        candidates.append(Path(bundle) / "resources" / name)
    try:
        from importlib.resources import files

        candidates.append(Path(str(files("microagg_desktop.resources") / name)))
    except (ModuleNotFoundError, TypeError, ValueError):
        pass  # a plain checkout has no microagg_desktop.resources package
    candidates.append(Path(__file__).resolve().parent.parent / "resources" / name)
    return candidates


def resource_path(name: str) -> Path:
    """The path of the bundled resource ``name`` (e.g. ``"sample_survey.csv"``).

    Parameters
    ----------
    name : str
        File name inside ``resources/``.

    Returns
    -------
    Path
        The first existing candidate.

    Raises
    ------
    FileNotFoundError
        No layout holds the resource (a broken installation).

    Examples
    --------
    >>> resource_path("sample_survey.csv").name
    'sample_survey.csv'
    """
    candidates = _candidates(name)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    searched = ", ".join(str(c.parent) for c in candidates)
    raise FileNotFoundError(f"Resource '{name}' is missing (looked in: {searched}).")
