"""The extraction worker: lake turns -> ingest queue -> provider -> validated learnings -> events.

One queue item per (transcript file, session or subagent, day). Its idempotency key covers the
exact turns it holds, so re-scanning unchanged data enqueues nothing, and a grown session
enqueues a new item whose already-known learnings dedupe on their own event keys.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from nous_assets import clocks
from nous_assets.capture.lake import read_turns
from nous_assets.capture.redact import redact, redact_json
from nous_assets.errors import NousError
from nous_assets.extract.base import Extractor, SessionBatch
from nous_assets.extract.schema import records_from_frame, validate_learnings
from nous_assets.ids import idempotency_key, learning_id_for, learning_index
from nous_assets.reconcile.decision_matrix import History, decide_relearning
from nous_assets.reconcile.judge import relearn_judge
from nous_assets.reconcile.relearn import Decision, Held, Incoming, Judge, decide
from nous_assets.settings import Settings, Thresholds
from nous_assets.status import CLOSED
from nous_assets.store.db import Connection, atomic, open_db
from nous_assets.store.log.events import OPEN_VALIDITY, AppendResult, LearningEvent
from nous_assets.store.projection.identity import project_map
from nous_assets.store.projection.memory_state import DETAIL_FIELDS, Policy
from nous_assets.store.reads import recurrence
from nous_assets.store.search import memory_lookup
from nous_assets.store.sqlite import queue
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project
from nous_assets.store.sqlite.queue import incomplete_paths as incomplete_paths  # re-exported for the assets
from nous_assets.timeutil import normalize_time
from nous_assets.turns import Turn

_WORD = re.compile(r"[a-z][a-z0-9_.-]{2,}")
_STOP = frozenset("the and for that this with you not but are was have from your use don't dont should".split())


def batch_session_id(turn: Turn) -> str:
    """Subagent transcripts are their own extraction unit, named like Claude Code's DAG tools do."""
    return f"{turn.session_id}#agent-{turn.agent_id}" if turn.agent_id else turn.session_id


def group_batches(date: str, turns: Sequence[Turn]) -> dict[tuple[str, str], SessionBatch]:
    """(source file, batch session) -> SessionBatch; compaction side-calls are not sessions of the user."""
    groups: dict[tuple[str, str], list[Turn]] = defaultdict(list)
    for t in turns:
        if t.agent_id and t.agent_id.startswith("acompact"):
            continue
        groups[(t.source_path, batch_session_id(t))].append(t)
    return {
        key: SessionBatch(project_id=ts[0].project_id, session_id=key[1], date=date, turns=tuple(ts))
        for key, ts in groups.items()
    }


def _turns_digest(turns: Sequence[Turn]) -> str:
    return hashlib.sha256("\n".join(f"{t.uuid}:{t.byte_end}" for t in turns).encode()).hexdigest()


def enqueue_partition(
    conn: Connection, date: str, turns: Sequence[Turn], *, source: str, extractor_version: str
) -> tuple[int, int]:
    """Enqueue one item per batch of the day; returns (new items, already queued)."""
    created = existing = 0
    for (path, session), batch in sorted(group_batches(date, turns).items()):
        digest = _turns_digest(batch.turns)
        key = hashlib.sha256(f"{batch.project_id}:{session}:{date}:{digest}:{extractor_version}".encode()).hexdigest()
        first = batch.turns[0]
        payload = {
            "date": date,
            "batch_session_id": session,
            "session_id": first.session_id,
            "agent_id": first.agent_id,
            "turns": len(batch.turns),
            "turns_sha256": digest,
            "extractor_version": extractor_version,
        }
        _, new = queue.enqueue(
            conn,
            source=source,
            project_id=batch.project_id,
            session_id=session,
            transcript_path=path,
            file_inode=None,
            file_offset=max(t.byte_end for t in batch.turns),
            payload=payload,
            idempotency_key=key,
        )
        created += new
        existing += not new
    return created, existing


# ------------------------------------------------------------------------------------------------
@dataclass
class DrainStats:
    claimed: int = 0
    completed: int = 0
    failed: int = 0
    dead_lettered: int = 0
    learnings: int = 0
    events_written: int = 0
    skipped_processed: int = 0
    weakened: int = 0
    relearned: int = 0  # learnings already held: reinforced instead of stored twice
    superseded: int = 0  # slot values closed by a later (by validity) value
    swept: int = 0
    errors: list[str] = field(default_factory=list)


def _order_for_edges(records: list[dict[str, Any]]) -> list[int]:
    """Emit edge targets before their sources so the projection can resolve them (cycles: index order)."""
    deps = {
        i: {e["target_index"] for e in r["edges"] if "target_index" in e and e["target_index"] != i}
        for i, r in enumerate(records)
    }
    order, placed = [], set()
    while len(order) < len(records):
        ready = [i for i in range(len(records)) if i not in placed and deps[i] <= placed]
        pick = ready[0] if ready else min(i for i in range(len(records)) if i not in placed)
        order.append(pick)
        placed.add(pick)
    return order


def _injected_clocks(conn: Connection, batch_session: str) -> tuple[dict[str, int], list[str]]:
    """Merged clocks of the memories injected into this session (it read them, so it is causally after)."""
    clock: dict[str, int] = {}
    peers: list[str] = []
    for text in memory_lookup.injected_clocks(conn, batch_session.split("#", 1)[0], limit=clocks.MAX_KEYS - 1):
        other = clocks.parse(text)
        peers.extend(other)
        clock = clocks.merge(clock, other)
    return clock, peers


def _learning_clock(injected: tuple[dict[str, int], list[str]], batch_session: str, anchor_offset: int) -> dict:
    """The peers' clocks plus this session's own counter (the anchor's position in its transcript)."""
    clock, peers = injected
    return clocks.bound(clocks.merge(clock, {batch_session: anchor_offset + 1}), batch_session, peers)


def _related_memory(conn: Connection, project_id: str, text: str, exclude: set[str]) -> str | None:
    """The memory a correction most likely refers to (FTS over the project's memories, >= 2 shared words)."""
    words = sorted({w for w in _WORD.findall(text.lower()) if w not in _STOP})[:12]
    if len(words) < 2:
        return None
    query = " OR ".join('"' + w.replace('"', "") + '"' for w in words)
    for lid, content in memory_lookup.project_matches(conn, project_id, query, limit=5):
        if lid in exclude:
            continue
        shared = set(words) & set(_WORD.findall(content.lower()))
        if len(shared) >= 2:
            return lid
    return None


def _relearn_key(key: str) -> str:
    """The re-learning of one would-be learning is written once, whatever memory it turned out to repeat."""
    return hashlib.sha256(f"relearn:{key}".encode()).hexdigest()


@dataclass
class _BatchState:
    """What this batch decided so far, before any of it is projected (later records compare with it too)."""

    pending: list[Held] = field(default_factory=list)  # learnings this batch extracts
    closed: dict[str, str | None] = field(default_factory=dict)  # learning id -> valid_until this batch set
    merged: dict[str, str] = field(default_factory=dict)  # would-be learning id -> the learning it reinforced

    def comparable(self, conn: Connection, project_id: str, incoming: Incoming) -> list[Held]:
        """The projection's comparable memories plus this batch's, with windows this batch closed applied."""
        held = {h.learning_id: h for h in memory_lookup.similar_current(conn, project_id, incoming.content)}
        if incoming.slot:
            held.update((h.learning_id, h) for h in memory_lookup.slot_history(conn, project_id, incoming.slot))
        held.update((h.learning_id, h) for h in self.pending)
        return [self._with_closures(h) for h in held.values()]

    def _with_closures(self, h: Held) -> Held:
        if h.learning_id not in self.closed:
            return h
        at = self.closed[h.learning_id]
        until = at if h.valid_until is None or (at is not None and at < h.valid_until) else h.valid_until
        return replace(h, valid_until=until)

    def close(self, learning_id: str, at: str | None) -> None:
        previous = self.closed.get(learning_id)
        self.closed[learning_id] = at if previous is None or (at is not None and at < previous) else previous


def _valid_time(value: Any) -> str | None:
    """Canonical text of a validity time, None when unknown ("unknown"/"current", unparsable or absent)."""
    if not isinstance(value, str) or value.strip().lower() in OPEN_VALIDITY:
        return None
    try:
        return normalize_time(value)
    except ValueError:
        return None


def _details(rec: dict[str, Any]) -> dict[str, Any]:
    """The optional payload fields (kind-specific details of the extraction contract) the record carries."""
    return {name: rec[name] for name in DETAIL_FIELDS if isinstance(rec.get(name), str) and rec[name].strip()}


def _relearn_flag(decision: Decision, verdict: str) -> dict[str, Any]:
    """The re-learning record ``nous review`` reads: what was decided, by which tier, against which memory."""
    matched = decision.target if decision.reinforces else decision.near
    return {"decision": verdict, "tier": decision.tier, "similarity": round(decision.similarity, 4), "matched": matched}


def _matrix(conn: Connection, target: str, session: str, thresholds: Thresholds) -> tuple[str, float]:
    """The decision matrix's verdict on re-learning ``target`` in ``session`` (this session counted)."""
    sessions, score, injections, helpful, unhelpful = recurrence.relearn_history(conn, target)
    roots = {s.split("#", 1)[0] for s in sessions | {session}}  # a session's subagents are that session
    history = History(len(roots), thresholds.initial_reinforcement if score is None else score,
                      injections, helpful, unhelpful)  # fmt: skip
    return decide_relearning(history, thresholds)


def _reinforcement(
    rec: dict[str, Any], decision: Decision, key: str, *, extractor_version: str, verdict: tuple[str, float]
) -> dict[str, Any]:
    payload = {
        "reinforcement_delta": verdict[1],
        "reason": "relearned",
        "similarity": round(decision.similarity, 4),
        "relearn": _relearn_flag(decision, verdict[0]),
        "content": rec["content"],
        "concepts": rec["concepts"],
        "extractor_version": extractor_version,
        "provenance": rec["provenance"],
        "relearned_key": key,
        **_claim(rec),
    }
    return redact_json(payload)[0]


def _claim(rec: dict[str, Any]) -> dict[str, Any]:
    """The record's status and the evidence it rests on, when the provider gave them (payload fields)."""
    out: dict[str, Any] = {}
    if rec.get("status"):
        out["status"] = rec["status"]
    if rec.get("evidence"):
        out["evidence"] = rec["evidence"]
    return out


@dataclass(frozen=True)
class _Origin:
    """What every event of one batch shares: where it was learned and by which extractor."""

    session: str
    project_id: str
    source: str
    version: str

    def event(self, kind: str, learning_id: str, payload: dict[str, Any], key: str, **times: Any) -> LearningEvent:
        return LearningEvent(kind, learning_id, payload, self.session, self.project_id, self.source, key, **times)

    def replaced(self, old_lid: str, new_lid: str) -> LearningEvent:
        """A re-extraction with a new extractor version replaces what the old version extracted there."""
        return self.event(
            "LearningSuperseded",
            old_lid,
            {"superseded_by": new_lid, "reason": f"re-extracted with {self.version}"},
            hashlib.sha256(f"supersede:{old_lid}:{new_lid}".encode()).hexdigest(),
        )


def _plan(batch: SessionBatch, records: list[dict[str, Any]], version: str) -> list[tuple[int, str, str]]:
    """(learning index, idempotency key, learning id) per record, stable across runs of one extractor."""
    ordinals: Counter[tuple[str, str]] = Counter()
    plan = []
    for rec in records:
        slot = (rec["anchor_uuid"], rec["kind"])
        index = learning_index(rec["anchor_uuid"], rec["kind"], ordinals[slot])
        ordinals[slot] += 1
        key = idempotency_key(batch.project_id, batch.session_id, index, version)
        plan.append((index, key, learning_id_for(key)))
    return plan


def _edges(rec: dict[str, Any], i: int, lids: list[str], merged: dict[str, str]) -> list[dict[str, Any]]:
    """The record's edges, in-batch targets turned into learning ids (or the memory they merged into)."""
    edges = []
    for e in rec["edges"]:
        if "target_index" not in e:
            edges.append(e)
        elif e["target_index"] != i and e["target_index"] < len(lids):
            target = lids[e["target_index"]]
            edges.append({"target": merged.get(target, target), "rel_type": e["rel_type"], "weight": e["weight"]})
    return edges


def _extracted_payload(rec: dict[str, Any], edges: list[dict[str, Any]], decision: Any, version: str) -> dict:
    payload = {
        "content": rec["content"],
        "extractor_version": version,
        "concepts": rec["concepts"],
        "edges": edges,
        "type": rec["type"],
        "kind": rec["kind"],
        "domain": rec["domain"],
        "scope": rec["scope"],
        "temporal_confidence": rec["temporal_confidence"],
        "provenance": rec["provenance"],
        **_details(rec),
        **_claim(rec),
    }
    if decision.near:  # a near-miss: kept apart, logged as a re-learning signal for later analysis
        payload["relearn"] = _relearn_flag(decision, "near_miss")
    payload, _ = redact_json(payload)  # an LLM may echo or invent a credential: never persist one
    return payload


def _supersessions(origin: _Origin, decision: Any, slot: str | None, state: _BatchState) -> list[LearningEvent]:
    """Close the values a learning on a slot replaces (by validity time)."""
    events = []
    for closing in decision.supersessions:
        state.close(closing.old, closing.at)
        key = hashlib.sha256(f"supersede-slot:{closing.old}:{closing.new}".encode()).hexdigest()
        payload = {"superseded_by": closing.new, "reason": "slot", "slot": slot}
        if closing.restates:  # the newer value names all this one did: its sessions count for the newer
            payload["restates"] = True
        events.append(origin.event("LearningSuperseded", closing.old, payload, key, valid_until=closing.at))
    return events


def _disproved(origin: _Origin, target: str, rec: dict[str, Any], key: str, at: str | None) -> LearningEvent:
    """A held memory this session refuted or superseded: a weakening that carries the new status and why."""
    payload = {"reinforcement_delta": -0.2, "reason": rec["status"], **_claim(rec), "relearned_key": key}
    return origin.event("LearningWeakened", target, redact_json(payload)[0], _relearn_key(key), valid_from=at)


def _weakening(origin: _Origin, target: str, lid: str, key: str, at: str | None) -> LearningEvent:
    """A correction said in this session weakens the memory it corrects."""
    payload = {"reinforcement_delta": -0.1, "reason": "user_correction_historical", "correction": lid}
    weaken_key = hashlib.sha256(f"weaken:{key}:{target}".encode()).hexdigest()
    return origin.event("LearningWeakened", target, payload, weaken_key, valid_from=at)


def build_events(
    conn: Connection,
    batch: SessionBatch,
    records: list[dict[str, Any]],
    *,
    extractor_version: str,
    source: str,
    reextract: bool,
    stats: DrainStats,
    thresholds: Thresholds | None = None,
    judge: Judge | None = None,
    queue_conn: Connection | None = None,
) -> tuple[list[LearningEvent], list[tuple[int, str]]]:
    """Turn validated learnings into events; returns (events, [(learning_index, idempotency_key)]).

    One memory per learning (:mod:`~nous_assets.reconcile.relearn`): a learning the project already holds
    becomes a ``LearningReinforced`` of that memory, its increment and flag chosen by the decision matrix
    (:mod:`~nous_assets.reconcile.decision_matrix`), and a learning on a slot closes the value it replaces
    (``LearningSuperseded``, by validity time). Compare with an up-to-date projection (``process_item``
    projects first); records of this batch are compared with each other too. ``judge``: tier 3, optional.
    ``queue_conn``: the queue's database when it is not the log's (team mode).
    """
    t = thresholds or Thresholds()
    project_id, session = batch.project_id, batch.session_id
    origin = _Origin(session, project_id, source, extractor_version)
    plan = _plan(batch, records, extractor_version)
    lids = [p[2] for p in plan]
    events: list[LearningEvent] = []
    processed: list[tuple[int, str]] = []
    injected = _injected_clocks(conn, session)
    state = _BatchState()
    canonical = project_map(conn).of(project_id, session)  # the project its memories will belong to
    for i in _order_for_edges(records):
        rec, (index, key, lid) = records[i], plan[i]
        previous = queue.processed_version(queue_conn or conn, project_id, session, index)
        if previous is not None and (previous == extractor_version or not reextract):
            stats.skipped_processed += 1
            continue
        old_lid = learning_id_for(idempotency_key(project_id, session, index, previous)) if previous else None
        replaces_old = bool(old_lid) and memory_lookup.has_extraction(conn, old_lid)
        clock = _learning_clock(injected, session, min(rec["provenance"].get("line_offsets") or [0]))
        valid_from = _valid_time(rec.get("valid_from")) or _valid_time(batch.started_at)
        incoming = Incoming(lid, rec["content"], valid_from, _details(rec).get("slot"))
        decision = decide(
            incoming,
            state.comparable(conn, canonical, incoming),
            threshold=t.dedup_jaccard,
            near_miss=t.relearn_near_miss,
            cosine=t.relearn_cosine,
            ambiguous=t.relearn_ambiguous,
            judge=judge,
            exclude=frozenset({old_lid} if old_lid else ()),
        )
        if decision.reinforces and rec.get("status") in CLOSED:  # held, and this session disproved it
            target = decision.target or ""
            state.merged[lid] = target
            events.append(_disproved(origin, target, rec, key, valid_from))
            processed.append((index, events[-1].idempotency_key))
            continue
        if decision.reinforces:  # the project already holds it: reinforce that memory instead
            target = decision.target or ""
            state.merged[lid] = target
            verdict = _matrix(conn, target, session, t)
            payload = _reinforcement(rec, decision, key, extractor_version=extractor_version, verdict=verdict)
            reinforced = origin.event("LearningReinforced", target, payload, _relearn_key(key),
                                      valid_from=valid_from, vector_clock=clock)  # fmt: skip
            events.append(reinforced)
            processed.append((index, reinforced.idempotency_key))
            stats.relearned += 1
            if replaces_old and old_lid != target:
                events.append(origin.replaced(old_lid, target))
            continue
        payload = _extracted_payload(rec, _edges(rec, i, lids, state.merged), decision, extractor_version)
        events.append(origin.event("LearningExtracted", lid, payload, key, valid_from=valid_from,
                                   valid_until=rec.get("valid_until"), vector_clock=clock))  # fmt: skip
        state.pending.append(Held(lid, rec["content"], valid_from, None, incoming.slot))
        processed.append((index, key))
        stats.learnings += 1
        events += (superseding := _supersessions(origin, decision, incoming.slot, state))
        stats.superseded += len(superseding)
        if replaces_old:  # re-extraction: compensate, don't duplicate
            events.append(origin.replaced(old_lid, lid))
        target = _related_memory(conn, canonical, rec["weakens"], set(lids)) if rec.get("weakens") else None
        if target:
            stats.weakened += 1
            events.append(_weakening(origin, target, lid, key, batch.started_at))
    return events, processed


class _Heartbeat:
    """Extends an item's lease from a side connection while a slow provider works."""

    def __init__(self, db_path: Path, item_id: int, worker: str, lease: int) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(db_path, item_id, worker, lease), daemon=True)

    def _run(self, db_path: Path, item_id: int, worker: str, lease: int) -> None:
        try:
            conn = open_db(db_path, migrate_schema=False)
        except NousError:
            return  # the database is gone or unusable: the worker's own connection reports why
        try:
            while not self._stop.wait(max(lease / 3, 0.1)):
                if not queue.heartbeat(conn, item_id, worker, lease_seconds=lease):
                    return
        finally:
            conn.close()

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def process_item(
    conn: Connection,
    settings: Settings,
    extractor: Extractor,
    item: queue.QueueItem,
    turns_by_date: dict[str, list[Turn]],
    stats: DrainStats,
    *,
    reextract: bool = False,
    judge: Judge | None = None,
    log: Connection | None = None,
) -> int:
    """Extract one queue item and append its events (to ``log`` when the log is not in ``conn``, the queue's
    database); returns the number of new events."""
    date = item.payload.get("date")
    if not isinstance(date, str) or not date:
        raise ValueError(f"queue item {item.ingest_id} has no 'date' in its payload: the day of its turns is unknown")
    if date not in turns_by_date:
        turns_by_date[date] = read_turns(settings.lake_dir, date)
    turns = [
        t
        for t in turns_by_date[date]
        if t.source_path == item.transcript_path and batch_session_id(t) == item.session_id
    ]
    if not turns:
        return 0
    batch = SessionBatch(item.project_id, item.session_id, date, tuple(turns))
    with _Heartbeat(settings.db_path, item.ingest_id, item.claimed_by or "", settings.thresholds.queue_lease_seconds):
        raw = extractor.extract(batch)
    records = records_from_frame(validate_learnings(raw))
    return append_learnings(
        conn,
        batch,
        records,
        extractor_version=extractor.version,
        source=item.source,
        thresholds=settings.thresholds,
        stats=stats,
        reextract=reextract,
        judge=judge,
        log=log,
    )


def _redacted(judge: Judge | None) -> Judge | None:
    """The judge sees what the log would keep: both texts redacted before they leave the machine."""
    if judge is None:
        return None
    return lambda incoming, held: judge(redact(incoming), redact(held))


def append_learnings(
    conn: Connection,
    batch: SessionBatch,
    records: list[dict[str, Any]],
    *,
    extractor_version: str,
    source: str,
    thresholds: Thresholds,
    stats: DrainStats,
    reextract: bool = False,
    judge: Judge | None = None,
    log: Connection | None = None,
) -> int:
    """Compare one batch's validated learnings with what is held, append the events, mark them processed.

    Under one write lock, after projecting everything appended so far: a learning is compared with the
    memories as they are at that moment, and no other writer can slip in between; returns new events.

    ``conn`` holds the queue; ``log`` the event log when it is elsewhere (team mode: the tenant's working
    database). Then the events commit first and the items are marked after: a crash between the two leaves the
    items to extract again, and their keys make the second append a no-op.
    """
    store = log or conn
    with atomic(store):
        project(store, policy=Policy.of(thresholds))
        events, processed = build_events(
            store,
            batch,
            records,
            extractor_version=extractor_version,
            source=source,
            reextract=reextract,
            stats=stats,
            thresholds=thresholds,
            judge=_redacted(judge),
            queue_conn=conn,
        )
        results = SqliteEventStore(store).append_many(events)
        if store is conn:
            _mark(conn, batch, results, processed, extractor_version)
    if store is not conn:
        with atomic(conn):
            _mark(conn, batch, results, processed, extractor_version)
    return sum(r.created for r in results)


def _mark(
    conn: Connection,
    batch: SessionBatch,
    results: list[AppendResult],
    processed: list[tuple[int, str]],
    extractor_version: str,
) -> None:
    """The batch's learnings marked processed in the queue, each with the event that recorded it."""
    by_key = {r.event.idempotency_key: r.event.event_id for r in results}
    for index, key in processed:
        queue.mark_processed(conn, batch.project_id, batch.session_id, index, by_key[key], extractor_version)


def drain(
    conn: Connection,
    settings: Settings,
    extractor: Extractor,
    *,
    worker_id: str,
    reextract: bool = False,
    progress: Callable[[DrainStats], None] | None = None,
    log: Connection | None = None,
) -> DrainStats:
    """Claim and process every due item until none is left (failures are retried in later drains).

    ``log``: the database of the event log and its projection when it is not ``conn`` (team mode).

    Items are claimed one at a time: a lease runs from its claim, so items claimed in a batch would wait
    behind a slow one and could expire before their turn, their work then done under a lost lease.
    """
    t = settings.thresholds
    stats = DrainStats()
    stats.swept = queue.sweep_expired(
        conn, backoff_base_seconds=t.queue_backoff_base_seconds, max_attempts=t.queue_max_attempts
    )
    project(log or conn, policy=Policy.of(t))  # corrections look up the memories they weaken
    cache: dict[str, list[Turn]] = {}
    judge = relearn_judge(settings)
    while True:
        items = queue.claim(conn, worker_id, limit=1, lease_seconds=t.queue_lease_seconds)
        if not items:
            # a lease this drain lost (an item slower than its lease) goes back to the queue now rather
            # than waiting for the next drain
            recovered = queue.sweep_expired(conn, backoff_base_seconds=t.queue_backoff_base_seconds,
                                            max_attempts=t.queue_max_attempts)  # fmt: skip
            if recovered:
                stats.swept += recovered
                continue
            if judge is not None and judge.failure:  # the optional tier 3 stopped: say why, extraction went on
                stats.errors.append(f"re-learning tier 3 skipped for the rest of the run: {judge.failure}")
            return stats
        for item in items:
            stats.claimed += 1
            try:
                stats.events_written += process_item(conn, settings, extractor, item, cache, stats,
                                                     reextract=reextract, judge=judge, log=log)  # fmt: skip
            except Exception as exc:  # every failure is recorded on the item, retried, then dead-lettered
                message = redact(f"{type(exc).__name__}: {exc}")  # validation errors quote the bad values
                status = queue.fail(
                    conn,
                    item.ingest_id,
                    worker_id,
                    message,
                    max_attempts=t.queue_max_attempts,
                    backoff_base_seconds=t.queue_backoff_base_seconds,
                )
                stats.errors.append(message[:300])
                if status == "dead_letter":
                    stats.dead_lettered += 1
                else:
                    stats.failed += 1
                continue
            if queue.complete(conn, item.ingest_id, worker_id):
                stats.completed += 1
        if progress:
            progress(stats)
