"""`nous bench memories`: how much of a hand-made gold set the real pipeline remembers and injects.

The gold file is JSONL, one learning per line (the format of ``../shared/data/gold/``): ``source``,
``project_cwd`` (the session's cwd), ``id``, ``kind`` (``anti`` for things that must NOT be remembered),
``text`` and ``match`` — alternative keyword sets; a text matches an item when, lowercased, it contains
every keyword of at least one set as a substring.

What the benchmark does, end to end, with nothing mocked:

1. lays the transcripts out as Claude Code does — ``projects/<slug of the session's cwd>/<file>.jsonl``,
   a session's subagents under ``<session>/subagents/`` of the same folder (mtimes kept);
2. runs ``nous backfill`` over every day the transcripts cover, as a subprocess in a scratch home and
   data dir (a real Dagster run: capture, extraction, projection, embeddings, edges, injection cache);
3. runs ``nous hooks install`` there and, for each gold ``project_cwd``, the installed SessionStart
   command, as Claude Code does: a shell command, the hook JSON on stdin, no ``NOUS_*`` variable;
4. matches the gold against the store and against the printed packets.

How "same project" is judged (documented choice):

* **store**: a memory counts for a gold item when it is global, or when its project is the project the
  *pipeline* assigns to the item's ``project_cwd`` (the identity the hook uses: the store's cwd aliases
  when it has them, else the encoding of the repository's main checkout or of the cwd). Once
  worktrees of one repository are one project, their memories count for each other's gold items,
  as the issue asks; gold items with identical text within one project count once (the gold README's
  ``--repo`` rule), so a learning repeated in five worktrees is one learning.
* **packet**: no judgement at all — each gold item is matched against the packet the real hook prints
  for its own ``project_cwd``, one packet line at a time (a line is one memory, so keywords of two
  different memories never combine). A deduplicated item hits when the packet of any of its cwds does.

Figures: store/packet recall and anti-hit rate overall and per ``source``, memories per session, mean
packet characters; a JSON report with every item's outcome and every packet goes to ``--out-dir``.
The last line printed is ``packet recall: 0.xxx anti-hit: 0.xxx``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nous_assets.errors import NousError
from nous_assets.store.ingest import transcript_chunks
from nous_assets.store.search import memory_search
from resolver.project import project_id_from_cwd

ANTI = "anti"
CWD_SCAN_LINES = 200  # lines read from the head of a transcript to find its cwd
PASSED_ENV = ("NOUS_EXTRACTOR", "NOUS_OPENAI_BASE_URL", "NOUS_OPENAI_API_KEY", "NOUS_OPENAI_MODEL")
"""The only NOUS_* settings the pipeline run inherits (to benchmark another extractor); the rest is scratch."""
HOOK_TIMEOUT_S = 10


@dataclass(frozen=True)
class GoldItem:
    """One gold learning (or ``anti`` item) and the keyword sets that recognise it."""

    id: str
    source: str
    project_cwd: str
    kind: str
    text: str
    match: tuple[tuple[str, ...], ...]

    @property
    def anti(self) -> bool:
        return self.kind == ANTI

    def matched_by(self, texts: Iterable[str]) -> bool:
        """Whether one of ``texts`` (already lowercased) holds every keyword of one of the sets."""
        return any(all(k in t for k in keys) for t in texts for keys in self.match)


def load_gold(path: Path) -> list[GoldItem]:
    """The gold file's items; a malformed line is an error naming the file and line (gold is hand-made)."""
    items: list[GoldItem] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise NousError(f"cannot read gold file {path}: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            match = tuple(tuple(str(k).lower() for k in keys) for keys in raw["match"])
            if not match or not all(match) or not isinstance(raw["project_cwd"], str):
                raise ValueError("'match' needs non-empty keyword sets and 'project_cwd' a string")
            items.append(
                GoldItem(
                    str(raw.get("id") or f"line-{number}"),
                    str(raw.get("source") or "all"),
                    raw["project_cwd"],
                    str(raw["kind"]),
                    str(raw.get("text") or ""),
                    match,
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise NousError(f"{path}:{number}: not a gold item ({type(exc).__name__}: {exc})") from None
    if not items:
        raise NousError(f"{path}: no gold items")
    return items


# ---------------------------------------------------------------- layout


@dataclass
class Layout:
    """Where each transcript went: ``sessions`` main-session files, ``files`` in all, cwd per folder."""

    projects: Path
    sessions: int = 0
    files: int = 0
    folders: dict[str, str] = field(default_factory=dict)  # slug -> a cwd that produced it
    no_cwd: list[str] = field(default_factory=list)  # files without a cwd (placed by their source folder)


def first_cwd(path: Path, max_lines: int = CWD_SCAN_LINES) -> str | None:
    """The first ``cwd`` a transcript records: the directory Claude Code was started in for this session."""
    try:
        with path.open("rb") as handle:
            for _, raw in zip(range(max_lines), handle, strict=False):
                try:
                    record = json.loads(raw)
                except ValueError:
                    continue
                cwd = record.get("cwd") if isinstance(record, dict) else None
                if isinstance(cwd, str) and cwd.startswith("/"):
                    return cwd
    except OSError:
        return None
    return None


def lay_out(transcripts: Path, projects: Path) -> Layout:
    """Copy every ``*.jsonl`` under ``transcripts`` into Claude Code's layout under ``projects``.

    A main session goes to ``<slug of its cwd>/<name>.jsonl``; ``<session>/subagents/agent-*.jsonl`` follow
    their session's folder (or their own cwd when the main file is absent). A file with no cwd at all
    goes to a folder named after its source folder. Name clashes get a numeric suffix, never overwrite.
    """
    layout = Layout(projects)
    files = sorted(p for p in transcripts.rglob("*.jsonl") if p.is_file())
    session_folder: dict[Path, str] = {}
    for path in (p for p in files if p.parent.name != "subagents"):
        slug = _slug_for(path, transcripts, layout)
        session_folder[path.with_suffix("")] = slug
        _copy(path, projects / slug / path.name)
        layout.sessions += 1
    for path in (p for p in files if p.parent.name == "subagents"):
        session_dir = path.parent.parent
        slug = session_folder.get(session_dir) or _slug_for(path, transcripts, layout)
        _copy(path, projects / slug / session_dir.name / "subagents" / path.name)
    layout.files = len(files)
    return layout


def _slug_for(path: Path, transcripts: Path, layout: Layout) -> str:
    cwd = first_cwd(path)
    if cwd is None:
        layout.no_cwd.append(str(path.relative_to(transcripts)))
        rel = path.relative_to(transcripts).parts
        return project_id_from_cwd("/" + (rel[0] if len(rel) > 1 else "unknown"))
    slug = project_id_from_cwd(cwd)
    layout.folders.setdefault(slug, cwd)
    return slug


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    final, n = target, 1
    while final.exists():
        n += 1
        final = target.with_name(f"{target.stem}-{n}{target.suffix}")
    shutil.copy2(source, final)  # keeps the mtime: it dates records that carry no timestamp


# ---------------------------------------------------------------- pipeline and hook


def scratch_env(workdir: Path) -> dict[str, str]:
    """The environment of the scratch install: its own home, Claude config and data dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOUS_", "DAGSTER_", "XDG_DATA_HOME"))}
    env.update({k: os.environ[k] for k in PASSED_ENV if os.environ.get(k)})
    env.update(
        {
            "HOME": str(workdir / "home"),
            "CLAUDE_CONFIG_DIR": str(workdir / "home" / ".claude"),
            "NOUS_DATA_DIR": str(workdir / "data"),
        }
    )
    return env


def _nous(args: list[str], env: dict[str, str], log: Callable[[str], None]) -> None:
    """Run a ``nous`` command with this interpreter; its output goes to our stderr, a failure is an error."""
    command = [sys.executable, "-m", "nous_assets.cli", *args]
    log(f"bench memories: nous {' '.join(args)}")
    done = subprocess.run(command, env=env, stdout=sys.stderr, stderr=sys.stderr, check=False)
    if done.returncode != 0:
        raise NousError(f"`nous {' '.join(args)}` failed with exit {done.returncode} (its output is above)")


def activity_span(projects: Path) -> tuple[str, str]:
    """First and last UTC day with records in the laid-out transcripts."""
    from nous_assets.capture.days import file_days

    days: set[str] = set()
    for path in projects.rglob("*.jsonl"):
        info = file_days(path)
        if info is not None:
            days.update(info.days or {info.fallback})
    if not days:
        raise NousError(f"no dated records in the transcripts under {projects}")
    return min(days), max(days)


def session_start_command(settings_json: Path) -> str:
    """The SessionStart command ``nous hooks install`` wrote (the one Claude Code would run)."""
    from nous_assets.hooks import command_parts, is_ours

    config = json.loads(settings_json.read_text(encoding="utf-8"))
    for group in config.get("hooks", {}).get("SessionStart", []):
        for hook in group.get("hooks", []):
            if is_ours(hook) and command_parts(hook["command"])[1] == "session-start":
                return hook["command"]
    raise NousError(f"{settings_json}: no Nous SessionStart hook after `nous hooks install`")


def run_hook(command: str, cwd: str, env: dict[str, str], run_dir: Path, session: str) -> str:
    """The ``additionalContext`` the installed hook prints for a session starting in ``cwd`` ('' if none)."""
    payload = {
        "session_id": session,
        "transcript_path": "",
        "cwd": cwd,
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    hook_env = {k: v for k, v in env.items() if not k.startswith("NOUS_")}  # as in Claude Code's environment
    done = subprocess.run(
        command,
        shell=True,  # Claude Code runs hook commands through the shell
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=hook_env,
        cwd=run_dir,  # the gold cwd does not exist on this machine
        timeout=HOOK_TIMEOUT_S,
        check=False,
    )
    try:
        return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError):
        return ""


# ---------------------------------------------------------------- scoring


@dataclass
class StoreView:
    """Memories by project (lowercased content) plus the global ones, and the cwd -> project mapping."""

    by_project: dict[str, list[str]]
    global_texts: list[str]
    project_of: Callable[[str], str]


def read_store(db_path: Path, cwds: Iterable[str]) -> tuple[StoreView, dict[str, Any]]:
    """The store's current memories, grouped the way retrieval groups them, the project of each of ``cwds``
    as the pipeline names it, and a few counts."""
    from nous_assets.store.db import open_db

    conn = open_db(db_path)
    try:
        rows = memory_search.overview(conn)
        project_of = _project_mapper(conn)
        cwd_projects = {cwd: project_of(cwd, is_cwd=True) for cwd in cwds}
        by_project: dict[str, list[str]] = defaultdict(list)
        global_texts: list[str] = []
        per_session: dict[str, int] = defaultdict(int)
        kinds: dict[str, int] = defaultdict(int)
        for _id, project, scope, kind, content, session in rows:
            text = (content or "").lower()
            if scope == "global":
                global_texts.append(text)
            else:
                by_project[project_of(project, is_cwd=False)].append(text)
            per_session[session] += 1
            kinds[kind or "-"] += 1
        sessions = _ingested_sessions(conn)
    finally:
        conn.close()
    counts = {"memories": len(rows), "global": len(global_texts), "sessions": sessions,
              "by_kind": dict(sorted(kinds.items())), "per_session": dict(sorted(per_session.items()))}  # fmt: skip
    view = StoreView(dict(by_project), global_texts, lambda cwd: cwd_projects.get(cwd) or project_id_from_cwd(cwd))
    return view, counts


def _project_mapper(conn) -> Callable[..., str]:
    """How the pipeline names the project of a cwd — the hook's own lookup (:func:`resolver.project.lookup`:
    the store's aliases, else the repository's or the cwd's encoding) — or of a stored project id (as is:
    memories carry the canonical project)."""
    from resolver.project import default_project, lookup, read_repository

    cache: dict[str, str] = {}

    def project_of(value: str, *, is_cwd: bool) -> str:
        if not is_cwd:
            return value
        if value not in cache:
            repo = read_repository(value)
            try:
                found = lookup(conn, value, repo)
            except Exception:  # noqa: BLE001 - a store without project aliases: the encoding, as before
                found = None
            cache[value] = found or default_project(value, repo)
        return cache[value]

    return project_of


def _ingested_sessions(conn) -> int:
    """Main sessions the pipeline saw (subagent files share their session's id)."""
    return transcript_chunks.session_count(conn)


@dataclass
class Score:
    hits: int = 0
    total: int = 0

    @property
    def rate(self) -> float:
        return self.hits / self.total if self.total else 0.0

    def add(self, hit: bool) -> None:
        self.hits += bool(hit)
        self.total += 1

    def as_dict(self) -> dict[str, Any]:
        return {"hits": self.hits, "total": self.total, "rate": round(self.rate, 4)}


def dedupe(items: list[GoldItem], project_of: Callable[[str], str]) -> list[list[GoldItem]]:
    """Learnings grouped by (project, text): one group per distinct learning; anti items stay one each."""
    groups: dict[tuple, list[GoldItem]] = {}
    for item in items:
        key = (item.id,) if item.anti else (project_of(item.project_cwd), item.text)
        groups.setdefault(key, []).append(item)
    return list(groups.values())


def score(
    gold: list[GoldItem], store: StoreView, packets: dict[str, str]
) -> tuple[dict[str, dict[str, Score]], list[dict[str, Any]]]:
    """({"store"|"packet": {source|"all": recall or anti Score}}, per-item outcomes)."""
    lines = {cwd: [ln.lower() for ln in text.splitlines() if ln.strip()] for cwd, text in packets.items()}
    figures: dict[str, dict[str, Score]] = {"store": defaultdict(Score), "packet": defaultdict(Score)}
    outcomes = []
    for group in dedupe(gold, store.project_of):
        item = group[0]
        memories = store.by_project.get(store.project_of(item.project_cwd), []) + store.global_texts
        in_store = item.matched_by(memories)
        in_packet = any(g.matched_by(lines.get(g.project_cwd, [])) for g in group)
        what = "anti" if item.anti else "recall"
        for where, hit in (("store", in_store), ("packet", in_packet)):
            figures[where][f"{what}:all"].add(hit)
            figures[where][f"{what}:{item.source}"].add(hit)
        outcomes.append({"ids": [g.id for g in group], "source": item.source, "kind": item.kind,
                         "project_cwd": item.project_cwd, "store": in_store, "packet": in_packet})  # fmt: skip
    return {k: dict(v) for k, v in figures.items()}, outcomes


# ---------------------------------------------------------------- the benchmark


def _prepare_workdir(workdir: Path | None) -> tuple[Path, bool]:
    if workdir is None:
        return Path(tempfile.mkdtemp(prefix="nous-bench-memories-")), True
    if workdir.exists() and any(workdir.iterdir()):
        raise NousError(f"--workdir {workdir} is not empty; give a new or empty directory")
    workdir.mkdir(parents=True, exist_ok=True)
    return workdir, False


def run(
    gold_path: Path,
    transcripts: Path,
    out_dir: Path,
    *,
    workdir: Path | None = None,
    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
) -> dict[str, Any]:
    """Lay out, backfill, hook, score; print the figures (last line: packet recall and anti-hit)."""
    gold = load_gold(gold_path)
    if not transcripts.is_dir():
        raise NousError(f"no such transcripts folder: {transcripts}")
    workdir, temporary = _prepare_workdir(workdir)
    started = time.monotonic()
    try:
        report = _run(gold, gold_path, transcripts, workdir, log)
    finally:
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)
    report["seconds"] = round(time.monotonic() - started, 1)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"memories-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    print_report(report)
    print(f"saved {out}")
    packet = report["packet"]
    print(f"packet recall: {packet['recall']['rate']:.3f} anti-hit: {packet['anti']['rate']:.3f}")
    return report


def _run(gold: list[GoldItem], gold_path: Path, transcripts: Path, workdir: Path, log) -> dict[str, Any]:
    layout = lay_out(transcripts, workdir / "home" / ".claude" / "projects")
    log(f"bench memories: {layout.files} transcript files ({layout.sessions} sessions) in "
        f"{len(layout.folders)} project folders under {layout.projects}")  # fmt: skip
    env = scratch_env(workdir)
    first, last = activity_span(layout.projects)
    env["NOUS_PARTITION_START"] = first
    t = time.monotonic()
    _nous(["backfill", "--from", first, "--to", last], env, log)
    backfill_s = time.monotonic() - t
    _nous(["hooks", "install"], env, log)
    command = session_start_command(Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json")
    cwds = sorted({g.project_cwd for g in gold})
    packets = {cwd: run_hook(command, cwd, env, workdir, f"bench-memories-{i}") for i, cwd in enumerate(cwds)}
    store, counts = read_store(Path(env["NOUS_DATA_DIR"]) / "cortex.db", cwds)
    figures, outcomes = score(gold, store, packets)
    sessions = counts["sessions"] or layout.sessions
    return {
        "benchmark": "memories",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "gold": str(gold_path),
        "transcripts": str(transcripts),
        "days": [first, last],
        "backfill_seconds": round(backfill_s, 1),
        "files": layout.files,
        "sessions": sessions,
        "memories": counts["memories"],
        "global_memories": counts["global"],
        "memories_per_session": round(counts["memories"] / sessions, 2) if sessions else 0.0,
        "memories_by_kind": counts["by_kind"],
        "memories_by_session": counts["per_session"],
        "mean_packet_chars": round(statistics.fmean(len(p) for p in packets.values()), 1) if packets else 0.0,
        "store": _figures(figures["store"]),
        "packet": _figures(figures["packet"]),
        "items": outcomes,
        "packets": packets,
    }


def _figures(scores: dict[str, Score]) -> dict[str, Any]:
    """{"recall": all, "anti": all, "by_source": {source: {"recall", "anti"}}}."""
    empty = Score()
    out: dict[str, Any] = {"recall": scores.get("recall:all", empty).as_dict(),
                           "anti": scores.get("anti:all", empty).as_dict(), "by_source": {}}  # fmt: skip
    sources = sorted({k.split(":", 1)[1] for k in scores} - {"all"})
    for source in sources:
        out["by_source"][source] = {
            "recall": scores.get(f"recall:{source}", empty).as_dict(),
            "anti": scores.get(f"anti:{source}", empty).as_dict(),
        }
    return out


def _fmt(figure: dict[str, Any]) -> str:
    return f"{figure['rate']:.3f} ({figure['hits']}/{figure['total']})"


def print_report(report: dict[str, Any]) -> None:
    """The human-readable figures (everything but the last line)."""
    print(f"gold {report['gold']} over {report['transcripts']} ({report['days'][0]}..{report['days'][1]})")
    for where in ("store", "packet"):
        block = report[where]
        print(f"{where:6} recall {_fmt(block['recall'])}  anti-hit {_fmt(block['anti'])}")
        for source, fig in block["by_source"].items():
            print(f"  {source:20} recall {_fmt(fig['recall'])}  anti-hit {_fmt(fig['anti'])}")
    print(
        f"memories: {report['memories']} ({report['global_memories']} global) from {report['sessions']} sessions, "
        f"{report['memories_per_session']:.2f} per session; mean packet {report['mean_packet_chars']:.0f} chars "
        f"over {len(report['packets'])} project cwds; backfill {report['backfill_seconds']:.0f}s"
    )
