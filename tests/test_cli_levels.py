"""``--ordinal`` and ``--nominal`` on the command line (anonymize, verify, measure)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core.cli.main import main

HOUSEHOLD = "household_size=1,2,3,4,5,6,7,8"


def run(*argv):
    return main([str(a) for a in argv])


def test_mixed_quasi_identifiers_round_trip(tmp_path, sample_path, capsys):
    out, summary = tmp_path / "masked.csv", tmp_path / "summary.json"
    original = pd.read_csv(sample_path)
    sizes = ",".join(str(v) for v in sorted(original["household_size"].unique()))
    code = run("anonymize", sample_path, "-o", out, "--k", 4,
               "--qi", "age", "income", "region", "household_size",
               "--ordinal", f"household_size={sizes}", "--identifier", "person_id",
               "--summary-json", summary)
    assert code == 0, capsys.readouterr().err
    masked = pd.read_csv(out)
    assert set(masked["region"]) <= set(original["region"])
    assert set(masked["household_size"]) <= set(original["household_size"])
    assert masked["household_size"].dtype == original["household_size"].dtype
    data = json.loads(summary.read_text())
    assert data["levels"] == {"age": "numeric", "income": "numeric", "region": "nominal",
                              "household_size": "ordinal"}
    assert data["verified"] and data["min_group_size"] >= 4
    # The verifier and the measures read the exported file back.
    assert run("verify", sample_path, out, "--k", 4, "--qi", "age", "income", "region",
               "household_size", "--ordinal", f"household_size={sizes}",
               "--identifier", "person_id") == 0
    # Classes are identical released tuples whatever the levels: numeric by default.
    assert run("verify", sample_path, out, "--k", 4, "--qi", "age", "income", "region",
               "household_size", "--identifier", "person_id") == 0
    assert run("verify", sample_path, out, "--k", 40, "--qi", "age", "income", "region",
               "household_size", "--identifier", "person_id") == 1
    assert run("measure", sample_path, out, "--qi", "age", "region", "--nominal",
               "region") == 0
    assert "k' =" in capsys.readouterr().out


@pytest.mark.parametrize("extra, message", [
    (["--qi", "age", "region", "--ordinal", "region=North,South"],
     "'region' has the value"),
    (["--qi", "age", "region", "--ordinal", "region", "--nominal", "region"],
     "both --ordinal and --nominal"),
    (["--qi", "age", "--nominal", "region"], "'region' is declared nominal, but it is neither"),
    (["--qi", "age", "region", "--ordinal", "region=North,,South"], "empty category"),
    (["--qi", "region", "--method", "zscores"], "'region' is nominal"),
])
def test_level_mistakes_exit_2_with_one_line_and_no_output(tmp_path, sample_path, capsys,
                                                          extra, message):
    out = tmp_path / "out.csv"
    assert run("anonymize", sample_path, "-o", out, "--k", 3, *extra) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_help_names_the_level_options(capsys):
    with pytest.raises(SystemExit):
        run("anonymize", "--help")
    text = capsys.readouterr().out
    assert "--ordinal" in text and "--nominal" in text
