"""The project layer's public names in one module (``from core.project import project``)."""

from core.project.files import (FORMAT, SUFFIX, VERSION, Project, ProjectRun, file_sha256,
                                load_project, save_project)
from core.project.rerun import command_line, read_project_data, rerun
from core.project.settings import ReadSettings, RunSettings, roles_from_dict, roles_to_dict

__all__ = ["FORMAT", "SUFFIX", "VERSION", "Project", "ProjectRun", "ReadSettings",
           "RunSettings", "command_line", "file_sha256", "load_project", "read_project_data",
           "rerun", "roles_from_dict", "roles_to_dict", "save_project"]
