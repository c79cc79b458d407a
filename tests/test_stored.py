"""A result kept compactly in the history or a sweep gives back the release bit for bit
(core.pipeline.stored)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from dataclasses import replace

from core import RoleSpec, anonymize, read_table
from core.io.write import write_table
from core.pipeline.stored import StoredResult, same_frame, same_result

QIS = ("age", "years_education", "income", "hours_worked", "household_size")
BASE = dict(quasi_identifiers=QIS, identifiers=("person_id",))


@pytest.fixture(scope="module")
def survey(sample_path):
    return read_table(sample_path)


CASES = {  # name: (roles, method, options, compact)
    "mdav": (RoleSpec(**BASE, confidential=("health_spending",)), "mdav", {"k": 5}, True),
    "pcp": (RoleSpec(**BASE), "pcp", {"k": 3}, True),
    # nearly every released tuple distinct: nothing to gain, kept whole
    "values masked per attribute": (RoleSpec(**BASE), "individual-ranking", {"k": 3},
                                    False),
    "nominal and ordinal": (RoleSpec(quasi_identifiers=("age", "region", "diagnosis"),
                                     identifiers=("person_id",),
                                     levels={"region": "nominal", "diagnosis": "nominal"}),
                            "mdav", {"k": 5}, True),
    "strata": (RoleSpec(**BASE, strata=("region",)), "mdav", {"k": 5}, True),
    # two blocks' groups cross into more classes than half the records: kept whole
    "blocks": (RoleSpec(**BASE), "mdav",
               {"k": 4, "blocks": "age,income;hours_worked,years_education,household_size"},
               False),
    "t-closeness": (RoleSpec(**BASE, confidential=("health_spending",)), "tc-merge",
                    {"k": 3, "t": 0.2}, True),
    "noise": (RoleSpec(**BASE, confidential=("health_spending",)), "mdav",
              {"k": 5, "dp_epsilon": 1.0, "confidential_bounds": "health_spending=0:5000"},
              True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_stored_result_is_the_run_given_back(survey, name, tmp_path):
    roles, method, options, compact = CASES[name]
    result = anonymize(survey, roles, method, **options)
    stored = StoredResult(result)
    assert stored.compact is compact
    again = stored.result()
    assert same_result(again, result)
    # Independently of same_frame: pandas' exact comparison and the exported bytes.
    pd.testing.assert_frame_equal(again.masked, result.masked, check_exact=True)
    write_table(tmp_path / "again.csv", again.masked)
    write_table(tmp_path / "released.csv", result.masked)
    assert (tmp_path / "again.csv").read_bytes() == (tmp_path / "released.csv").read_bytes()
    summary = stored.summary
    assert (summary.method, summary.parameters, summary.metrics, summary.verification) == (
        result.method, result.parameters, result.metrics, result.verification)
    assert (summary.measures.dld,
            summary.measures.class_sizes) == (result.measures.dld,
                                              result.measures.class_sizes)
    if compact:  # the released quasi-identifiers held once per class, not per record
        assert not set(roles.quasi_identifiers) & set(stored._rest.columns)
        assert all(len(v) == result.measures.class_sizes.size
                   and isinstance(v.index, pd.RangeIndex) for v in stored._per_class.values())
        # the per-record numbers in 32 bits, the one block's labels not twice
        assert stored._labels.dtype == stored._classes.dtype == np.int32
        assert stored._one_block is None
        with pytest.raises(AttributeError, match="kept compactly"):
            summary.masked.columns  # the summary has no table to give
        for per_record in (summary.labels, summary.block_labels, summary.measures.classes,
                           summary.measures.record_risk):
            with pytest.raises(AttributeError, match="kept compactly"):
                np.asarray(per_record)
            with pytest.raises(AttributeError, match="kept compactly"):
                len(per_record)
    else:
        assert summary is result


def test_arrays_that_are_not_what_they_are_rebuilt_from_keep_the_result_whole(survey):
    """Record risks other than 1 / class size, or labels that do not fit in 32 bits, are
    kept as they are: the check at storage compares every array bit for bit."""
    result = anonymize(survey, RoleSpec(**BASE), "mdav", k=5)
    risk = result.measures.record_risk.copy()
    risk[7] = np.nextafter(risk[7], 1.0)
    odd = replace(result, measures=replace(result.measures, record_risk=risk))
    stored = StoredResult(odd)
    assert not stored.compact and stored.result() is odd
    wide = replace(result, labels=result.labels + 2 ** 40,
                   block_labels=result.block_labels + 2 ** 40)
    stored = StoredResult(wide)
    assert stored.compact and stored._labels.dtype == np.int64
    assert same_result(stored.result(), wide) and not same_result(stored.result(), result)


def test_records_released_unmasked_keep_the_whole_table(survey):
    table = survey.copy()
    table.loc[[3, 10], "income"] = np.nan
    result = anonymize(table, RoleSpec(**BASE), "mdav", k=5, missing="exclude")
    stored = StoredResult(result)
    assert not stored.compact and stored.result() is result


def test_a_class_whose_values_differ_in_their_bits_is_kept_whole():
    """0.0 and −0.0 are equal numbers, so a class may hold both; the text written for
    them differs ("0.0", "-0.0"), so the table is kept whole rather than rebuilt with one."""
    table = pd.DataFrame({"x": [-1.0, 1.0, 10.0, 11.0, 20.0, 21.0]})
    result = anonymize(table, RoleSpec(quasi_identifiers=("x",)), "mdav", k=2)
    assert StoredResult(result).compact
    assert (result.masked["x"] == 0.0).sum() >= 2
    masked = result.masked.copy()
    zero = np.flatnonzero(masked["x"].to_numpy() == 0.0)
    masked.loc[zero[1], "x"] = -0.0
    signed = replace(result, masked=masked)
    stored = StoredResult(signed)
    assert not stored.compact and same_result(stored.result(), signed)
    assert not same_frame(masked, result.masked)  # the check sees the sign


def _frame(values, dtype=None, **labels):
    frame = pd.DataFrame({"c": pd.Series(values, dtype=dtype)})
    for name, value in labels.items():
        setattr(frame, name, value)
    return frame


@pytest.mark.parametrize("a, b", [
    (_frame([None, "x"], object), _frame([np.nan, "x"], object)),
    (_frame([1, "x"], object), _frame([True, "x"], object)),
    (_frame([0.0, "x"], object), _frame([-0.0, "x"], object)),
    (_frame([0.0, 1.0], "Float64"), _frame([-0.0, 1.0], "Float64")),
    (_frame([0.0, 1.0]), _frame([-0.0, 1.0])),
    (_frame(["a", "b"], pd.CategoricalDtype(["a", "b"])),
     _frame(["a", "b"], pd.CategoricalDtype(["b", "a"]))),
    (_frame([1.0, 2.0]), _frame([1.0, 2.0], index=pd.Index([0, 1], name="row"))),
    (_frame([1.0]), _frame([1.0], columns=pd.Index(["c"], dtype=object))),
])
def test_same_frame_tells_apart_what_an_export_would(a, b):
    """Equal to pandas' eyes, different in what is written: never "the same"."""
    assert same_frame(a, a.copy()) and same_frame(b, b.copy())
    assert not same_frame(a, b) and not same_frame(b, a)


def test_objects_that_differ_in_a_class_keep_the_table_whole_and_text_is_compacted():
    """A class whose released cells are 1 and True (equal numbers, different text) is
    kept whole; a released column of text held as objects is kept once per class."""
    table = pd.DataFrame({"x": [-1.0, 1.0, 10.0, 11.0, 20.0, 21.0],
                          "w": ["a", "b", "c", "d", "e", "f"]})
    roles = RoleSpec(quasi_identifiers=("x", "w"), levels={"w": "nominal"})
    result = anonymize(table, roles, "mdav", k=2)
    text = replace(result, masked=result.masked.astype({"w": object}))
    assert text.masked["w"].dtype == object
    stored = StoredResult(text)
    assert stored.compact and same_result(stored.result(), text)
    assert stored.result().masked["w"].dtype == object
    mixed = text.masked.copy()
    mixed["w"] = pd.Series([1, True, 2, 2, 3, 3], dtype=object)
    assert len(set(zip(result.measures.classes, mixed["w"].map(type)))) == 4
    odd = StoredResult(replace(result, masked=mixed))
    assert not odd.compact and odd.result().masked["w"].map(type).tolist()[:2] == [int, bool]
