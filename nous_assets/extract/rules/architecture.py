"""Architecture: the stack, the scripts and where things live, from what the session read and stated.

* **Stack and scripts** from manifests the session read (``mix.exs``, ``package.json``, ``pyproject.toml``,
  ``Cargo.toml``, ``go.mod``): the main dependencies, and the project's named scripts with what they run
  (``check`` = ``npm run db:generate && biome check . && npm run typecheck``).
* **Explanations**: when the user asks how something works, the first statements of Claude's answer that
  name a file, module or API ("The auth store is memory-only (not persisted)") — unless the user pushes
  back right after.
* **Where things live**: statements and report bullets that tie a path to what it holds ("`lib/x/` —
  Ash resources", "X is registered in Y", "X lives in Y"), from the session and from exploring subagents'
  reports. Early-state and boilerplate facts ("no resources exist yet", "basic module with hello/0")
  are stale by the end of the session and are skipped.
"""

from __future__ import annotations

import json
import posixpath
import re

from nous_assets.extract.rules import filters
from nous_assets.extract.rules.session import Call, Cand, Stream, cand
from nous_assets.extract.rules.text import (
    PLAN_START_RE,
    I,
    cap,
    clean_md,
    first_code_ref,
    names_something,
    one_line,
    sentences,
    strip_noise,
    strip_opener,
    upper_first,
    words,
)

MAX_CONTENT = 330
MAX_PER_STREAM = 16
_MANIFESTS = ("mix.exs", "package.json", "pyproject.toml", "cargo.toml", "go.mod")
_LINE_NO_RE = re.compile(r"^\s*\d+[→\t]", re.M)
_LOCATION_RE = re.compile(
    r"\b(?:lives?|located|defined|registered|mounted|declared|implemented|stored|kept|generated|wired|routed|"
    r"configured|set up|handled|rendered|served) (?:in|at|under|inside|into|by|via|through|from)\b"
    r"|\b(?:is|are) (?:in|under|inside) [`'\"]?[\w./-]+/|\bgoes? (?:in|into|under)\b"
    r"|\b(?:contains?|holds?|defines?|registers?|mounts?|routes?|maps?|delegates?|wraps?|exposes?) "
    r"(?:the |all |a |an )?[`'\"]?[\w.:/-]+",
    I,
)
_STRUCTURE_RE = re.compile(
    r"\b(?:is|are) (?:a|an|the|memory-only|not persisted|generated|derived|wrapped|encrypted|signed|stored|"
    r"independent|deterministic|random|separate|shared|single|used|responsible|handled|implemented|defined)\b"
    r"|\buses?\b|\bcalls?\b|\bruns?\b|\breturns?\b|\bgets? (?:its|their|an?|the)\b|\bvia\b|\bthrough\b|\bonly\b"
    r"|\b(?:doesn'?t|does not|don'?t|can'?t|cannot|won'?t|isn'?t|aren'?t) \w+|\bsupports?\b|\brequires?\b|\bneeds?\b"
    r"|\bmust\b|\bdefaults? to\b|\bstores?\b|\bgenerates?\b",
    I,
)
_STALE_RE = re.compile(
    r"\b(?:no (?:\w+ ){0,2}(?:exist|exists|yet|defined)|(?:doesn'?t|don'?t|does not|do not) exist yet|not yet|"
    r"currently empty|is empty|are empty|boilerplate|placeholder|hello/0|hello world|basic module|"
    r"default (?:phoenix|generated)|scaffold)",
    I,
)
_PATH_LINE_RE = re.compile(
    r"^[`'\"]?([\w.@-]*/[\w.@*-]*[A-Za-z][\w./@*-]*|[\w-]+\.[a-z]{1,5}|[A-Z]\w+(?:\.[A-Z]\w+)+)[`'\"]?"
    r"\s*[-—–:(]\s*(.+)$"
    r"|^`([A-Z][a-z]+[A-Z]\w+)`\s*[-—–:]\s*(.+)$"
)
# "file — Added a Context tab", "file — New, committed in X": what a session did to a file, not what it holds
# (unless the note quotes code: then the values it names are what the next session needs)
_CHANGE_DESC_RE = re.compile(
    r"^(?:new,? )?(?:added|changed|fixed|updated|modified|removed|deleted|renamed|replaced|moved|created|"
    r"committed|staged|rewrote|refactored|switched)\b",
    I,
)
_LINE_REF_RE = re.compile(r"^\s*\d+`?\s*[—–-]\s*")
_SLASH_RE = re.compile(r"^/[\w-]+(?::|\s|$)")  # a slash command, not a path
_TASK_LINE_RE = re.compile(r"^[`'\"]?[A-Za-z]+-[a-z0-9]{2,5}(?:\.\d+)*[`'\"]?\s*[:—–-]")
_QUESTION_RE = re.compile(r"\?\s*$|^(?:how|why|what|where|which|does|do|is|are|can|could|should)\b", I)


def architecture(s: Stream) -> list[Cand]:
    out: list[Cand] = []
    out.extend(_manifests(s))
    if not s.sidechain:
        out.extend(_explanations(s))
    out.extend(_locations(s))
    out.sort(key=lambda c: -c.score)
    return out[:MAX_PER_STREAM]


# ---------------------------------------------------------------------------------------------------------
# manifests


def _manifests(s: Stream) -> list[Cand]:
    out: list[Cand] = []
    seen: set[str] = set()
    for call in s.calls:
        if call.name != "Read" or not call.path or call.result is None or call.result.is_error:
            continue
        name = posixpath.basename(call.path).lower()
        if name not in _MANIFESTS or call.path in seen:
            continue
        seen.add(call.path)
        text = _LINE_NO_RE.sub("", call.result.text)
        text = "\n".join(x for x in text.splitlines() if not x.lstrip().startswith(("#", "//")))
        rel = _rel(call)
        if name == "package.json":
            out.extend(_package_json(s, call, rel, text))
        else:
            deps = _deps(name, text)
            if len(deps) >= 3:
                lang = {"mix.exs": "Elixir", "pyproject.toml": "Python", "cargo.toml": "Rust", "go.mod": "Go"}[name]
                version = re.search(r"elixir: \"([^\"]+)\"|requires-python = \"([^\"]+)\"|^go (\d[\d.]*)", text, re.M)
                ver = f" {next(g for g in version.groups() if g)}" if version else ""
                content = cap(f"Stack ({rel}): {lang}{ver} with {', '.join(deps[:24])}.", MAX_CONTENT)
                out.append(_cand(s, call, "architecture", content, rel, slot=f"config:{rel}#deps", score=3.0))
            if name == "mix.exs":
                out.extend(_mix_aliases(s, call, rel, text))
    return out


def _mix_aliases(s: Stream, call: Call, rel: str, text: str) -> list[Cand]:
    """``aliases`` of a mix project: what ``mix test``, ``mix setup``, ``mix quality`` … really run."""
    block = re.search(r"defp aliases(?:\(\))? do\s*\[(.*?)\n\s*\]\s*\n\s*end", text, re.S)
    if not block:
        return []
    found = re.findall(r"^\s*\"?([\w.:-]+)\"?:\s*\[(.*?)\]", block.group(1), re.M | re.S)
    shown = []
    for name, steps in found:
        parts = [x.strip().strip('"') for x in re.split(r",\s*", steps.replace("\n", " ")) if x.strip()]
        if parts:
            shown.append(f"`mix {name}` = {', '.join(cap(p, 40) for p in parts[:5])}")
    if not shown:
        return []
    content = cap(f"{rel} aliases: " + "; ".join(shown[:6]) + ".", MAX_CONTENT)
    return [_cand(s, call, "command", content, rel, slot=f"config:{rel}#aliases", score=3.5)]


def _deps(name: str, text: str) -> list[str]:
    if name == "mix.exs":
        runtime = re.findall(r"\{:(\w+),[^}\n]*\}", text)
        dev_only = set(re.findall(r"\{:(\w+),[^}\n]*only:[^}\n]*\}", text))
        found = [d for d in runtime if d not in dev_only] + [d for d in runtime if d in dev_only]
    elif name == "pyproject.toml":
        block = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, re.M | re.S)
        found = re.findall(r"[\"']([A-Za-z][\w.-]*)", block.group(1)) if block else []
    elif name == "cargo.toml":
        block = re.search(r"^\[dependencies\](.*?)(?:^\[|\Z)", text, re.M | re.S)
        found = re.findall(r"^([\w-]+)\s*=", block.group(1), re.M) if block else []
    else:
        found = re.findall(r"^\s+([\w.-]+/[\w./-]+) v", text, re.M)
    return list(dict.fromkeys(found))


def _package_json(s: Stream, call: Call, rel: str, text: str) -> list[Cand]:
    try:
        data = json.loads(text)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    out = []
    scripts = data.get("scripts")
    if isinstance(scripts, dict):
        useful = [
            (k, v) for k, v in scripts.items()
            if isinstance(v, str) and (" && " in v or k in ("check", "typecheck", "lint", "test", "format", "build"))
        ]  # fmt: skip
        if useful:
            shown = "; ".join(f"`{k}` = `{cap(v, 90)}`" for k, v in useful[:6])
            content = cap(f"{rel} scripts: {shown}.", MAX_CONTENT)
            out.append(_cand(s, call, "command", content, rel, slot=f"config:{rel}#scripts", score=3.5))
    deps = [k for part in ("dependencies", "devDependencies") for k in (data.get(part) or {}) if isinstance(k, str)]
    if len(deps) >= 3:
        content = cap(f"Stack ({rel}): JavaScript/TypeScript with {', '.join(deps[:16])}.", MAX_CONTENT)
        out.append(_cand(s, call, "architecture", content, rel, slot=f"config:{rel}#deps", score=2.5))
    return out


# ---------------------------------------------------------------------------------------------------------
# explanations and locations


def _explanations(s: Stream) -> list[Cand]:
    """The first statements of Claude's answer to a user's question about how something works."""
    out = []
    users = s.user_positions
    for ui, pos in enumerate(users):
        asked = one_line(strip_noise(s.turns[pos].text))
        if pos in s.task_positions or not _QUESTION_RE.search(asked) or len(words(asked)) < 5:
            continue
        nxt = users[ui + 1] if ui + 1 < len(users) else len(s.turns)
        if nxt < len(s.turns) and re.match(r"^\s*(?:no\b|nope|wrong|that'?s not|actually)", s.turns[nxt].text, I):
            continue  # the user disagreed with the answer
        answers = s.assistant_texts(pos + 1, nxt)
        if not answers:
            continue
        apos, turn = answers[0]
        picked = [x for x in _statements(turn.text) if names_something(x)][:2]
        if not picked:
            continue
        content = cap(" ".join(picked), MAX_CONTENT)
        if filters.one_off(content):
            continue
        ref = first_code_ref(content)
        c = cand("architecture", content, turn, s.gpos[apos], [s.turns[pos], turn], content, sub=5,
                 applies_when=f"when working with {ref}" if ref else "", source_ref=ref, score=2.5,
                 basis="prose")  # fmt: skip
        c.hints = [ref] if ref else []
        out.append(c)
    return out


def _statements(text: str) -> list[str]:
    out = []
    for raw in sentences(clean_md(text))[:6]:
        sent = strip_opener(re.sub(r"^(?:yes|no|not quite|exactly|correct|right)[,.!:—-]*\s*", "", raw, flags=I))
        sent = re.sub(r"^you'?re (?:interpreting it )?(?:absolutely )?(?:right|correct(?:ly)?)[.!,:—-]*\s*", "", sent,
                      flags=I)  # fmt: skip
        if len(words(sent)) < 6 or sent.endswith(("?", ":")) or PLAN_START_RE.match(sent) or sent == "[code]":
            continue
        if _STALE_RE.search(sent) or not _STRUCTURE_RE.search(sent):
            continue
        out.append(upper_first(sent))
    return out


def _locations(s: Stream) -> list[Cand]:
    """Statements and report bullets tying a path or module to what it holds (a list of them: one layout)."""
    out = []
    for pos, turn in s.assistant_texts():
        lines = _location_lines(turn.text)
        paths = [x for x in lines if _PATH_ITEM_RE.match(x)]
        if len(paths) >= 3:
            layout = "Layout: " + "; ".join(paths)
            c = cand("architecture", cap(layout, MAX_CONTENT + 60), turn, s.gpos[pos], [turn], layout, sub=19,
                     applies_when="when finding where things live", source_ref=paths[0].split(":")[0],
                     score=2.5 + (0.5 if s.sidechain else 0), basis="prose")  # fmt: skip
            c.hints = [p.split(":")[0] for p in paths[:4]]
            out.append(c)
            lines = [x for x in lines if x not in paths]
        for k, line in enumerate(lines):
            ref = first_code_ref(line)
            if not ref:
                continue
            where = posixpath.dirname(ref) if "/" in ref else ""
            c = cand("architecture", cap(line, MAX_CONTENT), turn, s.gpos[pos], [turn], line, sub=20 + k,
                     applies_when=f"when working in {where}/" if where else f"when working with {ref}",
                     source_ref=ref, score=2.0 + (0.5 if s.sidechain else 0), basis="prose")  # fmt: skip
            c.hints = [ref]
            out.append(c)
    return out


_PATH_ITEM_RE = re.compile(r"^[\w.@-]*/[\w./@*-]+: |^[\w-]+\.[a-z]{1,5}: ")


def _location_lines(text: str) -> list[str]:
    out = []
    cleaned = clean_md(text)
    for line in cleaned.splitlines():
        line = line.strip()
        if _TASK_LINE_RE.match(line) or filters.one_off(line) or filters.conflict(line) or _SLASH_RE.match(line):
            continue
        m = _PATH_LINE_RE.match(line)
        if m:
            name, desc = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            desc = _LINE_REF_RE.sub("", desc)  # "file:94` — changed …": the line number moves with every edit
            if _CHANGE_DESC_RE.match(desc.strip(" `'\"")) and "`" not in desc:
                continue
            if len(words(desc)) >= 3 and not _STALE_RE.search(line):
                out.append(f"{name}: {desc.rstrip(')')}")
                continue
        for sent in sentences(line):
            if (
                _LOCATION_RE.search(sent)
                and names_something(sent)
                and 6 <= len(words(sent)) <= 45
                and not sent.endswith("?")
                and not PLAN_START_RE.match(sent)
                and not _STALE_RE.search(sent)
                and not filters.one_off(sent)
            ):
                out.append(upper_first(strip_opener(sent)))
    return out[:8]


def _rel(call: Call) -> str:
    cwd = (call.turn.cwd or "").rstrip("/") + "/"
    return call.path[len(cwd) :] if cwd != "/" and call.path.startswith(cwd) else posixpath.basename(call.path)


def _cand(s: Stream, call: Call, kind: str, content: str, rel: str, *, slot: str, score: float) -> Cand:
    c = cand(kind, content, call.turn, s.gpos[call.pos], call.turns(), content, sub=3, source_ref=rel,
             applies_when=f"when working with {rel}", score=score, basis="file")  # fmt: skip
    c.slot = slot
    c.hints = [rel]
    return c
