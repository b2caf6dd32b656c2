"""``nous redact --rescan`` for metadata: what capture now redacts, in what was stored before it did.

Why: until capture redacted metadata (:mod:`nous_assets.capture.metadata`), a token in a directory or branch
name was stored as it was: in the lake's ``cwd``/``git_branch``/``source_path``/``project_id``, in each day's
``_files.json``, in cortex.db's cursors, queue items, chunks, identity evidence and aliases, and in every
project id derived from the directory (events, memories, packets...). This pass gives each stored value the
form capture now gives it, so an old value and a new one for the same place are the same text and id:

* lake turns are handled with the rest of the turn by :mod:`nous_assets.capture.rescan`; this module does the
  per-day manifests and cortex.db (:mod:`nous_assets.store.ingest.redaction_meta` lists the columns);
* values are rewritten per distinct value, in one transaction, and audited like every other rescan change
  (``row_ref`` is the new, redacted value: the old one is the secret);
* derived rows (packets and what marks them current, stale-citation rows) are dropped: the next run rebuilds them.

Like the rest of the rescan it is idempotent (a second run finds nothing) and ``dry_run`` only counts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nous_assets.capture.metadata import project_id_text, redact_meta_text, stored_path_text
from nous_assets.capture.redact import REDACTOR_VERSION, RedactionResult
from nous_assets.store.db import Connection, atomic
from nous_assets.store.ingest import redaction as store
from nous_assets.store.ingest import redaction_meta as meta
from nous_assets.store.ingest.redaction import AuditRow

if TYPE_CHECKING:
    from nous_assets.capture.rescan import RescanReport

TREATMENTS: dict[str, Callable[[str], RedactionResult]] = {"path": stored_path_text, "project": project_id_text}


def _rows(location: str, row_ref: str, field_name: str, counts: dict[str, int], times: int = 1) -> list[AuditRow]:
    return [AuditRow(location, row_ref, field_name, kind, n * times) for kind, n in sorted(counts.items())]


# -- the lake's manifests ---------------------------------------------------------------------------------------
def rescan_manifests(conn: Connection, lake_dir: Path, report: RescanReport) -> None:
    """Each day's ``_files.json`` with its paths stored as capture stores them (rewritten atomically)."""
    for path in sorted((lake_dir / "transcripts").glob("date=*/_files.json")):
        location = f"lake:transcripts/{path.parent.name}/_files.json"
        manifest = json.loads(path.read_text())
        rows: list[AuditRow] = []
        for entry in manifest.get("files", []):
            result = TREATMENTS["path"](str(entry.get("path", "")))
            if result.counts:
                entry["path"] = result.text
                rows += _rows(location, result.text, "path", result.counts)
        if not rows:
            continue
        if not report.dry_run:
            tmp = path.with_name(f".{path.name}.{os.getpid()}.rescan.tmp")
            tmp.write_text(json.dumps(manifest, indent=1))
            os.replace(tmp, path)
            with atomic(conn):
                store.record_audit(conn, report.run_id, REDACTOR_VERSION, rows)
        report.changed["lake_manifest_paths"] += len(rows)
        _count(report, rows)


def _count(report: RescanReport, rows: list[AuditRow]) -> None:
    report.audit.extend(rows)
    for r in rows:
        report.kinds[r.kind] += r.count


# -- cortex.db --------------------------------------------------------------------------------------------------
Rename = tuple[meta.Column, str, RedactionResult]  # column, old value, its redaction


def _renames(conn: Connection) -> list[Rename]:
    """Every (column, old value, redacted value) that changes."""
    out = []
    for col in meta.COLUMNS:
        redact = TREATMENTS[col.treatment]
        for value in meta.values(conn, col):
            result = redact(value)
            if result.counts:
                out.append((col, value, result))
    return out


def _holds_secret(value: Any, path: bool = False) -> bool:
    """Whether a fingerprint value (a string, or a list of them) holds something the metadata redaction removes."""
    if isinstance(value, list):
        return any(_holds_secret(v) for v in value)
    return isinstance(value, str) and bool(redact_meta_text(value, path=path).counts)


def _derived(conn: Connection, renamed_projects: set[str]) -> tuple[set[str], set[str], set[int]]:
    """(packet keys, projects whose packets must be rebuilt, memory_stale rows) to drop."""
    keys, projects = set(), set(renamed_projects)
    for key, project_id, fingerprint in meta.packets(conn):
        if project_id in renamed_projects or any(_holds_secret(v, k == "cwd") for k, v in fingerprint.items()):
            keys.add(key)
            projects.add(project_id)
    projects |= {p for p in meta.digest_projects(conn) if project_id_text(p).counts}
    stale = {
        memory_id
        for memory_id, project_id, checkout in meta.stale_rows(conn)
        if project_id_text(project_id).counts or _holds_secret(checkout, path=True)
    }
    return keys, projects, stale


def rescan_db_metadata(conn: Connection, report: RescanReport) -> None:
    """Rewrite every metadata column of cortex.db (module doc), in one transaction under the rescan flag."""
    renames = _renames(conn)
    renamed_projects = {old for col, old, _ in renames if col.treatment == "project"}
    keys, projects, stale = _derived(conn, renamed_projects)
    if not (renames or keys or stale):
        return
    if report.dry_run:
        rows = _renamed(report, renames, lambda col, old, _new: meta.count(conn, col, old))
        report.changed.update({"injection_packets_dropped": len(keys), "memory_stale_dropped": len(stale)})
    else:
        with store.rescan_transaction(conn):
            rows = _renamed(report, renames, lambda col, old, new: meta.rename(conn, col, old, new))
            meta.refile_chunks(conn, meta.chunk_ids_of(conn, {project_id_text(p).text for p in renamed_projects}))
            report.changed["injection_packets_dropped"] += meta.drop_packets(conn, keys, projects)
            report.changed["memory_stale_dropped"] += meta.drop_stale(conn, stale)
            store.record_audit(conn, report.run_id, REDACTOR_VERSION, rows)
    _count(report, rows)


def _renamed(
    report: RescanReport, renames: list[Rename], apply: Callable[[meta.Column, str, str], int]
) -> list[AuditRow]:
    """Apply (or, dry, count) each rename; its rows changed go to the report, and the audit rows are returned."""
    rows: list[AuditRow] = []
    for col, old, result in renames:
        n = apply(col, old, result.text)
        report.changed[f"{col.table}.{col.column}"] += n
        rows += _rows(col.table, result.text, col.column, result.counts, n) if n else []
    return rows
