"""The ``microagg`` command line (:mod:`core.cli.main`)."""

from core.cli.main import main

__all__ = ["main"]
