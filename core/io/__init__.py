"""Reading tables from files and writing files atomically (:mod:`core.io.tables`)."""

from core.io.tables import (READABLE_SUFFIXES, atomic_write, read_table, sheet_names,
                            write_table)

__all__ = ["READABLE_SUFFIXES", "atomic_write", "read_table", "sheet_names", "write_table"]
