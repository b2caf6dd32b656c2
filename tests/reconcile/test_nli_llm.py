"""The ``llm`` NLI tier: the real ``openai`` client against a local OpenAI-compatible server, and ``claude
--print`` through a stand-in executable on PATH. Nothing here reaches the network."""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from chat_stub import ChatHandler, ChatStub

from nous_assets.reconcile.nli.base import ClassifierUnavailable
from nous_assets.reconcile.nli.llm import ClaudeCliClassifier, OpenAIClassifier, parse_reply
from nous_assets.reconcile.nli.registry import get_classifier
from nous_assets.reconcile.nli.resolve import reconcile_contradictions
from nous_assets.reconcile.nli.rules import RulesClassifier
from nous_assets.settings import NliSettings, Settings, Thresholds
from nous_assets.store.sqlite.projection import project
from tests.reconcile.test_nli_resolve import extracted

PAIRS = [("The API listens on port 80.", "The API listens on port 8080."), ("Use uv.", "Lint with ruff.")]
ANSWER = {
    "results": [
        {"label": "contradiction", "confidence": 0.92, "single_valued": True},
        {"label": "neutral", "confidence": 0.8, "single_valued": False},
    ]
}


def make_settings(tmp_path: Path, **kw: Any) -> Settings:
    data = tmp_path / "data"
    return Settings(claude_config_dir=tmp_path / ".claude", data_dir=data, db_path=data / "cortex.db",
                    archive_dir=data / "archive", project_glob=str(tmp_path / "*.jsonl"), **kw)  # fmt: skip


@pytest.fixture
def endpoint(local_http_server, monkeypatch) -> tuple[ChatStub, str]:
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(key, raising=False)
    state = ChatStub(content=json.dumps(ANSWER))
    return state, f"http://127.0.0.1:{local_http_server(ChatHandler, state)}/v1"


def test_openai_endpoint_labels_each_pair(tmp_path, endpoint):
    state, url = endpoint
    settings = make_settings(tmp_path, openai_base_url=url, openai_model="nli-test", nli=NliSettings(classifier="llm"))
    classifier = get_classifier(settings)
    assert isinstance(classifier, OpenAIClassifier) and classifier.model_version == "llm-openai-nli-test-1"
    verdicts = classifier.classify(PAIRS)
    assert [(v.label, v.confidence, v.single_valued) for v in verdicts] == [
        ("contradiction", 0.92, True),
        ("neutral", 0.8, False),
    ]
    body = state.requests[-1]["body"]
    assert body["model"] == "nli-test" and body["response_format"] == {"type": "json_object"}
    prompt = body["messages"][0]["content"]
    assert all(json.dumps(text) in prompt for pair in PAIRS for text in pair)


def test_openai_failures_are_one_line_and_cache_nothing(tmp_path, endpoint, conn, store):
    state, url = endpoint
    settings = make_settings(tmp_path, openai_base_url=url, nli=NliSettings(classifier="llm"))
    state.status = 503
    with pytest.raises(ClassifierUnavailable, match="HTTP 503"):
        get_classifier(settings).classify(PAIRS)
    state.status, state.content = 200, "I think they contradict."
    with pytest.raises(ClassifierUnavailable, match="not 2 results"):
        get_classifier(settings).classify(PAIRS)
    store.append_many([
        extracted("a", "The API listens on port 80.", session="s1", day=1),
        extracted("b", "The API listens on port 8080.", session="s2", day=2),
    ])  # fmt: skip
    project(conn)
    with pytest.raises(ClassifierUnavailable):
        reconcile_contradictions(conn, get_classifier(settings), Thresholds(), source="fs_reconcile")
    assert conn.execute("SELECT count(*) FROM nli_results").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM learning_events").fetchone()[0] == 2
    with pytest.raises(ClassifierUnavailable, match="NOUS_OPENAI_API_KEY"):
        OpenAIClassifier(make_settings(tmp_path)).classify(PAIRS)


def test_an_llm_contradiction_lands_in_the_cache_and_the_log(tmp_path, endpoint, conn, store):
    state, url = endpoint
    state.content = json.dumps({"results": [ANSWER["results"][0]]})
    store.append_many([
        extracted("a", "The API listens on port 80.", session="s1", day=1),
        extracted("b", "The API listens on port 8080.", session="s2", day=2),
    ])  # fmt: skip
    project(conn)
    classifier = OpenAIClassifier(make_settings(tmp_path, openai_base_url=url))
    stats = reconcile_contradictions(conn, classifier, Thresholds(), source="fs_reconcile")
    assert stats.superseded_events == 1
    event = conn.execute(
        "SELECT learning_id, json_extract(payload_json, '$.superseded_by'), json_extract(payload_json, '$.nli.model') "
        "FROM learning_events WHERE event_type = 'LearningSuperseded'"
    ).fetchone()
    assert tuple(event) == ("a", "b", classifier.model_version)
    # the rules tier, another version, labels the same pair again but appends nothing new
    assert reconcile_contradictions(conn, RulesClassifier(), Thresholds(), source="fs_reconcile").classified == 1
    assert conn.execute("SELECT count(*) FROM learning_events").fetchone()[0] == 3


def test_parse_reply_refuses_malformed_results():
    with pytest.raises(ClassifierUnavailable):
        parse_reply('{"results": [{"label": "maybe", "confidence": 0.5}]}', 1, "m")
    with pytest.raises(ClassifierUnavailable):
        parse_reply('{"results": [{"label": "neutral"}]}', 1, "m")
    fenced = "Here you go:\n```json\n" + json.dumps({"results": [ANSWER["results"][1]]}) + "\n```"
    assert parse_reply(fenced, 1, "m")[0].label == "neutral"


FAKE_CLAUDE = textwrap.dedent(
    """\
    #!{python}
    import json, os, sys
    prompt = sys.stdin.read()
    with open(os.environ["NOUS_FAKE_CLAUDE_LOG"], "w", encoding="utf-8") as fh:
        json.dump({{"argv": sys.argv[1:], "stdin": prompt, "claudecode": os.environ.get("CLAUDECODE")}}, fh)
    if os.environ.get("NOUS_FAKE_CLAUDE_MODE") == "fail":
        sys.stderr.write("Invalid API key - please run /login\\n")
        sys.exit(1)
    n = sum(1 for line in prompt.splitlines() if line.strip().startswith("B: "))
    sys.stdout.write(json.dumps({{"results": [{{"label": "entailment", "confidence": 0.75}}] * n}}))
    """
)


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "claude"
    script.write_text(FAKE_CLAUDE.format(python=sys.executable), encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    log = tmp_path / "claude-call.json"
    monkeypatch.setenv("NOUS_FAKE_CLAUDE_LOG", str(log))
    monkeypatch.setenv("CLAUDECODE", "1")  # as inside a Claude Code hook
    return log


def test_claude_cli_labels_pairs_from_stdin(tmp_path, fake_claude, monkeypatch):
    settings = make_settings(tmp_path, claude_model="haiku", nli=NliSettings(classifier="llm", llm_provider="claude"))
    classifier = get_classifier(settings)
    assert isinstance(classifier, ClaudeCliClassifier)
    verdicts = classifier.classify(PAIRS)
    assert [v.label for v in verdicts] == ["entailment", "entailment"]
    call = json.loads(fake_claude.read_text())
    assert call["argv"][:3] == ["--print", "--model", "haiku"] and call["claudecode"] is None
    assert PAIRS[0][0] in call["stdin"]
    monkeypatch.setenv("NOUS_FAKE_CLAUDE_MODE", "fail")
    with pytest.raises(ClassifierUnavailable, match="exited with 1: Invalid API key"):
        classifier.classify(PAIRS)
    missing = ClaudeCliClassifier(make_settings(tmp_path, claude_bin=str(tmp_path / "nowhere")))
    with pytest.raises(ClassifierUnavailable, match="not found"):
        missing.classify(PAIRS)
