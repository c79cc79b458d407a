"""Reading tables from files (:mod:`core.io.read`) and writing files atomically (:mod:`core.io.write`)."""

from core.io.read import READABLE_SUFFIXES, read_table, sheet_names
from core.io.write import atomic_write, write_table

__all__ = ["READABLE_SUFFIXES", "atomic_write", "read_table", "sheet_names", "write_table"]
