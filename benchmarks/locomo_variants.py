"""LoCoMo generalisation checks without held-out data: per-conversation splits and "harder" variants.

``split``  writes, next to ``--out``, one file per conversation of a LoCoMo file (choose a lever on one,
           confirm on the other) and two harder variants of the whole file:
           ``merged``  every conversation's sessions as sessions of ONE conversation (a longer corpus,
                       more competing turns, as the longer held-out conversations have);
           ``shifted`` the same merge with each later conversation's session dates moved a year further
                       (a corpus that spans more time: what recency and validity do with it);
           ``samenames`` the merge with every conversation's two speakers renamed to the first one's, in turns
                       and questions (one long two-person conversation: names no longer tell the halves apart).
``shift``  writes a copy of a LoCoMo file with every session date moved by a fixed number of days (``--days 1096``
           is three years later, ``--days -400`` a year and a month earlier): a lever keyed to particular dates
           scores differently there, one that reads time from the corpus scores the same (within noise).
``ingest`` backfills one file once into a work dir (the real Dagster pipeline, as ``nous bench retrieval``).
``score``  re-scores an ingested work dir with the code as it is now (ranking changes need no re-ingest).

Nothing here knows any conversation's words: it renumbers sessions and dialogue ids and shifts dates.
Figures are printed and saved as JSON under ``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
import time
from datetime import timedelta
from pathlib import Path

from nous_assets.evaluate.locomo import parse_locomo_date

RESULTS = Path(__file__).parent / "results"
_SESSION = re.compile(r"^session_(\d+)$")
_DIA = re.compile(r"D(\d+):(\d+)")


def _sessions(conv: dict) -> list[int]:
    return sorted(int(m.group(1)) for k in conv if (m := _SESSION.match(k)) and conv[k])


def _renumber(text: str, offset: int) -> str:
    return _DIA.sub(lambda m: f"D{int(m.group(1)) + offset}:{m.group(2)}", text)


def _renamer(conv: dict, first: dict):
    """Replace this conversation's speaker names (whole words) with the first conversation's."""
    pairs = [(conv[key], first[key]) for key in ("speaker_a", "speaker_b") if conv[key] != first[key]]
    if not pairs:
        return lambda text: text
    pattern = re.compile(r"\b(" + "|".join(re.escape(old) for old, _ in pairs) + r")\b")
    names = dict(pairs)
    return lambda text: pattern.sub(lambda m: names[m.group(1)], text)


def merge(samples: list[dict], shift_years: int = 0, same_names: bool = False) -> dict:
    """All conversations as one: sessions renumbered in order, dialogue ids and evidence with them."""
    first = samples[0]
    out = {"sample_id": "merged", "conversation": {}, "qa": []}
    conv_out = out["conversation"]
    conv_out["speaker_a"] = first["conversation"]["speaker_a"]
    conv_out["speaker_b"] = first["conversation"]["speaker_b"]
    offset = 0
    for index, sample in enumerate(samples):
        conv = sample["conversation"]
        shift = timedelta(days=365 * shift_years * index)
        rename = _renamer(conv, first["conversation"]) if same_names else (lambda text: text)
        for n in _sessions(conv):
            when = parse_locomo_date(conv[f"session_{n}_date_time"]) + shift
            conv_out[f"session_{n + offset}_date_time"] = when.strftime("%I:%M %p on %d %B, %Y")
            turns = copy.deepcopy(conv[f"session_{n}"])
            for turn in turns:
                turn["dia_id"] = _renumber(turn["dia_id"], offset)
                turn["speaker"], turn["text"] = rename(turn["speaker"]), rename(turn["text"])
            conv_out[f"session_{n + offset}"] = turns
        for q in sample["qa"]:
            q = copy.deepcopy(q)
            q["evidence"] = [_renumber(e, offset) for e in q.get("evidence", [])]
            q["question"] = rename(q.get("question", ""))
            out["qa"].append(q)
        offset += max(_sessions(conv))
    return out


def split(locomo: Path, out: Path) -> list[Path]:
    samples = json.loads(locomo.read_text(encoding="utf-8"))
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for sample in samples:
        path = out / f"{sample['sample_id']}.json"
        path.write_text(json.dumps([sample]))
        written.append(path)
    for name, years, same in (("merged", 0, False), ("shifted", 1, False), ("samenames", 0, True)):
        path = out / f"{name}.json"
        path.write_text(json.dumps([merge(samples, years, same)]))
        written.append(path)
    return written


def shift(samples: list[dict], days: int) -> list[dict]:
    """The same conversations with every session date moved by ``days`` (turns, questions and evidence as they are)."""
    out = copy.deepcopy(samples)
    for sample in out:
        conv = sample["conversation"]
        for n in _sessions(conv):
            when = parse_locomo_date(conv[f"session_{n}_date_time"]) + timedelta(days=days)
            conv[f"session_{n}_date_time"] = when.strftime("%I:%M %p on %d %B, %Y")
    return out


def ingest(locomo: Path, workdir: Path) -> None:
    from nous_assets.evaluate.locomo import convert_sample, load_samples
    from nous_assets.evaluate.retrieval import _bench_settings, _ingest

    projects = workdir / "projects"
    for s in load_samples(locomo):
        convert_sample(s, projects)
    days, learnings, seconds = _ingest(_bench_settings(workdir, projects))
    print(f"ingested {locomo.name}: {len(days)} days, {learnings} learnings in {seconds:.1f}s", file=sys.stderr)


def score(locomo: Path, workdir: Path, k: int, label: str) -> dict:
    from nous_assets.evaluate.locomo import convert_sample, load_samples
    from nous_assets.evaluate.retrieval import _bench_settings, _mean, _score, sample_figures
    from nous_assets.store.db import open_db

    projects = workdir / "projects"
    converted = [convert_sample(s, projects) for s in load_samples(locomo)]
    settings = _bench_settings(workdir, projects)
    conn = open_db(settings.db_path)
    try:
        by_sample: dict[str, dict] = {}
        per_cat, _chars, lat = _score(conn, converted, settings, k, by_sample)
    finally:
        conn.close()
    main = [v for c in (1, 2, 3, 4) for v in per_cat.get(c, [])]
    figures = {
        "benchmark": "retrieval-locomo-variant",
        "label": label,
        "file": locomo.name,
        "k": k,
        "recall_by_category": {str(c): _mean(v, 3) for c, v in sorted(per_cat.items())},
        "recall_overall_cat1_4": _mean(main, 3),
        "recall_by_sample": sample_figures(by_sample, 3),
        "query_ms_mean": round(1000 * sum(lat) / max(len(lat), 1), 1),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    (RESULTS / f"locomo-variant-{locomo.stem}-{stamp}.json").write_text(json.dumps(figures, indent=2))
    cats = " ".join(f"c{c}={v}" for c, v in figures["recall_by_category"].items())
    print(f"{label:24s} {locomo.stem:10s} overall={figures['recall_overall_cat1_4']} {cats}")
    if len(by_sample) > 1:
        for sample, row in figures["recall_by_sample"].items():
            cats = " ".join(f"c{c}={v}" for c, v in row["recall_by_category"].items())
            print(f"{label:24s} {sample:10s} overall={row['recall_overall_cat1_4']} {cats}")
    return figures


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("split", help="write per-conversation files and the merged/shifted variants")
    s.add_argument("locomo", type=Path)
    s.add_argument("--out", type=Path, required=True)
    t = sub.add_parser("shift", help="write a copy with every session date moved by --days")
    t.add_argument("locomo", type=Path)
    t.add_argument("--days", type=int, required=True)
    t.add_argument("--out", type=Path, required=True)
    i = sub.add_parser("ingest", help="backfill one LoCoMo file into a work dir")
    i.add_argument("locomo", type=Path)
    i.add_argument("--workdir", type=Path, required=True)
    r = sub.add_parser("score", help="re-score an ingested work dir with the current ranking code")
    r.add_argument("locomo", type=Path)
    r.add_argument("--workdir", type=Path, required=True)
    r.add_argument("--k", type=int, default=10)
    r.add_argument("--label", default="current")
    args = p.parse_args(argv)
    if args.cmd == "split":
        for path in split(args.locomo, args.out):
            print(path)
    elif args.cmd == "shift":
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(shift(json.loads(args.locomo.read_text(encoding="utf-8")), args.days)))
        print(args.out)
    elif args.cmd == "ingest":
        ingest(args.locomo, args.workdir)
    else:
        score(args.locomo, args.workdir, args.k, args.label)
    return 0


if __name__ == "__main__":
    sys.exit(main())
