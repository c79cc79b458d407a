"""Blocked microaggregation on Dask (core.cluster) and ``microagg anonymize --engine dask``.

One in-process ``distributed.LocalCluster`` of two workers serves the module (passed as
the scheduler address, which also tests connecting to a given scheduler); one test
starts and closes a local cluster of its own.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

distributed = pytest.importorskip("distributed")
pytest.importorskip("dask.dataframe")

from core import Cancelled, MicroaggError, RoleSpec, TaskState, anonymize  # noqa: E402
from core.cli.main import main  # noqa: E402
from core.cluster import anonymize_blocked  # noqa: E402
from core.cluster.blocking import SUBS, Tree, build_tree, finish_blocking  # noqa: E402
from core.cluster.standardize import aggregate_code_from_counts, global_encoding  # noqa: E402
from core.data.categories import group_aggregate_codes  # noqa: E402
from core.data.encoding import encode  # noqa: E402
from core.data.roles import Level  # noqa: E402
from core.io import read_table  # noqa: E402
from core.verify.kanonymity import verify_k_anonymity  # noqa: E402


@pytest.fixture(scope="module")
def scheduler():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       host="127.0.0.1", protocol="tcp",
                                       dashboard_address=None, silence_logs=50,
                                       scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
    yield cluster.scheduler_address
    cluster.close()


def records(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n, 1))
    X = latent + rng.normal(scale=0.7, size=(n, d))
    table = pd.DataFrame(X, columns=[f"q{j}" for j in range(d)])
    table.insert(0, "rec", np.arange(n))
    table["income"] = rng.gamma(2.0, 1000.0, size=n).round(2)
    return table


QI = ("q0", "q1", "q2")


def group_means_hold(original, masked, roles):
    """Every released value is the mean of its class's original values."""
    keys = list(roles.quasi_identifiers) + list(roles.strata)
    classes = masked.groupby(keys, sort=False).ngroup().to_numpy()
    for column in roles.quasi_identifiers:
        means = pd.Series(original[column].to_numpy()).groupby(classes).transform("mean")
        np.testing.assert_allclose(means.to_numpy(), masked[column].to_numpy(),
                                   rtol=1e-9, atol=1e-9)


def test_blocked_release_is_k_anonymous_in_row_order(scheduler):
    table = records(3000)
    before = table.copy()
    roles = RoleSpec(quasi_identifiers=QI, identifiers=("rec",))
    result = anonymize_blocked(table, roles, "mdav", k=3, block_size=300,
                               scheduler=scheduler)
    assert table.equals(before)
    assert result.passed and result.verification.smallest_class >= 3
    assert result.n_blocks >= 8 and result.block_sizes[0] >= 3
    masked = result.masked
    assert "rec" not in masked.columns and len(masked) == len(table)
    assert masked["income"].equals(table["income"])  # rows in the input's order
    local = verify_k_anonymity(table, masked, roles, 3)
    assert local.passed
    assert result.il == pytest.approx(local.il, rel=1e-6)
    group_means_hold(table, masked, roles)


def test_tie_heavy_data_gives_blocks_of_at_least_k(scheduler):
    rng = np.random.default_rng(1)
    table = pd.DataFrame({"a": rng.integers(0, 3, 2000).astype(float),
                          "b": np.zeros(2000), "c": rng.integers(0, 2, 2000)})
    table.loc[:1500, ["a", "c"]] = 1  # most records identical: a leaf that cannot be cut
    roles = RoleSpec(quasi_identifiers=("a", "b", "c"))
    result = anonymize_blocked(table, roles, "mdav", k=4, block_size=100,
                               scheduler=scheduler)
    assert result.passed and result.block_sizes[0] >= 4
    assert result.n_blocks > 5  # the identical records were dealt into blocks
    assert verify_k_anonymity(table, result.masked, roles, 4).passed


def test_strata_are_natural_blocks(scheduler):
    table = records(1200, seed=2)
    table["region"] = np.where(np.arange(1200) % 3 == 0, "north", "south")
    roles = RoleSpec(quasi_identifiers=QI, strata=("region",))
    result = anonymize_blocked(table, roles, "mdav", k=3, block_size=200,
                               scheduler=scheduler)
    assert result.passed
    assert verify_k_anonymity(table, result.masked, roles, 3).passed
    group_means_hold(table, result.masked, roles)  # no group mixes the regions
    table.loc[0, "region"] = "east"
    with pytest.raises(MicroaggError, match="Stratum 'east'"):
        anonymize_blocked(table, roles, "mdav", k=3, block_size=200, scheduler=scheduler)


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_partitioned_folders_in_and_out(scheduler, tmp_path, kind):
    table = records(2400, seed=3)
    source = tmp_path / "parts"
    source.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(table)), 3)):
        chunk = table.iloc[part]
        if kind == "parquet":
            chunk.to_parquet(source / f"part-{i}.parquet", index=False)
        else:
            chunk.to_csv(source / f"part-{i}.csv", index=False)
    out = tmp_path / "released"
    roles = RoleSpec(quasi_identifiers=QI)
    result = anonymize_blocked(str(source), roles, "mdav", k=3, block_size=400,
                               output=str(out), scheduler=scheduler)
    assert result.passed and result.output_format == kind
    files = sorted(out.iterdir())
    assert [f.name for f in files] == [f"part-0000{i}.{kind}" for i in range(3)]
    read = pd.read_parquet if kind == "parquet" else pd.read_csv
    masked = pd.concat([read(f) for f in files], ignore_index=True)
    assert masked["rec"].tolist() == table["rec"].tolist()
    assert verify_k_anonymity(table, masked, roles, 3).passed
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no leftovers
    with pytest.raises(MicroaggError, match="already exists"):
        anonymize_blocked(str(source), roles, "mdav", k=3, output=str(out),
                          scheduler=scheduler)


def test_codes_and_long_integers_keep_every_digit_as_on_one_machine(scheduler, tmp_path):
    # Dask infers a CSV column's type from the first rows: a column of codes whose first
    # rows have no leading zero was read as numbers, so a kept code 00417 was released
    # as 417.0 (the local engine reads such a column as text, every zero kept).
    table = records(2400, seed=4)
    rng = np.random.default_rng(4)
    codes = rng.integers(10_000, 100_000, len(table)).astype(str)
    codes[-5:] = ["00417", "01234", "00001", "09999", "00417"]  # in the last part only
    table["zip"] = codes.astype(object)
    # Fractions beside a zero-led field are numbers, as on one machine (0012 is 12).
    scores = (rng.integers(0, 1000, len(table)) / 4).astype(str).astype(object)
    scores[-1] = "0012"
    table["score"] = scores
    # Household numbers of 17 digits: a float64 holds no integer beyond 2^53 exactly.
    table["household"] = rng.integers(10 ** 16, 10 ** 17, len(table)).astype(str)
    # Industry codes (NACE): 01.10 and 01.1 are two codes, as numbers both 1.1.
    nace = rng.choice(["10.2", "45.3", "86.10", "47.11"], len(table)).astype(object)
    nace[-3:] = ["01.10", "01.1", "10.20"]
    table["nace"] = nace
    source = tmp_path / "parts"
    source.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(table)), 3)):
        table.iloc[part].to_csv(source / f"part-{i}.csv", index=False)
    out = tmp_path / "released"
    roles = RoleSpec(quasi_identifiers=QI,
                     non_confidential=("zip", "score", "household", "nace"))
    result = anonymize_blocked(str(source), roles, "mdav", k=3, block_size=400,
                               output=str(out), scheduler=scheduler)
    assert result.passed
    masked = pd.concat([pd.read_csv(f, dtype=str) for f in sorted(out.iterdir())],
                       ignore_index=True)
    assert masked["zip"].tolist() == table["zip"].tolist()
    assert masked["household"].tolist() == table["household"].tolist()
    assert masked["nace"].tolist() == table["nace"].tolist()
    local = read_table(source / "part-2.csv")
    assert pd.api.types.is_string_dtype(local["zip"]) and local["score"].iloc[-1] == 12.0
    assert local["nace"].tolist()[-3:] == ["01.10", "01.1", "10.20"]
    assert masked["score"].astype(float).tolist() == table["score"].astype(float).tolist()
    assert masked["score"].iloc[-1] == "12.0"  # released as the number it was read as


def test_a_later_part_that_breaks_a_column_is_named_while_codes_are_looked_for(tmp_path):
    from core.cluster.partitioned import read_partitioned
    rng = np.random.default_rng(9)
    first = pd.DataFrame({"zip": rng.integers(10_000, 100_000, 500).astype(str),
                          "x": rng.normal(size=500)})
    later = first.astype(object)
    later.loc[5, "zip"], later.loc[7, "x"] = "00417", "oops"
    first.to_csv(tmp_path / "part-0.csv", index=False)
    later.to_csv(tmp_path / "part-1.csv", index=False)
    with pytest.raises(MicroaggError, match=r"column 'x' holds str values \(such as "
                                            r"'oops'\) in a later part"):
        read_partitioned(str(tmp_path))


def test_overwrite_replaces_only_a_folder_of_parts_and_never_the_input(scheduler,
                                                                       tmp_path):
    """--overwrite replaces an earlier release's folder of parts; a folder that is or
    holds the input, or holds anything else, is refused and left as it was."""
    table = records(600, seed=8)
    data = tmp_path / "data"
    data.mkdir()
    table.to_csv(data / "in.csv", index=False)
    (data / "notes.txt").write_text("my notes")
    roles = RoleSpec(quasi_identifiers=QI)
    run = dict(roles=roles, method="mdav", k=3, block_size=300, scheduler=scheduler,
               overwrite=True)
    for source, output in ((data / "in.csv", data), (data, data), (data / "in.csv", tmp_path)):
        with pytest.raises(MicroaggError, match="is or holds the input"):
            anonymize_blocked(str(source), output=str(output), **run)
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("keep")
    with pytest.raises(MicroaggError, match=r"holds files that are not parts of a release "
                                            r"\('keep.txt'\)"):
        anonymize_blocked(str(data / "in.csv"), output=str(other), **run)
    assert sorted(p.name for p in data.iterdir()) == ["in.csv", "notes.txt"]
    assert [p.name for p in other.iterdir()] == ["keep.txt"]
    out = tmp_path / "released"
    for _ in range(2):  # the second run replaces the first run's parts
        assert anonymize_blocked(str(data / "in.csv"), output=str(out), **run).passed
    assert [p.name for p in out.iterdir()] == ["part-00000.csv"]


def test_il_close_to_unblocked_mdav(scheduler):
    table = records(6000, seed=4)
    roles = RoleSpec(quasi_identifiers=QI)
    blocked = anonymize_blocked(table, roles, "mdav", k=5, block_size=2000,
                                scheduler=scheduler)
    whole = anonymize(table, roles, "mdav", k=5)
    assert blocked.sst == pytest.approx(whole.metrics.sst, rel=1e-9)  # global z-scores
    assert blocked.il == pytest.approx(whole.metrics.il, rel=0.08)


def test_refusals_name_what_is_wrong(scheduler):
    table = records(300)
    roles = RoleSpec(quasi_identifiers=QI, confidential=("income",))
    with pytest.raises(MicroaggError, match="t-closeness"):
        anonymize_blocked(table, roles, "tc-kfirst", k=3, t=0.3, scheduler=scheduler)
    with pytest.raises(MicroaggError, match="Block size must be at least 2k = 10"):
        anonymize_blocked(table, roles, "mdav", k=5, block_size=8, scheduler=scheduler)
    with pytest.raises(MicroaggError, match="Cannot reach the Dask scheduler at "
                                            "'tcp://127.0.0.1:1'"):
        anonymize_blocked(table, roles, "mdav", k=5, scheduler="tcp://127.0.0.1:1")
    gap = table.copy()
    gap.loc[5, "q1"] = np.nan
    with pytest.raises(MicroaggError, match="Column 'q1' has 1 missing"):
        anonymize_blocked(gap, roles, "mdav", k=5, scheduler=scheduler)


def test_cancel_stops_a_large_run_and_writes_nothing(scheduler, tmp_path):
    table = records(60_000, seed=5)
    table.to_parquet(tmp_path / "big.parquet", index=False)
    state = TaskState()

    def cancel_when_blocks_start(fraction, message):
        if message.startswith("microaggregating"):
            state.cancel()

    state._callback = cancel_when_blocks_start
    with pytest.raises(Cancelled):
        anonymize_blocked(str(tmp_path / "big.parquet"), RoleSpec(quasi_identifiers=QI),
                          "mdav", k=5, block_size=1000, output=str(tmp_path / "out"),
                          scheduler=scheduler, state=state)
    assert [p.name for p in tmp_path.iterdir()] == ["big.parquet"]


def test_local_cluster_started_and_closed():
    table = records(400, seed=6)
    result = anonymize_blocked(table, RoleSpec(quasi_identifiers=QI), "mdav", k=3,
                               block_size=100, n_workers=1, processes=False)
    assert result.passed and result.local_cluster


def test_cli_engine_dask(scheduler, tmp_path, capsys):
    table = records(900, seed=7)
    table.to_parquet(tmp_path / "in.parquet", index=False)
    out, summary = tmp_path / "out.csv", tmp_path / "summary.json"
    code = main(["anonymize", str(tmp_path / "in.parquet"), "-o", str(out), "--qi", *QI,
                 "--k", "3", "--engine", "dask", "--scheduler", scheduler,
                 "--block-size", "200", "--summary-json", str(summary), "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert "k-anonymity PASSED" in capsys.readouterr().out
    masked = pd.read_csv(out / "part-00000.csv")
    assert verify_k_anonymity(table, masked, RoleSpec(quasi_identifiers=QI), 3).passed
    assert json.loads(summary.read_text())["verified"] is True
    for extra in (["--block-size", "200"], ["--engine", "dask", "--report", "r.html"],
                  ["--engine", "dask", "--scheduler", "tcp://127.0.0.1:1"]):
        code = main(["anonymize", str(tmp_path / "in.parquet"), "-o",
                     str(tmp_path / "other"), "--qi", *QI, "--k", "3", *extra])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("microagg: error:") and \
            len(err.strip().splitlines()) == 1, err


def test_global_encoding_equals_the_whole_tables(scheduler):
    import dask.dataframe as dd
    rng = np.random.default_rng(8)
    table = records(500, seed=8)
    table["grade"] = rng.choice(["low", "mid", "high"], 500)
    table["town"] = rng.choice(["a", "b", "c", "d"], 500)
    roles = RoleSpec(quasi_identifiers=(*QI, "grade", "town"),
                     orders={"grade": ("low", "mid", "high")})
    frame = dd.from_pandas(table, npartitions=4)
    # Closed at the end: a client left open keeps asking the scheduler, after the module's
    # cluster has gone, and a later in-process self-test counts that as network access.
    with distributed.Client(scheduler, set_as_default=False) as client, client.as_current():
        ours = global_encoding(frame, roles, table.head(50), needed=list(QI))
    whole = encode(table, roles, strict=False)
    np.testing.assert_allclose(ours.encode(table).X, whole.X, rtol=1e-12, atol=1e-12)
    assert ours.sst == pytest.approx(whole.total_sum_of_squares(), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e12, 1e12, allow_nan=False), min_size=1, max_size=60),
       st.lists(st.integers(0, 60), max_size=4), st.sampled_from([0.0, 1e8]))
def test_the_moments_are_exact_however_the_records_are_cut(values, cuts, offset):
    """The mean and the sum of squared deviations are the same bits for every cut of
    the records into partitions, and the exact ones rounded once unless a value is so
    small (below 1e−145, not 0) that its square's rounding error underflows; the kernel
    gives what its Python source gives."""
    from fractions import Fraction

    from core.cluster import standardize
    x = np.array(values) + offset
    n = len(x)
    exact_mean = sum(map(Fraction, x.tolist()), Fraction(0)) / n
    exact_m2 = sum(((Fraction(v) - exact_mean) ** 2 for v in x.tolist()), Fraction(0))
    bounds = [0, *sorted(c for c in cuts if c < n), n]
    pieces = [standardize.exact_sums(x[a:b, None])[0] for a, b in zip(bounds, bounds[1:])]
    merged = standardize.moments_of(n, np.concatenate([p[0] for p in pieces]),
                                    np.concatenate([p[1] for p in pieces]))
    assert merged == standardize.moments_of(n, *standardize.exact_sums(x[:, None])[0])
    if all(v == 0.0 or abs(v) >= 1e-145 for v in x.tolist()):
        assert merged == (float(exact_mean), float(exact_m2))
    if standardize._column_partials_compiled is not None:  # the kernel and its source
        compiled = standardize._column_partials_compiled(x[:, None].copy())
        plain = standardize._column_partials(x[:, None].copy())
        assert all(np.array_equal(a, b) for a, b in zip(compiled, plain))


def test_moments_of_a_column_with_an_infinity_are_nan():
    from core.cluster import standardize
    sums = standardize.exact_sums(np.array([[1.0, 2.0], [np.inf, 3.0], [np.nan, 4.0]]))
    assert all(np.isnan(standardize.moments_of(3, *sums[0])))
    assert standardize.moments_of(3, *sums[1]) == (3.0, 2.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=40), st.booleans())
def test_aggregate_code_from_counts_matches_the_reference(codes, ordinal):
    codes = np.array(codes)
    level = Level.ORDINAL if ordinal else Level.NOMINAL
    reference = group_aggregate_codes(codes, np.zeros(codes.size, dtype=np.int64), level, 6)
    assert aggregate_code_from_counts(np.bincount(codes, minlength=6), level) == reference[0]


def test_small_leaves_are_merged_with_their_sibling():
    X = np.repeat(np.arange(8.0), 10)[:, None]
    tree = build_tree(X, np.zeros(80, dtype=np.int64), np.array([80]), block_size=10)
    assert isinstance(tree, Tree) and tree.n_leaves >= 4
    counts = np.bincount(tree.leaf_of(X, np.zeros(80, dtype=np.int64)),
                         minlength=tree.n_leaves)
    counts[0] = 2  # as if the whole table put only 2 records in the first leaf
    blocking = finish_blocking(tree, counts, block_size=10, min_size=5)
    assert blocking.sizes.min() >= 5 and blocking.sizes.sum() == counts.sum()
    assert blocking.block_of_key[0] == blocking.block_of_key[SUBS]  # leaves 0 and 1


def _with_kept_copies(n=600, seed=11):
    """Records whose kept columns give q0 away: its value banded in tenths (an exact
    relation) and a copy with noise at a twentieth of its standard deviation."""
    table = records(n, seed=seed).drop(columns=["rec"])
    rng = np.random.default_rng(seed)
    table["q0_band"] = np.floor(table["q0"] * 10).astype(int)
    table["q0_noisy"] = table["q0"] + rng.normal(scale=0.05 * table["q0"].std(), size=n)
    return table, RoleSpec(quasi_identifiers=QI, confidential=("income",),
                           non_confidential=("q0_band", "q0_noisy"))


@pytest.mark.parametrize("output", [None, "release", "release.csv"])
def test_a_blocked_release_of_a_table_in_memory_gets_every_warning(scheduler, tmp_path,
                                                                   output):
    """The window's Advanced choice: the table is in memory, so the kept columns are
    checked as on this computer, on the release as written (CSV parts come back with
    whole numbers as floats, and are still the columns released as they are)."""
    from core.pipeline.warnings import release_warnings

    table, roles = _with_kept_copies()
    result = anonymize_blocked(table, roles, k=3, scheduler=scheduler, block_size=200,
                               output=None if output is None else tmp_path / output)
    kinds = [w.kind for w in result.warnings]
    assert kinds.count("kept-column-reveals") == 1 and "kept-column-follows" in kinds
    if output is None:  # the figures are the plain check's on the release
        masked = result.masked.reset_index(drop=True)
        classes = masked.groupby(list(QI), sort=False).ngroup().to_numpy()
        sizes = np.bincount(classes)
        plain = release_warnings(table, masked, roles, group_sizes=sizes, il=result.il,
                                 k_prime=len(table) / len(sizes),
                                 unique_records=int((sizes == 1).sum()), record_level=True)
        assert [w.message for w in result.warnings] == [w.message for w in plain]
    assert "Read before publishing" in _summary(result)


def _summary(result) -> str:
    from microagg_desktop.cluster_panel import blocked_summary

    return blocked_summary(result)


def test_a_blocked_release_read_in_parts_says_its_kept_columns_were_not_checked(
        scheduler, tmp_path, capsys):
    """A file is never held whole: the warnings from the class figures, and one that
    names the kept columns left unchecked, on stderr and in the summary."""
    table, roles = _with_kept_copies()
    table.to_csv(tmp_path / "in.csv", index=False)
    code = main(["anonymize", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out"),
                 "--qi", *QI, "--confidential", "income", "--k", "3", "--engine", "dask",
                 "--scheduler", scheduler, "--block-size", "200", "--summary-json",
                 str(tmp_path / "s.json"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert ("microagg: warning: The columns released as they are ('income', 'q0_band', "
            "'q0_noisy') were not checked: the table was read in parts") in err
    said = json.loads((tmp_path / "s.json").read_text())["warnings"]
    assert [w["kind"] for w in said] == ["kept-columns-not-checked"]
    # Too large a k for the table: one class holds most records, said from the counts.
    result = anonymize_blocked(tmp_path / "in.csv", RoleSpec(quasi_identifiers=QI), k=400,
                               scheduler=scheduler, block_size=1000, output=tmp_path / "o2")
    assert [w.kind for w in result.warnings][:2] == ["dominant-group", "high-information-loss"]
    assert result.warnings[0].message.startswith("One class holds 600 of the 600 records")


def test_a_constant_quasi_identifier_is_said_on_a_blocked_run_as_on_this_computer(scheduler):
    table = records(400, seed=5).drop(columns=["rec", "income"]).assign(c=1.0)
    roles = RoleSpec(quasi_identifiers=(*QI, "c"))
    local = [w.kind for w in anonymize(table, roles, k=3).warnings]
    blocked = [w.kind for w in anonymize_blocked(table, roles, k=3, scheduler=scheduler,
                                                 block_size=200).warnings]
    assert "constant-quasi-identifier" in local and blocked == local
