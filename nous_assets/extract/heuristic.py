"""A deterministic, offline learning extractor: rule families over one session's turns.

It is the provider that always works (no network, no model) and the baseline the LLM providers are
compared with. Each rule family lives in its own module under :mod:`nous_assets.extract.rules`:

* what the user says — corrections, preferences, decisions (approved proposals included, one-off
  operations excluded), stated facts (:mod:`~nous_assets.extract.rules.speech`);
* gotchas — failing commands and what fixed them, and Claude's diagnoses once the work then succeeds
  (:mod:`~nous_assets.extract.rules.gotchas`);
* compaction summaries — their errors-and-fixes, problem-solving notes and decisions
  (:mod:`~nous_assets.extract.rules.compaction`);
* workflow — the task tracker, git hooks (:mod:`~nous_assets.extract.rules.workflow`);
* configuration — the net change per config file (:mod:`~nous_assets.extract.rules.configuration`) and
  the settings a session looked up: ports, override files, formatter plugins, npm scripts
  (:mod:`~nous_assets.extract.rules.config_read`);
* architecture — stack, scripts, explanations and where things live
  (:mod:`~nous_assets.extract.rules.architecture`);
* environment — Claude Code hooks, MCP servers, git worktrees, the default branch, files to leave out of
  commits (:mod:`~nous_assets.extract.rules.environment`).

The canonical commands and the quality gate are not one session's to say: the project brief mines them across
sessions (:mod:`nous_assets.brief`). Every candidate's status comes from its evidence
(:mod:`~nous_assets.extract.rules.evidence`).

Task prompts, pasted text, one-off details and bypasses are filtered (:mod:`~nous_assets.extract.rules.filters`);
``acompact-`` subagent side-calls are ignored entirely, and thinking is never read.
"""

from __future__ import annotations

from typing import Any

from nous_assets.extract.base import SessionBatch
from nous_assets.extract.rules import (
    architecture,
    compaction,
    config_read,
    configuration,
    conventions,
    environment,
    evidence,
    gotchas,
    render,
    speech,
    workflow,
)
from nous_assets.extract.rules.session import Cand, build_streams

__all__ = ["HeuristicExtractor"]


class HeuristicExtractor:
    """Rule-based learning extractor (see module docstring). Deterministic and offline."""

    name = "heuristic"
    version = "heuristic-3"

    def __init__(self, *, max_per_batch: int = render.MAX_PER_BATCH, kind_caps: dict[str, int] | None = None) -> None:
        self.max_per_batch = max_per_batch
        self.kind_caps = dict(render.KIND_CAPS if kind_caps is None else kind_caps)

    def extract(self, batch: SessionBatch) -> list[dict[str, Any]]:
        cands: list[Cand] = []
        streams = build_streams(batch)
        for stream in streams:
            cands.extend(speech.speech(stream))
            fixes = gotchas.error_fixes(stream)
            cands.extend(fixes)
            cands.extend(gotchas.diagnoses(stream))
            cands.extend(gotchas.why_comments(stream))
            cands.extend(compaction.summaries(stream))
            cands.extend(workflow.task_tracker(stream))
            cands.extend(workflow.git_hooks(stream))
            fix_uuids = {u for c in fixes for t in c.turns for u in t.uuids}
            cands.extend(configuration.configurations(stream, fix_uuids))
            cands.extend(config_read.config_reads(stream))
            cands.extend(architecture.architecture(stream))
            cands.extend(conventions.conventions(stream))
            cands.extend(environment.environment(stream))
        evidence.assess(streams, cands)
        chosen = render.select(cands, self.kind_caps, self.max_per_batch)
        return render.render(batch, chosen)
