"""Where a report comes from: the input file's SHA-256 and the software version."""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import tomllib
from pathlib import Path

from core.errors import MicroaggError

__all__ = ["file_sha256", "software_version"]

_CHUNK = 1 << 20
_PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def file_sha256(path: str | os.PathLike, *, chunk_size: int = _CHUNK) -> str:
    """The SHA-256 of the file at ``path`` as 64 hex digits, read in chunks.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile(delete=False) as f:
    ...     _ = f.write(b"abc")
    >>> file_sha256(f.name)[:16]
    'ba7816bf8f01cfea'
    """
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as stream:
            while block := stream.read(chunk_size):
                digest.update(block)
    except OSError as error:
        raise MicroaggError(f"Cannot read the input file '{path}' to compute its SHA-256 "
                            f"({error.strerror or error}); check that it still exists, or "
                            "give the checksum instead.") from error
    return digest.hexdigest()


def software_version() -> str:
    """The installed version of microagg-desktop, else the one in ``pyproject.toml``."""
    try:
        return importlib.metadata.version("microagg-desktop")
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        with open(_PYPROJECT, "rb") as stream:
            return str(tomllib.load(stream)["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"
