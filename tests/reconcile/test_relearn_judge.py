"""Tier 3: the real ``openai`` client against a local OpenAI-compatible server, asked about ambiguous pairs only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_stub import ChatHandler, ChatStub
from test_one_memory_per_learning import _record

from nous_assets.extract.base import SessionBatch
from nous_assets.extract.worker import DrainStats, append_learnings
from nous_assets.reconcile.judge import OpenAIJudge, relearn_judge
from nous_assets.settings import Settings, Thresholds, load_settings
from nous_assets.store.reads import recurrence

HELD = "Integration tests require the database container running under docker compose."
NEAR = "Integration tests need a database container up, started under docker compose beforehand."


@pytest.fixture
def endpoint(local_http_server, monkeypatch: pytest.MonkeyPatch) -> ChatStub:
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy",
                "https_proxy", "all_proxy"):  # fmt: skip
        monkeypatch.delenv(key, raising=False)
    state = ChatStub(content='{"same": true}')
    state.url = f"http://127.0.0.1:{local_http_server(ChatHandler, state)}/v1"
    return state


def _settings(tmp_path: Path, endpoint: ChatStub) -> Settings:
    return load_settings({"HOME": str(tmp_path), "NOUS_DATA_DIR": str(tmp_path / "d"), "NOUS_RELEARN_JUDGE": "openai",
                          "NOUS_OPENAI_BASE_URL": endpoint.url, "NOUS_OPENAI_MODEL": "judge-model"})  # fmt: skip


def _ingest(conn, session: str, content: str, judge) -> DrainStats:
    stats = DrainStats()
    append_learnings(conn, SessionBatch("spotter", session, "2026-02-10", ()), [_record(content)],
                     extractor_version="v1", source="historical_backfill", stats=stats, judge=judge,
                     thresholds=Thresholds(relearn_near_miss=0.4, relearn_ambiguous=0.5))  # fmt: skip
    return stats


def test_an_ambiguous_pair_the_judge_calls_the_same_is_one_memory(conn, tmp_path: Path, endpoint: ChatStub):
    settings = _settings(tmp_path, endpoint)
    judge = relearn_judge(settings)
    assert isinstance(judge, OpenAIJudge) and relearn_judge(load_settings({"HOME": str(tmp_path)})) is None
    _ingest(conn, "s1", HELD, judge)
    assert endpoint.bodies == []  # nothing to compare with yet: nothing asked
    stats = _ingest(conn, "s2", NEAR + " (key sk-ant-api03-" + "a1B2" * 20 + ")", judge)  # never sent as is
    assert stats.relearned == 1 and len(endpoint.bodies) == 1
    body = endpoint.bodies[0]
    assert body["model"] == "judge-model" and body["response_format"] == {"type": "json_object"}
    assert "a1B2a1B2" not in json.dumps(body) and NEAR in body["messages"][1]["content"]
    (flag,) = [f for f in recurrence.relearn_flags(conn) if f["session_id"] == "s2"]
    assert flag["tier"] == 3 and flag["decision"] == "merge_silent"


@pytest.mark.parametrize(("answer", "status"), [('{"same": false}', 200), ("not json", 200), ('{"same": true}', 503)])
def test_a_no_an_unusable_reply_or_a_failing_endpoint_keeps_the_learning_apart(
    conn, tmp_path: Path, endpoint: ChatStub, answer: str, status: int
):
    endpoint.content, endpoint.status = answer, status
    judge = relearn_judge(_settings(tmp_path, endpoint))
    _ingest(conn, "s1", HELD, judge)
    stats = _ingest(conn, "s2", NEAR, judge)
    assert stats.relearned == 0 and stats.learnings == 1  # a near-miss, recorded; the extraction went on
    (flag,) = [f for f in recurrence.relearn_flags(conn) if f["session_id"] == "s2"]
    assert flag["decision"] == "near_miss"
    if status != 200 or answer == "not json":
        assert judge.failure and "judge" in judge.failure
        _ingest(conn, "s3", NEAR + " again", judge)
        assert len(endpoint.bodies) == 1  # a failed judge stops asking for the rest of its run
    else:
        assert judge.failure is None
