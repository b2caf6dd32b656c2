"""`nous bench retrieval`: recall@k of LoCoMo evidence through the full pipeline and the injection scorer.

Each conversation is written as Claude Code transcripts in a scratch data dir, backfilled through the
real Dagster assets (capture -> extract -> project -> embed -> edges -> cache), then every question
is asked through :func:`~nous_assets.retrieve.search.retrieve` (memories + episodic chunks). A retrieved
memory counts for the dialogue ids of the transcript lines in its provenance; a chunk for its own.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

from nous_assets.settings import FIRST_PARTITION_DAY, Settings, load_settings
from nous_assets.store.db import Connection, open_db
from nous_assets.store.ingest import transcript_chunks
from nous_assets.store.search import memory_search


def _dia_ids(conn, results, uuid_to_dia: dict[str, str]) -> tuple[list[str], int]:
    found: list[str] = []
    chars = 0
    for r in results:
        chars += len(r.content)
        if r.is_episode:
            uuids = transcript_chunks.record_uuids(conn, r.id)
        else:
            uuids = memory_search.provenance(conn, r.id).get("uuids", [])
        for u in uuids:
            dia = uuid_to_dia.get(u)
            if dia and dia not in found:
                found.append(dia)
    return found, chars


UNBOUNDED_EMBED_S = 1e9


def _bench_settings(workdir: Path, projects: Path) -> Settings:
    """Settings for a scratch data dir over the converted conversations (resolved once, passed down)."""
    env = {k: v for k, v in os.environ.items() if k != "NOUS_DB_PATH"}
    env.update(
        {
            "NOUS_DATA_DIR": str(workdir / "data"),
            "NOUS_PROJECT_GLOB": str(projects / "**" / "*.jsonl"),
            "NOUS_PARTITION_START": FIRST_PARTITION_DAY,
            "CLAUDE_CONFIG_DIR": str(workdir / "claude"),
        }
    )
    settings = load_settings(env)
    # Retrieval over a complete store: no embedding time budget (the default 300 s per run, which a busy machine
    # exceeds on the ten conversations' 5,882 turns, left most turns without vectors and the figure low).
    return replace(settings, embed=replace(settings.embed, run_budget_seconds=UNBOUNDED_EMBED_S))


def _ingest(settings: Settings) -> tuple[list[str], int, float]:
    """Every day with activity through the real Dagster job, in one run over the whole range (the single-run
    backfill policy the CLI uses, instead of one run per day); (days, learnings, seconds)."""
    import dagster as dg

    from nous_assets.defs.backfill import activity_days, run_range
    from nous_assets.defs.resources import NousResource

    days = activity_days(settings, date.fromisoformat(FIRST_PARTITION_DAY), date(2100, 1, 1))
    if not days:
        raise RuntimeError("no conversation turns to ingest")
    started = time.perf_counter()
    with dg.DagsterInstance.ephemeral() as instance:
        result = run_range(days[0], days[-1], instance=instance, resource=NousResource.of(settings))
    if not result.success or result.failed_days:
        raise RuntimeError(f"pipeline failed: {result.error or sorted(result.failed_days)[:5]}")
    return days, result.learnings, time.perf_counter() - started


def _score(
    conn: Connection, converted: list, settings: Settings, k: int, by_sample: dict[str, dict] | None = None
) -> tuple[dict, list[int], list[float]]:
    """Recall@k per category over every question with evidence; (recalls, characters, latencies).

    ``by_sample`` (when given) also receives each conversation's recalls per category, by sample id: a lever
    that lifts the merged figure by fitting one conversation shows up there.
    """
    from nous_assets.embed.registry import get_embedder
    from nous_assets.retrieve.query import Query
    from nous_assets.retrieve.search import retrieve

    embedder = get_embedder(settings)
    per_cat: dict[int, list[float]] = defaultdict(list)
    chars: list[int] = []
    latencies: list[float] = []
    for conv in converted:
        for q in conv.questions:
            if not q["evidence"]:
                continue
            t = time.perf_counter()
            query = Query.from_text(q["question"], project_id=conv.project_id)
            results = retrieve(conn, query, settings, embedder=embedder, k=k, include_episodes=True)
            latencies.append(time.perf_counter() - t)
            got, n_chars = _dia_ids(conn, results, conv.uuid_to_dia)
            evidence = set(q["evidence"])
            recall = len(evidence & set(got)) / len(evidence)
            per_cat[q["category"]].append(recall)
            if by_sample is not None:
                sample = by_sample.setdefault(conv.project_id.removeprefix("locomo-"), defaultdict(list))
                sample[q["category"]].append(recall)
            chars.append(n_chars)
    return per_cat, chars, latencies


def _mean(values: list[float], digits: int = 4) -> float | None:
    return round(statistics.fmean(values), digits) if values else None


def sample_figures(by_sample: dict[str, dict], digits: int = 4) -> dict[str, dict[str, Any]]:
    """Per conversation: recall per category and over categories 1-4 (what the acceptance asks of each)."""
    out: dict[str, dict[str, Any]] = {}
    for sample, per_cat in sorted(by_sample.items()):
        main = [v for c in (1, 2, 3, 4) for v in per_cat.get(c, [])]
        out[sample] = {
            "recall_by_category": {str(c): _mean(v, digits) for c, v in sorted(per_cat.items())},
            "recall_overall_cat1_4": _mean(main, digits),
        }
    return out


def run(locomo: Path, k: int, workdir: Path, out: Path | None = None, log=print) -> dict[str, Any]:
    from nous_assets.evaluate.locomo import convert_sample, load_samples

    projects = workdir / "projects"
    converted = [convert_sample(s, projects) for s in load_samples(locomo)]
    settings = _bench_settings(workdir, projects)
    days, learnings, pipeline_s = _ingest(settings)
    log(
        f"pipeline: {len(days)} day(s) in one run, {sum(c.turns for c in converted)} turns, "
        f"{learnings} learnings in {pipeline_s:.1f}s"
    )
    conn = open_db(settings.db_path)
    try:
        by_sample: dict[str, dict] = {}
        per_cat, chars, latencies = _score(conn, converted, settings, k, by_sample)
        memories, chunks = memory_search.count(conn), transcript_chunks.count(conn)
    finally:
        conn.close()
    main = [v for c in (1, 2, 3, 4) for v in per_cat.get(c, [])]
    figures = {
        "benchmark": "retrieval-locomo",
        "file": str(locomo),
        "k": k,
        "conversations": len(converted),
        "questions": sum(len(v) for v in per_cat.values()),
        "memories": memories,
        "chunks": chunks,
        "pipeline_seconds": round(pipeline_s, 1),
        "recall_by_category": {str(c): _mean(v) for c, v in sorted(per_cat.items())},
        "questions_by_category": {str(c): len(v) for c, v in sorted(per_cat.items())},
        "recall_overall_cat1_4": _mean(main) or 0.0,
        "recall_cat5": _mean(per_cat.get(5, [])),
        "recall_by_sample": sample_figures(by_sample),
        "mean_chars_per_query": _mean(chars, 1) or 0.0,
        "query_latency_ms_p50": round(1000 * statistics.median(latencies), 1) if latencies else None,
        "retrieve_settings": {
            "mode": settings.retrieve.mode,
            "mmr_lambda": settings.retrieve.mmr_lambda,
            "embed_model": settings.embed.model,
            "embed_precision": settings.embed.precision,
            "embed_min_words": settings.embed.min_words,
        },
    }
    _report(figures, k, out, log)
    return figures


def _report(figures: dict[str, Any], k: int, out: Path | None, log) -> None:
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(figures, indent=2))
    for cat, value in figures["recall_by_category"].items():
        log(f"recall@{k} category {cat} ({figures['questions_by_category'][cat]} questions): {value:.3f}")
    if len(figures.get("recall_by_sample", {})) > 1:
        for sample, row in figures["recall_by_sample"].items():
            cats = " ".join(f"c{c}={v:.3f}" for c, v in row["recall_by_category"].items())
            log(f"recall@{k} {sample} (cat 1-4): {row['recall_overall_cat1_4']:.3f}  {cats}")
    log(f"mean characters returned per query: {figures['mean_chars_per_query']}")
    if out:
        log(f"saved {out}")
    sys.stdout.flush()
    print(f"recall@{k} overall (cat 1-4): {figures['recall_overall_cat1_4']:.3f}")
