"""Import Nous v1 memory logs (``engram.jsonl`` / ``cortex.jsonl``) as ``LearningExtracted`` events.

Spec "Migration Path": legacy entries go through the event log (never straight into
``memories``), with ``extractor_version = "legacy-v1"`` and ``schema_version = 1`` when the
entry carries no extractor metadata, empty concepts/edges allowed, and a deterministic
``project_id = "legacy-migration"`` when the original project is unknown. Keys derive from the
file name and line number, so importing the same file twice adds nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nous_assets.capture.redact import redact_json, redact_text
from nous_assets.ids import idempotency_key, learning_id_for
from nous_assets.store.db import Connection
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.timeutil import normalize_time
from resolver.project import project_id_from_cwd

LEGACY_VERSION = "legacy-v1"
LEGACY_PROJECT = "legacy-migration"
_CONTENT_KEYS = ("content", "learning", "knowledge", "text", "insight", "summary", "note")
_TIME_KEYS = ("timestamp", "created_at", "createdAt", "date", "ts")


@dataclass
class LegacyReport:
    imported: int = 0
    already_present: int = 0
    quarantined: list[dict[str, Any]] = field(default_factory=list)


def _first(entry: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((entry[k] for k in keys if entry.get(k) not in (None, "")), None)


def legacy_event(entry: Any, path: Path, line_no: int) -> LearningEvent:
    """One legacy entry -> a schema-v1 LearningExtracted event. Raises ValueError with the reason."""
    if not isinstance(entry, dict):
        raise ValueError(f"entry is a JSON {type(entry).__name__}, not an object")
    content = _first(entry, _CONTENT_KEYS)
    if not isinstance(content, str) or not content.strip():
        raise ValueError(f"no text in any of the fields {', '.join(_CONTENT_KEYS)}")
    project = entry.get("project_id") or entry.get("project")
    if not project and isinstance(entry.get("cwd"), str):
        project = project_id_from_cwd(entry["cwd"])
    project = str(project) if project else LEGACY_PROJECT
    if project.startswith(("/", "~")):  # a working directory: use Claude Code's project folder name
        project = project_id_from_cwd(project)
    session = str(entry.get("session_id") or entry.get("sessionId") or entry.get("session") or f"legacy:{path.name}")
    version = str(entry.get("extractor_version") or LEGACY_VERSION)
    key = idempotency_key(project, f"{session}@{path.name}", line_no, version)
    when = _first(entry, _TIME_KEYS)
    valid_from = normalize_time(when) if isinstance(when, str) else None
    concepts = entry.get("concepts") or entry.get("tags") or []
    if not isinstance(concepts, list) or not all(isinstance(c, str) and c.strip() for c in concepts):
        concepts = []
    payload: dict[str, Any] = {
        "content": redact_text(content.strip()).text,
        "extractor_version": version,
        "concepts": concepts,
        "edges": [],
        "type": entry["type"]
        if entry.get("type") in ("learning", "knowledge")
        else ("knowledge" if path.name.startswith("cortex") else "learning"),
        "kind": "fact" if path.name.startswith("cortex") else "preference",
        "provenance": {"legacy_file": str(path), "line": line_no},
    }
    if isinstance(entry.get("domain"), str):
        payload["domain"] = entry["domain"]
    if entry.get("scope") in ("project", "global"):
        payload["scope"] = entry["scope"]
    payload, _ = redact_json(payload)  # concepts and tags are free text too
    return LearningEvent(
        "LearningExtracted",
        learning_id_for(key),
        payload,
        session,
        project,
        "historical_backfill",
        key,
        schema_version=1,
        valid_from=valid_from,
    )


def migrate_legacy(conn: Connection, paths: list[Path]) -> LegacyReport:
    """Import every file; bad lines are quarantined with file, line and reason, the rest imported."""
    report = LegacyReport()
    store = SqliteEventStore(conn)
    for path in paths:
        events: list[LearningEvent] = []
        try:
            raw_lines = path.read_bytes().split(b"\n")
        except OSError as exc:
            report.quarantined.append({"file": str(path), "line": 0, "reason": f"cannot read: {exc.strerror}"})
            continue
        for line_no, raw in enumerate(raw_lines, start=1):
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw.decode("utf-8"))
                events.append(legacy_event(entry, path, line_no))
            except (UnicodeDecodeError, json.JSONDecodeError, ValueError) as exc:
                report.quarantined.append(
                    {
                        "file": str(path),
                        "line": line_no,
                        "reason": redact_text(str(exc)[:300]).text,
                        "excerpt": redact_text(raw[:200].decode("utf-8", "replace")).text,
                    }
                )
        for result in store.append_many(events):
            if result.created:
                report.imported += 1
            else:
                report.already_present += 1
    return report
