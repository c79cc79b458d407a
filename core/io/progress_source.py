"""A binary file that reports how much of it has been read, for progress and cancelling.

pandas' CSV parser pulls the file in blocks through ``read``; wrapping the file (or an
in-memory copy of its bytes) in :class:`ProgressSource` lets a long read report the
fraction of bytes consumed and stop at the next block when the user cancels. The bytes
the parser sees are exactly the file's, so the table read is the same as without it.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from core.progress import TaskState

__all__ = ["ProgressSource", "progress_source"]

_STEP_BYTES = 1 << 20  # report at most once per MiB: the callback stays cheap


class ProgressSource(io.RawIOBase):
    """A read-only raw stream over ``handle`` that calls ``state.step`` as it is read.

    Parameters
    ----------
    handle : binary file object
        Positioned at its start; closed with this stream.
    size : int
        Its length in bytes (the denominator of the fraction).
    state : TaskState
        Receives ``bytes read / size``; raises :class:`~core.errors.Cancelled` from
        ``read`` once cancelled.
    message : str
        The progress message.
    """

    def __init__(self, handle, size: int, state: TaskState, message: str = ""):
        super().__init__()
        self._handle, self._size, self._state, self._message = handle, max(size, 1), state, message
        self._read = self._reported = 0
        state.step(0.0, message)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._handle.read(len(buffer))
        count = len(data)
        buffer[:count] = data
        self._read += count
        if self._read - self._reported >= _STEP_BYTES or (count == 0 and self._reported
                                                          < self._read):
            self._reported = self._read
            self._state.step(self._read / self._size, self._message)
        else:
            self._state.check()
        return count

    def close(self) -> None:
        try:
            self._handle.close()
        finally:
            super().close()


def progress_source(source, state: TaskState, message: str = "") -> io.BufferedReader:
    """Wrap a path or a ``BytesIO`` for pandas, reporting progress to ``state``."""
    if isinstance(source, (str, os.PathLike)):
        handle = open(Path(source), "rb")
        size = os.fstat(handle.fileno()).st_size
    else:
        handle = source
        size = len(source.getbuffer())
    return io.BufferedReader(ProgressSource(handle, size, state, message), 1 << 18)
