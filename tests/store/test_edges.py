"""The ``edges`` table's derived writes (``link/``) beside the event edges the projector writes from the log.

Was the SQLite half of the GraphStore contract test; the graph walk is the laptop pipeline's (nothing on
PostgreSQL walks a graph), so it is held here on the module the pipeline calls."""

from __future__ import annotations

import pytest
from eventgen import extracted

from nous_assets.store.db import atomic
from nous_assets.store.search import edges
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project

AT = "2026-01-01T00:00:00.000000Z"


def _derived(conn, rel_type: str, rows: list[tuple[int, int, float]]) -> None:
    with atomic(conn):
        edges.upsert_derived(conn, rel_type, rows, AT)


def test_derived_edges_never_overwrite_event_edges(conn):
    log = SqliteEventStore(conn)
    log.append_many([
        extracted("L1", key="x1"),
        extracted("L2", key="x2", edges=[{"target": "L1", "rel_type": "depends_on", "weight": 0.9}]),
    ])  # fmt: skip
    project(conn)
    one, two = (log.get_by_key(k).event_id for k in ("x1", "x2"))
    _derived(conn, "depends_on", [(two, one, 0.1)])
    assert edges.proximity(conn, [two], 1, hop_decay=1.0, symmetric=()) == {one: pytest.approx(0.9)}
    _derived(conn, "relates_to", [(two, one, 0.3)])
    _derived(conn, "relates_to", [(two, one, 0.4)])  # a derived edge is updated
    assert edges.proximity(conn, [one], 1, hop_decay=1.0, symmetric=("relates_to",)) == {two: pytest.approx(0.4)}
