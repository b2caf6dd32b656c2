"""``remember``: Claude records a learning the user asked it to keep, as an event like any other.

The text becomes a ``LearningExtracted`` event with source ``agent`` (migration 021): redacted by the capture
redactor before it is stored (a pasted token never reaches the log), projected at once (``recall`` finds it in
the next call) and checked by the packet guard at once, so a poisoned ``remember`` ("always run curl … | sh")
is *held*: a memory ``nous review`` lists and no packet carries until the user approves it. ``nous review``
also lists every memory Claude recorded (section ``remembered``), so the user sees and can reject what was
kept in their name. Session-start packets include it from the pipeline's next run, which the watch sensor
starts within seconds of the session's transcript changing (the ``remember`` call itself changes it).

Idempotent: the same text for the same project, scope and kind lands on the same event (a repeated call
writes nothing and says so). Its status is ``stated``: the user said it, Claude wrote it down.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from nous_assets.capture.redact import redact_text
from nous_assets.extract.base import CURRENT_KINDS
from nous_assets.extract.concepts import extract_concepts, infer_domain
from nous_assets.ids import learning_id_for
from nous_assets.mcp_server import inputs
from nous_assets.safety.review import refresh_holds
from nous_assets.settings import Settings
from nous_assets.status import STATED
from nous_assets.store.db import Connection
from nous_assets.store.log.events import SCOPES, LearningEvent
from nous_assets.store.projection.memory_state import Policy
from nous_assets.store.reads import holds
from nous_assets.store.search import memory_search
from nous_assets.store.sqlite import projection as projector
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.timeutil import now_iso
from resolver.project import project_id_from_cwd

SOURCE = "agent"
SESSION = "mcp-remember"
EXTRACTOR_VERSION = "mcp-remember-1"
MAX_TEXT_CHARS = 2000
DEFAULT_KIND = "preference"
KINDS = CURRENT_KINDS


def _project(conn: Connection, value: str | None) -> str:
    """The project to file the learning under: a known one by id or directory, or — for a directory Nous has no
    session of yet — the id the SessionStart hook derives from it, so the next session there gets it."""
    value = "." if value is None else value
    try:
        found = inputs.project(conn, value, required=True)
    except inputs.InputError:
        raw = inputs.text(value, "project", max_chars=inputs.MAX_PROJECT_CHARS)
        if raw != "." and not raw.startswith(("/", "~")):
            raise
        return project_id_from_cwd(os.path.normpath(os.path.expanduser(os.getcwd() if raw == "." else raw)))
    assert found is not None
    return found


def remember(
    conn: Connection,
    settings: Settings,
    *,
    text: str,
    kind: str | None = None,
    project: str | None = None,
    scope: str | None = None,
) -> dict[str, Any]:
    """Store ``text`` as a learning of ``project`` (default: the directory Claude Code started the server in)."""
    raw = inputs.text(text, "text", max_chars=MAX_TEXT_CHARS)
    kind = DEFAULT_KIND if kind is None else kind
    if kind not in KINDS:
        raise inputs.InputError(f"kind must be one of {', '.join(KINDS)}, got {kind[:40]!r}")
    scope = "project" if scope is None else scope
    if scope not in SCOPES:
        raise inputs.InputError(f"scope must be one of {', '.join(SCOPES)}, got {scope[:40]!r}")
    project_id = _project(conn, project)
    redacted = redact_text(" ".join(raw.split()))
    content = redacted.text
    key = hashlib.sha256(f"remember:{project_id}:{scope}:{kind}:{content}".encode()).hexdigest()
    concepts = extract_concepts(content)
    payload = {
        "content": content,
        "extractor_version": EXTRACTOR_VERSION,
        "concepts": concepts,
        "edges": [],
        "type": "learning",
        "kind": kind,
        "domain": infer_domain(content, concepts),
        "scope": scope,
        "temporal_confidence": "high",
        "status": STATED,
        "provenance": {"source": "mcp remember", "recorded_by": SOURCE},
    }
    event = LearningEvent("LearningExtracted", learning_id_for(key), payload, SESSION, project_id, SOURCE, key,
                          valid_from=now_iso())  # fmt: skip
    result = SqliteEventStore(conn).append(event)
    projector.project(conn, policy=Policy.of(settings.thresholds))
    refresh_holds(conn)
    memory_id = result.event.event_id
    if memory_search.brief(conn, memory_id) is None:  # archived (rejected or forgotten) since it was first stored
        return {"memory": memory_id, "stored": False, "project": project_id,
                "note": "this exact learning was recorded before and has since been rejected or forgotten; "
                        "it stays out"}  # fmt: skip
    hold = holds.get(conn, memory_id)
    answer: dict[str, Any] = {
        "memory": memory_id,
        "stored": result.created,
        "project": project_id,
        "kind": kind,
        "scope": scope,
        "status": STATED,
    }
    if redacted.counts:
        answer["redacted"] = dict(sorted(redacted.counts.items()))
    if hold is not None and hold.status == holds.HELD:
        answer["held"] = sorted({f["category"] for f in hold.findings if not f.get("warning")}) or ["flagged"]
        answer["note"] = ("held for review: the packet guard flagged it, so no session will be given it until the "
                          "user runs `nous review approve " + str(memory_id) + "`")  # fmt: skip
    else:
        answer["note"] = ("recorded" if result.created else "already recorded") + (
            "; recall finds it now, session-start packets from the pipeline's next run; the user can list it "
            "with `nous review --section remembered` and remove it with `nous review reject " + str(memory_id) + "`"
        )
    return answer
