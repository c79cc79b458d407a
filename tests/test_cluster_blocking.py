"""The blocks of the Dask engine (core.cluster.blocking) and what the engine makes of them.

Tree properties are checked without Dask; the end-to-end properties (the same release
however the table is partitioned, clear refusals of bad parts) on one in-process
``distributed.LocalCluster`` of two workers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import MicroaggError, RoleSpec
from core.cluster.blocking import SUBS, build_tree, finish_blocking

distributed = pytest.importorskip("distributed")
pytest.importorskip("dask.dataframe")

from core.cluster import anonymize_blocked  # noqa: E402
from core.verify.kanonymity import verify_k_anonymity  # noqa: E402

QI = ("q0", "q1", "q2")


@pytest.fixture(scope="module")
def scheduler():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       host="127.0.0.1", protocol="tcp",
                                       dashboard_address=None, silence_logs=50,
                                       scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
    yield cluster.scheduler_address
    cluster.close()


def correlated(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n, 1))
    return latent * rng.uniform(0.5, 1.0, size=(1, d)) + rng.normal(scale=0.4, size=(n, d))


def leaf_counts(tree, X):
    return np.bincount(tree.leaf_of(X, np.zeros(len(X), dtype=np.int64)),
                       minlength=tree.n_leaves)


@pytest.mark.parametrize("n, block_size", [(10_000, 1_000), (10_000, 3_000), (7_001, 700)])
def test_blocks_are_bounded_and_nearly_equal(n, block_size):
    X = correlated(n)
    tree = build_tree(X, np.zeros(n, dtype=np.int64), np.array([n]), block_size=block_size)
    counts = leaf_counts(tree, X)
    assert counts.sum() == n
    assert counts.max() <= 1.05 * block_size + 1  # at most about N (the 5 % slack)
    assert counts.min() >= 0.9 * counts.max() - 1  # equal, not 0.7 N to 1.4 N
    assert tree.n_leaves == int(np.ceil(n / (1.05 * block_size)))


def test_cuts_follow_the_principal_axis():
    rng = np.random.default_rng(1)
    x = rng.normal(size=4000)
    X = np.c_[x, x + rng.normal(scale=0.1, size=4000)]  # spread along (1, 1)
    tree = build_tree(X, np.zeros(4000, dtype=np.int64), np.array([4000]), block_size=2000)
    normal = tree.normal[tree.roots[0]]
    assert abs(abs(normal @ np.array([1.0, 1.0])) / np.sqrt(2) - 1) < 1e-3
    counts = leaf_counts(tree, X)
    assert counts.tolist() == [2000, 2000]


def test_a_sample_stands_for_the_whole_table():
    X = correlated(50_000, seed=2)
    sample = X[::10]
    tree = build_tree(sample, np.zeros(len(sample), dtype=np.int64), np.array([50_000]),
                      block_size=10_000)
    counts = leaf_counts(tree, X)
    assert tree.n_leaves == 5 and counts.sum() == 50_000
    assert counts.max() <= 1.05 * 10_000 * 1.05  # a sample of 5,000 errs by a few %


def test_identical_records_are_dealt_into_blocks_of_at_least_min_size():
    X = np.zeros((1000, 2))
    tree = build_tree(X, np.zeros(1000, dtype=np.int64), np.array([1000]), block_size=100)
    assert tree.n_leaves == 1 and tree.solid[0]
    keys = tree.key_of(X, np.zeros(1000, dtype=np.int64), np.arange(1000))
    blocking = finish_blocking(tree, np.bincount(keys, minlength=SUBS), block_size=100,
                               min_size=20)
    assert blocking.n_blocks >= 5 and blocking.sizes.min() >= 20
    assert blocking.sizes.sum() == 1000
    blocks = blocking.block_of(X, np.zeros(1000, dtype=np.int64), np.arange(1000))
    assert np.bincount(blocks).tolist() == blocking.sizes.tolist()


def test_same_release_in_memory_and_from_uneven_parquet_parts(scheduler, tmp_path):
    X = correlated(3000, seed=3)
    table = pd.DataFrame(X, columns=list(QI))
    table.insert(0, "rec", np.arange(3000))
    roles = RoleSpec(quasi_identifiers=QI, identifiers=("rec",))
    in_memory = anonymize_blocked(table, roles, "mdav", k=4, block_size=700,
                                  scheduler=scheduler)
    source = tmp_path / "parts"
    source.mkdir()
    for i, (a, b) in enumerate([(0, 400), (400, 2100), (2100, 3000)]):
        table.iloc[a:b].to_parquet(source / f"part-{i}.parquet", index=False)
    out = tmp_path / "out"
    partitioned = anonymize_blocked(str(source), roles, "mdav", k=4, block_size=700,
                                    output=str(out), scheduler=scheduler)
    released = pd.concat([pd.read_parquet(f) for f in sorted(out.iterdir())],
                         ignore_index=True)
    pd.testing.assert_frame_equal(released, in_memory.masked.reset_index(drop=True))
    assert partitioned.il == pytest.approx(in_memory.il, rel=1e-12)
    assert partitioned.n_blocks == in_memory.n_blocks == 5
    assert max(partitioned.block_sizes) <= 1.05 * 700 * 1.05
    assert partitioned.min_group_size >= 4
    assert verify_k_anonymity(table, released, roles, 4).passed


def test_text_in_a_numeric_part_is_named(scheduler, tmp_path):
    source = tmp_path / "parts"
    source.mkdir()
    table = pd.DataFrame(correlated(600, seed=4), columns=list(QI))
    table.iloc[:300].to_csv(source / "part-0.csv", index=False)
    bad = table.iloc[300:].astype(object)
    bad.iloc[10, 1] = "n/a?"
    bad.to_csv(source / "part-1.csv", index=False)
    with pytest.raises(MicroaggError, match=r"Cannot read '.*parts': column 'q1' holds "
                                            r"str values \(such as 'n/a\?'\)"):
        anonymize_blocked(str(source), RoleSpec(quasi_identifiers=QI), "mdav", k=3,
                          block_size=200, output=str(tmp_path / "out"), scheduler=scheduler)
    assert not (tmp_path / "out").exists()


def test_a_stratum_the_sample_barely_saw_is_one_block():
    X = correlated(3000, seed=5)
    strata = np.zeros(3000, dtype=np.int64)
    strata[:2] = 1  # two sample points stand for a stratum of 40 records, one for 30,
    strata[2] = 2  # and none for a stratum of 25
    tree = build_tree(X, strata, np.array([100_000, 40, 30, 25]), block_size=50_000)
    assert tree.n_leaves == 2 + 1 + 1 + 1
    leaves = tree.leaf_of(X[:4], np.array([1, 1, 2, 3]))
    assert leaves[0] == leaves[1] and len(set(leaves.tolist())) == 3
