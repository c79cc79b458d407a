"""Project files and re-runs: a saved session (data path and checksum, roles, every run's
settings) that the window and ``microagg rerun`` both read.

This layer sits between the command line and the report: it reads tables (``core.io``)
and runs the pipeline (``core.pipeline``).
"""
