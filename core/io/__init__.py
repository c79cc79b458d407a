"""Reading tables from files (:mod:`core.io.read`) and writing files atomically (:mod:`core.io.write`)."""

from core.io.read import READABLE_SUFFIXES, ReadReport, read_table, read_table_with_report, sheet_names
from core.io.write import atomic_write, write_table

__all__ = ["READABLE_SUFFIXES", "ReadReport", "atomic_write", "read_table",
           "read_table_with_report", "sheet_names", "write_table"]
