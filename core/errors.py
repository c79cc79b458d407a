"""The engine's one error type.

Every problem with the user's input (a file, a column, a row, a parameter) raises
:class:`MicroaggError`, a ``ValueError`` whose message names what is at fault and says
what to do. The CLI prints it on one line; the GUI shows it in a message box.
"""

__all__ = ["MicroaggError", "SmallStratumError", "TooLargeForMemory", "Cancelled"]


class MicroaggError(ValueError):
    """Bad input: the message names the file, column, row or parameter at fault."""


class TooLargeForMemory(MicroaggError):
    """A run (or a measuring) would need more memory than this computer allows; the
    message says how much and what to do instead (:mod:`core.data.memory`)."""


class SmallStratumError(MicroaggError):
    """A stratum has fewer than k records; ``nearest`` names the stratum to merge it with."""

    def __init__(self, message: str, *, stratum: str, nearest: str):
        super().__init__(message)
        self.stratum = stratum
        self.nearest = nearest


class Cancelled(Exception):
    """Raised inside a running method when the user asked it to stop."""
