"""One memory per learning over a real cortex.db: re-learnings reinforce, slot values supersede by validity time."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from nous_assets.extract.base import SessionBatch
from nous_assets.extract.worker import DrainStats, append_learnings
from nous_assets.settings import Thresholds
from nous_assets.store.reads import recurrence
from nous_assets.store.sqlite.projection import project, verify

GATE = "Before committing run `mix compile --warnings-as-errors`, then `mix test`, then `mix credo --strict`."
GATE_AGAIN = "Before committing: run mix compile --warnings-as-errors, then mix test, then mix credo --strict."
_anchors = itertools.count()


def _record(content: str, *, valid_from: str | None = None, slot: str | None = None, kind: str = "command",
            scope: str = "project") -> dict:  # fmt: skip
    anchor = f"u{next(_anchors)}"
    rec = {
        "content": content, "type": "learning", "kind": kind, "domain": "testing", "scope": scope,
        "concepts": ["mix test", "quality gate", "elixir"], "edges": [], "valid_from": valid_from,
        "valid_until": None, "temporal_confidence": "high", "anchor_uuid": anchor, "weakens": None,
        "provenance": {"session_id": "s", "source_path": "/x.jsonl", "uuids": [anchor], "line_offsets": [0]},
    }  # fmt: skip
    if slot:
        rec["slot"] = slot
    return rec


def _ingest(conn, session: str, records: list[dict], project_id: str = "spotter") -> DrainStats:
    stats = DrainStats()
    batch = SessionBatch(project_id, session, "2026-02-10", ())
    append_learnings(conn, batch, records, extractor_version="v1", source="historical_backfill",
                     thresholds=Thresholds(), stats=stats)  # fmt: skip
    return stats


def _events(conn) -> list[tuple]:
    return conn.execute("SELECT event_type, learning_id, session_id FROM learning_events ORDER BY event_id").fetchall()


def test_the_same_learning_from_two_sessions_is_one_memory_reinforced(conn):
    first, again = _record(GATE, valid_from="2026-02-10T10:00:00Z"), _record(GATE_AGAIN, valid_from="2026-02-12T09:00Z")
    assert _ingest(conn, "s1", [first]).learnings == 1
    stats = _ingest(conn, "s2", [again])
    assert (stats.learnings, stats.relearned) == (0, 1)
    project(conn)
    rows = conn.execute("SELECT learning_id, content, reinforcement_score, accessed_at, valid_from FROM memories")
    (lid, content, score, accessed, valid_from), *rest = rows.fetchall()
    assert rest == [] and content == GATE and abs(score - 0.6) < 1e-9
    assert valid_from.startswith("2026-02-10") and accessed.startswith("2026-02-12T09:00")  # re-learned that day
    events = _events(conn)
    assert [(e[0], e[2]) for e in events] == [("LearningExtracted", "s1"), ("LearningReinforced", "s2")]
    assert events[1][1] == lid
    payload = conn.execute("SELECT payload_json FROM learning_events WHERE event_type = 'LearningReinforced'")
    assert '"reason":"relearned"' in payload.fetchone()[0]
    # re-running both sessions (a second backfill) changes nothing, and a replay rebuilds the same projection
    assert _ingest(conn, "s1", [first]).skipped_processed == 1 and _ingest(conn, "s2", [again]).skipped_processed == 1
    assert _events(conn) == events
    assert verify(conn).ok


def test_two_turns_of_one_session_saying_the_same_thing_are_one_memory(conn):
    stats = _ingest(conn, "s1", [_record(GATE), _record(GATE_AGAIN), _record("The dev server listens on port 4000.")])
    assert (stats.learnings, stats.relearned) == (2, 1)
    project(conn)
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 2
    assert [e[0] for e in _events(conn)] == ["LearningExtracted", "LearningReinforced", "LearningExtracted"]


def test_a_repeat_in_another_project_is_its_own_memory_but_a_global_one_is_shared(conn):
    _ingest(conn, "s1", [_record(GATE), _record("Answer tersely; no summaries at the end.", kind="preference",
                                                 scope="global")])  # fmt: skip
    stats = _ingest(conn, "s2", [_record(GATE_AGAIN), _record("Answer tersely, no summaries at the end!",
                                                               kind="preference", scope="global")],
                    project_id="other")  # fmt: skip
    assert (stats.learnings, stats.relearned) == (1, 1)
    project(conn)
    assert conn.execute("SELECT count(*) FROM memories WHERE project_id = 'other'").fetchone()[0] == 1


def test_a_later_configuration_value_supersedes_the_earlier_one_by_validity_not_ingestion(conn):
    newer = _record("config/test.exs sets the endpoint port to 4002.", valid_from="2026-02-12T10:00:00Z",
                    slot="config:config/test.exs#port", kind="configuration")  # fmt: skip
    older = _record("config/test.exs sets the endpoint port to 4001 for the test server.",
                    valid_from="2026-02-10T10:00:00Z", slot="config:config/test.exs#port", kind="configuration")
    _ingest(conn, "s-new", [newer])
    stats = _ingest(conn, "s-old", [older])  # the older session is ingested last
    assert stats.superseded == 1
    project(conn)
    current = conn.execute("SELECT content FROM memories WHERE valid_until IS NULL").fetchall()
    assert [r[0] for r in current] == [newer["content"]]
    closed = conn.execute("SELECT valid_until, superseded_by FROM memories WHERE valid_until IS NOT NULL").fetchone()
    assert closed[0].startswith("2026-02-12T10:00") and closed[1]


def test_a_fuller_hook_value_counts_the_sessions_that_saw_part_of_it(conn):
    # duet (transcripts-dev3, 7c03c5fa then 410c9611): the hook seen in part, then in full, in two sessions
    slot = "tool:hook-pre-commit"
    part = _record("`git commit` runs a pre-commit hook: `prettier --write README.md`, then `git add README.md`.",
                   valid_from="2026-02-17T10:00:00Z", slot=slot, kind="workflow")  # fmt: skip
    full = _record("`git commit` runs a pre-commit hook: `scripts/generate-readme.sh`, then `prettier --write "
                   "README.md`, then `git add README.md`.", valid_from="2026-02-19T10:00:00Z", slot=slot,
                   kind="workflow")  # fmt: skip
    _ingest(conn, "s1", [part])
    assert _ingest(conn, "s2", [full]).superseded == 1
    project(conn)
    (lid,) = conn.execute("SELECT learning_id FROM memories WHERE valid_until IS NULL").fetchone()
    assert recurrence.learning_sessions(conn, [lid]) == {lid: 2}
    assert recurrence.relearn_history(conn, lid)[0] == {"s1", "s2"}
    other = _record("`git commit` runs a pre-commit hook: `npx lint-staged`.", valid_from="2026-02-20T10:00:00Z",
                    slot=slot, kind="workflow")  # another hook: its own evidence
    _ingest(conn, "s3", [other])
    project(conn)
    (newest,) = conn.execute("SELECT learning_id FROM memories WHERE valid_until IS NULL").fetchone()
    assert recurrence.learning_sessions(conn, [newest, lid]) == {newest: 1, lid: 2}
    assert verify(conn).ok


_DAYS = [f"2026-02-{d:02d}T10:00:00.000000Z" for d in range(1, 29)]


@settings(max_examples=40, deadline=None)
@given(
    days=st.lists(st.sampled_from(_DAYS), min_size=2, max_size=5, unique=True),
    order=st.randoms(use_true_random=False),
    batched=st.booleans(),
)
def test_for_any_order_of_ingestion_the_value_with_the_latest_validity_wins(new_db, days, order, batched):
    """Values of one slot, ingested in any order (one session each, or all in one batch): the latest-valid one
    is current and every earlier one is closed exactly when the next one became valid."""
    values = {day: f"The test command is variant{i} with flag{i} and option{i}." for i, day in enumerate(days)}
    records = {day: _record(text, valid_from=day, slot="cmd:test") for day, text in values.items()}
    shuffled = list(days)
    order.shuffle(shuffled)
    with tempfile.TemporaryDirectory() as tmp:
        conn = new_db(Path(tmp) / "cortex.db")
        try:
            if batched:
                _ingest(conn, "s-all", [records[d] for d in shuffled])
            else:
                for i, day in enumerate(shuffled):
                    _ingest(conn, f"s{i}", [records[day]])
            project(conn)
            rows = conn.execute("SELECT content, valid_from, valid_until FROM memories ORDER BY valid_from").fetchall()
            assert verify(conn).ok
        finally:
            conn.close()
    timeline = sorted(days)
    assert [r[0] for r in rows] == [values[d] for d in timeline]  # one memory per value, none merged
    assert [r[0] for r in rows if r[2] is None] == [values[timeline[-1]]]  # the latest validity wins
    for (_, _, until), next_day in zip(rows, timeline[1:], strict=False):
        assert until == next_day  # contiguous windows: closed when the next value became valid


def test_a_reextraction_that_repeats_another_memory_replaces_its_old_version_with_that_memory(conn):
    def ingest(session, rec, version, reextract=False):
        stats = DrainStats()
        append_learnings(conn, SessionBatch("spotter", session, "2026-02-10", ()), [rec], extractor_version=version,
                         source="historical_backfill", thresholds=Thresholds(), stats=stats, reextract=reextract)
        return stats

    old = _record("The dev server listens on port 4000 when started with mix phx.server.")
    ingest("s1", old, "v1")
    ingest("s2", _record(GATE), "v1")
    better = {**old, "content": GATE_AGAIN}  # v2 reads session s1 (same anchor) as the gate learning of s2
    stats = ingest("s1", better, "v2", reextract=True)
    assert (stats.learnings, stats.relearned) == (0, 1)
    project(conn)
    assert [r[0] for r in conn.execute("SELECT content FROM memories WHERE valid_until IS NULL")] == [GATE]
    closed = conn.execute("SELECT content, superseded_by FROM memories WHERE valid_until IS NOT NULL").fetchall()
    gate_lid = conn.execute("SELECT learning_id FROM memories WHERE content = ?", (GATE,)).fetchone()[0]
    assert [tuple(r) for r in closed] == [(old["content"], gate_lid)]


def test_a_log_in_another_database_gets_the_events_and_a_crash_before_the_marks_appends_nothing_twice(
    conn, new_db, tmp_path
):
    """Team mode: the queue (``conn``) and the log (the tenant's working database) are two files. The events
    commit in the log and the learnings are marked in the queue; a run that died before the marks extracts the
    batch again, and the keys make the second append a no-op, so nothing is lost and nothing is doubled."""

    def marks(queue_conn) -> list[tuple]:
        rows = queue_conn.execute("SELECT session_id, latest_extractor_version FROM processed_extractions")
        return [tuple(r) for r in rows]

    log = new_db(tmp_path / "working.db")
    try:
        batch = SessionBatch("spotter", "s1", "2026-02-10", ())
        first = _record(GATE, valid_from="2026-02-10T10:00:00Z")

        def ingest(queue_conn) -> int:
            return append_learnings(queue_conn, batch, [first], extractor_version="v1", source="fs_watch",
                                    thresholds=Thresholds(), stats=DrainStats(), log=log)  # fmt: skip

        assert ingest(conn) == 1
        assert [e[0] for e in _events(log)] == ["LearningExtracted"] and _events(conn) == []
        assert marks(conn) == [("s1", "v1")] and marks(log) == []  # marked in the queue's database

        lost_marks = new_db(tmp_path / "queue-before-its-marks.db")  # the queue as it was before the crash
        try:
            assert ingest(lost_marks) == 0 and len(_events(log)) == 1
            assert marks(lost_marks) == [("s1", "v1")]
            # the second append compared with the log's projection (it took the first event), not the queue's
            assert log.execute("SELECT count(*) FROM memories").fetchone()[0] == 1
            assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
        finally:
            lost_marks.close()
    finally:
        log.close()
