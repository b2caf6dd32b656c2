"""Read the pipeline's prebuilt injection packets and record what was injected (standard library only).

The pipeline writes ``injection_cache`` rows (``scope`` 'project' keyed by ``project_id``, 'global' with
``project_id`` '*'); the hook only picks one, so the read path is a handful of indexed rows. Only plain
tables are touched: this interpreter's ``sqlite3`` cannot load sqlite-vec.

The project is the pipeline's canonical one for the session's cwd (:func:`resolve_project`: the alias
table, so worktrees and subdirectories of a repository share its packets). Selection rule (see
:func:`score`): among the project's unexpired, well-formed rows take the highest score
``3 x [built for this cwd] + 2 x [same branch] - 0.25 x [built for another branch] + |stack overlap| / |stack
union| + |shared terms| / |row terms|`` (a branch-agnostic row beats one for another branch; a row built for
another cwd of the project is never taken while another row is there), ties to the newest ``created_at``; with no
usable project row, the newest global row. Every ``source`` gets the same row; what of it a SessionStart
injects depends on the source (:mod:`resolver.inject`). Corrupt rows (bad JSON, NULL text) are
skipped, never fatal. Active interventions (project, global, and this session's), unexpired and out of
cooldown, highest priority first, are prepended as a short "Interventions" section.

Access records go to ``access_log`` in one ``BEGIN IMMEDIATE`` transaction with a 50 ms busy timeout. When
the database is locked or busy, they are appended to ``<data dir>/access-spool.jsonl`` instead, one JSON
object per injection: ``{"memory_ids": [...], "session_id", "project_id", "source", "accessed_at"}``. The
pipeline ingests that spool later (``nous_assets.reinforce.outcomes.ingest_access_spool``).
"""

from __future__ import annotations

import os

try:  # the C module itself: ``sqlite3`` adds only datetime adapters the hook never uses, and imports datetime
    import _sqlite3 as sqlite3
except ImportError:  # pragma: no cover - an interpreter without it
    import sqlite3

from resolver.hook_io import loads, now_iso

CONNECT_TIMEOUT_S = 0.05
SAME_CHECKOUT = 3.0  # a packet built for the session's own cwd beats any branch match
OTHER_CHECKOUT = -100.0  # a packet built for another cwd of the project: below every other row
MAX_INTERVENTIONS = 5
# Past this much WAL the hook's writer folds it back and truncates it. The first connection after all have closed
# (every hook, when the pipeline is idle) rebuilds the WAL index by reading every frame since the WAL last
# restarted, and only a checkpoint in the same process as the next write lets it restart (the rebuilt index
# forgets what was checkpointed), so without this the WAL of access records grows for good: at 13 MB (a few
# hundred sessions) each SessionStart took 30-50 ms to open the database, 1 ms after a truncating checkpoint.
WAL_TRUNCATE_BYTES = 512 * 1024
MAX_INTERVENTION_CHARS = 300
MAX_INTERVENTIONS_SECTION = 1_500


class Packet:
    """The context chosen for a session: text to inject and the memories it carries."""

    __slots__ = ("text", "memory_ids", "cache_key", "scope", "project_id", "score")

    def __init__(self, text: str, memory_ids: list[int], cache_key: str | None, scope: str, project_id: str,
                 score: float = 0.0) -> None:  # fmt: skip
        self.text = text
        self.memory_ids = memory_ids
        self.cache_key = cache_key
        self.scope = scope
        self.project_id = project_id
        self.score = score

    def __repr__(self) -> str:
        return f"Packet(cache_key={self.cache_key!r}, scope={self.scope!r}, memories={len(self.memory_ids)})"


def connect_readonly(db_path) -> sqlite3.Connection:
    """A read-only, query-only connection that waits at most 50 ms for a lock; raises if the file is missing."""
    path = os.fspath(db_path)
    if not os.path.isfile(path):
        raise FileNotFoundError(path)
    conn = sqlite3.connect(f"file:{_uri_path(path)}?mode=ro", uri=True, timeout=CONNECT_TIMEOUT_S)
    try:
        conn.execute("PRAGMA query_only = 1")
    except BaseException:
        conn.close()
        raise
    return conn


def best_packet(db_path, fingerprint: dict, source: str, *, session_id: str | None = None) -> Packet | None:
    """The packet to inject for ``fingerprint`` (see the module doc), or None when there is nothing to say.

    Raises ``sqlite3.Error``/``OSError`` on a missing or locked database; callers fail open.
    """
    now = now_iso()
    conn = connect_readonly(db_path)
    try:
        project_id = resolve_project(conn, fingerprint)
        rows = conn.execute(
            "SELECT cache_key, project_id, scope, fingerprint_json, packet_text, memory_ids_json, created_at "
            "FROM injection_cache WHERE ((scope = 'project' AND project_id = ?) "
            "OR (scope = 'global' AND project_id = '*')) AND (expires_at IS NULL OR expires_at >= ?)",
            (project_id, now),
        ).fetchall()
        interventions = _interventions(conn, project_id, session_id, now)
    finally:
        conn.close()
    best: tuple | None = None
    for cache_key, row_project, scope, fp_json, text, ids_json, created_at in rows:
        parsed = _parse_row(fp_json, text, ids_json)
        if parsed is None:
            continue
        row_fp, memory_ids = parsed
        rank = (1 if scope == "project" else 0, score(fingerprint, row_fp) if scope == "project" else 0.0,
                str(created_at or ""), str(cache_key))  # fmt: skip
        if best is None or rank > best[0]:
            best = (rank, Packet(text, memory_ids, cache_key, scope, row_project, rank[1]))
    packet = best[1] if best else None
    if interventions:
        section = _interventions_section(interventions)
        if packet is None:
            return Packet(section, [], None, "interventions", project_id)
        packet.text = section + "\n\n" + packet.text
    return packet


def resolve_project(conn: sqlite3.Connection, fingerprint: dict) -> str:
    """The session's project: the pipeline's alias for the fingerprint's cwd and repository, else the
    fingerprint's own ``project_id`` (see :func:`resolver.project.lookup`). Sets ``fingerprint["project_id"]``
    so the access log records the same project. Reads tables only; runs no process."""
    from resolver.project import lookup

    project_id = fingerprint.get("project_id") or ""
    cwd = fingerprint.get("cwd")
    if isinstance(cwd, str) and cwd:
        try:
            found = lookup(conn, cwd, fingerprint.get("repository"))
        except sqlite3.OperationalError:  # a database from before project aliases: the fingerprint's own id
            found = None
        project_id = found or project_id
    fingerprint["project_id"] = project_id
    return project_id


def score(fingerprint: dict, row_fingerprint: dict) -> float:
    """How well a cached packet's fingerprint fits the session's: branch 2 (-0.25 if another), stack and terms <= 1;
    a checkout's own packet (row ``cwd``) 3 for a session in that cwd, never chosen for another cwd."""
    total = 0.0
    row_cwd = row_fingerprint.get("cwd")
    if isinstance(row_cwd, str) and row_cwd:
        cwd = fingerprint.get("cwd")
        if not isinstance(cwd, str) or cwd.rstrip("/") != row_cwd.rstrip("/"):
            return OTHER_CHECKOUT
        total += SAME_CHECKOUT
    branch = fingerprint.get("branch")
    row_branch = row_fingerprint.get("branch")
    if branch and row_branch == branch:
        total += 2.0
    elif row_branch:
        total -= 0.25
    mine, theirs = _string_set(fingerprint.get("stack")), _string_set(row_fingerprint.get("stack"))
    if mine and theirs:
        total += len(mine & theirs) / len(mine | theirs)
    mine, theirs = _string_set(fingerprint.get("terms")), _string_set(row_fingerprint.get("terms"))
    if mine and theirs:
        total += len(mine & theirs) / len(theirs)
    return total


def already_injected(db_path, session_id: str, memory_ids: list[int]) -> bool:
    """Whether every one of ``memory_ids`` is already in ``access_log`` for this session."""
    wanted = {i for i in memory_ids if isinstance(i, int)}
    if not wanted:
        return True
    conn = connect_readonly(db_path)
    try:
        seen = {row[0] for row in conn.execute("SELECT memory_id FROM access_log WHERE session_id = ?", (session_id,))}
    finally:
        conn.close()
    return wanted <= seen


def injected_ids(db_path, session_ids) -> set[int]:
    """The memories ``access_log`` records as injected into any of ``session_ids`` (a resumed or forked session's
    history: see :mod:`resolver.inject`)."""
    wanted = [s for s in session_ids if isinstance(s, str) and s]
    if not wanted:
        return set()
    conn = connect_readonly(db_path)
    try:
        marks = ",".join("?" * len(wanted))
        rows = conn.execute(f"SELECT DISTINCT memory_id FROM access_log WHERE session_id IN ({marks})", wanted)
        return {row[0] for row in rows if isinstance(row[0], int)}
    finally:
        conn.close()


def log_access(db_path, memory_ids: list[int], session_id: str, project_id: str, source: str) -> str:
    """Record that ``memory_ids`` were injected; returns 'db', 'spool' or 'none' (nothing to record).

    Never waits more than ~50 ms on a lock: a locked or busy database sends the records to the spool file.
    """
    ids = [i for i in memory_ids if isinstance(i, int) and not isinstance(i, bool)]
    if not ids:
        return "none"
    accessed_at = now_iso()
    try:
        _insert_access(os.fspath(db_path), [(i, session_id, project_id, source, accessed_at) for i in ids])
        return "db"
    except sqlite3.OperationalError as exc:
        message = str(exc).lower()
        if "locked" not in message and "busy" not in message:
            raise
    record = {"memory_ids": ids, "session_id": session_id, "project_id": project_id, "source": source,
              "accessed_at": accessed_at}  # fmt: skip
    import json  # only when the database is busy

    _spool(json.dumps(record) + "\n")
    return "spool"


def spool_path() -> str:
    """``<data dir>/access-spool.jsonl`` (see :mod:`resolver.paths`)."""
    from resolver import paths

    return os.path.join(paths.data_dir_str(), paths.SPOOL_NAME)


def _insert_access(path: str, rows: list[tuple]) -> None:
    # A second read-only connection stays open while the writer closes, so the writer is never the
    # "last connection" that checkpoints the WAL on close (a read-only connection never checkpoints).
    pin = connect_readonly(path)
    try:
        pin.execute("PRAGMA user_version").fetchall()  # a read: takes the WAL-mode shared lock, skips the schema
        conn = sqlite3.connect(f"file:{_uri_path(path)}?mode=rw", uri=True, timeout=CONNECT_TIMEOUT_S,
                               isolation_level=None)  # fmt: skip
        try:
            conn.execute("PRAGMA wal_autocheckpoint = 0")  # none per commit: see WAL_TRUNCATE_BYTES
            conn.execute("PRAGMA synchronous = NORMAL")  # WAL: no fsync per commit (the pipeline's setting too)
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    "INSERT INTO access_log(memory_id, session_id, project_id, source, accessed_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            if _wal_bytes(path) > WAL_TRUNCATE_BYTES:  # a busy reader makes it a no-op (50 ms at most), not an error
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            conn.close()
    finally:
        pin.close()


def _wal_bytes(path: str) -> int:
    try:
        return os.stat(path + "-wal").st_size
    except OSError:
        return 0


def _spool(line: str) -> None:
    path = spool_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))  # one O_APPEND write: lines from parallel hooks don't interleave
    finally:
        os.close(fd)


def _uri_path(path: str) -> str:
    return os.path.abspath(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def _parse_row(fp_json, text, ids_json) -> tuple[dict, list[int]] | None:
    """(fingerprint, memory ids) of a well-formed row, None for a corrupt one."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        row_fp = loads(fp_json) if fp_json else {}
        ids = loads(ids_json)
    except (TypeError, ValueError):
        return None
    if not isinstance(row_fp, dict) or not isinstance(ids, list):
        return None
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        return None
    return row_fp, ids


def _string_set(value) -> set[str]:
    if not isinstance(value, list):
        return set()
    return {v.lower() for v in value if isinstance(v, str)}


def _interventions(conn: sqlite3.Connection, project_id: str, session_id: str | None, now: str) -> list[str]:
    try:
        rows = conn.execute(
            "SELECT payload_text FROM active_interventions WHERE expires_at > ? "
            "AND (cooldown_until IS NULL OR cooldown_until <= ?) AND ("
            "scope = 'global' OR (scope = 'project' AND target_project_id = ?) "
            "OR (scope = 'session' AND target_session_id = ?)) "
            "ORDER BY priority DESC, updated_at DESC LIMIT ?",
            (now, now, project_id, session_id or "", MAX_INTERVENTIONS),
        ).fetchall()
    except sqlite3.DatabaseError:  # an older schema without the table: no interventions
        return []
    texts = []
    for (text,) in rows:
        if isinstance(text, str) and text.strip():
            line = " ".join(text.split())
            texts.append(line if len(line) <= MAX_INTERVENTION_CHARS else line[: MAX_INTERVENTION_CHARS - 1] + "…")
    return texts


def _interventions_section(texts: list[str]) -> str:
    lines = ["## Interventions"]
    size = len(lines[0])
    for text in texts:
        line = f"- {text}"
        if size + 1 + len(line) > MAX_INTERVENTIONS_SECTION:
            break
        lines.append(line)
        size += 1 + len(line)
    return "\n".join(lines)
