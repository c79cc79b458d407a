"""The kernels' on-disk cache of a source installation is named by a digest of every
engine file that defines kernels (core.compiled's notes): numba keys a kernel's cache to
its own file, so a caller whose file did not change would otherwise keep the code of a
kernel it calls in a file that did."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core import compiled
from core.compiled import COMPILED, kernel_sources_digest

ROOT = Path(__file__).resolve().parent.parent


def _engine(tmp_path: Path) -> Path:
    root = tmp_path / "core"
    (root / "methods").mkdir(parents=True)
    (root / "compiled.py").write_text("def kernel(f): return f\n")
    (root / "methods" / "search.py").write_text(
        "from core.compiled import kernel\ndef near(x): return x\n")
    (root / "methods" / "caller.py").write_text(
        "from core.compiled import kernel\nfrom core.methods.search import near\n")
    (root / "report.py").write_text("TITLE = 'Report'\n")
    return root


def test_the_digest_follows_every_file_that_defines_kernels(tmp_path):
    root = _engine(tmp_path)
    first = kernel_sources_digest(root)
    assert kernel_sources_digest(root) == first
    (root / "report.py").write_text("TITLE = 'Release report'\n")  # no kernel there
    assert kernel_sources_digest(root) == first
    (root / "methods" / "search.py").write_text(
        "from core.compiled import kernel\ndef near(x): return -x\n")  # a callee changes
    changed = kernel_sources_digest(root)
    assert changed != first
    (root / "methods" / "search.py").rename(root / "methods" / "searches.py")
    assert kernel_sources_digest(root) not in (first, changed)


def test_earlier_digests_folders_are_removed_once_unused(tmp_path, monkeypatch):
    root = _engine(tmp_path)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(compiled, "_ENGINE", root)
    stale = root / "__pycache__" / "numba-0123456789abcdef"
    (stale / "sub").mkdir(parents=True)
    (stale / "sub" / "near.nbi").write_bytes(b"")
    two_days_ago = time.time() - 2 * 24 * 3600
    for path in (stale / "sub" / "near.nbi", stale / "sub", stale):
        os.utime(path, (two_days_ago, two_days_ago))
    running = root / "__pycache__" / "numba-fedcba9876543210"  # written a minute ago
    (running / "sub").mkdir(parents=True)
    (root / "__pycache__" / "search.cpython-311.pyc").write_bytes(b"")
    beside = root / "methods" / "__pycache__"
    beside.mkdir()
    for name in ("search.near-2.py311.nbi", "search.near-2.py311.1.nbc", "search.cpython-311.pyc"):
        (beside / name).write_bytes(b"")
    folder = compiled._cache_folder()
    assert folder == root / "__pycache__" / f"numba-{kernel_sources_digest(root)}"
    assert not stale.exists()
    assert running.exists()  # a process of the sources before may still cache there
    assert (root / "__pycache__" / "search.cpython-311.pyc").exists()
    assert sorted(p.name for p in beside.iterdir()) == ["search.cpython-311.pyc"]
    folder.mkdir()
    (beside / "search.near-2.py311.nbi").write_bytes(b"")
    assert compiled._cache_folder() == folder and folder.is_dir()  # a digest seen before
    assert (beside / "search.near-2.py311.nbi").exists()


@pytest.mark.skipif(not COMPILED, reason="numba missing or switched off")
@pytest.mark.parametrize("given", [False, True])
def test_numba_caches_in_the_digests_folder(tmp_path, given):
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    if given:
        env["NUMBA_CACHE_DIR"] = str(tmp_path)
    code = ("import numba, core.compiled as c; "
            "print(numba.config.CACHE_DIR); print(c.kernel_sources_digest())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    base = tmp_path if given else ROOT / "core" / "__pycache__"
    assert Path(out[0]) == base / f"numba-{out[1]}"
