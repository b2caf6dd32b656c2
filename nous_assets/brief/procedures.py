"""Procedures: how the project is released, deployed and published (keys ``procedure:<kind>``).

Every command and edit that belongs to one is read as a *move* — a version bump (``npm version``,
``cargo release``, an edit of a manifest's version field), a changelog (``git cliff``, CHANGELOG.md), a
``chore(release)``/``release:`` commit, ``git tag v…``, a push of tags, ``gh release create``, ``gh workflow
run release.yml -f bump=…`` and watching it, a publish (``npm publish``, ``uv publish``, ``cargo publish``,
``twine upload`` …), a deploy (a ``deploy`` script, also one in a sibling repository like
``../infra/deploy.sh``; ``fly deploy``, ``vercel --prod``, ``kubectl apply``, ``make deploy`` …).

*Core* moves (commit, tag, release, workflow, publish, deploy) anchor an *episode*: core moves of one
stream close in time, the checks, bump and changelog just before the first one (after the last ordinary
commit or merge), and the pushes, watches and verifications just after the last one. An episode whose core
moves all succeeded is a verified procedure; numbers are generalised (``v1.2.3`` → ``v<version>``, run
ids → ``<run-id>``, ``bump=minor`` → ``bump=<major|minor|patch>``) so repeated releases read the same. The
most frequent sequence of each kind wins (ties: the most recent); one session is enough.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from nous_assets.brief.commands import runs_of
from nous_assets.brief.item import BriefItem, Proof, make_item
from nous_assets.brief.runners import CHECK_PURPOSES, purpose_of_name, render
from nous_assets.brief.shell_split import Segment, commit_message
from nous_assets.brief.timeline import SessionView, Step
from nous_assets.extract.rules.session import EDIT_TOOLS

CORE = frozenset({"commit", "tag", "release", "workflow", "publish", "deploy"})
LEAD_WINDOW = 20  # steps before the first core move where its checks, bump and changelog are looked for
CORE_GAP = 30  # steps between two core moves of one episode
TAIL_WINDOW = 12  # steps after the last core move where its pushes, watches and verifications are looked for

_VERSION_RE = re.compile(r"(?<![\w.])v?\d+\.\d+\.\d+(?:[-+][\w.]+)?(?![\w.])")
_LEVELS_RE = re.compile(r"^(?:major|minor|patch|premajor|preminor|prepatch|prerelease)$")
_RELEASE_MSG_RE = re.compile(  # a release commit names itself one, or carries the version it releases
    r"^\W*\s*(?:(?:chore|build|ci)\(release\)|release(?:\([\w-]+\))?:)"
    r"|^\W*\s*v?\d+\.\d+\.\d+\s*$"
    r"|\b(?:release|bump|version|prepare)\w*\b.*\bv?\d+\.\d+\.\d+",
    re.I,
)
_DEPLOY_CLIS = {
    ("fly", "deploy"), ("flyctl", "deploy"), ("vercel", "--prod"), ("vercel", "deploy"), ("netlify", "deploy"),
    ("wrangler", "deploy"), ("wrangler", "publish"), ("firebase", "deploy"), ("kubectl", "apply"),
    ("kubectl", "rollout"), ("helm", "upgrade"), ("terraform", "apply"), ("serverless", "deploy"),
    ("sls", "deploy"), ("cdk", "deploy"), ("railway", "up"), ("kamal", "deploy"), ("cap", "deploy"),
}  # fmt: skip
_PUBLISH = {
    ("npm", "publish"), ("pnpm", "publish"), ("yarn", "publish"), ("bun", "publish"), ("uv", "publish"),
    ("twine", "upload"), ("cargo", "publish"), ("poetry", "publish"), ("hatch", "publish"), ("gem", "push"),
    ("mix", "hex.publish"), ("flutter", "pub"), ("dart", "pub"), ("docker", "push"),
}  # fmt: skip
_BUMPS = {
    ("npm", "version"), ("pnpm", "version"), ("yarn", "version"), ("cargo", "release"), ("bump-my-version", "bump"),
    ("bumpversion", ""), ("uv", "version"), ("poetry", "version"), ("hatch", "version"), ("cz", "bump"),
    ("changeset", "version"), ("standard-version", ""),
}  # fmt: skip
_VERSION_FILES_RE = re.compile(
    r"(?:^|/)(?:package\.json|pyproject\.toml|Cargo\.toml|mix\.exs|setup\.cfg|VERSION|version\.txt|"
    r"__init__\.py|_version\.py|[\w.-]+\.csproj|build\.gradle(?:\.kts)?|pubspec\.yaml|Chart\.yaml)$"
)
_VERSION_FIELD_RE = re.compile(r"""(?:version|__version__)["']?\s*[:=]\s*["']?(v?\d+\.\d+\.\d+[\w.+-]*)""", re.I)


@dataclass(frozen=True)
class Move:
    """One step of a procedure, generalised."""

    kind: str  # bump | changelog | check | commit | tag | push | release | workflow | watch | verify | publish | deploy
    text: str  # the generalised command (or edit) as shown in the brief
    step: Step
    procedure: str  # release | deploy | publish ("" for moves that go with any)
    path: str = ""  # the file it cites (.github/workflows/release.yml, scripts/deploy.sh, pyproject.toml)
    prose: bool = False  # an edit described in words, not a command

    @property
    def shown(self) -> str:
        return self.text if self.prose else f"`{self.text}`"

    @property
    def core(self) -> bool:
        """Moves that anchor an episode; a push of tags is one (a plain push only follows)."""
        return self.kind in CORE or (self.kind == "push" and self.procedure == "release")

    def proof(self) -> Proof:
        return self.step.proof(f"{self.shown}: {'ok' if self.step.status == 'ok' else self.step.status}")


@dataclass
class Episode:
    procedure: str
    moves: list[Move]

    @property
    def sequence(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.shown for m in self.moves if m.step.status == "ok"))

    @property
    def verified(self) -> bool:
        core = [m for m in self.moves if m.core]
        done = {m.shown for m in core if m.step.status == "ok"}
        return bool(done) and all(m.shown in done for m in core)


def mine_procedures(views: Sequence[SessionView]) -> list[BriefItem]:
    episodes = [e for view in views for e in _episodes(view)]
    items = []
    for procedure in ("deploy", "publish", "release"):
        mine = [e for e in episodes if e.procedure == procedure and e.verified and _complete(e)]
        if mine:
            items.append(_item(procedure, mine))
    return items


def _complete(episode: Episode) -> bool:
    """Two steps or more, or one that is a procedure by itself (a deploy/release script or task, a release
    workflow, a publish): a lone tag or commit is not."""
    if len(episode.sequence) >= 2:
        return True
    return any(m.kind in ("deploy", "workflow", "publish") for m in episode.moves if m.step.status == "ok")


def _item(procedure: str, episodes: list[Episode]) -> BriefItem:
    counts: dict[tuple[str, ...], list[Episode]] = {}
    for e in episodes:
        counts.setdefault(e.sequence, []).append(e)
    best = max(counts, key=lambda seq: (len(counts[seq]), max(m.step.order for e in counts[seq] for m in e.moves)))
    lead = {"release": "To release", "deploy": "To deploy", "publish": "To publish"}[procedure]
    content = f"{lead}: " + ", then ".join(best) + "."
    moves = [m for e in counts[best] for m in e.moves if m.step.status == "ok"]
    proofs = [m.proof() for e in episodes for m in e.moves if m.step.status == "ok"]
    paths = [m.path for m in moves if m.path]
    return make_item("procedures", f"procedure:{procedure}", content, "verified", proofs, runs=len(episodes),
                     paths=paths)  # fmt: skip


# ---------------------------------------------------------------------------------------------------------
# episodes


def _episodes(view: SessionView) -> list[Episode]:
    streams: dict[int, list[Step]] = {}
    for step in view.steps:
        streams.setdefault(step.order[2], []).append(step)
    out: list[Episode] = []
    for steps in streams.values():
        moves = [(i, m) for i, step in enumerate(steps) for m in moves_of(step)]
        out.extend(_group(steps, moves))
    return out


def _group(steps: list[Step], moves: list[tuple[int, Move]]) -> list[Episode]:
    """Core moves close in time make an episode; lead and tail moves join the nearest one."""
    cores = [(i, m) for i, m in moves if m.core]
    groups: list[list[tuple[int, Move]]] = []
    for i, m in cores:
        if groups and i - groups[-1][-1][0] <= CORE_GAP and _compatible(groups[-1], m):
            groups[-1].append((i, m))
        else:
            groups.append([(i, m)])
    out = []
    for group in groups:
        first, last = group[0][0], group[-1][0]
        start = max(_boundary(steps, first), first - LEAD_WINDOW)
        lead = [(i, m) for i, m in moves if start <= i < first and m.kind in ("bump", "changelog", "check")]
        inside = [(i, m) for i, m in moves if first < i < last and not m.core]
        tail = [(i, m) for i, m in moves if last < i <= last + TAIL_WINDOW and m.kind in ("push", "watch", "verify")]
        ordered = sorted(lead + group + inside + tail, key=lambda x: (x[0], x[1].step.order))
        out.append(Episode(_procedure(group), [m for _, m in ordered]))
    return out


def _compatible(group: list[tuple[int, Move]], move: Move) -> bool:
    kinds = {m.procedure for _, m in group} - {""}
    return not kinds or move.procedure in ("", *kinds) or (move.procedure == "publish" and "release" in kinds)


def _procedure(group: list[tuple[int, Move]]) -> str:
    kinds = {m.procedure for _, m in group}
    if "deploy" in kinds:
        return "deploy"
    return "release" if kinds & {"release", ""} else "publish"


def _boundary(steps: list[Step], first: int) -> int:
    """Index after the last ordinary commit or merge before ``first``: the checks before it were for it."""
    for i in range(first - 1, -1, -1):
        for seg, _ in steps[i].parts:
            words = seg.tokens
            if words[:2] == ("git", "commit") and not _is_release_commit(steps[i].command):
                return i + 1
            if words[:3] == ("gh", "pr", "merge") or words[:2] == ("git", "merge"):
                return i + 1
    return 0


# ---------------------------------------------------------------------------------------------------------
# moves


def moves_of(step: Step) -> list[Move]:
    """The procedure moves one step made (a Bash call may make several)."""
    if step.call.name in EDIT_TOOLS:
        return _edit_moves(step)
    out = []
    for seg, _ in step.parts:
        move = _move(step, seg)
        if move is not None:
            out.append(move)
    out.extend(_checks(step))
    return out


def _checks(step: Step) -> list[Move]:
    return [
        Move("check", f"`{r.use.form}` (in `{r.where}/`)", step, "", prose=True) if r.where else
        Move("check", r.use.form, step, "")
        for r in runs_of(step)
        if r.ok and r.use.purpose in CHECK_PURPOSES and not (r.use.purpose == "test" and r.use.filtered)
    ]  # fmt: skip


def _move(step: Step, seg: Segment) -> Move | None:
    words = list(seg.tokens)
    head = posixpath.basename(words[0])
    sub = words[1] if len(words) > 1 else ""
    if head == "git":
        return _git_move(step, seg, words)
    if head == "gh":
        return _gh_move(step, words)
    if (head, sub) in _PUBLISH or (head, sub) in _BUMPS or (head, "") in _BUMPS:
        kind = "publish" if (head, sub) in _PUBLISH else "bump"
        return Move(kind, _generalise(words), step, "publish" if kind == "publish" else "")
    if head == "git-cliff":
        return Move("changelog", _generalise(words), step, "")
    if (head, sub) in _DEPLOY_CLIS or (head, "--prod") in _DEPLOY_CLIS and "--prod" in words:
        return Move("deploy", _generalise(words), step, "deploy")
    return _named_move(step, seg, words)


_TASK_RUNNERS = frozenset({"make", "just", "task", "mise", "npm", "pnpm", "yarn", "bun"})
_SHELLS = frozenset({"bash", "sh", "zsh"})


def _named_move(step: Step, seg: Segment, words: list[str]) -> Move | None:
    """A task or script named deploy/release/publish: ``make deploy``, ``npm run release``,
    ``./scripts/release.sh``, ``bash ../infra/deploy.sh`` (a sibling repository's script counts)."""
    head = posixpath.basename(words[0])
    if head in _TASK_RUNNERS:
        rest = [w for w in words[1:] if not w.startswith("-")]
        target = rest[1] if rest[:1] in (["run"], ["r"]) and len(rest) > 1 else (rest[0] if rest else "")
        kind = _named_kind(target) if target else None
        if kind is None or purpose_of_name(target) in CHECK_PURPOSES:
            return None
        return Move(kind, _generalise(words), step, kind)  # `make deploy ENV=prod`: the arguments pick where
    script_at = 1 if head in _SHELLS and len(words) > 1 else 0
    script = words[script_at]
    if "/" not in script and not re.search(r"\.(?:sh|bash|py|js|mjs|ts|rb)$", script):
        return None
    kind = _named_kind(script)
    path = step.rel(posixpath.join(seg.cwd, script), sibling=True) if kind else None
    if kind is None or not path or purpose_of_name(script) in CHECK_PURPOSES:
        return None
    return Move(kind, _generalise([*words[:script_at], path, *words[script_at + 1 :]]), step, kind, path)


def _named_kind(label: str) -> str | None:
    parts = re.split(r"[-_.:/]+", posixpath.basename(label).lower())
    for kind in ("deploy", "release", "publish"):
        if kind in parts:
            return kind
    return None


def _git_move(step: Step, seg: Segment, words: list[str]) -> Move | None:
    sub = words[1] if len(words) > 1 else ""
    if sub == "cliff":
        return Move("changelog", _generalise(words), step, "")
    if sub == "commit" and _is_release_commit(step.command):
        message = _VERSION_RE.sub(_version_placeholder, commit_message(step.command)).replace('"', "'")
        return Move("commit", f'git commit -m "{message}"', step, "release")
    if sub == "tag":
        names = [w for w in words[2:] if not w.startswith("-") and _VERSION_RE.fullmatch(w)]
        if names and not {"-d", "--delete", "-l", "--list"} & set(words):
            flags = [w for w in words[2:] if w in ("-a", "-s", "--annotate", "--sign")]
            return Move("tag", render(["git", "tag", *flags, "v<version>"]), step, "release")
    if sub == "push":
        if {"--tags", "--follow-tags"} & set(words) or any(_VERSION_RE.fullmatch(w) for w in words[2:]):
            return Move("push", _generalise([w for w in words if w not in ("-u",)]), step, "release")
        return Move("push", _generalise(words), step, "")
    return None


def _gh_move(step: Step, words: list[str]) -> Move | None:
    words = _without_repo(words)
    if words[1:3] == ["release", "create"]:
        texts = ("--notes", "-n", "--title", "-t")  # this release's words, not the procedure's
        kept = [w for i, w in enumerate(words) if w not in texts and not (i and words[i - 1] in texts)]
        return Move("release", _generalise(kept), step, "release")
    if words[1:3] == ["release", "view"]:
        return Move("verify", _generalise(words[:4]), step, "")
    if words[1:3] == ["workflow", "run"] and len(words) > 3:
        kind = _named_kind(words[3])
        if kind:
            path = f".github/workflows/{words[3]}" if words[3].endswith((".yml", ".yaml")) else ""
            return Move("workflow", _generalise(words), step, kind, path)
    if words[1:3] == ["run", "watch"]:
        return Move("watch", _generalise(words), step, "")
    return None


def _without_repo(words: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
        elif w in ("--repo", "-R"):
            skip = True
        elif not w.startswith("--repo="):
            out.append(w)
    return out


def _edit_moves(step: Step) -> list[Move]:
    """A version bump made by editing a manifest, or a changelog written by hand."""
    rel = step.rel(step.call.path) if step.call.path and step.status == "ok" else None
    if rel is None:
        return []
    if re.search(r"(?:^|/)CHANGELOG(?:\.md)?$", rel, re.I):
        return [Move("changelog", f"update `{rel}`", step, "", rel, prose=True)]
    if not _VERSION_FILES_RE.search(rel):
        return []
    old = _VERSION_FIELD_RE.findall(str(step.call.inp.get("old_string") or ""))
    new = _VERSION_FIELD_RE.findall(str(step.call.inp.get("new_string") or step.call.inp.get("content") or ""))
    if old and new and old != new:
        return [Move("bump", f"bump the version in `{rel}`", step, "", rel, prose=True)]
    return []


# ---------------------------------------------------------------------------------------------------------
# generalising


def _generalise(words: list[str]) -> str:
    """Numbers that change from one run to the next replaced by what they stand for."""
    out = []
    for w in words:
        key, eq, value = w.partition("=")
        if eq and _LEVELS_RE.match(value):
            w = f"{key}=<major|minor|patch>"
        elif _LEVELS_RE.match(w):
            w = "<major|minor|patch>"
        elif re.fullmatch(r"\d{6,}", w):
            w = "<run-id>"
        out.append(_VERSION_RE.sub(_version_placeholder, w))
    return render(out)


def _version_placeholder(m: re.Match[str]) -> str:
    return "v<version>" if m.group(0).startswith("v") else "<version>"


def _is_release_commit(command: str) -> bool:
    return bool(_RELEASE_MSG_RE.search(commit_message(command)))
