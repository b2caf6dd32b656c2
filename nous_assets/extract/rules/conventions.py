"""Conventions: rules the project writes down for its agents and contributors.

When a session adds rules to an instruction or memory file (``CLAUDE.md``, ``AGENTS.md``, Claude's
``memory/MEMORY.md``, ``CONTRIBUTING.md``, ``.cursorrules``, a ``.learnings/`` note) the lines it added are
the conventions the user wants kept — the session has already distilled them. Rules read from such a
file ("NEVER use `.buffer` …", "Do not ignore credo lintings") and sentences of Claude's that quote
one ("this is the issue documented in CLAUDE.md: never use …") count too. Only imperative, concrete
lines are kept: a heading or a sentence that names nothing is not a rule.
"""

from __future__ import annotations

import posixpath
import re

from nous_assets.extract.rules import filters
from nous_assets.extract.rules.session import EDIT_TOOLS, Call, Cand, Stream, cand, takes_out
from nous_assets.extract.rules.text import (
    I,
    cap,
    clean_md,
    first_code_ref,
    names_something,
    sentences,
    short_path,
    upper_first,
    words,
)

MAX_CONTENT = 300
MAX_PER_FILE = 12
TAKEN_OUT_SHARE = 0.8  # of a rule's words a later version of the file must hold for the rule to still be there
_INSTRUCTION_NAMES = frozenset({
    "claude.md", "agents.md", "memory.md", "contributing.md", ".cursorrules", "copilot-instructions.md", "gemini.md",
    "claude.local.md", "conventions.md",
})  # fmt: skip
_RULE_RE = re.compile(
    r"\b(?:never|always|must|do not|don'?t|should(?:n'?t| not)?|only|prefer|avoid|required?|needs?|use|run|keep|"
    r"make sure|before|after|instead|every|each)\b",
    I,
)
_STRONG_RULE_RE = re.compile(r"\b(?:never|always|must|do not|don'?t|critical|important|required)\b", I)
_CITES_RE = re.compile(
    r"\b(?:claude|agents|memory|contributing)\.md\b|\bproject (?:rules|instructions|conventions)\b", I
)


def is_instruction_file(path: str) -> bool:
    path = path.replace("\\", "/")
    return posixpath.basename(path).lower() in _INSTRUCTION_NAMES or "/.learnings/" in path or "/memory/" in path


def auto_loaded(path: str) -> bool:
    """A file Claude Code puts in every session's context itself (``CLAUDE.md``, ``CLAUDE.local.md``, the
    auto-memory ``MEMORY.md``, ``.claude/rules/``): a rule read from it is already there; repeating it in a
    packet only spends the budget. Rules a session *adds* to it are still learned: they are the user's new ones."""
    path = path.replace("\\", "/")
    name = posixpath.basename(path).lower()
    return name in ("claude.md", "claude.local.md") or path.endswith("/memory/MEMORY.md") or "/.claude/rules/" in path


CITED_PREFIX = "Project rule (from the instruction files): "
_LOADED_RULE_RE = re.compile(r"^(?:CLAUDE(?:\.local)?|MEMORY|AGENTS)\.md(?: rule)?: |^" + re.escape(CITED_PREFIX), I)


def loaded_rule(content: str) -> bool:
    """Whether a convention is a rule a session wrote into or read from a file Claude Code loads itself
    (``CLAUDE.md: …``, ``MEMORY.md: …``, see :func:`auto_loaded`; ``AGENTS.md: …``, which Claude Code reads where
    no CLAUDE.md is (2.1.277 on) and which a CLAUDE.md of ``@AGENTS.md`` or a symlink loads elsewhere) or Claude's
    quote of an instruction file. The next session has it in context already, or, when the user took it out again,
    it no longer holds: either way a packet line would only repeat or contradict the file. Fresh readers judged 2 of
    13 such CLAUDE.md, MEMORY.md and quoted lines useful (one quote harmful: the product's prompt text taken for a
    rule), and 4 of 24 AGENTS.md lines (the rest trivial, "loaded every session", or fragments); the strong rules
    read from it (``AGENTS.md rule: …``) were judged trivial by two readers for the same reason. It stays
    searchable."""
    return bool(_LOADED_RULE_RE.match(content))


def conventions(s: Stream) -> list[Cand]:
    out: list[Cand] = []
    for call in s.calls:
        if not call.path or not is_instruction_file(call.path) or not call.ok:
            continue
        if call.name in EDIT_TOOLS:
            out.extend(_rules(s, call, _added_text(call), strong_only=False))
        elif call.name == "Read" and call.result is not None and not auto_loaded(call.path):
            out.extend(_rules(s, call, re.sub(r"^\s*\d+[→\t]", "", call.result.text, flags=re.M), strong_only=True))
    if not s.sidechain:
        out.extend(_cited(s))
    return out


def _added_text(call: Call) -> str:
    inp = call.inp
    if isinstance(inp.get("content"), str):
        return inp["content"]
    if isinstance(inp.get("edits"), list):
        return "\n".join(str(e.get("new_string") or "") for e in inp["edits"] if isinstance(e, dict))
    old = str(inp.get("old_string") or inp.get("old_str") or "")
    new = str(inp.get("new_string") or inp.get("new_str") or "")
    old_lines = {x.strip() for x in old.splitlines()}
    return "\n".join(x for x in new.splitlines() if x.strip() not in old_lines)


def _rules(s: Stream, call: Call, text: str, *, strong_only: bool) -> list[Cand]:
    rel = short_path(call.path, call.turn.cwd)
    name = posixpath.basename(call.path)
    out: list[Cand] = []
    later = s.later_edits(call)
    for k, line in enumerate(_rule_lines(text, strong_only=strong_only)):
        label = name if strong_only or not _taken_out(line, later) else f"{name} (text cut from the file later)"
        content = cap(f"{label}: {line}" if not strong_only else f"{name} rule: {line}", MAX_CONTENT)
        ref = first_code_ref(line) or rel
        turn = call.turn if not strong_only else (call.result_turn or call.turn)
        pos = call.pos if not strong_only or call.result_pos is None else call.result_pos
        c = cand("convention", content, turn, s.gpos[pos], call.turns(), line, sub=60 + k, source_ref=ref,
                 applies_when="", score=3.0 if not strong_only else 2.0,
                 basis="file" if strong_only else "edit")  # fmt: skip
        c.hints = [rel]
        out.append(c)
        if len(out) >= MAX_PER_FILE:
            break
    return out


def _taken_out(line: str, later: list[Call]) -> bool:
    """A later edit of the session took the rule out of the file again: the file no longer says it, so it is not
    one Claude Code loads."""
    wanted = set(words(line.lower()))
    return takes_out(later, lambda text: len(wanted & set(words(text.lower()))) >= TAKEN_OUT_SHARE * len(wanted))


_BLOCK_START_RE = re.compile(r"^\s*(?:[-*•+]\s|\d+[.)]\s|#{1,6}\s|>|\||```|~~~)")


def blocks(text: str) -> list[str]:
    """Markdown as its blocks, each on one line: a list item or paragraph wrapped over several lines is one
    block ("`docs/X.md` — a dated log of real bugs and" + "what fixed them." is one rule, not two fragments)."""
    out: list[list[str]] = []
    joinable = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            joinable = False
            continue
        if joinable and not _BLOCK_START_RE.match(raw):
            out[-1].append(line)
        else:
            out.append([line])
        joinable = not line.startswith(("#", "```", "~~~", "|"))
    return [" ".join(b) for b in out]


_FRONTMATTER_RE = re.compile(r"\A\s*---\s*\n.*?\n---\s*(?:\n|\Z)", re.S)


def _rule_lines(text: str, *, strong_only: bool) -> list[str]:
    out = []
    pieces: list[tuple[str, str]] = []  # (sentence, the command of the code block right after its block)
    found = blocks(_FRONTMATTER_RE.sub("", text))  # a memory file's frontmatter is metadata, not rules
    fenced = False
    for i, block in enumerate(found):
        if block.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue  # code is no rule
        example = _example(found[i + 1 :])
        block = re.sub(r"^\s*(?:[-*•+]|\d+[.)])\s+", "", block)  # a bullet, not the bold that opens a line
        parts = sentences(block) if len(words(block)) > 60 else [block]
        pieces.extend((part, example if j == len(parts) - 1 else "") for j, part in enumerate(parts))
    for raw, example in pieces:
        line = clean_md(raw).strip()
        n = len(words(line))
        if n < 6 or n > 60 or line.endswith(":") or line == "[code]":
            continue
        rule = _STRONG_RULE_RE if strong_only else _RULE_RE
        if not rule.search(line) or not names_something(f"{line} `{example}`" if example else line):
            continue
        if filters.one_off(line) or filters.conflict(line) or filters.bypass(line) and not _STRONG_RULE_RE.search(line):
            continue
        shown = f" (`{example}`)" if example and example not in line else ""
        out.append(upper_first(line.rstrip(".")) + shown + ".")
    return out


MAX_EXAMPLE = 80


def _example(following: list[str]) -> str:
    """The command a fenced code block right after a rule opens with ("Always use squash merge …" then
    ```` ```bash\ngh pr merge <PR_NUMBER> --squash --delete-branch ````): how the rule is followed. Comments skipped."""
    if not following or not following[0].startswith(("```", "~~~")):
        return ""
    for line in following[1:]:
        if line.startswith(("```", "~~~")):
            return ""
        if not line.startswith(("#", "//", "--")):
            return line if len(line) <= MAX_EXAMPLE and "`" not in line else ""
    return ""


def _cited(s: Stream) -> list[Cand]:
    """Claude's sentences that quote a rule from the project's instruction files."""
    out = []
    for pos, turn in s.assistant_texts():
        for k, sent in enumerate(sentences(clean_md(turn.text))[:12]):
            if not _CITES_RE.search(sent) or not _STRONG_RULE_RE.search(sent) or not names_something(sent):
                continue
            if len(words(sent)) > 60 or filters.one_off(sent):
                continue
            rule = re.sub(r"^.*?\b(?:documented|stated|written|says?|rule)\b[^:]*:\s*", "", sent, flags=I)
            ref = first_code_ref(rule)
            content = cap(CITED_PREFIX + upper_first(rule), MAX_CONTENT)
            out.append(cand("convention", content, turn, s.gpos[pos], [turn], rule, sub=90 + k, source_ref=ref,
                            score=2.5, basis="prose"))  # fmt: skip
    return out
