"""Multi-client correctness on both backends: clients that deliver the same events at least once, in any
order and at the same time, leave each event stored exactly once; projectors running at the same time
apply each event once, so the projection equals a rebuild from the log."""

from __future__ import annotations

import random
import threading

from eventgen import extracted, lifecycle

from nous_assets.store.backend import postgres_backend, sqlite_backend
from nous_assets.store.db import open_db


def _events() -> list:
    events = [extracted(f"L{i}", f"learning {i}", key=f"x{i}", concepts=[f"c{i % 3}"]) for i in range(12)]
    events += [lifecycle("LearningReinforced", f"L{i}", {"reinforcement_delta": 0.1}, key=f"r{i}") for i in range(12)]
    return events


def _clients(make_backend, request, n: int) -> list:
    first = make_backend("a")
    if first.capabilities.local_file:  # each writer its own connection to the same file
        path = request.getfixturevalue("tmp_path") / "cortex-a.db"
        return [first] + [sqlite_backend(open_db(path)) for _ in range(n - 1)]
    from nous_assets.store.pg.db import open_pg

    dsn = request.getfixturevalue("pg_server").dsn()
    return [first] + [postgres_backend(open_pg(dsn), first.tenant_id) for _ in range(n - 1)]


def test_concurrent_at_least_once_delivery_is_effectively_once(make_backend, request):
    clients = _clients(make_backend, request, 4)
    events = _events()
    errors: list[BaseException] = []

    def deliver(client, seed: int) -> None:
        try:
            mine = events[:]
            random.Random(seed).shuffle(mine)
            # extractions first (a lifecycle event needs its learning), each in small batches, some twice
            mine.sort(key=lambda e: e.event_type != "LearningExtracted")
            for i in range(0, len(mine), 5):
                client.events.append_many(mine[i : i + 5] + mine[i : i + 1])
                client.projection.project(batch_size=3)
        except BaseException as exc:  # surfaced below: a thread's failure must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=deliver, args=(c, n)) for n, c in enumerate(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    owner = clients[0]
    stored = list(owner.events.replay(0))
    assert sorted(e.idempotency_key for e in stored) == sorted(e.idempotency_key for e in events)
    owner.projection.project()
    live = owner.projection.snapshot()
    assert len(live["memories"]) == 12
    owner.projection.rebuild()
    assert owner.projection.snapshot() == live
    for client in clients[1:]:
        client.close()
