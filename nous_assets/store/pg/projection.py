"""The projection on PostgreSQL: the same :class:`~nous_assets.store.projection.memory_state.Projection` semantics as
SQLite's projector, batch by batch, each batch atomic with its tenant's checkpoint.

A tenant's projector holds an advisory lock for each batch, so two workers never apply the same event
twice. Full-text search is the ``search_tsv`` column (content + concepts), kept by PostgreSQL itself.
Events are mapped through the tenant's project aliases (:class:`~nous_assets.store.projection.identity.ProjectMap`)
before they are applied, as on SQLite; :meth:`PgProjectionStore.replace_aliases` moves the memories an
alias change concerns, so the live projection stays equal to a replay.
"""

from __future__ import annotations

from collections.abc import Iterable

import psycopg

from nous_assets.store.log.events import StoredEvent
from nous_assets.store.pg.events import PgEventStore, tenant_lock
from nous_assets.store.projection.identity import STALE_PACKET, Aliases, ProjectMap
from nous_assets.store.projection.memory_state import MEMORY_COLUMNS, Memory, Policy, Projection
from nous_assets.store.search.fts_query import query_words
from nous_assets.store.sqlite.projection import (
    DEFAULT_BATCH,
    PROJECTOR_NAME,
    ProjectionStats,
    Snapshot,
    fts_concepts,
    referenced,
)
from nous_assets.timeutil import now_iso

_COLS = ", ".join(MEMORY_COLUMNS)
_UPSERT_MEMORY = (
    f"INSERT INTO memories(tenant_id, {_COLS}, concepts_text) VALUES ({', '.join(['%s'] * (len(MEMORY_COLUMNS) + 2))}) "
    "ON CONFLICT (tenant_id, id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in (*MEMORY_COLUMNS, "concepts_text") if c != "id")
)
_UPSERT_EDGE = (
    "INSERT INTO edges(tenant_id, source_id, target_id, rel_type, weight, origin, created_at) "
    "VALUES (%s, %s, %s, %s, %s, 'event', %s) ON CONFLICT (tenant_id, source_id, target_id, rel_type) "
    "DO UPDATE SET weight = excluded.weight, origin = 'event'"
)


class PgProjectionStore:
    """``memories``, ``concepts`` and event ``edges`` of one tenant."""

    def __init__(self, conn: psycopg.Connection, tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id

    # -- checkpoint ------------------------------------------------------------------------
    def checkpoint(self) -> int:
        row = self.conn.execute(
            "SELECT last_event_id FROM projection_checkpoints WHERE tenant_id = %s AND projector_name = %s",
            (self.tenant_id, PROJECTOR_NAME),
        ).fetchone()
        return int(row[0]) if row else 0

    def _set_checkpoint(self, event_id: int) -> None:
        self.conn.execute(
            "INSERT INTO projection_checkpoints(tenant_id, projector_name, last_event_id, updated_at) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT (tenant_id, projector_name) DO UPDATE SET "
            "last_event_id = excluded.last_event_id, updated_at = excluded.updated_at",
            (self.tenant_id, PROJECTOR_NAME, event_id, now_iso()),
        )

    # -- projecting ------------------------------------------------------------------------
    def project(self, *, policy: Policy | None = None, batch_size: int = DEFAULT_BATCH) -> ProjectionStats:
        policy = policy or Policy()
        stats = ProjectionStats(last_event_id=self.checkpoint())
        events_of = PgEventStore(self.conn, self.tenant_id)
        projects = self._project_map()
        while True:
            with self.conn.transaction():
                tenant_lock(self.conn, "projection", self.tenant_id)
                last = self.checkpoint()
                events = projects.apply(events_of.page(last, 2**62, batch_size))
                if not events:
                    stats.last_event_id = last
                    return stats
                state = self._load_state(events, policy)
                state.apply_all(events)
                upserted, deleted = self._flush(state)
                self._set_checkpoint(events[-1].event_id)
            stats.events += len(events)
            stats.batches += 1
            stats.upserted += upserted
            stats.deleted += deleted
            stats.orphans += state.orphans
            stats.last_event_id = events[-1].event_id

    def rebuild(self, *, policy: Policy | None = None) -> ProjectionStats:
        """Empty the tenant's projection and replay its log, all in one transaction."""
        with self.conn.transaction():
            tenant_lock(self.conn, "projection", self.tenant_id)
            self.conn.execute("DELETE FROM memories WHERE tenant_id = %s", (self.tenant_id,))
            self._set_checkpoint(0)
            return self.project(policy=policy)

    def _rows(self, sql: str, values: Iterable) -> list[tuple]:
        values = sorted(set(values))
        if not values:
            return []
        return self.conn.execute(sql, (self.tenant_id, values)).fetchall()

    def _load_state(self, events: list[StoredEvent], policy: Policy) -> Projection:
        """Pre-load exactly the rows (and referenced ids) that ``events`` can touch."""
        state = Projection(policy)
        ref_lids, ref_ids = referenced(events)
        loaded: dict[int, Memory] = {}
        for row in self._rows(
            f"SELECT {_COLS} FROM memories WHERE tenant_id = %s AND learning_id = ANY(%s)",
            (e.learning_id for e in events),
        ):
            mem = Memory(*row)
            loaded[mem.id] = mem
        for memory_id, concept in self._rows(
            "SELECT memory_id, concept FROM concepts WHERE tenant_id = %s AND memory_id = ANY(%s)", loaded
        ):
            loaded[memory_id].concepts.add(concept)
        for mem in loaded.values():
            state.memories[mem.learning_id] = mem
            state.by_id[mem.id] = mem.learning_id
        for memory_id, lid in self._rows(
            "SELECT id, learning_id FROM memories WHERE tenant_id = %s AND learning_id = ANY(%s)",
            ref_lids - set(state.memories),
        ):
            state.known_lids[lid] = memory_id
        state.known_ids.update(
            r[0] for r in self._rows("SELECT id FROM memories WHERE tenant_id = %s AND id = ANY(%s)", ref_ids)
        )
        return state

    def _flush(self, state: Projection) -> tuple[int, int]:
        """Write the batch's changes; returns (memories upserted, memories deleted)."""
        t = self.tenant_id
        deleted = sorted(state.deleted_ids)
        if deleted:  # concepts, edges and vectors go with them (ON DELETE CASCADE)
            self.conn.execute("DELETE FROM memories WHERE tenant_id = %s AND id = ANY(%s)", (t, deleted))
        alive = [m for lid in sorted(state.touched) if (m := state.memories.get(lid)) is not None]
        cur = self.conn.cursor()
        if alive:
            cur.executemany(_UPSERT_MEMORY, [(t, *m.row(), fts_concepts(m.concepts)) for m in alive])
        concepts = [
            (t, mem.id, concept)
            for lid, new in state.new_concepts.items()
            if (mem := state.memories.get(lid)) is not None
            for concept in sorted(new)
        ]
        if concepts:
            cur.executemany(
                "INSERT INTO concepts(tenant_id, memory_id, concept) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                concepts,
            )
        edges = [(t, s, tg, r, w, created) for (s, tg, r), (w, created) in sorted(state.live_edges().items())]
        if edges:
            cur.executemany(_UPSERT_EDGE, edges)
        return len(alive), len(deleted)

    # -- reads -----------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The same comparable form as :func:`nous_assets.store.sqlite.projection.snapshot`."""
        t = (self.tenant_id,)
        q = self.conn.execute
        return {
            "memories": [tuple(r) for r in q(f"SELECT {_COLS} FROM memories WHERE tenant_id = %s ORDER BY id", t)],
            "concepts": [
                tuple(r) for r in q("SELECT memory_id, concept FROM concepts WHERE tenant_id = %s ORDER BY 1, 2", t)
            ],
            "edges": [
                tuple(r)
                for r in q(
                    "SELECT source_id, target_id, rel_type, weight, created_at FROM edges "
                    "WHERE tenant_id = %s AND origin = 'event' ORDER BY 1, 2, 3",
                    t,
                )
            ],
            "memories_fts": [
                tuple(r)
                for r in q("SELECT id, content, concepts_text FROM memories WHERE tenant_id = %s ORDER BY 1", t)
            ],
        }

    def memory(self, memory_id: int) -> Memory | None:
        row = self.conn.execute(
            f"SELECT {_COLS} FROM memories WHERE tenant_id = %s AND id = %s", (self.tenant_id, memory_id)
        ).fetchone()
        if row is None:
            return None
        mem = Memory(*row)
        mem.concepts = {
            r[0]
            for r in self.conn.execute(
                "SELECT concept FROM concepts WHERE tenant_id = %s AND memory_id = %s", (self.tenant_id, mem.id)
            )
        }
        return mem

    def search_text(self, query: str, top_k: int) -> list[int]:
        """Memories matching any word of ``query`` (English stemming), by ``ts_rank``, best first."""
        words = query_words(query)
        if not words or top_k <= 0:
            return []
        rows = self.conn.execute(
            "SELECT id FROM memories, to_tsquery('english', %s) q WHERE tenant_id = %s AND search_tsv @@ q "
            "ORDER BY ts_rank(search_tsv, q) DESC, id LIMIT %s",
            (" | ".join(words), self.tenant_id, top_k),
        ).fetchall()
        return [int(r[0]) for r in rows]

    # -- project identity ------------------------------------------------------------------
    def _project_map(self) -> ProjectMap:
        sessions: dict[str, str] = {}
        folders: dict[str, str] = {}
        for kind, alias, project in self.conn.execute(
            "SELECT kind, alias, project_id FROM project_aliases "
            "WHERE tenant_id = %s AND kind IN ('session', 'folder')",
            (self.tenant_id,),
        ):
            (sessions if kind == "session" else folders)[alias] = project
        return ProjectMap(sessions, folders)

    def aliases(self) -> Aliases:
        rows = self.conn.execute(
            "SELECT kind, alias, project_id, evidence FROM project_aliases WHERE tenant_id = %s", (self.tenant_id,)
        )
        return {(kind, alias): (project, evidence) for kind, alias, project, evidence in rows}

    def replace_aliases(self, aliases: Aliases, *, now: str) -> dict[int, tuple[str, str]]:
        """The same steps as SQLite (``identity.replace_aliases``, ``remap_memories``, ``mark_packets_stale``),
        under the projection's lock so no batch is projected with half the new aliases."""
        t = self.tenant_id
        with self.conn.transaction():
            tenant_lock(self.conn, "projection", t)
            old = self.aliases()
            gone = [key for key in old if key not in aliases]
            changed = {key: value for key, value in aliases.items() if old.get(key) != value}
            cur = self.conn.cursor()
            if gone:
                cur.executemany("DELETE FROM project_aliases WHERE tenant_id = %s AND kind = %s AND alias = %s",
                                [(t, kind, alias) for kind, alias in gone])  # fmt: skip
            if changed:
                cur.executemany(
                    "INSERT INTO project_aliases(tenant_id, kind, alias, project_id, evidence, updated_at) "
                    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, kind, alias) DO UPDATE SET "
                    "project_id = excluded.project_id, evidence = excluded.evidence, updated_at = excluded.updated_at",
                    [(t, kind, alias, *value, now) for (kind, alias), value in changed.items()],
                )
            keys = {*gone, *(k for k, v in changed.items() if old.get(k, (None,))[0] != v[0])}
            remapped = self._remap({a for k, a in keys if k == "folder"}, {a for k, a in keys if k == "session"})
            projects = sorted({p for pair in remapped.values() for p in pair})
            if projects:
                self.conn.execute(
                    "UPDATE injection_cache SET built_from_event_id = %s WHERE tenant_id = %s AND project_id = ANY(%s)",
                    (STALE_PACKET, t, projects),
                )
        return remapped

    def _remap(self, folders: set[str], sessions: set[str]) -> dict[int, tuple[str, str]]:
        """Give the memories created in ``folders`` or ``sessions`` the project the aliases now assign."""
        if not folders and not sessions:
            return {}
        pmap = self._project_map()
        moved: dict[int, tuple[str, str]] = {}
        for memory_id, current, folder, session in self.conn.execute(
            "SELECT m.id, m.project_id, e.project_id, e.session_id FROM learning_events e "
            "JOIN memories m ON m.tenant_id = e.tenant_id AND m.id = e.event_id "
            "WHERE e.tenant_id = %s AND (e.project_id = ANY(%s) OR e.session_id = ANY(%s))",
            (self.tenant_id, sorted(folders), sorted(sessions)),
        ):
            wanted = pmap.of(folder, session)
            if wanted != current:
                moved[int(memory_id)] = (current, wanted)
        if moved:
            self.conn.cursor().executemany(
                "UPDATE memories SET project_id = %s WHERE tenant_id = %s AND id = %s",
                [(new, self.tenant_id, i) for i, (_, new) in moved.items()],
            )
        return moved
