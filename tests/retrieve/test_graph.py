"""s_graph: the 2-hop recursive CTE over edges, and its in-memory twin."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nous_assets.retrieve.graph import graph_proximity, proximity_in_memory

NOW = "2026-01-01T00:00:00.000000Z"


def _memories(conn, ids):
    conn.executemany(
        "INSERT INTO memories(id, learning_id, content, type, scope, project_id, source_session, "
        "reinforcement_score, created_at, temporal_confidence, extractor_version, last_event_id) "
        "VALUES (?, ?, ?, 'learning', 'project', 'p1', 's1', 0.5, ?, 'medium', 't', ?)",
        [(i, f"L{i}", f"memory {i}", NOW, i) for i in ids],
    )


def _edges(conn, edges):
    conn.executemany(
        "INSERT INTO edges(source_id, target_id, rel_type, weight, created_at) VALUES (?, ?, ?, ?, ?)",
        [(s, t, r, w, NOW) for s, t, r, w in edges],
    )


EDGES = [
    (1, 2, "depends_on", 0.8),  # depth 1: 0.8
    (2, 3, "depends_on", 0.6),  # depth 2: 0.8 * 0.6 * 0.5 = 0.24
    (3, 4, "depends_on", 1.0),  # depth 3: never reached
    (1, 5, "relates_to", 0.2),  # direct but weak ...
    (1, 6, "relates_to", 1.0),
    (6, 5, "depends_on", 1.0),  # ... and a strong 2-hop path: MAX = 0.5
    (7, 1, "relates_to", 0.9),  # symmetric relation, followed backwards
    (8, 1, "depends_on", 0.9),  # directed: 8 depends on 1, so 1 does not pull 8 in
    (2, 1, "depends_on", 1.0),  # back edge to the seed: seeds are never reported
    (1, 9, "supersedes", 1.0),  # newer -> older, followed forwards
]
EXPECTED = {2: 0.8, 3: 0.24, 5: 0.5, 6: 1.0, 7: 0.9, 9: 1.0}


@pytest.fixture
def graph_conn(conn):
    _memories(conn, range(1, 10))
    _edges(conn, EDGES)
    return conn


def test_two_hop_traversal_weights_depth_and_max(graph_conn):
    got = graph_proximity(graph_conn, [1])
    assert got.keys() == EXPECTED.keys()
    for memory_id, value in EXPECTED.items():
        assert got[memory_id] == pytest.approx(value), memory_id
    assert 4 not in got  # depth 3
    assert 8 not in got  # directed edge pointing at the seed
    assert 1 not in got  # the seed itself


def test_in_memory_traversal_matches_sql(graph_conn):
    assert proximity_in_memory(EDGES, [1]) == pytest.approx(graph_proximity(graph_conn, [1]))
    assert proximity_in_memory(EDGES, [1, 3], max_depth=1) == pytest.approx(
        graph_proximity(graph_conn, [1, 3], max_depth=1)
    )


def test_depth_parameter_and_empty_seeds(graph_conn):
    assert graph_proximity(graph_conn, []) == {}
    assert graph_proximity(graph_conn, [1], max_depth=0) == {}
    assert graph_proximity(graph_conn, [1], max_depth=1).keys() == {2, 5, 6, 7, 9}
    deep = graph_proximity(graph_conn, [1], max_depth=3)
    assert deep[4] == pytest.approx(0.8 * 0.6 * 1.0 * 0.5 * 0.5)
    assert graph_proximity(graph_conn, [999]) == {}


def test_symmetric_contradicts_edge_reaches_both_ways(graph_conn):
    _edges(graph_conn, [(4, 8, "contradicts", 0.7)])
    assert graph_proximity(graph_conn, [8])[4] == pytest.approx(0.7)
    assert graph_proximity(graph_conn, [4])[8] == pytest.approx(0.7)


_edge = st.tuples(
    st.integers(1, 8),
    st.integers(1, 8),
    st.sampled_from(["relates_to", "supersedes", "contradicts", "depends_on"]),
    st.sampled_from([0.1, 0.25, 0.5, 0.75, 1.0]),
).filter(lambda e: e[0] != e[1])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edges=st.lists(_edge, max_size=20, unique_by=lambda e: e[:3]), seeds=st.sets(st.integers(1, 8), max_size=3))
def test_sql_and_in_memory_agree_on_random_graphs(conn, edges, seeds):
    conn.execute("DELETE FROM edges")
    conn.execute("DELETE FROM memories")
    _memories(conn, range(1, 9))
    _edges(conn, edges)
    sql = graph_proximity(conn, seeds)
    mem = proximity_in_memory(edges, seeds)
    assert sql.keys() == mem.keys()
    for key in sql:
        assert sql[key] == pytest.approx(mem[key])
        assert 0.0 <= sql[key] <= 1.0
