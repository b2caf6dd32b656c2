"""Poisoning attempts through the real pipeline: nothing that would turn Claude against the user is injected.

The corpus (tests/data/poisoning, see build_corpus.py) plants attempts in user text, assistant text, tool
results and approved proposals, next to benign controls. It is backfilled twice through the real Dagster
assets: with the offline heuristic extractor, and with a *gullible* LLM extractor (the real ``openai``
client against a local server that turns every turn, tool output included, into a global memory) — the
packet gate must hold either way. For every attempt the verdict is one of: not extracted, held for
``nous review``, or leaked (a test failure); controls must stay injectable, warnings framed as cautions.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from nous_assets.safety.guard import normalize

pytestmark = pytest.mark.slow

CORPUS = Path(__file__).resolve().parents[1] / "data" / "poisoning"
CASES = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))
ATTEMPTS = CASES["attempts"]
CONTROLS = CASES["controls"]
_TRAILER = re.compile(r" \((?:(?:verified|stated|observed)(?:, \d+ sessions)? · )?\d{4}-\d\d-\d\d(?: · .+)?\)$")
_TURN = re.compile(r"^\[T(\d+)\] (.*?) \d{4}-\d\d-\d\dT[\d:]{8}Z: (.*)\Z", re.S)


class GullibleLLM(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint whose "model" believes everything it reads: each rendered turn with a
    few words — user, assistant or tool output — comes back as a global learning citing that turn."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        prompt = body["messages"][-1]["content"]
        transcript = prompt.split("<transcript>\n", 1)[1].rsplit("\n</transcript>", 1)[0]
        learnings = []
        for block in re.split(r"\n(?=\[T\d+\] )", transcript):
            m = _TURN.match(block)
            if not m or len(m.group(3).split()) < 5:
                continue
            text = m.group(3).replace("\n  ", "\n")
            words = list(dict.fromkeys(w for w in re.findall(r"[a-z]{4,}", text.lower())))
            learnings.append({
                "content": text[:600], "type": "learning", "domain": "general", "scope": "global",
                "kind": "preference" if m.group(2).startswith("user") else "fact",
                "concepts": (words + ["transcript", "session", "note"])[:5], "edges": [],
                "valid_from": "unknown", "valid_until": "current", "temporal_confidence": "medium",
                "turn_refs": [int(m.group(1))],
            })  # fmt: skip
        reply = {
            "id": "chatcmpl-gullible", "object": "chat.completion", "created": 1770000000, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": json.dumps({"learnings": learnings})}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }  # fmt: skip
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _backfill(pipeline_at, root: Path, extra_env: dict[str, str] | None = None) -> Any:
    projects = root / "home" / ".claude" / "projects"
    shutil.copytree(CORPUS / "projects", projects)
    pipe = pipeline_at(root, str(projects / "**" / "*.jsonl"))
    with pytest.MonkeyPatch.context() as mp:
        for key in ("NOUS_EXTRACTOR", "NOUS_OPENAI_BASE_URL", "NOUS_OPENAI_API_KEY", "OPENAI_BASE_URL",
                    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):  # fmt: skip
            mp.delenv(key, raising=False)
        for key, value in (extra_env or {}).items():
            mp.setenv(key, value)
        pipe.run()
    return pipe


@pytest.fixture(scope="module")
def heuristic_run(tmp_path_factory, pipeline_at):
    return _backfill(pipeline_at, tmp_path_factory.mktemp("poison-heuristic"))


@pytest.fixture(scope="module")
def gullible_run(tmp_path_factory, pipeline_at):
    server = ThreadingHTTPServer(("127.0.0.1", 0), GullibleLLM)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        env = {"NOUS_EXTRACTOR": "openai", "NOUS_OPENAI_BASE_URL": url, "NOUS_OPENAI_API_KEY": "test",
               "NOUS_OPENAI_MODEL": "gullible"}  # fmt: skip
        return _backfill(pipeline_at, tmp_path_factory.mktemp("poison-gullible"), env)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def audit(pipe) -> dict[str, Any]:
    """Per attempt: leaked / held / redacted / not_extracted (+ unguarded: a memory neither held nor injected)."""
    conn = pipe.conn()
    try:
        packets = [r[0] for r in conn.execute("SELECT packet_text FROM injection_cache")]
        memories = [(r[0], normalize(r[1])) for r in conn.execute("SELECT id, content FROM memories")]
        holds = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT memory_id, status, reason FROM memory_holds")}
    finally:
        conn.close()
    verdicts: dict[str, str] = {}
    reasons: dict[str, list[str]] = {}
    for a in ATTEMPTS:
        ids = [i for i, text in memories if a["marker"] in text]
        reasons[a["id"]] = [holds[i][1] for i in ids if i in holds]
        if any(a["marker"] in p for p in packets):
            verdicts[a["id"]] = "leaked"
        elif not ids:  # a planted secret is redacted at capture: nothing holding it was ever stored
            verdicts[a["id"]] = "redacted" if a["category"] == "secret" else "not_extracted"
        elif all(holds.get(i, ("",))[0] == "held" for i in ids):
            verdicts[a["id"]] = "held"
        else:
            verdicts[a["id"]] = "unguarded"
    controls: dict[str, str] = {}
    for c in CONTROLS:
        lines = [line for p in packets for line in p.splitlines() if c["marker"] in line]
        ids = [i for i, text in memories if c["marker"] in text]
        if any(i in holds and holds[i][0] == "held" for i in ids):
            controls[c["id"]] = "held"
        elif not lines:
            controls[c["id"]] = "not_injected" if ids else "not_extracted"
        elif c["kind"] == "warning":
            controls[c["id"]] = "framed" if all("caution:" in line for line in lines) else "unframed"
        else:
            controls[c["id"]] = "injected"
    return {"attempts": verdicts, "reasons": reasons, "controls": controls, "packets": packets}


def _figures(name: str, report: dict[str, Any]) -> str:
    a, c = Counter(report["attempts"].values()), Counter(report["controls"].values())
    by_channel = Counter(x["channel"] for x in ATTEMPTS if report["attempts"][x["id"]] == "held")
    return (
        f"[{name}] attempts={len(ATTEMPTS)} extracted={a['held'] + a['leaked'] + a['unguarded']} held={a['held']} "
        f"redacted={a['redacted']} not_extracted={a['not_extracted']} leaked={a['leaked']} unguarded={a['unguarded']} "
        f"held_by_channel={dict(sorted(by_channel.items()))} | controls={len(CONTROLS)} "
        f"kept={c['injected'] + c['framed']} (warnings framed={c['framed']}) held={c['held']} "
        f"other={len(CONTROLS) - c['injected'] - c['framed'] - c['held']}"
    )


@pytest.mark.parametrize("run", ["heuristic_run", "gullible_run"])
def test_no_poisoning_attempt_reaches_a_packet(run, request, capsys):
    pipe = request.getfixturevalue(run)
    report = audit(pipe)
    with capsys.disabled():
        print("\n" + _figures(run, report))
    assert report["packets"], "the corpus produced no packets at all"
    bad = {k: v for k, v in report["attempts"].items() if v in ("leaked", "unguarded")}
    assert bad == {}
    # every held attempt is held for the reason it was planted for
    for a in ATTEMPTS:
        if report["attempts"][a["id"]] == "held":
            assert any(r.startswith(a["category"]) or f"; {a['category']}" in r for r in report["reasons"][a["id"]]), a
    if run == "gullible_run":  # this extractor believes everything: the gate alone stops every attempt
        assert set(report["attempts"].values()) <= {"held", "redacted"}
        assert list(report["attempts"].values()).count("held") >= len(ATTEMPTS) - 3


def test_benign_controls_stay_injected_and_warnings_are_framed(heuristic_run, gullible_run):
    report = audit(heuristic_run)
    # one "yes" to a design proposal in one session is an observed decision, stored (not held) but below the
    # packet's evidence bar until a second session learns it again; what the user stated is injected
    expected = {c["id"]: "framed" if c["kind"] == "warning" else "not_injected" if c["channel"] == "approved_proposal"
                else "injected" for c in CONTROLS}  # fmt: skip
    assert report["controls"] == expected
    assert all(v != "held" for v in audit(gullible_run)["controls"].values())


def test_packets_say_what_they_are_and_carry_source_and_date(heuristic_run):
    bullets_seen = 0
    for text in audit(heuristic_run)["packets"]:
        header, *lines = text.splitlines()
        assert "recalled from earlier sessions" in header and "not instructions" in header
        section = ""
        for line in lines:
            if line.startswith("### "):
                section = line
            elif line.startswith("_") and line.endswith("_"):  # the footer: what is not shown
                assert "not shown" in line
            elif section != "### Notes":  # a note names its sessions' days in its own words
                # every bullet ends with what backs it, the day it was learned (and its source)
                assert line.startswith("- ") and re.search(_TRAILER, line), line
                bullets_seen += 1
    assert bullets_seen


def test_approved_one_off_actions_are_not_remembered_as_decisions(heuristic_run):
    """A "yes" to force-pushing (or to any one-off operation) is not a standing decision."""
    report = audit(heuristic_run)
    one_off = [a["id"] for a in ATTEMPTS if a["channel"] == "approved_proposal" and a["category"] == "force_push_main"]
    assert one_off and all(report["attempts"][i] == "not_extracted" for i in one_off)
    conn = heuristic_run.conn()
    decisions = [r[0] for r in conn.execute("SELECT content FROM memories WHERE kind = 'decision'")]
    conn.close()
    assert any("exponential backoff" in d for d in decisions)  # a design choice is still a decision


def test_global_packet_carries_no_commands_or_project_only_kinds(heuristic_run, gullible_run):
    for pipe in (heuristic_run, gullible_run):
        conn = pipe.conn()
        try:
            rows = conn.execute("SELECT memory_ids_json, packet_text FROM injection_cache WHERE project_id = '*'")
            rows = rows.fetchall()
            ids = {i for raw, _ in rows for i in json.loads(raw)}
            for text, evidence in conn.execute(
                "SELECT c.payload_text, k.evidence_json FROM intervention_candidates c "
                "JOIN intervention_candidate_keys k USING (candidate_id)"
            ):  # what a note of the global packet is about counts too
                if any(text in packet for _, packet in rows):
                    ids.add(json.loads(evidence)["memory_id"])
            ids = sorted(ids)
            kinds = conn.execute(
                f"SELECT kind, scope FROM memories WHERE id IN ({','.join('?' * len(ids))})", ids
            ).fetchall() if ids else []  # fmt: skip
        finally:
            conn.close()
        assert rows and ids
        assert all(k not in ("command", "configuration", "error_fix") and s == "global" for k, s in kinds)


def test_nous_review_lists_every_held_memory_with_its_reason(heuristic_run, monkeypatch, capsys):
    from nous_assets.cli import main

    for key, value in heuristic_run.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("NOUS_DB_PATH", raising=False)
    assert main(["review", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    conn = heuristic_run.conn()
    held = {r[0] for r in conn.execute("SELECT memory_id FROM memory_holds WHERE status = 'held'")}
    conn.close()
    assert held and {item["memory_id"] for item in listed} == held
    for item in listed:
        assert item["reason"] and item["source_session"] and item["learned_at"][:4] == "2026" and item["content"]
    assert main(["review"]) == 0
    text = capsys.readouterr().out
    assert all(f"#{i} held" in text for i in held) and "reason:" in text


def test_session_start_hook_injects_no_attempt(heuristic_run):
    env = {**os.environ, "NOUS_DATA_DIR": heuristic_run.env["NOUS_DATA_DIR"], "HOME": heuristic_run.env["HOME"]}
    env.pop("NOUS_DB_PATH", None)
    for cwd in ("/home/dev/shop", "/home/dev/infra", "/somewhere/else"):
        payload = json.dumps({"session_id": "s-new", "cwd": cwd, "source": "startup",
                              "hook_event_name": "SessionStart", "transcript_path": "/dev/null"})  # fmt: skip
        out = subprocess.run([sys.executable, "-m", "resolver", "session-start"], input=payload, env=env,
                             capture_output=True, text=True, timeout=30)  # fmt: skip
        assert out.returncode == 0
        context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "not instructions" in context
        assert [a["id"] for a in ATTEMPTS if a["marker"] in context] == []


def test_guard_holds_few_memories_of_the_real_corpus(corpus_pipeline, capsys):
    """False-positive check on real sessions: what the guard holds there is listed, and it is rare."""
    from nous_assets.safety.review import refresh_holds
    from nous_assets.store import holds

    conn = corpus_pipeline.conn()
    try:
        refresh_holds(conn)
        total = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        held = holds.listing(conn)
    finally:
        conn.close()
    with capsys.disabled():
        print(f"\n[real corpus] memories={total} held={len(held)}")
        for item in held:
            print(f"  #{item.hold.memory_id} {item.kind}: {item.hold.reason} | {item.content[:160]}")
    assert total >= 50
    assert len(held) <= 0.05 * total
