"""The engine never imports Qt: an import-linter contract and a direct source scan."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FORBIDDEN = ("PySide6", "shiboken6", "PyQt5", "PyQt6", "microagg_desktop")


def test_core_sources_import_no_qt():
    offenders = []
    for path in (REPO / "core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert offenders == []


def test_importing_core_loads_no_qt():
    code = ("import sys, core, core.cli, core.report; core.methods.methods(); "
            f"bad = [m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_import_linter_contract():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "import-linter is part of the test install ('.[test]')"
    proc = subprocess.run([lint], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for contract in ("The engine never imports Qt", "The engine's layers only import downwards",
                     "The verifiers never see the algorithms"):
        assert f"{contract} KEPT" in proc.stdout, contract


def test_every_engine_module_is_in_a_layer():
    """A module outside the layers would escape the contract; only the base is exempt."""
    layered = {"cli", "project", "report", "cluster", "pipeline", "methods", "measures", "verify", "privacy",
               "data", "io"}
    base = {"__init__.py", "errors.py", "progress.py", "compiled.py", "threads.py"}
    loose = [p.name for p in (REPO / "core").iterdir()
             if p.name not in base and p.name != "__pycache__"
             and not (p.is_dir() and p.name in layered)]
    assert loose == []


def test_no_engine_module_is_much_over_400_lines():
    long = {p.relative_to(REPO).as_posix(): n for p in (REPO / "core").rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 460}
    assert long == {}
