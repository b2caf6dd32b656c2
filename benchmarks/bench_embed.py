"""Chunk-embedding throughput, lever by lever: where one pass over a chunk backlog spends its time.

Builds the episodic chunks of ``../shared/data/transcripts`` (``--copies`` times, each copy its own chunks)
in a scratch cortex.db, then embeds the whole backlog once per configuration on a fresh copy of that db:

* ``id-order``: batches in id order, as before issue 11 (sentence-transformers sorts within a batch only, so
  one long chunk pads the whole batch);
* ``length-order``: :func:`~nous_assets.embed.chunk_embedding.embed_pending_chunks`, the backlog sorted by
  length, writes batched, chunks with fewer than ``embed.min_words`` words skipped;

each at the precisions asked for. Per configuration it prints chunks per second, tokens per chunk (as the
model sees them, truncated at 256), the padding overhead (tokens computed / real tokens), and the split of
wall time between the model and everything else (SQLite reads and writes, Python), with the load average
(the machine is shared). Figures are saved to ``benchmarks/results/embed-<time>.json``.

    python benchmarks/bench_embed.py [--copies 1] [--limit 1200] [--precisions float32,bfloat16,int8]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from results_file import save

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "transcripts"


def build_db(path: Path, copies: int, limit: int | None) -> int:
    """A cortex.db holding the chunks of the shared transcripts, ``copies`` times; returns the chunk count."""
    from dataclasses import replace

    from nous_assets.capture.parser import parse_chunk
    from nous_assets.embed.chunk_embedding import upsert_chunks
    from nous_assets.store.db import open_db

    turns = []
    for p in sorted(SHARED.rglob("*.jsonl")):
        if p.name != "sample_hook_logs.jsonl":
            turns += parse_chunk(p.read_bytes(), base_offset=0, path=str(p), project_id=p.parent.name).turns
    conn = open_db(path, create=True)
    for i in range(copies):
        upsert_chunks(conn, [replace(t, uuid=f"{t.uuid}-{i}", text=t.text) for t in turns])
    if limit:
        conn.execute("DELETE FROM transcript_chunks WHERE id > (SELECT id FROM transcript_chunks ORDER BY id LIMIT 1 "
                     "OFFSET ?)", (limit - 1,))  # fmt: skip
        conn.commit()
    count = int(conn.execute("SELECT count(*) FROM transcript_chunks").fetchone()[0])
    conn.close()
    return count


def embed_in_id_order(conn, provider, batch_size: int) -> int:
    """The pre-issue-11 pass: batches of pending chunks in id order, whatever their lengths."""
    from nous_assets.embed.enrich import content_hash
    from nous_assets.store.db import atomic
    from nous_assets.store.search import chunk_vectors as table
    from nous_assets.timeutil import now_iso

    model, dims = provider.model, provider.dimensions
    done = 0
    while batch := table.pending_texts(conn, model, dims, batch_size):
        vectors = provider.embed([t for _, t in batch])
        rows = [(i, v.tobytes(), content_hash(t, model, dims)) for (i, t), v in zip(batch, vectors, strict=True)]
        with atomic(conn):
            table.put_many(conn, rows, model, dims, now_iso())
        done += len(batch)
    return done


class Timed:
    """Wraps a provider: model seconds, real and padded token counts of what it was asked to embed."""

    def __init__(self, provider) -> None:
        from nous_assets.embed.local import load_model

        self.provider, self.model, self.dimensions = provider, provider.model, provider.dimensions
        self.tokenizer = load_model(provider.precision).tokenizer
        self.seconds, self.tokens, self.padded, self.texts = 0.0, 0, 0, 0

    def embed(self, texts: list[str]) -> np.ndarray:
        lengths = [len(ids) for ids in self.tokenizer(texts, truncation=True, max_length=256)["input_ids"]]
        self.tokens += sum(lengths)
        self.padded += max(lengths, default=0) * len(lengths)
        self.texts += len(texts)
        t = time.perf_counter()
        vectors = self.provider.embed(texts)
        self.seconds += time.perf_counter() - t
        return vectors


def measure(source: Path, work: Path, order: str, precision: str, batch_size: int, min_words: int) -> dict:
    from nous_assets.embed.chunk_embedding import embed_pending_chunks
    from nous_assets.embed.local import LocalMiniLM
    from nous_assets.store.db import open_db

    db = work / f"{order}-{precision}.db"
    shutil.copy(source, db)
    conn = open_db(db)
    provider = LocalMiniLM(batch_size=batch_size, precision=precision)
    provider.embed(["load the model before the clock starts"])
    timed = Timed(provider)
    load = os.getloadavg()[0]
    t = time.perf_counter()
    if order == "id-order":
        done = embed_in_id_order(conn, timed, batch_size)
    else:
        done, _ = embed_pending_chunks(conn, timed, batch_size=batch_size, min_words=min_words)
    total = time.perf_counter() - t
    conn.close()
    return {
        "order": order,
        "precision": precision,
        "chunks": done,
        "chunks_embedded": timed.texts,
        "seconds": round(total, 1),
        "chunks_per_s": round(done / total, 1),
        "model_seconds": round(timed.seconds, 1),
        "other_seconds": round(total - timed.seconds, 2),
        "tokens_per_chunk": round(timed.tokens / max(timed.texts, 1), 1),
        "padding_overhead": round(timed.padded / max(timed.tokens, 1), 2),
        "load_average": [round(load, 2), round(os.getloadavg()[0], 2)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="keep only the first N chunks (0: all)")
    parser.add_argument("--precisions", default="float32,bfloat16,int8")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--min-words", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nous-embed-bench-"))
    source = work / "chunks.db"
    chunks = build_db(source, args.copies, args.limit or None)
    print(f"{chunks} chunks in the backlog", flush=True)
    configs = [("id-order", "float32")] + [("length-order", p) for p in args.precisions.split(",")]
    runs = []
    for order, precision in configs:
        figures = measure(source, work, order, precision, args.batch_size, args.min_words)
        runs.append(figures)
        print(json.dumps(figures), flush=True)
    results = {"benchmark": "embed", "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "cpus": os.cpu_count(), "chunks": chunks, "runs": runs}  # fmt: skip
    save(results, "embed")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
