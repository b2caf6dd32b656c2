"""Which ingest steps team mode runs, where, and why it skips the others.

A developer's run keeps the developer's own state in its staging ``cortex.db`` (the lake, file cursors, the
extraction queue, project identity) and writes its events into the tenant's working ``cortex.db`` beside the
staging folders. That database holds the team's whole log (every developer's events and those of other writers
of the tenant, copied from PostgreSQL), projects it once (extraction compares each learning with the team's
memories there), and runs the laptop's lifecycle over it before its packets are published. Both runs call the
step functions of :mod:`nous_assets.pipeline.steps`.
"""

from __future__ import annotations

from nous_assets.pipeline.steps import Plan

DEVELOPER_STEPS = ("capture", "extract", "promote_cursors", "history")
"""Over the developer's days with new lines: its staging database, events into the tenant's working one."""

TENANT_STEPS = ("retention", "project", "embed", "link", "nli", "consolidate", "interventions", "packets")
"""In the tenant's working database, over the team's whole log (no days: the tenant has no lake)."""

SKIPPED = {
    "auto_memory": "a developer's Claude Code config folder (auto-memory notes) is not synced to the team: "
    "only the transcripts under NOUS_TEAM_TRANSCRIPTS are",
    "outcomes": "injections are logged by the SessionStart hook on each laptop (access_log); the team never "
    "sees which memories a session was given, so it has nothing to judge",
}

TEAM = Plan("team (nous_assets.defs.team.definitions)", runs=DEVELOPER_STEPS + TENANT_STEPS, skips=SKIPPED)
"""Team mode's plan: every step of the list is run (by the developer's or the tenant's run) or named here."""
