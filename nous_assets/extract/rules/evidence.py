"""Evidence: what a candidate rests on, and what the rest of its session showed about it.

Every rule says what its candidate rests on (its *basis*); the basis gives the first status
(:mod:`nous_assets.status`): the user's own words are ``stated``, a check or command that ran and passed is
``verified``, what a file or tool result showed, the edits the session made and a proposal of Claude's the user
approved ("1", "ok, go ahead": a plan, not yet what was built) are ``observed``, the
assistant's reasoning is a ``hypothesis``. A compaction summary is the assistant's account of its own work:
``observed`` where it reports a fix (the session got past the error), a hypothesis otherwise.

Then the session after the candidate can change it (:func:`assess`):

* **refuted** — the user rejects what the assistant just said ("no", "that's not it", "try again", "I don't
  think so"), or the assistant itself says it was wrong before the user speaks again;
* **verified** — the user confirms it ("yes, exactly", "that's it", "good catch", "correct");
* **superseded** — a file it cites is deleted or moved (``rm``, ``git rm``, ``git mv``, ``mv``), an edit it rests
  on is undone (``git checkout -- F``, ``git restore F``, a later edit putting the old text back), or a
  decision is reversed (a later decision of the user on the same subject that says "actually", "instead",
  "let's not", "go back to" …).

Each change is recorded in the candidate's ``evidence`` with the turn it rests on, so a reader can check it.
The same session-level facts feed the worker's cross-session step (a file deleted in a later session
supersedes what earlier sessions learned about it): :func:`removed_paths` is shared with it.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass

from nous_assets.extract.rules.session import EDIT_TOOLS, Call, Cand, Stream
from nous_assets.extract.rules.text import I, cap, clean_md, one_line, strip_noise
from nous_assets.status import HYPOTHESIS, OBSERVED, REFUTED, STATED, SUPERSEDED, VERIFIED

BASIS_STATUS = {
    "user": STATED,
    "approval": OBSERVED,
    "check": VERIFIED,
    "file": OBSERVED,
    "edit": OBSERVED,
    "summary": OBSERVED,
    "prose": HYPOTHESIS,
}
USER_BASES = frozenset({"user", "approval"})
"""What the user said or chose: a later choice of the user can reverse it."""
BASIS_WHAT = {
    "user": "said by the user",
    "approval": "a proposal of Claude's that the user approved",
    "check": "a check or command that passed",
    "file": "read from a file or tool result",
    "edit": "a change the session made",
    "summary": "the session's compaction summary (a fix it reports)",
    "prose": "the assistant's reasoning",
}
MAX_EVIDENCE = 4
MAX_REPLACING = 420  # a decision that revises the one before it quotes it, within the memory's length

_REJECT_RE = re.compile(
    r"^\W*(?:no|nope|nah|wrong|incorrect|not quite|not really|i don'?t think (?:so|that'?s)|try again|"
    r"that'?s not (?:it|right|correct|true|the (?:real )?(?:issue|problem|cause|reason))|that isn'?t (?:it|right)|"
    r"it'?s not (?:that|the)|that (?:didn'?t|did not|doesn'?t|does not) (?:work|help|fix|make sense))\b"
    r"|\b(?:that'?s|that is|this is|you'?re|you are) (?:wrong|not right|incorrect|not correct|not true)\b"
    r"|\bnot the (?:real |actual )?(?:issue|problem|cause|reason)\b|\bthat'?s not (?:it|how|why|what)\b"
    r"|\b(?:doesn'?t|does not) make sense\b|\bdon'?t (?:blame|assume)\b"
    r"|\b(?:it'?s|that'?s|it is|that is|it was|that was|this is) not (?:using|the|a|an|what|why|how|because|caused)\b"
    r"|\b(?:your|the|that) ['\"]?(?:fix|change|theory|diagnosis|explanation)['\"]? "
    r"(?:didn'?t|did not|doesn'?t|does not) (?:work|help|fix)\b",
    I,
)
_CONFIRM_RE = re.compile(
    r"^\W*(?:(?:yes|yep|yeah),? )?(?:exactly|correct|indeed|good catch|that'?s (?:it|right|correct|true)|"
    r"you'?re right|spot on)\b(?![^.!?\n]{0,40}\b(?:but|however|although)\b)",
    I,
)
"""Agreeing with what was said, not a "yes" to a question: "yes" answers "Want me to …?" and approves a step."""
_SELF_REFUTE_RE = re.compile(
    r"\b(?:(?:that|this|it) (?:was|is)n'?t (?:the|a) (?:real )?(?:issue|problem|cause)|not (?:actually )?the "
    r"(?:issue|problem|cause)|i was wrong|that'?s wrong|that was wrong|my (?:earlier|previous) "
    r"(?:diagnosis|assumption|theory|explanation) was|the real (?:issue|problem|cause) (?:is|was))\b",
    I,
)
_REVERSAL_RE = re.compile(
    r"\b(?:actually|instead|change of plan|scratch that|on second thought|let'?s not|don'?t (?:do|use|go with)|"
    r"go back to|revert|undo|rather than|no longer|not anymore)\b",
    I,
)
_REVISION_RE = re.compile(
    r"^\W*(?:decision:\s*)?\W*(?:actually|change of plan|scratch that|on second thought|wait)\b", I
)
_UNDO_RE = re.compile(r"^git (?:checkout (?:HEAD )?--|restore)(?! --staged)\s+(.+)$")
_WORD_RE = re.compile(r"[a-z0-9_./:-]{4,}")


@dataclass(frozen=True)
class Removal:
    """A path the session deleted or moved away (relative to its cwd), when and by which command."""

    path: str
    at: str
    uuid: str
    command: str
    session: str = ""


def rejects(text: str) -> bool:
    """The user's message rejects what the assistant just said or did."""
    return bool(_REJECT_RE.search(one_line(clean_md(strip_noise(text)))[:200]))


_CODE_SPAN_RE = re.compile(r"`([^`\n]{4,80})`")
_CODE_WORD_RE = re.compile(r"(?<![\w/.-])(?:--[a-z][\w-]{2,}|[A-Za-z_][\w]*(?:[._/:-]+[\w]+)+|[a-z]+[A-Z]\w+|_\w{3,})")


def code_words(text: str) -> set[str]:
    """The distinctive code words of a text: code spans, dotted/underscored/path-like identifiers, flags."""
    words = {m.strip() for m in _CODE_SPAN_RE.findall(text)}
    words |= set(_CODE_WORD_RE.findall(text))
    return {w for w in words if len(w) >= 4 and not w.startswith(("http", "e.g", "i.e"))}


def initial(c: Cand) -> None:
    """The candidate's first status and evidence: those of its basis (once: a rule may have set them)."""
    if c.status:
        return
    c.status = BASIS_STATUS.get(c.basis, HYPOTHESIS)
    c.evidence = [{"status": c.status, "uuid": c.anchor.uuid, "what": BASIS_WHAT.get(c.basis, c.basis)}]


def change(c: Cand, status: str, uuid: str, what: str) -> None:
    """Record a later turn that changed what the candidate's status is."""
    c.status = status
    if len(c.evidence) < MAX_EVIDENCE:
        c.evidence.append({"status": status, "uuid": uuid, "what": cap(one_line(what), 160)})


def assess(streams: Iterable[Stream], cands: list[Cand]) -> None:
    """Every candidate's status: its basis's, then what the rest of the session showed (module docstring)."""
    streams = list(streams)
    for c in cands:
        initial(c)
    removals = [r for s in streams for r in removed_paths(s)]
    undone = [u for s in streams for u in _undone_edits(s)]
    main = [s for s in streams if not s.sidechain]
    for c in cands:
        at = c.anchor.timestamp or ""
        _superseded_by_removal(c, at, removals)
        if c.status == SUPERSEDED:
            continue
        _superseded_by_undo(c, at, undone)
        if c.status != SUPERSEDED and c.basis in ("prose", "summary"):  # the assistant's claims
            for s in main:
                _answered(c, s)
        if c.status == HYPOTHESIS:
            _grounded(c, streams)
    for c in cands:
        if c.basis in USER_BASES and c.kind in ("decision", "preference") and c.status not in (SUPERSEDED, REFUTED):
            _reversed(c, [o for o in cands if o is not c and o.kind in ("decision", "correction", "preference")])


# ---------------------------------------------------------------------------------------------------------
# what the user said next


def _answered(c: Cand, s: Stream) -> None:
    """The user's next message after an assistant claim rejects or confirms it; the assistant takes it back."""
    pos = _stream_pos(s, c.anchor)
    if pos is None or c.anchor.role != "assistant":
        return
    spoken = 0  # assistant messages after the claim: the user answers the last one or two
    for p in range(pos + 1, len(s.turns)):
        t = s.turns[p]
        if t.role == "assistant" and t.text.strip():
            if _SELF_REFUTE_RE.search(t.text) and _shares(c, t.text):
                change(c, REFUTED, t.uuid, "the assistant then said: " + t.text[:120])
                return
            spoken += 1
        if p in s.user_positions and p not in s.task_positions:
            if spoken > 1:
                return
            said = one_line(clean_md(strip_noise(t.text)))
            if rejects(t.text):
                change(c, REFUTED, t.uuid, f'the user answered: "{said[:120]}"')
            elif _CONFIRM_RE.match(said) and c.status == HYPOTHESIS and not _asked(s, pos, p):
                change(c, VERIFIED, t.uuid, f'the user confirmed: "{said[:120]}"')
            return


def _asked(s: Stream, start: int, end: int) -> bool:
    """The assistant's last words before the user's answer end on a question: the answer is to the question."""
    texts = [t.text for t in s.turns[start:end] if t.role == "assistant" and t.text.strip()]
    return bool(texts) and clean_md(texts[-1]).rstrip().endswith("?")


MIN_GROUNDING_WORDS = 2


def _grounded(c: Cand, streams: list[Stream]) -> None:
    """A claim of the assistant's that states what a file it had read or changed says: observed. Its distinctive
    code words (at least two) appear in a file the session read (a Read result) or in the new text of an edit it
    made, before the claim, in the same transcript: the claim reports the code, it does not guess at it."""
    words = code_words(c.content)
    if len(words) < MIN_GROUNDING_WORDS:
        return
    at = c.anchor.timestamp or ""
    for s in streams:
        if s.turns and s.turns[0].source_path != c.anchor.source_path:
            continue
        for call in s.calls:
            if (call.turn.timestamp or "") > at or not call.ok or not call.path:
                continue
            if call.name in EDIT_TOOLS:
                seen, how = str(call.inp.get("new_string") or call.inp.get("content") or ""), "changed"
            elif call.name == "Read" and call.result is not None:
                seen, how = call.result.text, "read"
            else:
                continue
            if sum(1 for w in words if w in seen) >= MIN_GROUNDING_WORDS:
                change(c, OBSERVED, (call.result_turn or call.turn).uuid, f"what the session {how} in {call.path}")
                return


def _stream_pos(s: Stream, turn) -> int | None:
    for p, t in enumerate(s.turns):
        if t is turn or (t.uuid == turn.uuid and t.source_path == turn.source_path):
            return p
    return None


def _shares(c: Cand, text: str) -> bool:
    """The later text is about the same thing: two or more of the candidate's longer words."""
    mine = set(_WORD_RE.findall(c.content.lower()))
    return len(mine & set(_WORD_RE.findall(text.lower()))) >= 2


# ---------------------------------------------------------------------------------------------------------
# files deleted or moved, edits undone


def removed_paths(s: Stream) -> list[Removal]:
    """Paths a stream's successful commands deleted or moved away, relative to the session's cwd (a ``cd`` earlier
    in the same command moves where a relative path points)."""
    out: list[Removal] = []
    for call in s.calls:
        if not call.command or s.status(call) != "ok":
            continue
        root = (call.turn.cwd or "").rstrip("/")
        here = root
        for seg in re.split(r"\s*(?:&&|;|\|\||\n)\s*", call.command):
            moved = re.match(r"^cd\s+(['\"]?)([^'\"\s;&|]+)\1\s*$", seg.strip())
            if moved:
                target = moved.group(2)
                here = posixpath.normpath(target if target.startswith("/") else posixpath.join(here, target))
                continue
            for path in _removed_by(seg):
                absolute = path if path.startswith("/") else posixpath.join(here, path)
                rel = _relative(absolute, root) if root else ""
                if rel:
                    out.append(Removal(rel, call.turn.timestamp or "", call.turn.uuid, cap(seg, 120),
                                       call.turn.session_id))  # fmt: skip
    return out


def _removed_by(segment: str) -> list[str]:
    try:
        toks = shlex.split(segment)
    except ValueError:
        return []
    if not toks:
        return []
    if toks[0] in ("rm", "unlink", "rmdir"):
        return [t for t in toks[1:] if not t.startswith("-")]
    if toks[:2] == ["git", "rm"] and "--cached" not in toks:
        return [t for t in toks[2:] if not t.startswith("-")]
    if toks[:2] == ["git", "mv"] or toks[0] == "mv":
        args = [t for t in toks[(2 if toks[0] == "git" else 1) :] if not t.startswith("-")]
        return args[:-1] if len(args) >= 2 else []
    return []


def _relative(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` ('' for what is outside it, a glob or a variable)."""
    if not path or re.search(r"[*?$`{}<>]", path):
        return ""
    if path.startswith("/"):
        root = (cwd or "").rstrip("/") + "/"
        if root == "/" or not path.startswith(root):
            return ""
        path = path[len(root) :]
    path = posixpath.normpath(path.removeprefix("./"))
    return "" if path in (".", "") or path.startswith("..") else path


def cites(text: str, path: str) -> bool:
    """``text`` names ``path`` (a file, or a directory with something under it) as a whole path segment."""
    target = path.rstrip("/")
    if "/" not in target and "." not in target:
        return False  # a bare word ("docs", "build") is prose as often as a path
    return bool(re.search(rf"(?<![\w./-]){re.escape(target)}(?:/[\w./-]*)?(?![\w-]|\.\w)", text))


def _cited_text(c: Cand) -> str:
    return " ".join([c.content, c.source_ref, *c.hints])


def _superseded_by_removal(c: Cand, at: str, removals: list[Removal]) -> None:
    for r in removals:
        if r.at > at and cites(_cited_text(c), r.path):
            change(c, SUPERSEDED, r.uuid, f"`{r.command}` removed {r.path}")
            return


@dataclass(frozen=True)
class Undo:
    """A change the session undid: a whole file restored (``reverts`` empty) or one edit put back (``reverts``:
    the uuid of the turn whose edit was reverted)."""

    path: str
    at: str
    uuid: str
    command: str
    reverts: str = ""


def _undone_edits(s: Stream) -> list[Undo]:
    """Changes a later command or edit undid (``git checkout -- F``, ``git restore F``, an edit that puts back the
    exact text an earlier edit replaced)."""
    out: list[Undo] = []
    for call in s.calls:
        if call.command and s.status(call) == "ok":
            for seg in re.split(r"\s*(?:&&|;|\n)\s*", call.command):
                m = _UNDO_RE.match(seg.strip())
                if m:
                    for path in m.group(1).split():
                        rel = _relative(path.strip("'\""), call.turn.cwd)
                        if rel:
                            out.append(Undo(rel, call.turn.timestamp or "", call.turn.uuid, cap(seg, 120)))
    out.extend(_reverse_edits(s))
    return out


def _reverse_edits(s: Stream) -> list[Undo]:
    replaced: dict[tuple[str, str], Call] = {}
    out: list[Undo] = []
    for call in s.calls:
        if call.name not in EDIT_TOOLS or not call.ok or not call.path:
            continue
        old, new = str(call.inp.get("old_string") or ""), str(call.inp.get("new_string") or "")
        if not old.strip() and not new.strip():
            continue
        earlier = replaced.get((call.path, new)) if new.strip() else None
        if earlier is not None:
            rel = _relative(call.path, call.turn.cwd) or posixpath.basename(call.path)
            out.append(Undo(rel, call.turn.timestamp or "", call.turn.uuid, f"an edit put back {rel}'s old text",
                            earlier.turn.uuid))  # fmt: skip
        replaced[(call.path, old)] = call
    return out


def _superseded_by_undo(c: Cand, at: str, undone: list[Undo]) -> None:
    """An edit the candidate rests on was undone: by a whole-file restore of a file it cites, or by an edit that
    put back the exact text one of its own turns replaced."""
    if c.basis not in ("edit", "check", "summary") and c.kind != "configuration":
        return
    own = {t.uuid for t in [c.anchor, *c.turns]}
    for u in undone:
        if u.at <= at:
            continue
        if (u.reverts in own) if u.reverts else cites(_cited_text(c), u.path):
            change(c, SUPERSEDED, u.uuid, f"undone: {u.command}")
            return


# ---------------------------------------------------------------------------------------------------------
# decisions reversed


def _reversed(earlier: Cand, others: list[Cand]) -> None:
    """What the user said or decided is superseded by a later decision of theirs that replaces it: one on the same
    subject that says so ("instead", "let's not", "go back to" …), any later decision that settles the same
    subject (a wish the user voiced, then a choice made between options), or the very next decision when it opens
    with "actually" / "change of plan" / "scratch that" (those revise what was just decided, whatever its words).
    The decision that replaced it says what it replaced, so it stands on its own."""
    at = earlier.anchor.timestamp or ""
    mine = subject(earlier)
    later = sorted((o for o in others if (o.anchor.timestamp or "") > at and o.basis in USER_BASES),
                   key=lambda o: o.anchor.timestamp or "")  # fmt: skip
    for i, o in enumerate(later):
        said = o.concept_text or o.content
        theirs = subject(o)
        shared = len(mine & theirs)
        if shared >= 0.8 * len(mine | theirs):
            continue  # the same thing said again (a summary quoting it), not a replacement
        ratio = shared / max(1, min(len(mine), len(theirs)))
        on_subject = shared >= 2 and ratio >= 0.3
        settles = o.kind == "decision" and (shared >= 4 and ratio >= 0.35 or shared >= 3 and ratio >= 0.5)
        next_decision = earlier.kind == "decision" and o.kind == "decision" and not any(
            x.kind == "decision" for x in later[:i]
        )
        revises = next_decision and _REVISION_RE.search(said)
        if (on_subject and _REVERSAL_RE.search(said)) or settles or revises:
            change(earlier, SUPERSEDED, o.anchor.uuid, "replaced later: " + o.content[:120])
            if revises and not on_subject:
                o.content = cap(f"{o.content} (replacing: {earlier.content})", MAX_REPLACING)
            return


_SUBJECT_RE = re.compile(r"[a-z0-9_.-]{3,}")


def subject(c: Cand) -> set[str]:
    """What a statement is about: its words of three letters or more, paths split into their parts ("wakil.db"
    of "../kb/.wakil/wakil.db"), possessives and punctuation dropped, common words left out."""
    text = re.sub(r"'s\b", "", (c.concept_text or c.content).lower()).replace("/", " ")
    return {w.strip(".-") for w in _SUBJECT_RE.findall(text) if w.strip(".-") not in _STOP and len(w.strip(".-")) >= 3}


_STOP = frozenset(
    "that this with from have they them then than what when will would should could about there their these those "
    "your yours into only just also like want make sure lets user said answered asked decision claude the and for "
    "are was were not but you our its can may use all any one own new now how why who did does preference "
    "correction recommended option chose".split()
)

