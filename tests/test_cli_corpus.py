"""Every refused file of the messy-input corpus, through the command line.

Bad input keeps getting exit code 2 and one line on stderr; nothing is written and the
input file is never modified (tests/corpus/expected.toml lists the files and messages).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from core.cli.main import main

CORPUS = Path(__file__).resolve().parent / "corpus"
EXPECTED = tomllib.loads((CORPUS / "expected.toml").read_text(encoding="utf-8"))
REFUSED = sorted(name for name, entry in EXPECTED.items()
                 if "error" in entry and not entry.get("options"))


@pytest.mark.parametrize("name", REFUSED)
def test_a_refused_file_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys, name):
    source = CORPUS / name
    if not source.exists():
        pytest.skip(f"{name} is made only where its tool is installed")
    before, mtime = source.read_bytes(), source.stat().st_mtime_ns
    out = tmp_path / "released.csv"
    code = main(["anonymize", str(source), "-o", str(out), "--k", "2", "--qi", "x",
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("microagg: error: ")
    assert EXPECTED[name]["error"].split(" (")[0][:40] in err
    assert "Traceback" not in err and ".partial" not in err
    assert list(tmp_path.iterdir()) == []
    assert source.read_bytes() == before and source.stat().st_mtime_ns == mtime
