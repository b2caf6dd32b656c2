"""Two processes appending at once lose nothing and duplicate nothing (WAL + BEGIN IMMEDIATE + unique keys)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project, verify

WRITER = textwrap.dedent(
    """
    import json, sys
    from nous_assets.store.db import open_db
    from nous_assets.store.sqlite.events import SqliteEventStore
    from nous_assets.store.log.events import LearningEvent

    db, name, out = sys.argv[1], sys.argv[2], sys.argv[3]
    conn = open_db(db)
    store = SqliteEventStore(conn)

    def ev(lid, key):
        return LearningEvent("LearningExtracted", lid, {"content": "learning " + lid, "extractor_version": "t",
                             "concepts": ["c"], "edges": []}, "s-" + name, "p", "fs_watch", key)

    results = []
    events = []
    for i in range(5000):
        if i % 5 == 0:   # 1,000 keys shared with the other writer
            events.append(ev(f"shared-{i}", f"shared-{i}"))
        else:
            events.append(ev(f"{name}-{i}", f"{name}-{i}"))
    i = 0
    while i < len(events):   # alternate single appends and batches of 50
        batch = events[i:i + (1 if (i // 50) % 2 == 0 else 50)]
        for r in store.append_many(batch):
            results.append([r.event.idempotency_key, r.event.event_id, r.created])
        i += len(batch)
    json.dump(results, open(out, "w"))
    """
)


def test_two_processes_append_concurrently_without_loss_or_duplicates(tmp_path, conn, db_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    outs = [tmp_path / "a.json", tmp_path / "b.json"]
    procs = [
        subprocess.Popen([sys.executable, str(script), str(db_path), name, str(out)])
        for name, out in zip(("a", "b"), outs, strict=True)
    ]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    results = [json.loads(o.read_text()) for o in outs]

    rows = conn.execute("SELECT idempotency_key, event_id FROM learning_events").fetchall()
    keys = [r[0] for r in rows]
    assert len(keys) == len(set(keys)) == 2 * 4000 + 1000
    stored = dict(rows)
    for res in results:
        assert len(res) == 5000
        assert all(stored[key] == event_id for key, event_id, _ in res)  # everyone got the stored event back
    created = [key for res in results for key, _, was_created in res if was_created]
    assert len(created) == len(set(created)) == 9000  # each shared key created by exactly one writer
    assert sum(1 for k in created if k.startswith("shared-")) == 1000
    assert SqliteEventStore(conn).last_event_id() == 9000  # no gaps from rolled-back writes

    project(conn)
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 9000
    assert verify(conn).ok
