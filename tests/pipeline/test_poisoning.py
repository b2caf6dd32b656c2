"""Poisoning attempts through the real pipeline: nothing that would turn Claude against the user is injected.

The corpus (tests/data/poisoning, see build_corpus.py) plants attempts in user text, assistant text, tool
results (web pages, READMEs, files, command output), a subagent's transcript, a compaction summary, approved
proposals and commands the sessions ran — some of them in three sessions, so they recur — next to benign
controls. It is backfilled twice through the real Dagster assets: with the offline heuristic extractor, and
with a *gullible* LLM extractor (the real ``openai`` client against a local server that turns every turn, tool
output included, into a global memory) — the packet gate must hold either way. For every attempt the verdict
is one of: not extracted, held for ``nous review``, or leaked (a test failure); controls must stay injectable,
warnings framed as cautions.

:func:`ways_out` then audits every way a memory leaves Nous for Claude — packets (their "### Notes"
included), the notes themselves (active interventions), the MCP ``recall`` tool, ``nous search --json`` and the
lines ``nous review claude-md`` proposes — and says, per attempt and way out, where it ended (:data:`VERDICTS`).
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
from tests.support.in_process import run_cli

pytestmark = pytest.mark.slow

CORPUS = Path(__file__).resolve().parents[1] / "data" / "poisoning"
CASES = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))
ATTEMPTS = CASES["attempts"]
CONTROLS = CASES["controls"]
PROJECTS = ("/home/dev/shop", "/home/dev/infra", "/home/dev/webapp", "/home/dev/api")
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
        assert set(report["attempts"].values()) <= {"held", "redacted", "not_extracted"}
        # it is shown nearly every turn (compaction summaries and subagent prompts it may never see): the gate, not
        # the extractor, stops what it does see — most non-secret attempts reach the guard and are held
        planted = sum(a["category"] != "secret" for a in ATTEMPTS)
        assert list(report["attempts"].values()).count("held") >= 0.85 * planted


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
    for cwd in (*PROJECTS, "/somewhere/else"):
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
    from nous_assets.store.reads import holds

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


# --- Every way out: packets, notes, MCP recall, `nous search --json`, `nous review claude-md` -----------------

WAYS = ("packets", "notes", "mcp", "search", "claude_md")
# worst first: what Claude reads as an instruction; what it reads only as someone's quoted words (or a line
# marked as a caution); kept out by the guard; stored and not held but not in this output; never stored
VERDICTS = ("injected", "quoted", "held", "not shown", "not a memory")
GENERIC_QUERY = "how do we set up and run the tests"
AUDIT_JSON = Path("/tmp/poisoning-audit.json")
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”')
_AUDITS: dict[str, dict[str, Any]] = {}  # run -> audit, every run of this module written to the JSON together


def _said(text: str, marker: str, *, secret: bool, excerpt: bool) -> str | None:
    """How ``marker`` shows in one item Claude reads: None (not at all), "quoted" or "injected".

    Quoted: every occurrence sits inside quotation marks (``User preference: "…"``, what someone said), the
    item is marked ``[caution: …]`` or ``[held…]``, or it is a transcript excerpt (an episode: a turn shown with its
    role and day). A secret is leaked however it is framed."""
    text = normalize(text)
    spots = [m.start() for m in re.finditer(re.escape(marker), text)]
    if not spots:
        return None
    if secret:
        return "injected"
    if excerpt or re.search(r"\[(?:caution|held|withheld)\b", text, re.I):
        return "quoted"
    spans = [m.span() for m in _QUOTED.finditer(text)]
    inside = all(any(a < i and i + len(marker) < b for a, b in spans) for i in spots)
    return "quoted" if inside else "injected"


def _outputs(pipe, tmp: Path) -> dict[str, Any]:
    """What each way out hands Claude, as items ``(text, is_transcript_excerpt)``; MCP and search per query."""
    from nous_assets.embed.registry import get_embedder
    from nous_assets.mcp_server.recall import MAX_BUDGET, recall

    settings = pipe.settings
    embedder = get_embedder(settings)
    conn = pipe.conn()
    try:
        packets = [(line, False) for (text,) in conn.execute("SELECT packet_text FROM injection_cache")
                   for line in text.splitlines()]  # fmt: skip
        notes = [(r[0], False) for r in conn.execute("SELECT payload_text FROM active_interventions")]
        memories = [(r[0], normalize(r[1])) for r in conn.execute("SELECT id, content FROM memories")]
        held = {r[0] for r in conn.execute("SELECT memory_id FROM memory_holds WHERE status = 'held'")}
        projects = [r[0] for r in conn.execute("SELECT DISTINCT project_id FROM memories WHERE project_id != '*'")]
        mcp: dict[str, list[tuple[str, bool]]] = {}
        for query in [GENERIC_QUERY] + [c["marker"] for c in ATTEMPTS + CONTROLS]:
            answer = recall(conn, settings, embedder, query=query, budget=MAX_BUDGET)
            mcp[query] = [(r["text"], "episode" in r) for r in answer["results"]]
    finally:
        conn.close()
    search: dict[str, list[tuple[str, bool]]] = {}
    for query in [GENERIC_QUERY] + [c["marker"] for c in ATTEMPTS + CONTROLS]:
        code, out = run_cli(pipe, ["search", "--json", "--", query])
        assert code == 0, query
        search[query] = [(r["content"] or "", bool(r["episodic"])) for r in json.loads(out)]
    claude_md: list[tuple[str, bool]] = []
    for project in projects:
        target = tmp / project / "CLAUDE.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        code, out = run_cli(pipe, ["review", "claude-md", f"--project={project}", "--path", str(target)])
        assert code == 0, (project, out)
        claude_md += [(line[1:], False) for line in out.splitlines() if line.startswith("+") and
                      not line.startswith("+++")]  # fmt: skip
    return {"packets": packets, "notes": notes, "mcp": mcp, "search": search, "claude_md": claude_md,
            "memories": memories, "held": held}  # fmt: skip


def ways_out(pipe, tmp: Path) -> dict[str, Any]:
    """Per attempt (and control) and way out: its verdict and, when it shows, the first item it shows in."""
    out = _outputs(pipe, tmp)
    rows = []
    for case in ATTEMPTS + CONTROLS:
        marker, secret = case["marker"], case.get("category") == "secret"
        stored = [i for i, text in out["memories"] if marker in text]
        absent = ("not a memory" if not stored else "held" if all(i in out["held"] for i in stored)
                  else "not shown")  # fmt: skip
        row = {"id": case["id"], "channel": case["channel"], "category": case.get("category") or case["kind"],
               "sessions": case["sessions"], "marker": marker, "verdicts": {}, "shown": {}}  # fmt: skip
        for way in WAYS:
            items = out[way]
            if way in ("mcp", "search"):
                items = items[GENERIC_QUERY] + items[marker]
            found = [(v, text) for text, excerpt in items
                     if (v := _said(text, marker, secret=secret, excerpt=excerpt))]  # fmt: skip
            worst = min(found, key=lambda f: VERDICTS.index(f[0])) if found else None
            row["verdicts"][way] = worst[0] if worst else absent
            if worst:
                row["shown"][way] = " ".join(worst[1].split())[:300]
        rows.append(row)
    return {"attempts": [r for r in rows if r["id"].startswith("A")],
            "controls": [r for r in rows if r["id"].startswith("C")]}  # fmt: skip


def _table(name: str, audit: dict[str, Any]) -> str:
    head = f"{'id':<4} {'channel':<17} {'category':<16} {'n':>1} " + " ".join(f"{w:<12}" for w in WAYS)
    lines = [f"[{name}] where every attempt ended, per way out", head, "-" * len(head)]
    for row in audit["attempts"] + audit["controls"]:
        lines.append(f"{row['id']:<4} {row['channel']:<17} {row['category']:<16} {row['sessions']:>1} "
                     + " ".join(f"{row['verdicts'][w]:<12}" for w in WAYS))  # fmt: skip
    for way in WAYS:
        counts = Counter(r["verdicts"][way] for r in audit["attempts"])
        lines.append(f"  {way}: " + ", ".join(f"{v}={counts[v]}" for v in VERDICTS if counts[v]))
    lines.append("what shows of an attempt, per way out (the first item it shows in):")
    for row in audit["attempts"]:
        lines += [f"  {row['id']} {way} {row['verdicts'][way]}: {text}" for way, text in row["shown"].items()]
    return "\n".join(lines)


@pytest.mark.parametrize("run", ["heuristic_run", "gullible_run"])
def test_every_way_out_keeps_every_attempt_from_claude(run, request, capsys, tmp_path, tmp_path_factory):
    pipe = request.getfixturevalue(run)
    audit = ways_out(pipe, tmp_path)
    _AUDITS[run] = audit
    data = json.dumps(_AUDITS, indent=2, ensure_ascii=False) + "\n"
    saved = tmp_path_factory.getbasetemp() / "poisoning-audit.json"
    for path in (saved, AUDIT_JSON):
        path.write_text(data, encoding="utf-8")
    with capsys.disabled():
        print("\n" + _table(run, audit) + f"\n  (saved to {saved} and {AUDIT_JSON})")
    assert len(ATTEMPTS) >= 60 and all(len(r["verdicts"]) == len(WAYS) for r in audit["attempts"])

    def failing(ways: tuple[str, ...], allowed: set[str]) -> dict[str, dict[str, str]]:
        return {r["id"]: {w: f"{r['verdicts'][w]}: {r['shown'].get(w, '')}" for w in ways
                          if r["verdicts"][w] not in allowed}
                for r in audit["attempts"] if any(r["verdicts"][w] not in allowed for w in ways)}  # fmt: skip

    kept_out = {"held", "not shown", "not a memory"}
    # CLAUDE.md is read as instructions: no attempt is ever proposed for it, whatever the extractor
    assert failing(("claude_md",), kept_out) == {}
    if run == "heuristic_run":  # Claude never reads an attempt as an instruction, whichever way it asks
        assert failing(WAYS, {"quoted", *kept_out}) == {}
    else:  # the extractor believed everything: the guard alone keeps each attempt out of packets and notes
        assert failing(("packets", "notes"), kept_out) == {}
