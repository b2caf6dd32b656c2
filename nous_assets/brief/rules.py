"""Rules: how changes reach the repository, learned from what failed, how it was resolved, what the user said.

* ``rule:protected-branch`` — a push rejected ("protected branch", GH006/GH013, "Changes must be made through
  a pull request", "required status check"), a merge refused ("the base branch policy prohibits the
  merge"), or the branch-protection API read (required reviews, checks, signatures); dropped when a later
  direct push to that branch went through.
* ``rule:signed-commits`` — a commit failing to sign (``gpg failed to sign the data``, ``op-ssh-sign``),
  commits made with ``-S``, signatures required by branch protection, or the user saying commits are signed
  or that they run the commit themselves.
* ``rule:branch-prefix`` — branches created (``git checkout -b``, ``git switch -c``, ``git worktree add -b``,
  ``git push -u origin a:b``, ``gh pr create --head``) mostly share ``<prefix>/`` names.
* ``rule:pr-flow`` — changes land through ``gh pr create`` (drafts when most are), and merges share flags
  (``--squash --delete-branch``); an ``--admin`` merge bypasses the rules and is not evidence.
* ``rule:leave-out`` — files unstaged before committing (``git restore --staged``, ``git reset HEAD <f>``) in
  two sessions, or that the user said not to commit.
* ``rule:force-add`` — files git ignores but the project tracks: ``git add`` refused them and
  ``git add -f`` was how they got committed, twice or more.
* ``rule:gh-repo`` — ``gh`` is run with ``--repo owner/name`` (``-R``): most of its successful calls name the
  same repository, in two sessions or more, or a call without it failed because gh could not tell the
  repository from the checkout's remote.

Status ``verified`` when a tool result shows it, ``stated`` when only the user said it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from nous_assets.brief.item import BriefItem, Proof, make_item
from nous_assets.brief.shell_split import Segment
from nous_assets.brief.timeline import SessionView, Step, under
from nous_assets.extract.rules.text import ANSI_RE, I

_REJECTED_RE = re.compile(
    r"protected branch|GH006|GH013|Changes must be made through a pull request|push declined due to repository rule"
    r"|required status checks? (?:is|are) expected|Cannot force-push to this branch",
    I,
)
_MERGE_REFUSED_RE = re.compile(
    r"base branch policy prohibits the merge|Required status checks? .*(?:expected|failing)|review(?:s)? required"
    r"|At least \d+ approving review",
    I,
)
_SIGN_FAILED_RE = re.compile(
    r"gpg failed to sign the data|gpg: signing failed|cannot run gpg|error: signing failed|op-ssh-sign"
    r"|failed to sign|ssh-keygen.*-Y sign|error: Load key .*: (?:invalid format|incorrect passphrase)",
    I,
)
IGNORED = "The following paths are ignored by one of your .gitignore files"
_IGNORED_RE = re.compile(re.escape(IGNORED) + r":\s*\n((?:\S.*\n?)+)")
_PROTECTED_SAID_RE = re.compile(
    r"\b(?:never|don'?t|do not|no)\s+(?:direct\s+)?(?:push(?:es|ing)?|commit(?:s|ting)?)\s+(?:directly\s+)?"
    r"(?:to|on|into)\s+[`'\"]?(main|master|develop|trunk)\b|\b(main|master)[`'\"]? is (?:a )?protected\b",
    I,
)
_SIGNED_SAID_RE = re.compile(
    r"\bcommits? (?:must|need to|have to|should) be signed\b"
    r"|\b(?:gpg|ssh)[- ]sign(?:ed|ing)? (?:my |the |all )?commits?\b|\bcommit signing\b|\bsigned commits?\b",
    I,
)
_USER_COMMITS_SAID_RE = re.compile(
    r"\b(?:i'?ll|i will|let me)\s+(?:do|make|run|handle)\s+the\s+commits?\b|\bi'?ll commit (?:it |this |them )?myself\b"
    r"|\b(?:don'?t|do not|never)\s+commit\b[^.\n]{0,40}\b(?:i'?ll|i will|myself)\b",
    I,
)
_LEAVE_OUT_SAID_RE = re.compile(
    r"\b(?:don'?t|do not|never)\s+(?:commit|stage|add|check in)\s+[`'\"]?([\w.@/-]*[./][\w.@/-]+)[`'\"]?"
    r"|\bleave\s+[`'\"]?([\w.@/-]*[./][\w.@/-]+)[`'\"]?\s+out of (?:the |this |any )?commits?"
    r"|[`'\"]([\w.@/-]*[./][\w.@/-]+)[`'\"]? (?:should(?:n'?t| not)|must not|mustn'?t) be committed",
    I,
)
_DEFAULT_BRANCHES = frozenset({"main", "master", "develop", "trunk"})
_MERGE_REFUSED = "`gh pr merge` is refused until its required checks and reviews pass (`--auto` merges when they do)"


def mine_rules(views: Sequence[SessionView]) -> list[BriefItem]:
    steps = sorted((s for v in views for s in v.steps), key=lambda s: s.order)
    said = sorted((x for v in views for x in v.said), key=lambda x: x.order)
    found = [
        _protected(steps, said), _signed(steps, said), _branch_prefix(steps), _pr_flow(steps),
        _leave_out(steps, said), _force_add(steps), _gh_repo(steps),
    ]  # fmt: skip
    return [item for item in found if item is not None]


def _git_words(step: Step) -> list[tuple[Segment, tuple[str, ...]]]:
    """The git and gh commands of a step (cached: every rule asks)."""
    if "git" not in step.cache:
        step.cache["git"] = [(seg, seg.tokens) for seg, _ in step.parts if seg.tokens[0] in ("git", "gh")]
    return step.cache["git"]  # type: ignore[return-value]


@dataclass
class _Evidence:
    details: list[str] = field(default_factory=list)
    proofs: list[Proof] = field(default_factory=list)
    verified: bool = False

    def add(self, detail: str, proof: Proof, *, verified: bool = True) -> None:
        if detail not in self.details:
            self.details.append(detail)
        self.proofs.append(proof)
        self.verified = self.verified or verified


# ---------------------------------------------------------------------------------------------------------
# protected branch


def _protected(steps: list[Step], said: list) -> BriefItem | None:
    ev = _Evidence()
    branch = ""
    last_evidence: tuple = ()
    for step in steps:
        for seg, words in _git_words(step):
            if words[:2] != ("git", "push") and words[:3] != ("gh", "pr", "merge") and words[:2] != ("gh", "api"):
                continue
            text = ANSI_RE.sub("", step.output[:20000])
            if words[:2] == ("git", "push") and _REJECTED_RE.search(text):
                branch = _push_target(words, step) or branch
                ev.add("direct pushes are rejected, so changes land through a pull request",
                       step.proof(f"`{seg.text}` rejected: {_line(text, _REJECTED_RE)}"))  # fmt: skip
                last_evidence = step.order
            elif words[:3] == ("gh", "pr", "merge") and _MERGE_REFUSED_RE.search(text) and "--admin" not in words:
                ev.add(_MERGE_REFUSED, step.proof(f"`{seg.text}` refused: {_line(text, _MERGE_REFUSED_RE)}"))
                last_evidence = step.order
            elif (
                words[:2] == ("gh", "api")
                and step.status == "ok"
                and re.search(r"/branches/[^/\s]+/protection", seg.text)
            ):
                details = _protection_details(text)
                if details:
                    branch = re.search(r"/branches/([^/\s]+)/protection", seg.text).group(1)
                    for d in details:
                        ev.add(d, step.proof(f"`{seg.text}` shows branch protection"))
                    last_evidence = step.order
    for x in said:
        m = _PROTECTED_SAID_RE.search(x.text)
        if m and len(x.text) < 2000:
            branch = branch or (m.group(1) or m.group(2)).lower()
            ev.add("the user said not to push to it directly", x.proof(f"user: {m.group(0)}"), verified=False)
            last_evidence = max(last_evidence, x.order)
    if not ev.details or _pushed_later(steps, branch or "main", last_evidence):
        return None
    name = f"`{branch}`" if branch else "The base branch"
    content = f"{name} is protected: " + "; ".join(ev.details) + "."
    return make_item("rules", "rule:protected-branch", content, "verified" if ev.verified else "stated", ev.proofs,
                     runs=len(ev.proofs))  # fmt: skip


def _protection_details(text: str) -> list[str]:
    """What a branch-protection API answer requires (JSON), in words."""
    try:
        data = json.loads(text[text.find("{") :]) if "{" in text else {}
    except ValueError:
        return []
    if not isinstance(data, dict) or not data:
        return []
    out = []
    reviews = data.get("required_pull_request_reviews")
    if isinstance(reviews, dict):
        n = reviews.get("required_approving_review_count") or 0
        out.append(f"changes need a pull request with {n} approving review{'s' if n != 1 else ''}" if n
                   else "changes need a pull request")  # fmt: skip
    checks = data.get("required_status_checks")
    if isinstance(checks, dict):
        names = checks.get("contexts") or [c.get("context") for c in checks.get("checks") or [] if isinstance(c, dict)]
        shown = [f"`{c}`" for c in names if isinstance(c, str)][:5]
        out.append("required checks: " + ", ".join(shown) if shown else "status checks must pass")
    if isinstance(data.get("required_signatures"), dict) and data["required_signatures"].get("enabled"):
        out.append("commits must be signed")
    if isinstance(data.get("allow_force_pushes"), dict) and data["allow_force_pushes"].get("enabled") is False:
        out.append("force pushes are not allowed")
    return out


def _push_target(words: tuple[str, ...], step: Step) -> str:
    args = [w for w in words[2:] if not w.startswith("-")]
    if len(args) >= 2:
        return args[-1].split(":")[-1].removeprefix("refs/heads/")
    return step.call.turn.git_branch or ""


def _pushed_later(steps: list[Step], branch: str, after: tuple) -> bool:
    """A later successful direct push to ``branch``: whatever protected it no longer does."""
    for step in steps:
        if step.order <= after:
            continue
        for _, words in _git_words(step):
            if (
                words[:2] == ("git", "push")
                and step.status == "ok"
                and not _REJECTED_RE.search(step.output)
                and _push_target(words, step) == branch
            ):
                return True
    return False


def _line(text: str, rx: re.Pattern[str]) -> str:
    m = rx.search(text)
    if not m:
        return ""
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    return text[start : end if end >= 0 else len(text)].strip()[:140]


# ---------------------------------------------------------------------------------------------------------
# signed commits


def _signed(steps: list[Step], said: list) -> BriefItem | None:
    ev = _Evidence()
    for step in steps:
        for seg, words in _git_words(step):
            if words[:2] != ("git", "commit"):
                continue
            text = ANSI_RE.sub("", step.output[:10000])
            if step.status == "fail" and _SIGN_FAILED_RE.search(text):
                ev.add("signing fails from Claude's shell, so leave `git commit` to the user",
                       step.proof(f"`{seg.text}` failed: {_line(text, _SIGN_FAILED_RE)}"))  # fmt: skip
            elif step.status == "ok" and {"-S", "--gpg-sign"} & set(words):
                ev.add("commit with `git commit -S`", step.proof(f"`{seg.text}`: ok"))
        for seg, words in _git_words(step):
            api = words[:2] == ("gh", "api") and step.status == "ok" and "/protection" in seg.text
            if api and "commits must be signed" in _protection_details(step.output):
                ev.add("branch protection requires signatures", step.proof(f"`{seg.text}` requires signatures"))
    signing = bool(ev.details)
    for x in said:
        if len(x.text) >= 2000:
            continue
        m = _SIGNED_SAID_RE.search(x.text)
        if m:
            signing = True
            ev.add("the user said so", x.proof(f"user: {m.group(0)}"), verified=False)
        m = _USER_COMMITS_SAID_RE.search(x.text)
        if m:
            ev.add("the user runs `git commit` themselves: stage the changes and leave the commit to them",
                   x.proof(f"user: {m.group(0)}"), verified=False)  # fmt: skip
    if not ev.details:
        return None
    lead = "Commits must be signed: " if signing else "Commits are the user's: "
    details = [d for d in ev.details if d != "the user said so"] or ev.details
    content = lead + "; ".join(details) + "."
    return make_item("rules", "rule:signed-commits", content, "verified" if ev.verified else "stated", ev.proofs,
                     runs=len(ev.proofs))  # fmt: skip


# ---------------------------------------------------------------------------------------------------------
# branches and pull requests


def _created_branches(steps: list[Step]) -> dict[str, Proof]:
    """Branch name -> the first call that created or first pushed it."""
    out: dict[str, Proof] = {}
    for step in steps:
        for seg, words in _git_words(step):
            if step.status != "ok":
                break
            for name in _branch_names(words):
                if name not in _DEFAULT_BRANCHES and "$" not in name and name not in out:
                    out[name] = step.proof(f"`{seg.text}` created branch `{name}`")
    return out


def _branch_names(words: tuple[str, ...]) -> list[str]:
    w = list(words)
    if w[:2] in (["git", "checkout"], ["git", "switch"], ["git", "worktree"]):
        flag = next((i for i, x in enumerate(w) if x in ("-b", "-B", "-c", "-C")), None)
        return [w[flag + 1]] if flag is not None and flag + 1 < len(w) else []
    if w[:2] == ["git", "push"] and {"-u", "--set-upstream"} & set(w):
        args = [x for x in w[2:] if not x.startswith("-")]
        return [args[-1].split(":")[-1]] if len(args) >= 2 else []
    if w[:3] == ["gh", "pr", "create"] and "--head" in w:
        i = w.index("--head")
        return [w[i + 1]] if i + 1 < len(w) else []
    return []


def _branch_prefix(steps: list[Step]) -> BriefItem | None:
    branches = _created_branches(steps)
    prefixed = {b: p for b, p in branches.items() if re.fullmatch(r"[a-z][\w-]*/[\w./-]+", b)}
    counts = Counter(b.split("/")[0] for b in prefixed)
    if len(prefixed) < 2 or len(prefixed) * 3 < len(branches) * 2:
        return None
    if max(counts.values()) < 2 and len(prefixed) < 3:
        return None  # two one-off names are not a convention
    ordered = sorted(counts, key=lambda p: (-counts[p], p))
    shown = ", ".join(f"`{p}/…`" for p in ordered[:6])
    lead = (
        f"New branches are named `{ordered[0]}/<topic>`"
        if len(ordered) == 1
        else (f"New branches are named `<type>/<topic>` ({shown})")
    )
    return make_item("rules", "rule:branch-prefix", lead + ".", "verified", list(prefixed.values()), runs=len(prefixed))


def _pr_flow(steps: list[Step]) -> BriefItem | None:
    creates: list[tuple[tuple[str, ...], Proof]] = []
    merges: list[tuple[str, Proof]] = []
    direct = 0
    for step in steps:
        for seg, words in _git_words(step):
            if step.status != "ok":
                break
            if words[:3] == ("gh", "pr", "create"):
                creates.append((words, step.proof(f"`{_short(seg.text)}`: ok")))
            elif words[:3] == ("gh", "pr", "merge") and "--admin" not in words:
                flags = " ".join(sorted({_LONG_FLAGS.get(w, w) for w in words[3:]} & set(_MERGE_FLAGS)))
                merges.append((flags, step.proof(f"`{_short(seg.text)}`: ok")))
            elif words[:2] == ("git", "push") and _push_target(words, step) in _DEFAULT_BRANCHES:
                direct += 1
    parts = []
    proofs: list[Proof] = []
    if len(creates) >= 2 and direct * 2 < len(creates):
        drafts = sum("--draft" in w or "-d" in w for w, _ in creates)
        parts.append(
            "Changes land through pull requests ("
            + ("`gh pr create --draft`, opened as drafts)" if drafts * 2 > len(creates) else "`gh pr create`)")
        )
        proofs += [p for _, p in creates]
    style = Counter(f for f, _ in merges if f).most_common(1)
    if style and style[0][1] >= 2:
        flags = " ".join(sorted(style[0][0].split(), key=_MERGE_FLAGS.index))
        merged = f"merged with `gh pr merge <number> {flags}`"
        parts.append(merged if parts else f"Pull requests are {merged}")
        proofs += [p for f, p in merges if f == style[0][0]]
    if not parts:
        return None
    content = parts[0] + (", " + parts[1] if len(parts) > 1 else "") + "."
    content = content[0].upper() + content[1:]
    return make_item("rules", "rule:pr-flow", content, "verified", proofs, runs=len(proofs))


_MERGE_FLAGS = ["--squash", "--merge", "--rebase", "--delete-branch", "--auto"]
_LONG_FLAGS = {"-s": "--squash", "-m": "--merge", "-r": "--rebase", "-d": "--delete-branch"}


def _short(text: str) -> str:
    return re.sub(r"\s--(?:body|title)\s.*$", " …", text)[:120]


# ---------------------------------------------------------------------------------------------------------
# files


def _leave_out(steps: list[Step], said: list) -> BriefItem | None:
    unstaged: dict[str, list[Proof]] = {}
    for step in steps:
        for seg, words in _git_words(step):
            if step.status != "ok":
                break
            for path in _unstaged_paths(words):
                unstaged.setdefault(path, []).append(step.proof(f"`{seg.text}` unstaged `{path}`"))
    files = {p: proofs for p, proofs in unstaged.items() if len({x.session for x in proofs}) >= 2}
    verified = bool(files)
    for x in said:
        for m in _LEAVE_OUT_SAID_RE.finditer(x.text):
            path = next(g for g in m.groups() if g)
            if len(x.text) < 2000 and not path.startswith(("http", "www.")):
                files.setdefault(path.strip("/"), []).append(x.proof(f"user: {m.group(0)}"))
    if not files:
        return None
    names = sorted(files)[:5]
    content = "Leave " + ", ".join(f"`{n}`" for n in names) + " out of commits."
    proofs = [p for n in names for p in files[n]]
    return make_item("rules", "rule:leave-out", content, "verified" if verified else "stated", proofs, runs=len(proofs),
                     paths=names)  # fmt: skip


def _unstaged_paths(words: tuple[str, ...]) -> list[str]:
    w = list(words)
    if w[:3] == ["git", "restore", "--staged"]:
        args = w[3:]
    elif w[:2] == ["git", "reset"] and not {"--hard", "--soft", "--merge", "--keep"} & set(w):
        args = w[2:]
        args = args[1:] if args and re.fullmatch(r"HEAD(?:[~^]\d*)?|[0-9a-f]{7,40}|origin/\S+", args[0]) else args
    else:
        return []
    paths = [a for a in args if a != "--" and not a.startswith("-")]
    return [p for p in paths if p not in (".", "*") and "$" not in p and re.search(r"[./]", p)]


def _force_add(steps: list[Step]) -> BriefItem | None:
    """Files ``git add`` refused as ignored and ``git add -f`` then staged, seen at least twice."""
    refused: list[str] = []
    found: dict[str, list[Proof]] = {}
    for step in steps:
        adds = [w for _, w in _git_words(step) if w[:2] == ("git", "add")]
        m = _IGNORED_RE.search(step.output) if adds and step.status == "fail" else None
        if m:
            refused = [line.strip() for line in m.group(1).splitlines() if line.strip() and not line.startswith("hint")]
            continue
        for seg, words in _git_words(step):
            if words[:2] == ("git", "add") and {"-f", "--force"} & set(words) and step.status == "ok" and refused:
                for path in (w for w in words[2:] if not w.startswith("-")):
                    if any(under(path, r) for r in refused):
                        found.setdefault(path, []).append(step.proof(f"`{seg.text}` after `git add` refused it"))
    files = sorted(p for p, proofs in found.items() if len(proofs) >= 2)
    if not files:
        return None
    shown = ", ".join(f"`{f}`" for f in files[:3])
    content = (
        f"{shown} {'is' if len(files) == 1 else 'are'} git-ignored but tracked: `git add` refuses "
        f'{"it" if len(files) == 1 else "them"} ("{IGNORED}"); stage with `git add -f {files[0]}`'
    )
    proofs = [p for f in files for p in found[f]]
    return make_item("rules", "rule:force-add", content + ".", "verified", proofs, runs=len(proofs), paths=files)


# ---------------------------------------------------------------------------------------------------------
# gh and the repository it acts on

_GH_NO_REPO_RE = re.compile(
    r"could not determine (?:the )?(?:base )?repo|none of the git remotes|no git remotes? (?:found|configured)"
    r"|not a git repository|unable to determine (?:the )?repository|could not resolve to a Repository",
    I,
)
_GH_REPO_SUBCOMMANDS = frozenset({"pr", "issue", "run", "workflow", "release", "secret", "variable", "label", "repo"})


def _gh_repo_flag(words: tuple[str, ...]) -> str | None:
    """The ``owner/name`` a gh command names with ``--repo``/``-R`` (None: it names none)."""
    for i, w in enumerate(words):
        if w in ("--repo", "-R") and i + 1 < len(words):
            return words[i + 1]
        if w.startswith("--repo="):
            return w.split("=", 1)[1]
    return None


def _gh_repo(steps: list[Step]) -> BriefItem | None:
    named: Counter[str] = Counter()
    proofs: dict[str, list[Proof]] = {}
    sessions: dict[str, set[str]] = {}
    bare_ok = 0
    failed_without: list[Proof] = []
    for step in steps:
        for seg, words in _git_words(step):
            if words[0] != "gh" or len(words) < 2 or words[1] not in _GH_REPO_SUBCOMMANDS:
                continue
            repo = _gh_repo_flag(words)
            if step.status == "fail" and repo is None and _GH_NO_REPO_RE.search(step.output):
                failed_without.append(step.proof(f"`{_short(seg.text)}` failed: gh could not tell the repository"))
            elif step.status == "ok" and repo and re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
                named[repo] += 1
                proofs.setdefault(repo, []).append(step.proof(f"`{_short(seg.text)}`: ok"))
                sessions.setdefault(repo, set()).add(step.session)
            elif step.status == "ok" and repo is None:
                bare_ok += 1
    if not named:
        return None
    repo, uses = named.most_common(1)[0]
    consistent = uses >= 3 and uses >= 4 * bare_ok and len(sessions[repo]) >= 2
    if not (failed_without or consistent):
        return None
    why = ": gh cannot tell the repository from this checkout's remote" if failed_without else ""
    content = f"Run `gh` with `--repo {repo}` (`-R`){why}."
    return make_item("rules", "rule:gh-repo", content, "verified", [*failed_without, *proofs[repo]], runs=uses)
