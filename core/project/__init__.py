"""Project files and re-runs: a saved session (data path and checksum, roles, every run's
settings) that the window and ``microagg rerun`` both read.

This layer sits between the command line and the report: it reads tables (``core.io``)
and runs the pipeline (``core.pipeline``).
"""

from core.project.files import (FORMAT, SUFFIX, VERSION, Project, ProjectRun, file_sha256,
                                load_project, save_project)
from core.project.rerun import check_project_data, command_line, read_project_data, rerun
from core.project.settings import ReadSettings, RunSettings, roles_from_dict, roles_to_dict

__all__ = ["FORMAT", "SUFFIX", "VERSION", "Project", "ProjectRun", "ReadSettings",
           "RunSettings", "check_project_data", "command_line", "file_sha256", "load_project", "read_project_data",
           "rerun", "roles_from_dict", "roles_to_dict", "save_project"]
