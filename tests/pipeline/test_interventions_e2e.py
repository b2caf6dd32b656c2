"""End to end on a real transcript: a way of working the user stated, and stated again in a later session,
becomes an intervention candidate, the reducer activates it, and the packets of its scope carry it."""

from __future__ import annotations

import json

import pytest

from nous_assets.retrieve.cache_build import GLOBAL

pytestmark = pytest.mark.slow

AGAIN = "0f3c9e21-5a7b-4d10-9c2e-7b1d5e8a4f60"


def _said_again(projects, transcript):
    """The session as recorded, and the same conversation a day later under another session id (the user had
    to say it again)."""
    projects.mkdir(parents=True)
    text = transcript.read_text()
    session = json.loads(text.splitlines()[0])["sessionId"]
    (projects / f"{session}.jsonl").write_text(text)
    lines = []
    for line in text.splitlines():
        record = json.loads(line)
        record["sessionId"] = AGAIN
        record["timestamp"] = record["timestamp"].replace("2025-09-19", "2025-09-20")
        lines.append(json.dumps(record))
    (projects / f"{AGAIN}.jsonl").write_text("\n".join(lines) + "\n")


def test_a_repeated_correction_becomes_an_intervention_in_the_packets(tmp_path, shared_corpus, pipeline_factory):
    projects = tmp_path / "home" / ".claude" / "projects" / "-Users-testuser-example-project"
    _said_again(projects, shared_corpus / "episodic-memory" / "tiny-conversation.jsonl")
    pipe = pipeline_factory(str(projects.parent / "**" / "*.jsonl"))
    pipe.run()
    conn = pipe.conn()
    try:
        rows = conn.execute(
            "SELECT c.candidate_id, c.scope, c.target_project_id, c.reason_codes_json, k.evidence_json "
            "FROM intervention_candidates c JOIN intervention_candidate_keys k USING (candidate_id)"
        ).fetchall()
        repeated = [r for r in rows if "repeated_correction" in json.loads(r[3])]
        assert repeated, "no intervention candidate from a repeated correction"
        for candidate_id, scope, project, _, evidence_json in repeated:
            evidence = json.loads(evidence_json)
            sessions = {s for s, _ in evidence["sessions"]}
            assert len(sessions) >= 2  # said again in another session
            kind = conn.execute("SELECT kind FROM memories WHERE id = ?", (evidence["memory_id"],)).fetchone()[0]
            assert kind in ("correction", "preference")
            states = [r[0] for r in conn.execute(
                "SELECT to_state FROM intervention_transitions WHERE candidate_id = ? ORDER BY id", (candidate_id,))]
            assert states and states[0] in ("approved", "suppressed")  # decided, and audited
            if states[-1] == "approved":
                owner = GLOBAL if scope == "global" else project
                packets = [r[0] for r in conn.execute(
                    "SELECT packet_text FROM injection_cache WHERE project_id = ?", (owner,))]  # fmt: skip
                assert packets and all("### Notes" in p and "The user has said this in" in p for p in packets)
        assert any(
            r[0] == "approved" for r in conn.execute(
                "SELECT t.to_state FROM intervention_transitions t WHERE t.candidate_id IN "
                "(SELECT value FROM json_each(?))", (json.dumps([r[0] for r in repeated]),))
        )  # fmt: skip
        # the whole run is idempotent: no candidate was written twice, nothing decided twice
        counts = conn.execute(
            "SELECT count(*), count(DISTINCT candidate_id) FROM intervention_transitions WHERE from_state = 'candidate'"
        ).fetchone()
        assert counts[0] == counts[1] == len(rows)
    finally:
        conn.close()
