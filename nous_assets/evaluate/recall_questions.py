"""`nous bench recall-questions`: do realistic questions about a project's history find their answer first?

The questions file is JSONL (the format of ``../shared/data/gold/questions-dev3.jsonl``), one question per line:
``project_cwd`` (where the developer asks it), ``question``, ``answer`` (for the reader), ``keys`` — alternative
keyword sets; a result *hits* when, lowercased, it contains every keyword of one set — and optionally ``wrong``:
keyword sets that identify a known wrong or stale answer (a rejected explanation, an obsolete path). ``file`` and
``line`` cite the evidence in the transcripts (not used for scoring).

End to end, nothing mocked:

1. the transcripts are laid out and backfilled as ``nous bench memories`` does
   (:func:`~nous_assets.evaluate.memories.lay_out`, ``nous backfill`` in a scratch home and data dir), with no
   embedding time budget, so that every chunk has its vector;
2. each question is asked through ``nous search --json --project <project_cwd>`` as a subprocess (a user in
   that directory) and through MCP ``recall`` — the real ``mcp`` client over stdio against ``nous mcp``, with
   ``project`` set to the same directory and the largest budget, so that ten results fit;
3. per channel: hit@1, hit@3, hit@10 (the first hit's rank), and **wrong-first** — questions whose first result
   matches ``wrong`` and not ``keys``, over all questions (a question without ``wrong`` never counts).

The last line printed gives the worse channel: ``recall-questions hit@3: 0.xxx wrong-first: 0.xxx``.
A ``--workdir`` left by an earlier run of this bench over the same transcripts is reused without a new backfill
(ranking changes are measured in seconds); any other non-empty one is refused.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nous_assets.errors import NousError
from nous_assets.evaluate.memories import activity_span, lay_out, scratch_env
from nous_assets.settings import RECALL_BUDGET_RANGE

K = 10
CUTS = (1, 3, 10)
CHANNELS = ("search", "recall")
MARKER = "recall-questions.json"  # written in a workdir once its backfill is complete
UNBOUNDED_EMBED_S = 1e9
"""The scratch install's embedding budget per run: every chunk gets its vector in the backfill, so the figures
measure ranking over a complete store even on a busy machine (where the default 300 s leaves chunks FTS-only)."""
SEARCH_TIMEOUT_S = 120
Keys = tuple[tuple[str, ...], ...]


class QuestionsError(NousError):
    """A missing or malformed questions file (a usage error: exit 2)."""


@dataclass(frozen=True)
class Question:
    """One question, the keyword sets its answer contains, and those of a known wrong answer."""

    number: int  # line in the questions file
    project_cwd: str
    question: str
    answer: str
    keys: Keys
    wrong: Keys = ()
    file: str = ""
    line: int = 0


def matches(text: str, keys: Keys) -> bool:
    """Whether ``text``, lowercased, holds every keyword of one of ``keys``."""
    lowered = text.lower()
    return any(all(k in lowered for k in keyset) for keyset in keys)


def _keysets(raw: Any, name: str, *, required: bool) -> Keys:
    if raw is None and not required:
        return ()
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"'{name}' must be a non-empty list of keyword lists")
    out = []
    for keyset in raw:
        if not isinstance(keyset, list) or not keyset or not all(isinstance(k, str) and k.strip() for k in keyset):
            raise ValueError(f"'{name}' must hold non-empty lists of non-empty strings, got {keyset!r}")
        out.append(tuple(k.lower() for k in keyset))
    return tuple(out)


def load_questions(path: Path) -> list[Question]:
    """The questions of ``path``; anything missing or malformed is a :class:`QuestionsError` naming the line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise QuestionsError(f"no such questions file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise QuestionsError(f"cannot read questions file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    questions = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            if not isinstance(raw, dict):
                raise ValueError("not a JSON object")
            for name in ("project_cwd", "question"):
                if not isinstance(raw.get(name), str) or not raw[name].strip():
                    raise ValueError(f"'{name}' must be a non-empty string")
            questions.append(
                Question(
                    number,
                    raw["project_cwd"],
                    raw["question"],
                    str(raw.get("answer") or ""),
                    _keysets(raw.get("keys"), "keys", required=True),
                    _keysets(raw.get("wrong"), "wrong", required=False),
                    str(raw.get("file") or ""),
                    int(raw.get("line") or 0),
                )
            )
        except (ValueError, TypeError) as exc:
            raise QuestionsError(f"{path}:{number}: not a question ({exc})") from None
    if not questions:
        raise QuestionsError(f"{path}: no questions")
    return questions


# ---------------------------------------------------------------- asking


def rank_of(texts: Sequence[str], keys: Keys, *, not_keys: Keys = ()) -> int | None:
    """1-based rank of the first text matching ``keys`` (and not ``not_keys``), None when none does."""
    for rank, text in enumerate(texts, 1):
        if matches(text, keys) and not (not_keys and matches(text, not_keys)):
            return rank
    return None


def ask_search(question: Question, env: dict[str, str], k: int = K) -> list[str]:
    """The texts ``nous search --json`` lists for the question, best first, asked from the question's project."""
    command = [sys.executable, "-m", "nous_assets.cli", "search", "--json", "-k", str(k),
               f"--project={question.project_cwd}", question.question]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=SEARCH_TIMEOUT_S, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [""])[-1]
        raise NousError(f"`nous search` failed for line {question.number} (exit {done.returncode}): {last}")
    return [str(r.get("content") or "") for r in json.loads(done.stdout)]


def upgrade(env: dict[str, str]) -> None:
    """``nous init`` on a reused backfill: a store a build with fewer migrations wrote is migrated, as a user
    would after an upgrade, instead of every search refusing it."""
    command = [sys.executable, "-m", "nous_assets.cli", "init"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [""])[-1]
        raise NousError(f"`nous init` on the reused backfill failed (exit {done.returncode}): {last}")


def ask_recall(questions: Sequence[Question], data_dir: Path, env: dict[str, str], log_path: Path) -> list[list[str]]:
    """Each question's ``recall`` result texts, best first, through the real MCP client over stdio against
    ``nous mcp --data-dir data_dir`` (one server for all questions). A call the server refuses (an unknown
    project) answers nothing; the reason is logged."""
    import anyio

    async def ask_all() -> list[list[str]]:
        from mcp import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=sys.executable,
            args=["-I", "-m", "nous_assets.cli", "mcp", "--data-dir", str(data_dir)],
            env=env,
        )
        answers: list[list[str]] = []
        with log_path.open("a", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                for q in questions:
                    arguments = {"query": q.question, "project": q.project_cwd, "budget": RECALL_BUDGET_RANGE[1]}
                    result = await session.call_tool("recall", arguments)
                    text = result.content[0].text if result.content else ""
                    if result.is_error:
                        errlog.write(f"recall refused line {q.number}: {text}\n")
                        answers.append([])
                        continue
                    answers.append([str(r.get("text") or "") for r in json.loads(text).get("results", [])])
        return answers

    return anyio.run(ask_all)


# ---------------------------------------------------------------- scoring


def outcome(question: Question, texts: Sequence[str]) -> dict[str, Any]:
    """Where the first hit and the first wrong answer are (1-based, None: not in the results)."""
    hit = rank_of(texts, question.keys)
    wrong = rank_of(texts, question.wrong, not_keys=question.keys) if question.wrong else None
    return {"hit": hit, "wrong": wrong, "wrong_first": wrong == 1, "results": len(texts)}


def figures(outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """hit@1/3/10 and wrong-first rates over all questions (wrong-first also over those with ``wrong`` keys), and how
    many questions list a wrong answer above the first right one (or with no right one)."""
    n = len(outcomes)
    out: dict[str, Any] = {"questions": n}
    for cut in CUTS:
        out[f"hit@{cut}"] = round(sum(o["hit"] is not None and o["hit"] <= cut for o in outcomes) / n, 4) if n else 0
    out["wrong_first_count"] = sum(o["wrong_first"] for o in outcomes)
    out["wrong_above_count"] = sum(o["wrong"] is not None and (o["hit"] is None or o["wrong"] < o["hit"])
                                   for o in outcomes)  # fmt: skip
    out["with_wrong"] = sum(o["has_wrong"] for o in outcomes)
    out["wrong_first"] = round(out["wrong_first_count"] / n, 4) if n else 0.0
    return out


def score(questions: Sequence[Question], answers: dict[str, list[list[str]]]) -> tuple[dict, list[dict]]:
    """({channel: figures}, one row per question with each channel's outcome)."""
    rows = []
    for i, q in enumerate(questions):
        row: dict[str, Any] = {"line": q.number, "project_cwd": q.project_cwd, "question": q.question,
                               "has_wrong": bool(q.wrong)}  # fmt: skip
        for channel in CHANNELS:
            row[channel] = {**outcome(q, answers[channel][i]), "has_wrong": bool(q.wrong)}
        rows.append(row)
    return {ch: figures([r[ch] for r in rows]) for ch in CHANNELS}, rows


# ---------------------------------------------------------------- the benchmark


def _workdir(workdir: Path | None, transcripts: Path) -> tuple[Path, bool, bool]:
    """(workdir, temporary, reuse): a new temp dir, a given empty one, or one this bench backfilled before."""
    if workdir is None:
        return Path(tempfile.mkdtemp(prefix="nous-bench-recall-")), True, False
    marker = workdir / MARKER
    if marker.is_file():
        try:
            previous = json.loads(marker.read_text(encoding="utf-8")).get("transcripts")
        except ValueError:
            previous = None
        if previous == str(transcripts.resolve()):
            return workdir, False, True
        raise NousError(f"--workdir {workdir} holds a backfill of {previous}, not of {transcripts}")
    if workdir.exists() and any(workdir.iterdir()):
        raise NousError(f"--workdir {workdir} is not empty; give a new or empty directory")
    workdir.mkdir(parents=True, exist_ok=True)
    return workdir, False, False


def backfill(transcripts: Path, workdir: Path, log: Callable[[str], None]) -> dict[str, Any]:
    """Lay the transcripts out as Claude Code does and backfill every day they cover into ``workdir/data``."""
    layout = lay_out(transcripts, workdir / "home" / ".claude" / "projects")
    env = scratch_env(workdir)
    config = Path(env["CLAUDE_CONFIG_DIR"]) / "nous" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"embed": {"run_budget_seconds": UNBOUNDED_EMBED_S}}), encoding="utf-8")
    first, last = activity_span(layout.projects)
    env["NOUS_PARTITION_START"] = first
    log(f"bench recall-questions: {layout.files} transcript files ({layout.sessions} sessions); nous backfill "
        f"--from {first} --to {last}")  # fmt: skip
    started = time.monotonic()
    command = [sys.executable, "-m", "nous_assets.cli", "backfill", "--from", first, "--to", last]
    done = subprocess.run(command, env=env, stdout=sys.stderr, stderr=sys.stderr, check=False)
    if done.returncode != 0:
        raise NousError(f"`nous backfill` failed with exit {done.returncode} (its output is above)")
    info = {"transcripts": str(transcripts.resolve()), "days": [first, last],
            "backfill_seconds": round(time.monotonic() - started, 1), "files": layout.files}  # fmt: skip
    (workdir / MARKER).write_text(json.dumps(info), encoding="utf-8")  # last: only a complete backfill is reused
    return info


def run(
    questions_path: Path,
    transcripts: Path,
    out_dir: Path,
    *,
    workdir: Path | None = None,
    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
) -> dict[str, Any]:
    """Backfill (or reuse), ask every question on both channels, print the table and figures, save the report."""
    questions = load_questions(questions_path)
    if not transcripts.is_dir():
        raise QuestionsError(f"no such transcripts folder: {transcripts}")
    workdir, temporary, reuse = _workdir(workdir, transcripts)
    started = time.monotonic()
    try:
        if reuse:
            log(f"bench recall-questions: reusing the backfill in {workdir}")
            info = json.loads((workdir / MARKER).read_text(encoding="utf-8"))
            upgrade(scratch_env(workdir))
        else:
            info = backfill(transcripts, workdir, log)
        env = scratch_env(workdir)
        answers = {"search": [ask_search(q, env) for q in questions]}
        answers["recall"] = ask_recall(questions, Path(env["NOUS_DATA_DIR"]), env, workdir / "mcp-server.log")
    finally:
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)
    channels, rows = score(questions, answers)
    report = {
        "benchmark": "recall-questions",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": _commit(),
        "questions_file": str(questions_path),
        **info,
        "reused_backfill": reuse,
        "seconds": round(time.monotonic() - started, 1),
        "channels": channels,
        "questions": rows,
        "answers": answers,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"recall-questions-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    print_report(report)
    print(f"saved {out}")
    worst_hit = min(channels[ch]["hit@3"] for ch in CHANNELS)
    worst_wrong = max(channels[ch]["wrong_first"] for ch in CHANNELS)
    print(f"recall-questions hit@3: {worst_hit:.3f} wrong-first: {worst_wrong:.3f}")
    return report


def _commit() -> str | None:
    """The commit of this checkout, ``-dirty`` with uncommitted changes (figures are compared across ranking
    changes), None outside git."""
    try:
        done = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=7"], cwd=Path(__file__).parent,
                              capture_output=True, text=True, timeout=10, check=False)  # fmt: skip
    except OSError:
        return None
    return done.stdout.strip() or None


def _rank(value: int | None) -> str:
    return "-" if value is None else str(value)


def print_report(report: dict[str, Any]) -> None:
    """The per-question table and the per-channel figures (everything but the last line)."""
    print(f"questions {report['questions_file']} over {report['transcripts']} (commit {report['commit']})")
    print(f"{'line':>4}  {'search':>6} {'wrong':>5}  {'recall':>6} {'wrong':>5}  question")
    for row in report["questions"]:
        s, r = row["search"], row["recall"]
        ws, wr = (_rank(s["wrong"]), _rank(r["wrong"])) if row["has_wrong"] else ("", "")  # blank: no wrong keys
        print(f"{row['line']:>4}  {_rank(s['hit']):>6} {ws:>5}  {_rank(r['hit']):>6} {wr:>5}  {row['question'][:70]}")
    for channel in CHANNELS:
        f = report["channels"][channel]
        print(f"{channel:6}  hit@1 {f['hit@1']:.3f}  hit@3 {f['hit@3']:.3f}  hit@10 {f['hit@10']:.3f}  "
              f"wrong-first {f['wrong_first']:.3f} ({f['wrong_first_count']} of {f['questions']}; "
              f"{f['with_wrong']} with wrong keys; wrong above the first hit: {f['wrong_above_count']})")  # fmt: skip
