"""Workflow: how work gets done in this repository — the task tracker, the hooks.

The quality gate is the project brief's (:mod:`nous_assets.brief.gate`): the checks run before commits across
sessions, not one session's.

* **Task tracker** (``slot`` ``tool:tasks``): a command-line tracker used through its life cycle — find,
  inspect, claim, close, sync, create — with ids replaced by ``<id>``, e.g. ``bd ready`` / ``bd show <id>``
  / ``bd update <id> --status in_progress`` / ``bd close <id>``, or ``gh issue list`` / ``gh issue view``.
* **Git hooks** (``slot`` ``tool:hook-<name>``): what a pre-commit / pre-push hook runs (lefthook, husky,
  lint-staged, pre-commit, a custom script) as seen in ``git commit`` / ``git push`` output; when a
  ``--no-verify`` attempt fails the same way, the memory says the check cannot be bypassed. A hook no commit
  showed is read from its file (``.git/hooks/<name>``, ``.husky/<name>``) as the session wrote or read it:
  the commands it runs, in order.
"""

from __future__ import annotations

import re
import shlex

from nous_assets.extract.rules import shell
from nous_assets.extract.rules.session import Call, Cand, Stream, cand
from nous_assets.extract.rules.text import ANSI_RE, I, cap, unnumbered

MAX_CONTENT = 360
_ID_RE = re.compile(r"^(?:[A-Za-z][\w]*-[a-z0-9]{2,}(?:\.\d+)*|#?\d+|[a-z]+-\d+)$")
_LIFECYCLE = (  # (stage, subcommands, label)
    ("find", ("ready", "list", "search", "next"), "find"),
    ("inspect", ("show", "view", "info"), "read"),
    ("claim", ("update", "claim", "start", "assign", "edit"), "claim"),
    ("close", ("close", "done", "complete", "finish", "resolve"), "finish"),
    ("sync", ("sync",), "sync"),
    ("create", ("create", "new", "add"), "new work"),
    ("dep", ("dep", "link", "block"), "link"),
)
_HOOK_RE = re.compile(
    r"lefthook v[\d.]+\s+hook: ([\w-]+)|\bhusky\b|lint-staged|\[STARTED\] Running tasks for staged files"
    r"|^\S.*?\.{4,}(?:Passed|Failed|Skipped)$|pre-commit (?:validation|hook|check)|pre-push hook",
    I | re.M,
)


# ---------------------------------------------------------------------------------------------------------
# task tracker


def task_tracker(s: Stream) -> list[Cand]:
    """The task tracker's life cycle as this session used it (at least find/inspect and claim/close)."""
    uses: dict[str, dict[str, tuple[str, Call]]] = {}
    for call in s.calls:
        if not call.command:
            continue
        for seg in re.split(r"\s*(?:&&|;|\n)\s*", call.command):
            found = _tracker_step(seg)
            if found:
                tool, stage, shown = found
                have = uses.setdefault(tool, {}).get(stage)
                if have is None or (stage == "create" and len(shown) > len(have[0])):
                    uses[tool][stage] = (shown, call)  # the first use, or the most telling create
    out = []
    for tool, stages in uses.items():
        life_cycle = {"find", "inspect"} & set(stages) and {"claim", "close"} & set(stages) and len(stages) >= 3
        planning = {"create", "dep"} <= set(stages)  # filing linked work items is the tracker's use too
        if not (life_cycle or planning):
            continue
        parts = [f"`{stages[stage][0]}` ({label})" for stage, _, label in _LIFECYCLE if stage in stages]
        pushed = any(shell.family(c.command) == "git push" for c in s.calls if c.command)
        tail = "; at the end: sync, commit, `git push`" if "sync" in stages and pushed else ""
        content = cap(f"Work is tracked with `{tool}`: " + ", ".join(parts) + tail + ".", 420)
        first = min((call for _, call in stages.values()), key=lambda c: c.pos)
        c = cand("workflow", content, first.turn, s.gpos[first.pos], [call.turn for _, call in stages.values()],
                 content, applies_when="when picking up, claiming or finishing work", source_ref=tool,
                 score=5.0, basis="check")  # fmt: skip
        c.slot = "tool:tasks"
        c.domain = "workflow"
        out.append(c)
    return out


def _tracker_step(seg: str) -> tuple[str, str, str] | None:
    """(tool, life-cycle stage, command with ids as <id>) for one command segment of a task tracker."""
    seg = re.sub(r"\s*\d?>&?\s*\S+|\s*\|.*$", "", seg.strip())  # redirections and pipes are not the step
    seg = re.sub(r"\"[^\"]{25,}\"?|'[^']{25,}'?|\$\(.*", "…", seg)  # long quoted values say nothing general
    try:
        toks = shlex.split(seg)
    except ValueError:
        toks = seg.split()
    if len(toks) < 2 or toks[0] in shell.CMD_PREFIX_SKIP:
        return None
    if toks[0] == "gh" and len(toks) >= 3 and toks[1] in ("issue", "project"):
        tool, sub, rest = f"gh {toks[1]}", toks[2], toks[3:]
    elif toks[0] in shell.READ_ONLY_FAMILIES or not re.fullmatch(r"[a-z][\w-]{1,15}", toks[0]):
        if toks[0] != "bd":
            return None
        tool, sub, rest = toks[0], toks[1], toks[2:]
    else:
        tool, sub, rest = toks[0], toks[1], toks[2:]
    if tool in ("git", "npm", "pnpm", "yarn", "bun", "mix", "cargo", "go", "docker", "pip", "uv", "make", "npx"):
        return None
    stage = next((st for st, subs, _ in _LIFECYCLE if sub in subs), None)
    if stage is None:
        return None
    if stage == "claim" and not re.search(r"in[_-]progress|--claim|\bclaim\b|\bstart\b|--assignee", seg):
        return None
    shown = [tool, sub]
    for tok in rest:
        tok = tok.strip("'\"")
        if tok.startswith("-"):
            flag, _, value = tok.partition("=")
            if value and (len(value) > 24 or " " in value):
                tok = f"{flag}=…"
            elif value and _ID_RE.match(value):
                tok = f"{flag}=<id>"
        elif _ID_RE.match(tok):
            tok = "<id>"
        elif len(tok) > 24:
            tok = "…"
        if tok not in shown[2:]:
            shown.append(tok)
        if len(shown) >= 8:
            break
    return tool, stage, " ".join(shown)


# ---------------------------------------------------------------------------------------------------------
# git hooks


def git_hooks(s: Stream) -> list[Cand]:
    """What the repository's git hooks run, from commit/push output (and whether --no-verify skips them)."""
    seen: dict[str, tuple[list[str], Call, bool, bool]] = {}
    fixes: dict[str, list[str]] = {}
    headlines: dict[str, str] = {}
    for call in s.calls:
        fam = shell.family(call.command) if call.command else ""
        if fam not in ("git commit", "git push") or call.result is None:
            continue
        text = ANSI_RE.sub("", call.result.text[:20000])
        m = _HOOK_RE.search(text)
        if not m:
            continue
        hook = (m.group(1) if m.lastindex else None) or ("pre-push" if fam == "git push" else "pre-commit")
        checks, runner = _hook_checks(text)
        lines = text.replace("\\n", "\n")  # a tool result's escaped line breaks
        fixes[hook] = list(dict.fromkeys(fixes.get(hook, []) + _HOOK_FIX_RE.findall(lines)))[:3]
        failed = s.status(call) == "fail"
        if failed and hook not in headlines and (found := _HEADLINE_RE.match(lines)):
            headlines[hook] = found.group(1)
        unskippable = failed and "--no-verify" in call.command
        have = seen.get(hook)
        merged = list(dict.fromkeys((have[0] if have else []) + checks))
        seen[hook] = (merged, have[1] if have else call, (have[2] if have else False) or failed,
                      (have[3] if have else False) or unskippable)  # fmt: skip
        if runner and runner not in merged:
            seen[hook] = ([runner, *merged], *seen[hook][1:])
    out = [_hook_file_cand(s, hook, *sighting) for hook, sighting in _hook_files(s).items() if hook not in seen]
    for hook, (checks, call, blocked, unskippable) in seen.items():
        names = [c for c in checks if c not in ("lefthook", "husky", "lint-staged", "pre-commit")]
        runner = next((c for c in checks if c in ("lefthook", "husky", "lint-staged", "pre-commit")), "")
        if not names and not runner:
            continue
        what = ", ".join(names[:6]) or "its checks"
        via = f" ({runner})" if runner else ""
        verb = "git push" if hook == "pre-push" else "git commit"
        text = f"`{verb}` runs a {hook} hook{via}: {what}"
        text += "; it blocks until they pass" if blocked else ""
        text += f' (the {verb.split()[1]} fails with "{headlines[hook]}")' if hook in headlines else ""
        text += "; it says to run " + ", ".join(f"`{fix}`" for fix in fixes[hook]) + " to fix" if fixes[hook] else ""
        if unskippable:
            text += "; it runs even when git hooks are skipped, so fix what it reports"  # not the flag's name:
            # the packet guard holds every line that names it (disable_checks), whatever the line says of it
        elif blocked:
            text += "; fix what it reports rather than skipping it"
        c = cand("workflow", cap(text + ".", MAX_CONTENT), call.turn, s.gpos[call.pos], call.turns(), text,
                 applies_when=f"before `{verb}`", source_ref=verb, score=4.5 + (1 if blocked else 0),
                 basis="file")  # fmt: skip
        c.slot = f"tool:hook-{hook}"
        c.domain = "workflow"
        out.append(c)
    return out


_HOOK_FILE_RE = re.compile(
    r"(?:^|/)(\.git/hooks|\.husky)/(pre-commit|pre-push|commit-msg|prepare-commit-msg|post-commit|post-merge"
    r"|post-checkout|pre-rebase)$"
)
_NOT_A_STEP_RE = re.compile(
    r"^(?:#|\.\s|source\s|set\s|if\s|elif\s|while\s|until\s|for\s|case\s|then\b|else\b|fi\b|do\b|done\b|esac\b"
    r"|exit\b|echo\s|printf\s|return\b|[{}]|\w+\(\)|[\w]+=|export\s|local\s|\S+\)$|;;)"
)
_TOPLEVEL_RE = re.compile(r"([\"']?)\$\((?:git rev-parse --show-toplevel|dirname -- \"?\$0\"?)\)/([^\"'\s]*)\1")
"""A path from the repository's root (``"$(git rev-parse --show-toplevel)/scripts/x.sh"``): said from the root."""
MAX_HOOK_STEPS = 5


def _hook_files(s: Stream) -> dict[str, tuple[str, list[str], Call]]:
    """{hook: (its file, the commands it runs, the call that showed it)}: the last whole sighting of each hook file
    (a Write, or a Read of it), so a hook rewritten in the session reads as it ended; none for a file deleted or
    moved away later in the session."""
    found: dict[str, tuple[str, list[str], Call]] = {}
    for call in s.calls:
        m = _HOOK_FILE_RE.search(call.path.replace("\\", "/")) if call.name in ("Write", "Read") else None
        if m is None or not call.ok:
            continue
        text = call.inp.get("content") if call.name == "Write" else unnumbered(call.result.text if call.result else "")
        steps = _hook_steps(text) if isinstance(text, str) else []
        if steps:
            found[m.group(2)] = (f"{m.group(1)}/{m.group(2)}", steps, call)
    for hook, (rel, _, call) in list(found.items()):
        gone = re.compile(rf"\b(?:rm|git rm|mv)\s[^;&|]*{re.escape('/'.join(rel.split('/')[-2:]))}\b")
        if any(later.seq > call.seq and gone.search(later.command) and s.status(later) == "ok" for later in s.calls):
            del found[hook]
    return found


def _hook_steps(script: str) -> list[str]:
    """The commands a hook script runs, in order: no conditions, shell plumbing, output or redirections."""
    steps: list[str] = []
    for line in script.splitlines():
        line = line.strip()
        if not line or _NOT_A_STEP_RE.match(line):
            continue
        line = _TOPLEVEL_RE.sub(r"\2", line)
        line = re.sub(r"\s*(?:[12&]?>>?\s*\S+|<\s*\S+|\|\|\s*true)(?=\s|$)", "", line).strip()
        line = re.sub(r'^"([^"\s$]+)"', r"\1", line)
        if line and not line.startswith(('"$', "$")) and len(line) <= 60 and line not in steps:
            steps.append(line)
    return steps[:MAX_HOOK_STEPS]


def _hook_file_cand(s: Stream, hook: str, rel: str, steps: list[str], call: Call) -> Cand:
    verb = "git push" if hook == "pre-push" else "git commit"
    where = f"`{rel}`" + (", not tracked: each clone installs it" if rel.startswith(".git/") else "")
    text = f"`{verb}` runs a {hook} hook ({where}): " + ", then ".join(f"`{step}`" for step in steps)
    c = cand("workflow", cap(text + ".", MAX_CONTENT), call.turn, s.gpos[call.pos], call.turns(), text,
             applies_when=f"before `{verb}`", source_ref=rel, score=4.0, basis="file")  # fmt: skip
    c.slot = f"tool:hook-{hook}"
    c.domain = "workflow"
    return c


_HEADLINE_RE = re.compile(r"^\s*(?:Error:\s*)?([A-Za-z][\w -]{0,50}\bfailed)\b:?\s*$", I | re.M)
"""The failure a blocked commit prints first ("Pre-commit validation failed:"): what the next session will see."""
_HOOK_FIX_RE = re.compile(r"\brun ['\"`]([\w./:-]+(?: [\w./:=-]+){0,4})['\"`] to fix\b", I)
"""The fix a hook's output names ("[FORMAT] Code is not formatted. Run 'mix format' to fix.")."""


def _hook_checks(text: str) -> tuple[list[str], str]:
    """(check names, hook runner) named in a hook's output."""
    names: list[str] = []
    runner = ""
    if re.search(r"lefthook v[\d.]+", text):
        runner = "lefthook"
        names += re.findall(r"┃\s+([\w:.-]+) ❯", text)
    if re.search(r"\[STARTED\] Running tasks for staged files", text):
        runner = runner or "lint-staged"
        names += [n.strip() for n in re.findall(r"\[(?:STARTED|FAILED)\] ([a-z][\w@./-]*(?: --?[\w-]+)*)$", text, re.M)]
    if re.search(r"^\S.*?\.{4,}(?:Passed|Failed|Skipped)$", text, re.M):
        runner = runner or "pre-commit"
        names += [n.strip() for n in re.findall(r"^(\S.*?)\.{4,}(?:Passed|Failed|Skipped)$", text, re.M)]
    names += [f"[{n}]" for n in re.findall(r"^\[([A-Z]{3,})\]", text.replace("\\n", "\n"), re.M)
              if n not in ("STARTED", "COMPLETED", "FAILED", "SKIPPED")]  # fmt: skip
    names += [c.strip() for c in re.findall(r"^\$ ([\w.-]+(?: [\w./:-]+){0,3})$", text, re.M)]
    if "husky" in text.lower():
        runner = runner or "husky"
    return list(dict.fromkeys(n for n in names if len(n) <= 40)), runner
