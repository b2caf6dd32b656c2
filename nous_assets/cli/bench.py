"""``nous bench``: the benchmarks, which print their figures and save them under ``benchmarks/results/``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nous_assets.cli.common import AddCommand
from nous_assets.errors import NousError
from nous_assets.settings import Settings


def cmd_bench(settings: Settings, args: argparse.Namespace) -> int:
    import tempfile
    import time as _time

    stamp = _time.strftime("%Y%m%d-%H%M%S")
    results_dir = Path(args.out_dir)
    if args.bench == "retrieval":
        from nous_assets.evaluate.retrieval import run

        if not Path(args.locomo).is_file():
            raise NousError(f"no such LoCoMo file: {args.locomo}")
        work = Path(args.workdir or tempfile.mkdtemp(prefix="nous-locomo-"))
        run(
            Path(args.locomo),
            args.k,
            work,
            results_dir / f"retrieval-{stamp}.json",
            log=lambda m: print(m, file=sys.stderr),
        )
        return 0
    if args.bench == "memories":
        from nous_assets.evaluate.memories import run as run_memories

        if not args.gold or not args.transcripts:
            raise NousError("bench memories needs --gold FILE and --transcripts DIR")
        run_memories(
            Path(args.gold), Path(args.transcripts), results_dir, workdir=Path(args.workdir) if args.workdir else None
        )
        return 0
    if args.bench == "recall-questions":
        from nous_assets.evaluate.recall_questions import QuestionsError
        from nous_assets.evaluate.recall_questions import run as run_questions

        try:
            if not args.questions or not args.transcripts:
                raise QuestionsError("bench recall-questions needs --questions FILE and --transcripts DIR")
            run_questions(Path(args.questions), Path(args.transcripts), results_dir,
                          workdir=Path(args.workdir) if args.workdir else None)  # fmt: skip
        except QuestionsError as exc:  # a usage error: exit 2
            print(f"nous: error: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.bench == "replay":
        from nous_assets.evaluate.replay import run as run_replay

        if not args.transcripts:
            raise NousError("bench replay needs --transcripts DIR")
        run_replay(Path(args.transcripts), results_dir, workdir=Path(args.workdir) if args.workdir else None)
        return 0
    if args.bench == "hooks":
        from nous_assets.evaluate.hooks import run as run_hooks

        run_hooks(
            results_dir / "benchmark.json",
            settings,
            starts=args.starts,
            sizes=args.sizes,
            workdir=Path(args.workdir) if args.workdir else None,
        )
        return 0
    from nous_assets.evaluate.search import run as run_search

    run_search(
        results_dir / f"search-{stamp}.json",
        settings,
        sizes=args.sizes,
        queries=args.queries,
        workdir=Path(args.workdir) if args.workdir else None,
    )
    return 0


def register(add: AddCommand) -> None:
    """The ``bench`` subparser."""
    p = add(
        "bench",
        cmd_bench,
        "Benchmarks (they print and save their figures under benchmarks/results/): "
        "hooks (SessionStart latency), retrieval (LoCoMo recall@k), search (latency at 10k/100k memories), "
        "memories (gold learnings: lays the transcripts out as Claude Code does, backfills them in a scratch "
        "data dir, runs the installed SessionStart hook for each gold project cwd; prints store and packet "
        "recall and anti-hit rates per source, memories per session, mean packet size; last line "
        "'packet recall: R anti-hit: A'), "
        "replay (no labels: replays the transcripts in start order in a scratch install, each session's packet "
        "printed by the installed hook from a store holding only the sessions that had ended; scores how many of "
        "what each later session of a project needed again — commands, edited files, errors, corrections seen in "
        "an earlier session — the packet mentions (coverage) and how many packet lines the session used "
        "(uptake), against an empty packet and the last session's commands; last line "
        "'replay coverage: C uptake: U'), "
        "recall-questions (realistic questions about a project's history, JSONL: project_cwd, question, answer, "
        "keys, optional wrong: backfills the transcripts as memories does, asks each question through "
        "`nous search --json` and MCP recall; prints each question's first-hit and wrong-answer ranks, per "
        "channel hit@1/3/10 and how often a known wrong answer comes first; last line "
        "'recall-questions hit@3: H wrong-first: W', the worse channel).",
    )
    p.add_argument("bench", choices=["hooks", "retrieval", "search", "memories", "replay", "recall-questions"])
    p.add_argument("--gold", metavar="FILE",
                   help="memories: gold learnings JSONL (e.g. ../shared/data/gold/gold-dev.jsonl)")  # fmt: skip
    p.add_argument(
        "--transcripts",
        metavar="DIR",
        help="memories: the transcripts the gold was written from; replay: the ones to replay; "
        "recall-questions: the folder the questions' file paths are relative to",
    )
    p.add_argument("--questions", metavar="FILE",
                   help="recall-questions: a questions JSONL (benchmarks/questions/questions-dev.jsonl)")  # fmt: skip
    p.add_argument("--locomo", metavar="FILE", help="retrieval: a LoCoMo JSON file (e.g. ../shared/data/locomo-dev/…)")
    p.add_argument("--k", type=int, default=10, help="retrieval: recall@k (default 10)")
    p.add_argument("--starts", type=int, default=200, help="hooks: session starts per profile (default 200)")
    p.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        help="hooks: memories per corpus (default 1000 10000); search: (default 10000 100000)",
    )
    p.add_argument("--queries", type=int, default=100, help="search: queries per size (default 100)")
    p.add_argument(
        "--workdir",
        help="scratch directory (default: a new temp dir; memories, replay, recall-questions: the temp dir "
        "is removed afterwards, a given one must be new or empty and is kept for inspection; recall-questions "
        "reuses one it backfilled before from the same transcripts)",
    )
    p.add_argument("--out-dir", default="benchmarks/results", help="where figures are saved")
