"""Per-lever LoCoMo table: re-score ingested work dirs with each retrieval lever on its own, per conversation.

Usage: ``python benchmarks/locomo_levers.py FILE:WORKDIR [FILE:WORKDIR ...] --config NAME=SPEC ...``
where each WORKDIR was filled by ``locomo_variants.py ingest FILE --workdir WORKDIR`` and SPEC sets
switches of :mod:`nous_assets.retrieve.scoring` and of ``episodic`` (``HOP_WEIGHT``, ``REPLY_WEIGHT``), e.g.
``SPEAKER_BOOST=0.1``; ``base`` is every lever off. Query vectors are computed once per question and reused
across configurations. Prints one row per configuration x file x conversation (categories 1-4 and overall) and
saves them as JSON under ``benchmarks/results/``. Nothing here knows any conversation's words.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from nous_assets.retrieve import episodic, scoring

RESULTS = Path(__file__).parent / "results"
LEVERS = {  # every lever off: the ranking before issue 23's part R
    "CORPUS_CLOCK": False,
    "EPISODE_RECENCY": True,
    "SPEAKER_BOOST": 0.0,
    "WHEN_BOOST": 0.0,
    "PERIOD_BOOST": 0.0,
    "HOP_WEIGHT": 0.0,
    "RESOLUTION_BOOST": 0.0,
    "REPLY_WEIGHT": 0.0,
}


class CachedEmbedder:
    """The real embedder, each text embedded once (configurations differ in ranking, not in vectors)."""

    def __init__(self, inner) -> None:
        self.inner, self.model, self.cache = inner, getattr(inner, "model", None), {}

    def embed(self, texts):
        missing = [t for t in texts if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, self.inner.embed(missing), strict=True))
        return [self.cache[t] for t in texts]


def apply(spec: str) -> None:
    values = dict(LEVERS)
    for part in filter(None, spec.split(",")):
        name, _, value = part.partition("=")
        values[name] = float(value)
    for name, value in values.items():
        target = scoring if hasattr(scoring, name) else episodic
        setattr(target, name, type(getattr(target, name))(value))


def run(pairs: list[tuple[Path, Path]], configs: list[tuple[str, str]], k: int) -> list[dict]:
    from nous_assets.embed.registry import get_embedder
    from nous_assets.evaluate.locomo import convert_sample, load_samples
    from nous_assets.evaluate.retrieval import _bench_settings, _mean, _score
    from nous_assets.store.db import open_db

    rows = []
    shared: list[CachedEmbedder] = []  # one model for every work dir: a question is embedded once
    for name, spec in configs:
        apply(spec)
        for locomo, workdir in pairs:
            projects = workdir / "projects"
            converted = [convert_sample(s, projects) for s in load_samples(locomo)]
            settings = _bench_settings(workdir, projects)
            if not shared:
                shared.append(CachedEmbedder(get_embedder(settings)))
            embedder = shared[0]
            import nous_assets.embed.registry as registry

            original = registry.get_embedder
            registry.get_embedder = lambda _settings, _e=embedder: _e
            conn = open_db(settings.db_path)
            try:
                by_sample: dict[str, dict] = {}
                per_cat, _chars, lat = _score(conn, converted, settings, k, by_sample)
            finally:
                conn.close()
                registry.get_embedder = original
            groups = {"merged": per_cat, **by_sample} if len(by_sample) > 1 else by_sample
            for sample, cats in groups.items():
                main = [v for c in (1, 2, 3, 4) for v in cats.get(c, [])]
                row = {"config": name, "spec": spec, "file": locomo.stem, "sample": sample,
                       "overall": _mean(main, 3), **{f"c{c}": _mean(cats.get(c, []), 3) for c in (1, 2, 3, 4)},
                       "ms_mean": round(1000 * sum(lat) / max(len(lat), 1), 1)}
                rows.append(row)
                cells = " ".join(f"c{c}={row[f'c{c}']}" for c in (1, 2, 3, 4))
                print(f"{name:14s} {locomo.stem:16s} {sample:8s} overall={row['overall']} {cells}", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("pairs", nargs="+", help="FILE:WORKDIR")
    p.add_argument("--config", action="append", default=[], help="NAME=SPEC (repeatable); base = all off")
    p.add_argument("--k", type=int, default=10)
    args = p.parse_args(argv)
    pairs = [(Path(a), Path(b)) for a, _, b in (x.partition(":") for x in args.pairs)]
    configs = [(c.partition("=")[0], c.partition("=")[2]) for c in args.config] or [("base", "")]
    rows = run(pairs, configs, args.k)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"locomo-levers-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(rows, indent=2))
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
