"""The measures' work on the original, made ahead while the method runs.

A run starts the search tree over the originals and the original's IL1 moments on a
helper thread while the method runs. The figures must be those of the plain path, the
fused interval-disclosure count that of the per-column count, and a cancelled run must
neither wait for the helper nor leave work queued on it.
"""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import core.measures.ahead as ahead_code
import core.measures.disclosure as disclosure
from core import Cancelled, TaskState, anonymize
from core.data.encoding import Encoding, encode
from core.data.roles import RoleSpec
from core.measures.disclosure import inside_count, inside_counts
from core.measures.measure import MeasuresAhead, measure
from core.pipeline.plan import prepare_run
from core.pipeline.run import run

# ``core.pipeline.run`` is also the name of the function the package exports.
run_code = sys.modules["core.pipeline.run"]


# ----------------------------------------------------------------- fused ID count
@settings(max_examples=120, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 90), st.integers(1, 4),
       st.sampled_from([2, 5, 100]), st.sampled_from([0.5, 1.0, 10.0, 100.0]))
def test_inside_counts_is_inside_count_of_each_column(seed, n, d, distinct, interval):
    rng = np.random.default_rng(seed)
    original = rng.integers(0, distinct, (n, d)).astype(float)
    classes = rng.integers(0, max(1, n // 3), n)
    masked = (rng.integers(0, distinct + 1, (int(classes.max()) + 1, d)).astype(float)
              - rng.choice([0.0, 0.5], d))
    columns = sorted(rng.choice(d, size=int(rng.integers(1, d + 1)), replace=False))
    expected = {j: inside_count(original[:, j], masked[:, j], interval=interval,
                                classes=classes) for j in columns}
    assert inside_counts(original, masked, columns, classes, interval=interval) == expected
    saved, disclosure._inside_column_compiled = disclosure._inside_column_compiled, None
    try:  # the numpy path gives the same counts
        assert inside_counts(original, masked, columns, classes,
                             interval=interval) == expected
    finally:
        disclosure._inside_column_compiled = saved


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 60), st.sampled_from([0.5, 5.0, 100.0]))
def test_inside_counts_kernel_orders_nan_and_zeros_as_numpy(seed, n, interval):
    """The compiled walk finds numpy.searchsorted's positions with NaN, ±inf and ±0.0
    among the original and the masked values (NaN sorts last in both)."""
    rng = np.random.default_rng(seed)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0])
    original = rng.choice(special, (n, 2))
    classes = rng.integers(0, max(1, n // 2), n)
    masked = rng.choice(special, (int(classes.max()) + 1, 2))
    fast = inside_counts(original, masked, [0, 1], classes, interval=interval)
    saved, disclosure._inside_column_compiled = disclosure._inside_column_compiled, None
    try:
        plain = inside_counts(original, masked, [0, 1], classes, interval=interval)
    finally:
        disclosure._inside_column_compiled = saved
    assert fast == plain


def test_inside_counts_catches_a_one_rank_wider_interval():
    """A mutation check: the interval's ends are ranks ρ ± w, not ρ ± (w + 1)."""
    original = np.arange(200.0)[:, None]
    masked = np.array([[50.0]])
    classes = np.zeros(200, dtype=np.int64)
    # w = 2 ranks: values 48..52 are inside, 47 and 53 are not
    assert inside_counts(original, masked, [0], classes, interval=1.0) == {0: 5}


# ----------------------------------------------------------------- the work made ahead
def _tables(n=400, seed=0):
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({
        "age": rng.integers(18, 90, n).astype(float),
        "wage": rng.lognormal(10, 1, n),
        "hours": rng.integers(10, 60, n).astype(float),
        "region": rng.choice(["N", "S", "E", "W"], n),
    })
    roles = RoleSpec(quasi_identifiers=("age", "wage", "hours", "region"))
    return table, roles


def _same_measures(a, b):
    for name in ("k_prime", "sse", "sst", "il", "il1", "dld", "id", "dr", "score"):
        assert getattr(a, name) == getattr(b, name), name
    assert a.il1_components == b.il1_components
    assert a.scenarios == b.scenarios
    assert np.array_equal(a.classes, b.classes)


@pytest.mark.parametrize("scenarios", ["all", "singles", "pairs"])
def test_measures_with_the_work_made_ahead_are_the_plain_measures(scenarios):
    table, roles = _tables()
    result = anonymize(table, roles, "mdav", k=4)
    encoding = encode(table, roles, strict=False)
    plain = measure(table, result.masked, roles, scenarios=scenarios, encoding=encoding)
    sets = [s.known for s in plain.scenarios]
    with ThreadPoolExecutor(max_workers=1) as executor:
        ahead = MeasuresAhead(encoding, sets, executor)
        made = measure(table, result.masked, roles, scenarios=scenarios,
                       encoding=encoding, ahead=ahead)
    _same_measures(plain, made)


def test_work_for_other_scenarios_or_another_encoding_is_not_used():
    table, roles = _tables()
    result = anonymize(table, roles, "mdav", k=4)
    encoding = encode(table, roles, strict=False)
    plain = measure(table, result.masked, roles, encoding=encoding)
    with ThreadPoolExecutor(max_workers=1) as executor:
        wrong = MeasuresAhead(encoding, [("age",)], executor)
        other = MeasuresAhead(encode(table, roles, strict=False),
                              [s.known for s in plain.scenarios], executor)
        assert not wrong.serves(encoding, [s.known for s in plain.scenarios])
        assert not other.serves(encoding, [s.known for s in plain.scenarios])
        for ahead in (wrong, other):
            _same_measures(plain, measure(table, result.masked, roles, encoding=encoding,
                                          ahead=ahead))


def test_queued_work_is_made_on_the_asking_thread():
    """Work no thread has started is made where it is asked for, not waited for."""
    gate = threading.Event()
    with ThreadPoolExecutor(max_workers=1) as executor:
        executor.submit(gate.wait, 10)  # the helper is busy
        work = ahead_code.Work(executor, threading.get_ident)
        began = time.perf_counter()
        assert work.result() == threading.get_ident()
        assert time.perf_counter() - began < 5
        gate.set()
    calls = []
    with ThreadPoolExecutor(max_workers=1) as executor:  # made once, however asked
        gate = threading.Event()
        executor.submit(gate.wait, 10)
        work = ahead_code.Work(executor, lambda: calls.append(1) or len(calls))
        assert [work.result(), work.result()] == [1, 1]
        gate.set()
        done = ahead_code.Work(executor, lambda: calls.append(1) or len(calls))
        assert [done.result(), done.result()] == [2, 2]
    assert calls == [1, 1]


def test_items_no_helper_began_are_made_on_the_asking_thread_last_first():
    """ItemWorks: the helper takes the items first to last; the asking thread takes,
    last to first, every item the helper has not begun, and then waits only for the
    one the helper is making. The result holds every item's own."""
    begun = threading.Event()
    gate = threading.Event()
    made = []

    def count(items, scale):
        if items == [0]:  # the helper's first item: held until the asking thread is done
            begun.set()
            gate.wait(10)
        made.append((items[0], threading.get_ident()))
        return {items[0]: items[0] * scale}

    with ThreadPoolExecutor(max_workers=1) as executor:
        works = ahead_code.ItemWorks(executor, count, [0, 1, 2, 3], (), (10,))
        assert begun.wait(10) and not works.done()
        asking = threading.get_ident()
        threading.Timer(0.2, gate.set).start()
        assert works.result() == {0: 0, 1: 10, 2: 20, 3: 30}
        assert works.done() and works.result() == {0: 0, 1: 10, 2: 20, 3: 30}
    assert made[:3] == [(3, asking), (2, asking), (1, asking)]
    assert made[3][0] == 0 and made[3][1] != asking


@pytest.mark.parametrize("method", ["mdav", "pcp"])
def test_a_run_uses_the_work_made_ahead(monkeypatch, method):
    table, roles = _tables()
    seen = []
    original = measure

    def spy(*args, ahead=None, **kwargs):
        seen.append(ahead)
        return original(*args, ahead=ahead, **kwargs)

    monkeypatch.setattr(run_code, "measure", spy)
    plan = prepare_run(table, roles, method, k=4, intruder="pairs")
    result = run(plan)
    (ahead,) = seen
    assert ahead is not None and ahead.serves(plan.encoding,
                                              [s.known for s in result.measures.scenarios])
    _same_measures(result.measures, measure(table, result.masked, roles,
                                            known=list(plan.scenarios)))
    assert result.verification.passed


def test_a_cancel_during_the_method_does_not_wait_for_the_helper(monkeypatch):
    table, roles = _tables(3000)
    gate = threading.Event()
    real = ahead_code.linkage_originals

    def slow(Z):  # the helper's first task holds it for a long time
        gate.wait(30)
        return real(Z)

    state = TaskState()

    def cancelled_method(*args, **kwargs):  # the user cancels during the method
        state.cancel()
        state.check()

    monkeypatch.setattr(ahead_code, "linkage_originals", slow)
    monkeypatch.setattr(run_code, "partition_blocks", cancelled_method)
    plan = prepare_run(table, roles, "mdav", k=3)
    began = time.perf_counter()
    try:
        with pytest.raises(Cancelled):
            run(plan, state)
        assert time.perf_counter() - began < 10
    finally:
        gate.set()
    left = [t for t in threading.enumerate() if t.name.startswith("run")]
    for thread in left:  # the helper ends with its task; nothing more was queued
        thread.join(10)
        assert not thread.is_alive()


def test_a_wait_for_work_on_another_thread_honours_cancel():
    """Work a helper is making is waited for with Cancel checked, not blocked on."""
    gate = threading.Event()
    state = TaskState()
    with ThreadPoolExecutor(max_workers=1) as executor:
        work = ahead_code.Work(executor, gate.wait, 30)
        time.sleep(0.1)  # the helper has started it
        threading.Timer(0.2, state.cancel).start()
        began = time.perf_counter()
        with pytest.raises(Cancelled):
            work.result(state)
        assert time.perf_counter() - began < 5
        gate.set()


def test_measures_cancelled_while_helpers_count_do_not_wait_for_them(monkeypatch):
    """Cancel during the measures stops them at once: neither the interval-disclosure
    counts on a helper (held here for 30 s) nor the helpers' shutdown hold it."""
    measure_code = sys.modules["core.measures.measure"]
    table, roles = _tables(3000)
    plan = prepare_run(table, roles, "mdav", k=3)
    released = run(plan).masked
    gate, started = threading.Event(), threading.Event()
    real_counts, real_linkage = measure_code.inside_counts, measure_code.record_linkage

    def held_counts(*args):  # on the helper: holds it until the test ends
        started.set()
        gate.wait(30)
        return real_counts(*args)

    def linkage_after_the_helper_started(*args, **kwargs):  # no race for the counts
        started.wait(30)
        state.cancel()
        return real_linkage(*args, **kwargs)

    state = TaskState()
    monkeypatch.setattr(measure_code, "inside_counts", held_counts)
    monkeypatch.setattr(measure_code, "record_linkage", linkage_after_the_helper_started)
    began = time.perf_counter()
    try:
        with pytest.raises(Cancelled):
            measure(table, released, roles, state=state)
        assert time.perf_counter() - began < 10
    finally:
        gate.set()


def test_a_cancel_during_the_verification_stops_before_the_warnings(monkeypatch):
    """Cancel pressed while the verifier runs is honoured as it returns: the partition's
    figures and the release warnings (a whole-table pass each) are not computed."""
    table, roles = _tables(500)
    state, after = TaskState(), []
    plan = prepare_run(table, roles, "mdav", k=3)
    real_check = type(plan.method.guarantee).check

    def check_then_cancel(self, *args, **kwargs):
        found = real_check(self, *args, **kwargs)
        state.cancel()
        return found

    monkeypatch.setattr(type(plan.method.guarantee), "check", check_then_cancel)
    monkeypatch.setattr(run_code, "partition_metrics", lambda *a: after.append(1))
    with pytest.raises(Cancelled):
        run(plan, state)
    assert after == []


def test_il1_is_made_on_the_helper_while_the_release_classes_are_found(monkeypatch):
    """IL1 needs no classes: it is queued on the helper first, so it runs while this
    thread finds the release's classes (here the classes wait until IL1 has begun; IL1
    queued behind them would never begin in time). The figures are the same."""
    measure_code = sys.modules["core.measures.measure"]
    table, roles = _tables(3000)
    released = anonymize(table, roles, "mdav", k=3).masked
    encoding = encode(table, roles, strict=False)
    plain = measure(table, released, roles, encoding=encoding)
    began_il1, where, waited = threading.Event(), [], []
    real_rows, real_il1 = measure_code.distinct_rows, measure_code._il1_ahead

    def classes_after_il1_began(*args, **kwargs):
        if kwargs.get("order") == "sorted":
            waited.append(began_il1.wait(10))
        return real_rows(*args, **kwargs)

    def il1_noting_where(*args):
        where.append(threading.current_thread())
        began_il1.set()
        return real_il1(*args)

    monkeypatch.setattr(measure_code.os, "cpu_count", lambda: 2)  # one helper thread
    monkeypatch.setattr(measure_code, "distinct_rows", classes_after_il1_began)
    monkeypatch.setattr(measure_code, "_il1_ahead", il1_noting_where)
    made = measure(table, released, roles, encoding=encoding)
    assert waited == [True]
    assert len(where) == 1 and where[0] is not threading.current_thread()
    _same_measures(plain, made)


def test_a_cancel_while_the_verifier_finds_the_classes_stops_it_before_its_next_pass(
        monkeypatch):
    """The k-anonymity verifier takes Cancel between its passes over the records: a
    Cancel pressed while the release's classes are found (once, for the verifier and
    the measures) stops the verifier before it measures the release's values."""
    run_code = sys.modules["core.pipeline.run"]
    table, roles = _tables(500)
    state, later, found = TaskState(), [], []
    plan = prepare_run(table, roles, "mdav", k=3)
    real_classes, real_values = run_code.frame_classes, Encoding.values_of

    def classes_then_cancel(*args, **kwargs):
        found.append(real_classes(*args, **kwargs))
        state.cancel()
        return found[-1]

    def values_noting_a_cancel(self, *args, **kwargs):
        if sys._getframe(1).f_code.co_name == "verify_k_anonymity":
            later.append(state.cancelled)
        return real_values(self, *args, **kwargs)

    monkeypatch.setattr(run_code, "frame_classes", classes_then_cancel)
    monkeypatch.setattr(Encoding, "values_of", values_noting_a_cancel)
    with pytest.raises(Cancelled):
        run(plan, state)
    assert len(found) == 1 and not any(later)  # the verifier measured nothing after it


def test_the_release_classes_are_found_once_for_the_verifier_and_the_measures(
        monkeypatch):
    """The verifier and the measures take the classes found once from the released
    table (frame_classes of its quasi-identifiers and strata; neither finds them
    again), and give what each gives on its own from the two tables."""
    from core.measures.measure import measure
    from core.verify import rows as rows_code

    run_code = sys.modules["core.pipeline.run"]
    table, roles = _tables(900)
    roles = RoleSpec(quasi_identifiers=roles.quasi_identifiers, strata=("sector",))
    table["sector"] = np.random.default_rng(5).choice(["n", "s"], len(table))
    real_classes, real_distinct = run_code.frame_classes, rows_code.distinct_rows
    calls = {"classes": 0, "release rows": 0}

    def counted_classes(*args, **kwargs):
        calls["classes"] += 1
        return real_classes(*args, **kwargs)

    def counted_distinct(values, *args, **kwargs):
        calls["release rows"] += len(values) == len(table)
        return real_distinct(values, *args, **kwargs)

    monkeypatch.setattr(run_code, "frame_classes", counted_classes)
    monkeypatch.setattr(sys.modules["core.verify.kanonymity"], "frame_classes",
                        counted_classes)
    monkeypatch.setattr(sys.modules["core.measures.measure"], "distinct_rows",
                        counted_distinct)
    plan = prepare_run(table, roles, "mdav", k=3)
    result = run(plan)
    assert calls == {"classes": 1, "release rows": 0}
    monkeypatch.undo()
    alone = measure(table, result.masked, roles, known=list(plan.scenarios),
                    encoding=plan.encoding)
    _same_measures(alone, result.measures)
    check = plan.method.guarantee.check(table, result.masked, roles, k=3,
                                        encoding=plan.encoding)
    assert check.verification == result.verification


@pytest.mark.parametrize("method, t, module, per_attribute", [
    ("tc-merge", 0.3, "core.verify.tcloseness", "class_emds"),
    ("tc-bucket", 1.5, "core.verify.multiplicative", "class_distances")])
def test_a_cancel_while_a_closeness_verifier_finds_the_classes_stops_it_there(
        monkeypatch, method, t, module, per_attribute):
    code = sys.modules[module]
    table, _ = _tables(600)
    roles = RoleSpec(quasi_identifiers=("age", "hours"), confidential=("wage",))
    state, later = TaskState(), []
    plan = prepare_run(table, roles, method, k=3, t=t)
    real_classes, real_step = code.frame_classes, getattr(code, per_attribute)

    def classes_then_cancel(*args, **kwargs):
        found = real_classes(*args, **kwargs)
        state.cancel()
        return found

    def step_noting(*args, **kwargs):
        later.append(1)
        return real_step(*args, **kwargs)

    monkeypatch.setattr(code, "frame_classes", classes_then_cancel)
    monkeypatch.setattr(code, per_attribute, step_noting)
    with pytest.raises(Cancelled):
        run(plan, state)
    assert later == []


def test_a_value_masking_run_hands_its_classes_to_the_measures(monkeypatch):
    """The classes Mic1D-k's run found of the masked values are the release's classes
    when the released values are those bit for bit: the measures do not find them again,
    and their figures are those of measuring the release afresh."""
    measure_code = sys.modules["core.measures.measure"]
    table, _ = _tables(800)
    roles = RoleSpec(quasi_identifiers=("age", "wage", "hours"))
    sorted_calls = []
    real = measure_code.distinct_rows

    def counted(keys, order="sorted"):
        if order == "sorted":
            sorted_calls.append(len(keys))
        return real(keys, order=order)

    monkeypatch.setattr(measure_code, "distinct_rows", counted)
    result = anonymize(table, roles, "mic1d", k=3)
    assert sorted_calls == []
    again = measure(table, result.masked, roles)
    assert sorted_calls == [800]
    _same_measures(result.measures, again)
    assert np.array_equal(result.measures.class_sizes, again.class_sizes)


def test_classes_of_another_matrix_are_not_taken():
    """A matrix that differs from the release in one bit (0.0 against −0.0) or one
    value: its classes are ignored and the release's own are found."""
    from core.verify.rows import distinct_rows
    table, _ = _tables(300)
    roles = RoleSpec(quasi_identifiers=("age", "wage", "hours"))
    released = anonymize(table, roles, "individual-ranking", k=3).masked
    plain = measure(table, released, roles)
    values = released[list(roles.quasi_identifiers)].to_numpy(dtype=float)
    zero = values.copy()
    zero[0, 0] = 0.0
    signed = zero.copy()
    signed[0, 0] = -0.0
    other = values.copy()
    other[:, 1] = other[0, 1]  # fewer classes
    for matrix in (signed, other):
        wrong = distinct_rows(other)
        made = measure(table, released.assign(age=zero[:, 0]) if matrix is signed
                       else released, roles, classes_of=(matrix, wrong))
        expect = plain if matrix is other else measure(table, released.assign(age=zero[:, 0]),
                                                       roles)
        _same_measures(expect, made)


def test_a_large_tree_is_made_when_the_measures_begin(monkeypatch):
    """Above TREE_AHEAD_BYTES the search tree is not made beside the method (its memory
    would add to the method's own); the measures make it, with the same figures. A
    run's pipeline then builds it once, after the partition."""
    table, roles = _tables()
    result = anonymize(table, roles, "mdav", k=4)
    encoding = encode(table, roles, strict=False)
    plain = measure(table, result.masked, roles, encoding=encoding)
    sets = [s.known for s in plain.scenarios]
    rows, columns = encoding.X.shape
    assert ahead_code.tree_bytes(rows, columns) == 12 * rows * columns
    monkeypatch.setattr(ahead_code, "TREE_AHEAD_BYTES", ahead_code.tree_bytes(rows, columns))
    with ThreadPoolExecutor(max_workers=1) as executor:
        assert MeasuresAhead(encoding, sets, executor).linkage is not None  # at the bound
    monkeypatch.setattr(ahead_code, "TREE_AHEAD_BYTES", ahead_code.tree_bytes(rows, columns) - 1)
    built = []
    measure_code = sys.modules["core.measures.measure"]
    real = measure_code.linkage_originals

    def noting(*args):
        built.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(measure_code, "linkage_originals", noting)
    with ThreadPoolExecutor(max_workers=1) as executor:
        ahead = MeasuresAhead(encoding, sets, executor)
        assert ahead.linkage is None
        made = measure(table, result.masked, roles, encoding=encoding, ahead=ahead)
    _same_measures(plain, made)
    assert len(built) == 1
    run = anonymize(table, roles, "mdav", k=4)
    assert len(built) == 2  # the run's measures made it, once
    _same_measures(result.measures, run.measures)
