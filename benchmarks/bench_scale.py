"""Scale benchmark: many tenants' memories in one PostgreSQL + pgvector database (issue 12, deliverable 6).

Default size: 1,000,000 memories over 100 tenants (10,000 each), created the honest way: valid learning
events appended in batches through each tenant's ``EventStore``, projected by its ``ProjectionStore``, and
384-dimensional vectors written through its ``VectorStore`` (the HNSW index is built once after the load,
which is how a bulk load is done, and timed as its own phase). Then, for a sample of tenants: KNN (tenant
filter inside the index scan) with its recall@10 against exact search over that tenant's vectors, full-text
search, and a hybrid lookup; then the database size, and last the replay (a full projection rebuild) of one
tenant and of every tenant. A tenant with only 10 memories is added after the index build to show that a
small tenant next to big ones still gets its k nearest.

The vectors are SYNTHETIC: MiniLM embeds ~30 texts/s here, so 1M real embeddings would take nine hours.
They have a realistic structure instead: a few hundred shared cluster centres ("topics"), each memory a
centre plus Gaussian noise, unit length; a query is one of the tenant's memories moved by a random offset
of length 0.5 (cosine about 0.9 to that memory). Texts are drawn from a
Zipf-distributed synthetic vocabulary, so a full-text query word matches a realistic fraction of rows
(queries skip the 100 most frequent words, as the English parser skips stop words).

PostgreSQL is the embedded server (started here on 127.0.0.1 with memory sized for the load, deleted at the
end) unless ``--dsn`` names one; that should be an empty database (its rows stay, under tenants named
``scale-<run id>-…``, and an HNSW index that already exists makes the "index build" phase measure nothing).

Prints each figure as it is measured and saves them all to ``benchmarks/results/scale-<time>.json``; the
server's memory is read from /proc (embedded server only).

    python benchmarks/bench_scale.py [--tenants 100] [--per-tenant 10000] [--dsn postgresql://…]
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np

from nous_assets.store.backend import Backend, postgres_backend
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.pg.vectors import PgVectorStore, ensure_index

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests/support: dev-only helpers shared with the tests, not in the wheel
DIMS = 384
MODEL = "synthetic-384"
AT = "2026-01-01T00:00:00.000000Z"
RRF_K = 60
STOP_RANKS = 100


def _ms(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)) * 1000, 2)


def _timed(fn: Callable, *args, **kwargs) -> tuple[object, float]:
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


class Vocabulary:
    """Synthetic words with Zipf frequencies (rank r drawn with weight 1/r), so texts look like text to FTS."""

    SYLLABLES = "ka lo mi ne su ta re po vi da fe go hu ji ba co ru xe ly zo an el in os ur".split()

    def __init__(self, size: int, seed: int) -> None:
        rng = random.Random(seed)
        words: set[str] = set()
        while len(words) < size:
            words.add("".join(rng.choices(self.SYLLABLES, k=rng.randint(2, 4))))
        self.words = sorted(words)
        rng.shuffle(self.words)
        self.cum_weights = list(itertools.accumulate(1.0 / (r + 1) for r in range(size)))
        self.query_cum_weights = list(itertools.accumulate(1.0 / (r + 1) for r in range(STOP_RANKS, size)))

    def sample(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum_weights, k=k)

    def query(self, rng: random.Random, k: int) -> str:
        """``k`` query words, Zipf-distributed below the ``STOP_RANKS`` most frequent words: those play the
        part of English stop words, which the full-text parser drops from real queries."""
        words = rng.choices(self.words[STOP_RANKS:], cum_weights=self.query_cum_weights, k=k)
        return " ".join(words)


def tenant_events(tenant: int, per_tenant: int, vocab: Vocabulary, lifecycle: float) -> list[LearningEvent]:
    """``per_tenant`` extractions plus ``lifecycle`` x as many reinforce/weaken/validate events on them."""
    rng = random.Random(tenant)
    out: list[LearningEvent] = []
    lids: list[str] = []
    for i in range(per_tenant):
        lid, session = f"L{tenant}-{i}", f"s{tenant}-{i // 50}"
        payload = {
            "content": " ".join(vocab.sample(rng, rng.randint(12, 30))),
            "extractor_version": "bench-scale-1",
            "concepts": sorted(set(vocab.sample(rng, 3))),
            "edges": [{"target": rng.choice(lids), "rel_type": "relates_to", "weight": 0.5}]
            if lids and rng.random() < 0.2
            else [],
        }
        out.append(LearningEvent("LearningExtracted", lid, payload, session, f"proj-{i % 7}", "historical_backfill",
                                 f"x-{lid}", valid_from="2026-01-01", vector_clock={session: i + 1}))  # fmt: skip
        lids.append(lid)
        if rng.random() < lifecycle:
            target = rng.choice(lids)
            kind, body = rng.choice([
                ("LearningReinforced", {"reinforcement_delta": 0.1}),
                ("LearningWeakened", {"reinforcement_delta": -0.1}),
                ("LearningValidated", {}),
            ])  # fmt: skip
            out.append(LearningEvent(kind, target, body, session, f"proj-{i % 7}", "user_review", f"l-{lid}"))
    return out


def tenant_vectors(ids: list[int], centres: np.ndarray, seed: int, noise: float) -> np.ndarray:
    """One unit vector per memory: a random shared centre plus noise."""
    rng = np.random.default_rng(seed)
    vecs = centres[rng.integers(0, len(centres), len(ids))] + noise * rng.normal(size=(len(ids), DIMS))
    vecs = vecs.astype(np.float32)
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


class ServerMemory:
    """Peak resident memory of the embedded server: the postmaster and its children, from /proc."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid
        self.peak_total_mb = 0.0
        self.peak_process_mb = 0.0

    def _processes(self) -> list[Path]:
        if self.pid is None:
            return []
        found = [Path(f"/proc/{self.pid}")]
        for status in Path("/proc").glob("[0-9]*/status"):
            try:
                if f"\nPPid:\t{self.pid}\n" in status.read_text():
                    found.append(status.parent)
            except OSError:
                continue
        return found

    def sample(self) -> None:
        total = 0.0
        for proc in self._processes():
            try:
                fields = dict(line.split(":", 1) for line in (proc / "status").read_text().splitlines() if ":" in line)
            except OSError:
                continue
            rss = int(fields.get("VmRSS", "0 kB").split()[0]) / 1024
            hwm = int(fields.get("VmHWM", "0 kB").split()[0]) / 1024
            total += rss
            self.peak_process_mb = max(self.peak_process_mb, hwm)
        self.peak_total_mb = max(self.peak_total_mb, total)

    def figures(self) -> dict:
        if self.pid is None:
            return {"server_memory": "not read (--dsn: the server is not a local child process)"}
        return {
            "server_peak_rss_sum_mb": round(self.peak_total_mb),
            "server_peak_process_hwm_mb": round(self.peak_process_mb),
            "server_memory_note": "sum of VmRSS over postmaster + children sampled at phase ends (shared "
            "buffers count once per process that touched them); largest single-process VmHWM",
        }


class Run:
    """One benchmark run over one database."""

    def __init__(self, args: argparse.Namespace, dsn: str, memory: ServerMemory) -> None:
        from nous_assets.store.pg.db import open_pg

        self.args = args
        self.conn = open_pg(dsn)
        self.memory = memory
        self.prefix = f"scale-{uuid.uuid4().hex[:6]}"
        self.tenants = [f"{self.prefix}-{t:03d}" for t in range(args.tenants)]
        self.vocab = Vocabulary(args.vocabulary, seed=1)
        self.centres = np.random.default_rng(2).normal(size=(args.clusters, DIMS)).astype(np.float32)
        self.results: dict = {}

    def backend(self, tenant: str) -> Backend:
        return postgres_backend(self.conn, tenant)

    def record(self, phase: str, figures: dict) -> None:
        self.memory.sample()
        self.results[phase] = figures
        say(f"{phase}: {json.dumps(figures)}")

    def load(self) -> None:
        """Append every tenant's events in batches through its EventStore."""
        total, seconds = 0, 0.0
        for n, tenant in enumerate(self.tenants):
            events = tenant_events(n, self.args.per_tenant, self.vocab, self.args.lifecycle)
            store = self.backend(tenant).events
            t = time.perf_counter()
            for i in range(0, len(events), self.args.batch):
                store.append_many(events[i : i + self.args.batch])
            seconds += time.perf_counter() - t
            total += len(events)
            if (n + 1) % max(1, len(self.tenants) // 10) == 0:
                say(f"  appended {total:,} events ({n + 1} tenants, {total / seconds:,.0f} events/s)")
        self.record("load", {"events": total, "seconds": round(seconds, 1), "events_per_s": round(total / seconds),
                             "batch": self.args.batch, "note": "event generation time excluded"})  # fmt: skip

    def project(self) -> None:
        total, t = 0, time.perf_counter()
        for tenant in self.tenants:
            total += self.backend(tenant).projection.project().events
        seconds = time.perf_counter() - t
        memories = self.conn.execute("SELECT count(*) FROM memories WHERE tenant_id LIKE %s",
                                     (f"{self.prefix}-%",)).fetchone()[0]  # fmt: skip
        self.record("projection", {"events": total, "seconds": round(seconds, 1),
                                   "events_per_s": round(total / seconds), "memories": memories})  # fmt: skip

    def tenant_ids(self, tenant: str) -> list[int]:
        return [r[0] for r in self.conn.execute("SELECT id FROM memories WHERE tenant_id = %s ORDER BY id", (tenant,))]

    def vectors(self) -> None:
        """Vectors through each tenant's VectorStore (index deferred), then one HNSW build."""
        total, seconds = 0, 0.0
        for n, tenant in enumerate(self.tenants):
            ids = self.tenant_ids(tenant)
            vecs = tenant_vectors(ids, self.centres, seed=1000 + n, noise=self.args.noise)
            store = PgVectorStore(self.conn, tenant, index_on_upsert=False)
            t = time.perf_counter()
            for s in range(0, len(ids), self.args.batch):
                chunk = ids[s : s + self.args.batch]
                store.upsert(dict(zip(chunk, vecs[s : s + self.args.batch], strict=True)), model=MODEL,
                             content_hashes=dict.fromkeys(chunk, "h"), at=AT)  # fmt: skip
            seconds += time.perf_counter() - t
            total += len(ids)
            if (n + 1) % max(1, len(self.tenants) // 10) == 0:
                say(f"  upserted {total:,} vectors ({total / seconds:,.0f}/s)")
        self.record("vector_load", {"vectors": total, "seconds": round(seconds, 1),
                                    "vectors_per_s": round(total / seconds)})  # fmt: skip
        t = time.perf_counter()
        with self.conn.transaction():
            self.conn.execute(f"SET LOCAL maintenance_work_mem = '{self.args.maintenance_work_mem}'")
            ensure_index(self.conn, DIMS)
        build_s = time.perf_counter() - t
        _, analyze_s = _timed(self.conn.execute, "ANALYZE memory_vectors")
        self.record("index_build", {"hnsw_build_seconds": round(build_s, 1), "analyze_seconds": round(analyze_s, 1),
                                    "maintenance_work_mem": self.args.maintenance_work_mem,
                                    "partitions": 64})  # fmt: skip

    def tiny_tenant(self) -> str:
        """A tenant with 10 memories, added after the index exists (its vectors go in through the index)."""
        tenant = f"{self.prefix}-tiny"
        b = self.backend(tenant)
        b.events.append_many(tenant_events(10_000, 10, self.vocab, 0.0))
        b.projection.project()
        ids = self.tenant_ids(tenant)
        vecs = tenant_vectors(ids, self.centres, seed=99, noise=self.args.noise)
        b.vectors.upsert(dict(zip(ids, vecs, strict=True)), model=MODEL, content_hashes=dict.fromkeys(ids, "h"),
                         at=AT)  # fmt: skip
        return tenant

    def samples(self) -> list[tuple[str, np.ndarray, np.ndarray, list[np.ndarray], list[str]]]:
        """(tenant, ids, vectors, query vectors, query words) of the sampled tenants, the same for every layout."""
        if hasattr(self, "_samples"):
            return self._samples
        step = max(1, len(self.tenants) // self.args.sample_tenants)
        rng, prng = np.random.default_rng(5), random.Random(5)
        self._samples = []
        for tenant in self.tenants[::step][: self.args.sample_tenants]:
            rows = self.conn.execute("SELECT memory_id, embedding FROM memory_vectors WHERE tenant_id = %s "
                                     "ORDER BY memory_id", (tenant,)).fetchall()  # fmt: skip
            ids = np.array([r[0] for r in rows])
            matrix = np.stack([r[1].to_numpy().astype(np.float32) for r in rows])
            queries = []
            for _ in range(self.args.queries):
                noise = rng.normal(size=DIMS).astype(np.float32)
                q = matrix[rng.integers(len(ids))] + self.args.query_noise * noise / np.linalg.norm(noise)
                queries.append(q / np.linalg.norm(q))
            words = [self.vocab.query(prng, 2) for _ in queries]
            self._samples.append((tenant, ids, matrix, queries, words))
        return self._samples

    @staticmethod
    def _recall(ids: np.ndarray, matrix: np.ndarray, q: np.ndarray, hits: list[int]) -> float:
        exact = set(ids[np.argsort(-(matrix @ q), kind="stable")[:10]].tolist())
        return len(exact & set(hits)) / 10

    def search(self) -> None:
        """Per-tenant KNN, full-text and hybrid latency; KNN recall@10 against exact search in the tenant."""
        knn, fts, hybrid, recall, per_tenant_p95 = [], [], [], [], {}
        samples = self.samples()
        for tenant, ids, matrix, queries, words in samples:
            b = self.backend(tenant)
            mine = []
            for q, text in zip(queries, words, strict=True):
                hits, seconds = _timed(b.vectors.search, q, 10, model=MODEL)
                knn.append(seconds)
                mine.append(seconds)
                recall.append(self._recall(ids, matrix, q, [h for h, _ in hits]))
                fts.append(_timed(b.projection.search_text, text, 10)[1])
                hybrid.append(_timed(self._hybrid, b, text, q)[1])
            per_tenant_p95[tenant] = _ms(mine, 95)
        tiny = self._tiny_recall()
        self.record("search", {
            "tenants_sampled": len(samples), "queries_per_tenant": self.args.queries, "k": 10,
            "knn_p50_ms": _ms(knn, 50), "knn_p95_ms": _ms(knn, 95),
            "knn_worst_tenant_p95_ms": max(per_tenant_p95.values()),
            "knn_recall_at_10": round(statistics.mean(recall), 4), "knn_recall_at_10_min": min(recall),
            "fts_p50_ms": _ms(fts, 50), "fts_p95_ms": _ms(fts, 95),
            "hybrid_p50_ms": _ms(hybrid, 50), "hybrid_p95_ms": _ms(hybrid, 95),
            "hybrid_note": "the protocols have no hybrid call: timed as a retriever does it, full-text top 50 + "
                           "KNN top 50 fused by reciprocal rank (k=60), top 10 kept",
            **tiny,
        })  # fmt: skip

    def compare_global(self) -> None:
        """The layout before migration 004, measured on the same rows and queries: one unpartitioned table, one
        global HNSW index, the tenant filter in pgvector's iterative scan (strict order, ef_search 100)."""
        q = self.conn.execute
        t = time.perf_counter()
        q("CREATE TABLE bench_global_vectors AS SELECT tenant_id, memory_id, dimensions, model, embedding "
          "FROM memory_vectors WHERE tenant_id LIKE %s", (f"{self.prefix}-%",))  # fmt: skip
        copy_s = time.perf_counter() - t
        t = time.perf_counter()
        with self.conn.transaction():
            q(f"SET LOCAL maintenance_work_mem = '{self.args.maintenance_work_mem}'")
            q(f"CREATE INDEX bench_global_hnsw ON bench_global_vectors USING hnsw ((embedding::vector({DIMS})) "
              f"vector_cosine_ops) WHERE dimensions = {DIMS}")  # fmt: skip
        build_s = time.perf_counter() - t
        q("ANALYZE bench_global_vectors")
        knn, recall, short = [], [], 0
        for tenant, ids, matrix, queries, _ in self.samples():
            for vec in queries:
                with self.conn.transaction():
                    q("SET LOCAL hnsw.iterative_scan = strict_order")
                    q("SET LOCAL hnsw.ef_search = 100")
                    rows, seconds = _timed(lambda v=vec, tn=tenant: q(
                        f"SELECT memory_id FROM bench_global_vectors WHERE tenant_id = %s AND dimensions = {DIMS} "
                        f"AND model = %s ORDER BY embedding::vector({DIMS}) <=> %s::vector({DIMS}) LIMIT 10",
                        (tn, MODEL, v)).fetchall())  # fmt: skip
                knn.append(seconds)
                short += len(rows) < 10
                recall.append(self._recall(ids, matrix, vec, [r[0] for r in rows]))
        q("DROP TABLE bench_global_vectors")
        self.record("global_index_before_004", {
            "copy_seconds": round(copy_s, 1), "hnsw_build_seconds": round(build_s, 1),
            "knn_p50_ms": _ms(knn, 50), "knn_p95_ms": _ms(knn, 95),
            "knn_recall_at_10": round(statistics.mean(recall), 4), "knn_recall_at_10_min": min(recall),
            "queries_with_fewer_than_10": short,
        })  # fmt: skip

    @staticmethod
    def _hybrid(b: Backend, words: str, q: np.ndarray) -> list[int]:
        scores: dict[int, float] = {}
        ranked = (b.projection.search_text(words, 50), [i for i, _ in b.vectors.search(q, 50, model=MODEL)])
        for ranking in ranked:
            for rank, mid in enumerate(ranking):
                scores[mid] = scores.get(mid, 0.0) + 1.0 / (RRF_K + rank + 1)
        return sorted(scores, key=lambda m: (-scores[m], m))[:10]

    def _tiny_recall(self) -> dict:
        tenant = self.tiny_tenant()
        b = self.backend(tenant)
        rows = self.conn.execute("SELECT memory_id, embedding FROM memory_vectors WHERE tenant_id = %s",
                                 (tenant,)).fetchall()  # fmt: skip
        q = rows[0][1].to_numpy().astype(np.float32)
        hits = b.vectors.search(q, 10, model=MODEL)
        return {"tiny_tenant_vectors": len(rows), "tiny_tenant_knn_hits": len(hits),
                "tiny_tenant_recall": len({h for h, _ in hits} & {r[0] for r in rows}) / len(rows)}  # fmt: skip

    def sizes(self) -> None:
        q = self.conn.execute
        size = {name: round(q(f"SELECT {expr}").fetchone()[0] / 2**20) for name, expr in (
            ("database_mb", "pg_database_size(current_database())"),
            ("learning_events_mb", "pg_total_relation_size('learning_events')"),
            ("memories_mb", "pg_total_relation_size('memories')"),
            ("concepts_mb", "pg_total_relation_size('concepts')"),
            ("edges_mb", "pg_total_relation_size('edges')"),
        )}  # fmt: skip
        vectors = q("SELECT coalesce(sum(pg_table_size(inhrelid)), 0), coalesce(sum(pg_indexes_size(inhrelid)), 0) "
                    "FROM pg_inherits WHERE inhparent = 'memory_vectors'::regclass").fetchone()  # fmt: skip
        size["memory_vectors_table_mb"] = round(vectors[0] / 2**20)
        size["memory_vectors_indexes_mb"] = round(vectors[1] / 2**20)
        self.record("size", size)

    def replay(self) -> None:
        """Full projection rebuild, tenant by tenant (each one transaction); the first is the one-tenant figure."""
        times, events = [], 0
        before = self.backend(self.tenants[0]).projection.snapshot()
        for n, tenant in enumerate(self.tenants):
            stats, seconds = _timed(self.backend(tenant).projection.rebuild)
            times.append(seconds)
            events += stats.events
            if (n + 1) % max(1, len(self.tenants) // 10) == 0:
                say(f"  rebuilt {n + 1} tenants ({sum(times):.0f} s)")
        same = self.backend(self.tenants[0]).projection.snapshot() == before
        self.record("replay", {
            "one_tenant_seconds": round(times[0], 2), "one_tenant_median_seconds": round(statistics.median(times), 2),
            "one_tenant_max_seconds": round(max(times), 2), "all_tenants_seconds": round(sum(times), 1),
            "events": events, "events_per_s": round(events / sum(times)), "first_tenant_snapshot_identical": same,
        })  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", type=int, default=100, help="tenants sharing the database (default 100)")
    parser.add_argument("--per-tenant", type=int, default=10_000, help="memories per tenant (default 10,000)")
    parser.add_argument("--lifecycle", type=float, default=0.2, help="lifecycle events per extraction (default 0.2)")
    parser.add_argument("--batch", type=int, default=1000, help="events (and vectors) per append batch")
    parser.add_argument("--clusters", type=int, default=300, help="cluster centres of the synthetic vectors")
    parser.add_argument("--noise", type=float, default=0.6, help="per-dimension noise around a centre")
    parser.add_argument("--query-noise", type=float, default=0.5,
                        help="length of the random offset from a (unit) memory vector to its query (default 0.5)")
    parser.add_argument("--vocabulary", type=int, default=20_000, help="synthetic words (Zipf frequencies)")
    parser.add_argument("--sample-tenants", type=int, default=20, help="tenants searched")
    parser.add_argument("--queries", type=int, default=20, help="queries per sampled tenant")
    parser.add_argument("--maintenance-work-mem", default="2GB", help="memory for the HNSW build")
    parser.add_argument("--dsn", help="an existing PostgreSQL (default: start the embedded one)")
    parser.add_argument("--compare-global", action="store_true",
                        help="also measure the pre-004 layout (one global HNSW index) on the same rows and queries")
    args = parser.parse_args()
    started = time.perf_counter()
    results: dict = {
        "machine": platform.machine(), "python": platform.python_version(), "tenants": args.tenants,
        "per_tenant": args.per_tenant, "memories": args.tenants * args.per_tenant, "dims": DIMS,
        "vectors": f"SYNTHETIC: {args.clusters} cluster centres + Gaussian noise {args.noise}, unit length "
                   "(MiniLM at ~30 texts/s cannot embed 1M texts here)",
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }  # fmt: skip
    say(results["vectors"])
    server = None
    dsn = args.dsn
    if dsn is None:
        from tests.support import embedded_pg as embedded

        server = embedded.start(settings={"shared_buffers": "2GB", "max_wal_size": "8GB", "work_mem": "64MB"})
        dsn = server.dsn()
        results["server"] = "embedded, shared_buffers 2GB, fsync off"
    try:
        run = Run(args, dsn, ServerMemory(server.pid() if server else None))
        results["postgres"] = run.conn.execute("SHOW server_version").fetchone()[0]
        results["pgvector"] = run.conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'"
                                               ).fetchone()[0]  # fmt: skip
        try:
            phases = [run.load, run.project, run.vectors, run.search, run.sizes]
            for phase in [*phases, *([run.compare_global] if args.compare_global else []), run.replay]:
                phase()
        finally:
            results.update(run.results)
            results.update(run.memory.figures())
            results["total_seconds"] = round(time.perf_counter() - started, 1)
            out_dir = Path(__file__).parent / "results"
            out_dir.mkdir(exist_ok=True)
            path = out_dir / f"scale-{time.strftime('%Y%m%dT%H%M%S')}.json"
            path.write_text(json.dumps(results, indent=2))
            say(f"saved {path}")
            run.conn.close()
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
