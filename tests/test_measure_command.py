"""``microagg measure`` through a small argparse parser (the lead wires it into core.cli)."""

from __future__ import annotations

import argparse
import json

import pytest

from core.errors import MicroaggError
from core.cli.measure import add_measure_command, run_measure
from tests.test_measures import masked6, original6


def parse(argv):
    parser = argparse.ArgumentParser(prog="microagg")
    add_measure_command(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_measure_writes_the_summary(tmp_path, capsys):
    original, masked = tmp_path / "o.csv", tmp_path / "m.csv"
    original6().to_csv(original, index=False)
    masked6().to_csv(masked, index=False)
    out = tmp_path / "summary.json"
    args = parse(["measure", str(original), str(masked), "--qi", "a", "b",
                  "--confidential", "c", "--known", "a;b", "--summary-json", str(out)])
    assert run_measure(args) == 0
    summary = json.loads(out.read_text())
    for key in ("k_prime", "sse", "il", "il1", "dld", "id", "dr", "score"):
        assert isinstance(summary[key], float)
    assert summary["max_emd"] == {"c": pytest.approx(0.5)}
    assert [s["known"] for s in summary["scenarios"]] == [["a"], ["b"]]
    assert summary["dld"] == pytest.approx((50 + 100 / 6) / 2)
    assert "k' = 2.000" in capsys.readouterr().out


def test_random_scenarios_from_the_command_line(tmp_path):
    original = tmp_path / "o.csv"
    original6().to_csv(original, index=False)
    out = tmp_path / "s.json"
    args = parse(["measure", str(original), str(original), "--qi", "a", "b",
                  "--scenarios", "random", "--scenario-size", "1", "--n-scenarios", "2",
                  "--seed", "3", "--summary-json", str(out)])
    run_measure(args)
    assert len(json.loads(out.read_text())["scenarios"]) == 2


def test_bad_input_raises_microagg_error(tmp_path):
    original = tmp_path / "o.csv"
    original6().to_csv(original, index=False)
    with pytest.raises(MicroaggError, match="Column 'zz' is not in the original table"):
        run_measure(parse(["measure", str(original), str(original), "--qi", "zz"]))
    with pytest.raises(MicroaggError, match="does not exist"):
        run_measure(parse(["measure", str(tmp_path / "none.csv"), str(original),
                           "--qi", "a"]))
    with pytest.raises(MicroaggError, match="is an input file"):
        run_measure(parse(["measure", str(original), str(original), "--qi", "a",
                           "--summary-json", str(original)]))
