"""Vector clock contract: canonical form, merge = component-wise max, causal comparison."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nous_assets import clocks
from nous_assets.clocks import ClockError, Order

clock_st = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(1, 5), max_size=4)


def test_compare_cases():
    assert clocks.compare({"a": 1}, {"a": 2}) is Order.BEFORE
    assert clocks.compare({"a": 2, "b": 1}, {"a": 2}) is Order.AFTER
    assert clocks.compare({"a": 1}, {"a": 1}) is Order.EQUAL
    assert clocks.compare({"a": 2}, {"b": 1}) is Order.CONCURRENT
    assert clocks.compare({}, {}) is Order.EQUAL
    assert clocks.compare({}, {"a": 1}) is Order.BEFORE


def test_dumps_is_sorted_and_compact_and_parse_round_trips():
    text = clocks.dumps({"z": 1, "a": 3})
    assert text == '{"a":3,"z":1}'
    assert clocks.parse(text) == {"a": 3, "z": 1}
    assert clocks.parse(None) == {} and clocks.parse("") == {}


@pytest.mark.parametrize("bad", ['{"b":1,"a":1}', '{"a":1,"a":2}', '{"a":-1}', '{"a":true}', "[1]", "{", '{"":1}'])
def test_parse_rejects_non_canonical(bad):
    with pytest.raises(ClockError):
        clocks.parse(bad)


@given(clock_st, clock_st)
def test_merge_is_upper_bound_and_commutative(a, b):
    m = clocks.merge(a, b)
    assert m == clocks.merge(b, a)
    assert clocks.compare(a, m) in (Order.BEFORE, Order.EQUAL)
    assert clocks.compare(b, m) in (Order.BEFORE, Order.EQUAL)
    assert all(m[k] == max(a.get(k, 0), b.get(k, 0)) for k in m)


@given(clock_st, clock_st)
def test_compare_is_antisymmetric(a, b):
    flip = {
        Order.BEFORE: Order.AFTER,
        Order.AFTER: Order.BEFORE,
        Order.EQUAL: Order.EQUAL,
        Order.CONCURRENT: Order.CONCURRENT,
    }
    assert clocks.compare(b, a) is flip[clocks.compare(a, b)]


@given(clock_st, st.sampled_from(["a", "b", "x"]))
def test_increment_moves_strictly_after(a, session):
    assert clocks.compare(a, clocks.increment(a, session)) is Order.BEFORE


def test_bound_keeps_current_and_recent_peers():
    clock = {f"s{i:03d}": i + 1 for i in range(100)}
    kept = clocks.bound(clock, "s050", [f"s{i:03d}" for i in range(99, -1, -1)])
    assert len(kept) == 64 and "s050" in kept and "s099" in kept and "s000" not in kept
    assert list(kept) == sorted(kept)
