"""A real cortex.db with a small history written through the event store: the observers' input."""

from __future__ import annotations

from nous_assets.store.log.events import LearningEvent


def learn(store, lid, content, *, kind="correction", project_id="shop", session="s1", day="2026-03-02", scope="project",
          domain=None, slot=None):  # fmt: skip
    """A learning extracted in ``session`` on ``day``; returns its memory id (the event id)."""
    payload = {"content": content, "extractor_version": "t", "concepts": [], "edges": [], "kind": kind,
               "scope": scope}  # fmt: skip
    if domain:
        payload["domain"] = domain
    if slot:
        payload["slot"] = slot
    key = f"x-{lid}"
    store.append(LearningEvent("LearningExtracted", lid, payload, session, project_id, "historical_backfill", key,
                               valid_from=f"{day}T10:00:00Z"))  # fmt: skip
    return store.get_by_key(key).event_id


def relearn(store, lid, *, session, day, project_id="shop", relearn_flag=None):
    """The same learning learned again in another session (a re-learning reinforcement)."""
    payload = {"reinforcement_delta": 0.1, "reason": "relearned"}
    if relearn_flag is not None:
        payload["relearn"] = relearn_flag
    store.append(LearningEvent("LearningReinforced", lid, payload, session, project_id, "historical_backfill",
                               f"r-{lid}-{session}", valid_from=f"{day}T11:00:00Z"))  # fmt: skip
