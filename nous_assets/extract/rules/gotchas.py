"""Gotchas: what went wrong and what fixed it, from failing commands and from Claude's diagnoses.

Two sources:

1. **Error -> fix**: a failing command (test, build, lint, commit …) followed within a few turns by edits
   or commands after which the same kind of command succeeds. The memory names the command, the telling
   error line, the fix and, when Claude said it, the cause. A success reached by skipping the check
   (``--no-verify``, ``HUSKY=0`` …) is no fix and yields nothing.
2. **Diagnoses in prose**: a sentence of Claude's that explains a problem ("X doesn't support Y", "the issue
   is …", "must … because …", "returns a record, not {:ok, …}") and names the file, command or API it is
   about — kept only when the work then succeeds: the next check after it passes. A diagnosis followed by
   another failure of the same check, one the session later calls wrong, one the user pushes back on,
   and hedged guesses ("might", "probably", "a false positive") are hypotheses, not learnings. Of one
   debugging run the confirmed diagnoses closest to the success are kept: its final resolution.
"""

from __future__ import annotations

import re

from nous_assets.extract.rules import evidence, filters, shell
from nous_assets.extract.rules.retraction import retracts
from nous_assets.extract.rules.session import EDIT_TOOLS, Call, Cand, Stream, cand, takes_out
from nous_assets.extract.rules.text import (
    PLAN_START_RE,
    I,
    cap,
    clean_md,
    dangling,
    first_code_ref,
    fit,
    key_sentence,
    names_something,
    sentences,
    short_path,
    strip_opener,
    upper_first,
    words,
)
from nous_assets.status import REFUTED, SUPERSEDED
from nous_assets.turns import Turn

FIX_WINDOW = 40  # stream positions in which a failing command must be fixed
AFTERMATH = 20  # stream positions after a conflicted rebase or merge whose failures are its fallout
CONFIRM_WINDOW = 60  # stream positions in which a diagnosis must be confirmed by a passing check
MAX_CONTENT = 360
CHECK_CATEGORIES = frozenset({"test", "lint", "build", "migration", "install", "run"})

_STRONG_RE = re.compile(
    r"\b(?:the (?:real |actual |root )?(?:issue|problem|cause|bug|culprit|reason) (?:is|was)|root cause|that'?s the "
    r"(?:bug|issue|problem)|(?:doesn'?t|does not|don'?t|do not|can'?t|cannot|won'?t|isn'?t|is not|aren'?t|are not) "
    r"(?:(?:actually|really|even|always) )?(?:support|exist|work|accept|allow|run|handle|see|reach|find|resolve|"
    r"recogni[sz]e|read|load|match|apply|contain|include|provide|expose|pass|trigger|fire|persist|track|remove|"
    r"need|get|reach|know)"
    r"|has no (?:\w+ ){0,2}(?:subcommand|option|flag|key|field|function|method|installer|support)"
    r"|is (?:not|n'?t) (?:a|an) (?:\w+ ){0,2}(?:hook|function|macro|struct|map|record|tuple|list|string|git hook)"
    r"|returns? (?:a |an )?\S+(?: \S+){0,6}[,;]? \(?not\b|\bnot \{:ok|requires? (?:a |an |the )?\S+ (?:to|before|in)"
    r"|\balready (?:handles?|does|generates?|stringif\w*|escapes?|includes?|exists?|runs?|calls?|sets?|wraps?)\b"
    r"|\bauto-?generat\w+|\bbroke\b|\bis (?:tracked|not tracked|a symlink)\b"
    r"|must (?:be|use|have|run|come|live|go)\b|needs? to (?:be|run|come|live|go) (?:before|after|in|inside|from)\b"
    r"|only (?:works|runs|applies) (?:when|if|in|with|from)\b|(?:is|are) (?:gitignored|ignored|opaque|deprecated)\b"
    r"|because\b|\bso that\b|\binstead of\b|\brather than\b|\bexpects?\b|\bis missing\b|\bwas missing\b"
    r"|\bfails? (?:because|when|if|with)\b|\bbreaks?\b|\bcaus(?:es|ed|ing)\b|\bblocks?\b|\bprevents?\b)",
    I,
)
_HEDGE_RE = re.compile(
    r"\b(?:might|may|maybe|perhaps|possibly|probably|likely|i think|i suspect|i believe|seems?(?: to| like)|"
    r"appears? to|"
    r"could be|guess|hypothes\w+|not sure|let'?s see|let me (?:check|see|verify|look|try|investigate)|"
    r"false positive|known (?:\w+ ){0,3}(?:bug|issue)|bug in (?:the )?(?:\w+ ){0,2}(?:compiler|tool|library|"
    r"dialyzer|linter|runtime)|compiler bug|tooling issue|flaky|expected|for now|not yet|doesn'?t exist yet|yet\b)\b"
    r"|\?",
    I,
)
_REFUTE_RE = re.compile(
    r"\b(?:(?:that|this|it) (?:was|is)n'?t (?:the|a) (?:real )?(?:issue|problem|cause)|not (?:actually )?the "
    r"(?:issue|problem|cause)|wait,|actually,? (?:the|it|that|this)|the real (?:issue|problem|cause)|i was wrong|"
    r"that'?s wrong|that was wrong|my (?:earlier|previous) (?:diagnosis|assumption|theory)|didn'?t help|"
    r"did not help|still (?:fail|failing|broken|the same))\b",
    I,
)
_FIX_LEAD_RE = re.compile(
    r"^(?:so |now )?(?:let me|i'?ll|i will|i need to|i should|we need to|we should|the fix is to|fix(?:ed)? by|"
    r"solution:?|to fix (?:this|it),?)\s+",
    I,
)
_GIT_FIXES = frozenset({"git pull", "git fetch", "git rebase", "git config", "git remote", "git rm", "git mv"})
_TEST_FILE_RE = re.compile(r"(?:^|/)(?:tests?|spec|__tests__)/|[._-](?:test|spec)\.\w+$|_test\.\w+$")
_ASSERTION_RE = re.compile(r"\bassert|\bexpected\b|\btest '.+' failed|\bto (?:equal|be|match|return)\b|\bgot\b", I)
# a step of the work rather than a finding: "Update AGENTS.md to …", "Fix: …", "Outer frame — the content area …"
_STEP_RE = re.compile(
    r"^(?:update|add|remove|delete|fix|use|make|change|move|rename|keep|set|wrap|replace|extract|refactor|create|"
    r"write|run|check|verify|bump|drop|switch|install|restart|revert|commit|push|merge|rebase)\b",
    I,
)
_LABELLED_RE = re.compile(
    r"^(?:(?:solution|cause|fix|result|outcome|status|note|summary)\s*:|[^.!?:]{1,50}\s[—–]\s)", I
)


def _mostly_code(sentence: str) -> bool:
    """Table cells and lists run together ("`openjdk-17` doesn't exist there `no-result` no PR …"): three code
    spans or more with fewer plain words than three times their number is not a sentence anyone wrote."""
    spans = re.findall(r"`[^`]+`", sentence)
    plain = words(re.sub(r"`[^`]+`", " ", sentence))
    return len(spans) >= 3 and len(plain) < 3 * len(spans)


def _not_a_finding(sentence: str) -> bool:
    """A report of what was done, a step to take, a labelled list item or run-together cells: not a finding."""
    return bool(
        _NARRATION_RE.match(sentence) or _STEP_RE.match(sentence) or _LABELLED_RE.match(sentence)
    ) or _mostly_code(sentence)


_SOURCE_RE = re.compile(
    r"\.(?:py|pyi|ts|tsx|js|jsx|mjs|cjs|rs|go|ex|exs|rb|java|kt|kts|swift|c|cc|cpp|h|hpp|cs|php|scala|vue|svelte|"
    r"dart|lua|zig|heex|erl|hs|ml|clj)$"
)
# source files that set up how the code runs (test helpers, config, build scripts): a fix there does recur
_SETUP_RE = re.compile(r"(?:^|/)(?:conftest|test_helper|setup|config|settings|build|vite\.config|jest\.config|"
                       r"vitest\.config|webpack\.config|next\.config|tsconfig|babel\.config)\.\w+$|(?:^|/)config/")
_SELF_RE = re.compile(r"^(?:i'?m|i am|i'?ve|i have|i was|my )\b", I)
# a report of what was done, not a statement of how things are: "Added X to …", "Verdicts: …", "Runs are queued"
_NARRATION_RE = re.compile(
    r"^(?:added|adding|fixed|fixing|checked|checking|verified|verifying|updated|updating|removed|removing|created|"
    r"wrote|moved|renamed|kept|reviewer|verdicts?|summary|the tradeoff|that way|that second|to actually|"
    r"runs? (?:are|is)|this (?:also|clears|confirms)|since .{0,60}\bi'?ll\b|deep project|verify, don'?t)\b",
    I,
)


# ---------------------------------------------------------------------------------------------------------
# 1. failing command -> fix


def is_check(s: Stream, call: Call) -> bool:
    """A command whose success says the work is right: tests, builds, linters, migrations, commits."""
    cmd = call.command
    if not cmd:
        return False
    fam = shell.family(cmd)
    return shell.category(cmd) in CHECK_CATEGORIES or fam in ("git commit", "git push")


def conflict_aftermath(s: Stream) -> list[tuple[int, int]]:
    """Stream position windows that follow a command whose output reports merge or rebase conflicts: what
    fails and gets fixed there (duplicate definitions, type errors the merge brought in) is that one
    resolution's fallout, not something the project teaches."""
    return [
        (c.pos, c.pos + AFTERMATH)
        for c in s.calls
        if c.command and c.result is not None and filters.conflict(c.result.text[:20000])
    ]


def _in(windows: list[tuple[int, int]], pos: int) -> bool:
    return any(lo <= pos <= hi for lo, hi in windows)


def error_fixes(s: Stream) -> list[Cand]:
    """Error->fix gotchas: a failing command, what was done, and the same command passing."""
    aftermath = conflict_aftermath(s)
    bash = [(i, c) for i, c in enumerate(s.calls) if c.command]
    consumed: set[int] = set()
    out: list[Cand] = []
    for n, (i, call) in enumerate(bash):
        if s.status(call) != "fail" or i in consumed or call.result_pos is None or _in(aftermath, call.pos):
            continue
        fam = shell.family(call.command)
        if not fam or fam in shell.READ_ONLY_FAMILIES or fam.split()[0] in shell.READ_ONLY_FAMILIES:
            continue
        chain = [call]
        success: tuple[int, Call] | None = None
        rerun: tuple[int, Call] | None = None
        fams = _families(call.command)
        targets = [a for a in shell.path_args(call.command) if "/" in a]
        for k, other in bash[n + 1 :]:
            if other.pos - call.pos > FIX_WINDOW:
                break
            ofam = shell.family(other.command)
            retried = any(a in other.command for a in targets) and ofam not in shell.READ_ONLY_FAMILIES
            if ofam not in fams and not retried:
                continue
            if s.status(other) == "fail":
                chain.append(other)
                consumed.add(k)
            elif s.status(other) == "ok":
                if shell.looks_up(call.command) and not shell.looks_up(other.command):
                    # a failure a lookup showed (a CI log) is fixed when a later lookup shows it passing: a re-run
                    # started from there (`gh run rerun <id> --failed`) only starts the check again
                    rerun = rerun or (k, other)
                    continue
                success = (k, other)
                break
        if success is None and rerun is None:
            continue
        found = _error_fix(s, chain, (success or rerun)[1], fam, confirmed=success is not None)
        if found is not None:
            out.append(found)
    return out


def _families(cmd: str) -> set[str]:
    """The families of every segment of a command (``git add x && git commit`` -> git add, git commit)."""
    return {
        shell.family_of(seg)
        for seg in shell.split_segments(cmd)
        if seg and seg[0] not in shell.CMD_PREFIX_SKIP and shell.family_of(seg) not in shell.READ_ONLY_FAMILIES
    }


def _verb(command: str) -> str:
    """``showed`` for a lookup that printed a failure elsewhere (``gh run view <id> --log-failed`` showing a CI
    run's failed test: the command worked), else ``failed with``."""
    return "showed" if shell.looks_up(command) else "failed with"


def _error_fix(s: Stream, chain: list[Call], ok_call: Call, fam: str, *, confirmed: bool = True) -> Cand | None:
    """The gotcha of a failure ``chain`` that ``ok_call`` got past; ``confirmed`` when ``ok_call`` is the check
    passing (verified), not a re-run whose outcome the session never looked at (observed)."""
    first, last = chain[0], chain[-1]
    cwd = first.turn.cwd
    if filters.bypass(ok_call.command) and not filters.bypass(first.command):
        return None  # skipping the check is not a fix
    if not shell.same_target(last.command, ok_call.command):
        return None  # the "success" ran on something else: it confirms nothing
    errors: list[str] = []
    for c in chain:
        line = shell.error_line(c.result.text if c.result else "")
        if line and line not in errors:
            errors.append(line)
    if not errors or filters.conflict(" ".join(errors)) or fam in ("git rebase", "git merge", "git cherry-pick"):
        return None
    if filters.transient(" ".join(errors)) or filters.slip(errors[0]):
        return None  # a lock file, the network, a slip of the moment: nothing the next session can learn
    errors = [cap(e, 120) for e in errors]
    edits, commands, fix_turns = _fix_steps(s, chain, ok_call, fam)
    if edits and not commands and all(_TEST_FILE_RE.search(e) for e in edits) and _ASSERTION_RE.search(errors[0]):
        return None  # a test that was wrong, fixed by editing the test: true of that test only
    if edits and not commands and all(_SOURCE_RE.search(e) and not _SETUP_RE.search(e) for e in edits):
        return None  # a bug in the code at hand, fixed in that code: the next session will not hit it again
    if any(filters.bypass(c) for c in commands):
        return None
    explanation = ""
    for t in s.turns[first.pos + 1 : ok_call.pos + 1]:
        if t.role == "assistant" and t.text.strip():
            explanation = key_sentence(t.text, 150, mode="explain")
            if explanation and not _HEDGE_RE.search(explanation) and len(words(explanation.rstrip("…"))) >= 5:
                break
            explanation = ""
    failed_cmd = shell.clean_cmd(first.command, cwd, 90)
    ok_cmd = shell.clean_cmd(ok_call.command, cwd, 90)
    same = ok_cmd in (failed_cmd, shell.clean_cmd(last.command, cwd, 90))
    if not edits and not commands and same:
        return None  # a plain re-run: nothing learned
    fix_parts: list[str] = []
    if edits:
        fix_parts.append("editing " + ", ".join(edits[:3]) + (" and more" if len(edits) > 3 else ""))
    if commands:
        fix_parts.append("running " + ", ".join(f"`{c}`" for c in commands[:2]))
    if not fix_parts:
        fix_parts.append(f"running `{ok_cmd}` instead")
    tail = "" if same or not edits and not commands else f" (then `{ok_cmd}` passed)"
    err_text = f'"{errors[0]}"' + (f' (later "{cap(errors[-1], 90)}")' if len(errors) > 1 else "")
    content = fit(
        [
            f"`{failed_cmd}` {_verb(first.command)} {err_text.replace(chr(34) * 2, chr(34))}",
            ("; fixed by " if confirmed else "; tried ") + " and ".join(fix_parts),
            tail if confirmed else " (its outcome not checked)",
            f". Cause: {explanation}" if explanation else "",
        ],
        MAX_CONTENT,
    )
    if filters.one_off(content.split(". Cause:")[0].replace(errors[0], "")):
        content = filters.scrub(content) or content
    turns = [first.turn] + [t for c in chain for t in c.turns()] + fix_turns + ok_call.turns()
    anchor = first.result_turn or first.turn
    c = cand(
        "gotcha",
        content,
        anchor,
        s.gpos[first.result_pos or first.pos],
        turns,
        " ".join([failed_cmd, *errors, *edits, *commands, explanation]),
        applies_when=f"when running `{cap(fam, 40)}`",
        source_ref=failed_cmd if len(failed_cmd) <= 60 else fam,
        score=3 + len(edits) + len(commands) + (1 if explanation else 0),
        basis="check" if confirmed else "file",
    )
    c.hints = [*edits, failed_cmd, "Bash"]
    return c


def _fix_steps(s: Stream, chain: list[Call], ok_call: Call, fam: str) -> tuple[list[str], list[str], list[Turn]]:
    """(files edited, other commands run, their turns) between the first failure and the success."""
    first = chain[0]
    cwd = first.turn.cwd
    edits: list[str] = []
    commands: list[str] = []
    fix_turns: list[Turn] = []
    chain_ids = {id(c) for c in chain}
    shown = shell.looks_up(first.command)  # a failure a lookup showed: a re-run of the same family is a step too
    for c in s.calls:
        if not (first.pos < c.pos < ok_call.pos) or id(c) in chain_ids:
            continue
        if c.name in EDIT_TOOLS and c.path and c.ok:
            sp = short_path(c.path, cwd)
            if sp not in edits:
                edits.append(sp)
            fix_turns.extend(c.turns())
        elif c.command and s.status(c) == "ok":
            f2 = shell.family(c.command)
            if (
                f2
                and (f2 != fam or shown and not shell.looks_up(c.command))
                and f2 not in shell.READ_ONLY_FAMILIES
                and f2.split()[0] not in shell.READ_ONLY_FAMILIES
                and (not f2.startswith("git ") or f2 in _GIT_FIXES)
            ):
                cc = shell.clean_cmd(c.command, cwd, 60)
                if cc not in commands:
                    commands.append(cc)
                fix_turns.extend(c.turns())
    return edits, commands, fix_turns


# ---------------------------------------------------------------------------------------------------------
# 2. diagnoses in Claude's prose


def diagnoses(s: Stream) -> list[Cand]:
    """Diagnoses from assistant text (see the module docstring): confirmed ones as learnings, the others as
    hypotheses (kept searchable, never injected; the user's answer may still refute or confirm them)."""
    checks = [c for c in s.calls if is_check(s, c) and s.status(c) in ("ok", "fail")]
    failures = [c for c in s.calls if c.command and s.status(c) == "fail"]
    aftermath = conflict_aftermath(s)
    found: list[tuple[int, Cand]] = []  # (position of the confirming check, or -1 when none, candidate)
    for pos, turn in s.assistant_texts():
        if _in(aftermath, pos):
            continue
        for k, (sent, fix) in enumerate(_diagnostic_sentences(turn.text)):
            if retracts(sent):
                continue  # the assistant taking back its own last step: narration, no finding
            confirm = _confirmation(s, pos, checks, failures, sent)
            body = strip_opener(sent).rstrip(":")
            text = upper_first(body)
            if fix:
                text = f"{text.rstrip('.')}. Fix: {fix}"
            content = cap(text, MAX_CONTENT)
            if filters.one_off(content) or filters.conflict(content) or filters.bypass(content):
                continue
            ref = first_code_ref(body)
            failing = _recent_failure(s, pos, failures)
            when = f"when running `{cap(shell.family(failing.command), 40)}`" if failing else (
                f"when working with {ref}" if ref else "")  # fmt: skip
            score = 2.0 + (1.5 if _STRONG_RE.search(body) else 0) + (1.0 if fix else 0) + (0.5 if failing else 0)
            # the check that failed before the diagnosis passes after it: the diagnosis was right; any other
            # passing check only says the work went on, and the sentence stays the assistant's reasoning
            fixed = confirm is not None and failing is not None
            fixed = fixed and shell.family(failing.command) == shell.family(confirm.command)
            c = cand("gotcha", content, turn, s.gpos[pos], [turn, *(confirm.turns() if confirm else [])], body,
                     sub=10 + k, applies_when=when, source_ref=ref, score=score if confirm else score - 1.5,
                     basis="check" if fixed else "prose")  # fmt: skip
            c.hints = [ref] if ref else []
            again = None if confirm or failing is None else _next_check(checks, pos, shell.family(failing.command))
            changed = _fixed_what_it_names(s, pos, confirm.pos if confirm else len(s.turns), body)
            if again is not None and s.status(again) == "fail":  # the check it was to fix failed again
                evidence.initial(c)
                evidence.change(c, REFUTED, (again.result_turn or again.turn).uuid,
                                f"`{shell.clean_cmd(again.command, again.turn.cwd, 60)}` failed again after it")
            elif changed is not None:  # it described code the session then changed: true before, not after
                evidence.initial(c)
                evidence.change(c, SUPERSEDED, changed.turn.uuid, f"the code it describes changed in {changed.path}")
            found.append((confirm.pos if confirm else -1 - pos, c))
    return _final_resolutions(found)


def _next_check(checks: list[Call], pos: int, family: str | None = None) -> Call | None:
    """The first check after ``pos`` within the window (of ``family`` when given)."""
    return next(
        (c for c in checks if 0 <= c.pos - pos <= CONFIRM_WINDOW and family in (None, shell.family(c.command))), None
    )


def _diagnostic_sentences(text: str) -> list[tuple[str, str]]:
    """(diagnosis sentence, the fix stated right after it or '') pairs of one assistant message."""
    sents = [x for x in sentences(clean_md(text)) if x != "[code]"]
    out: list[tuple[str, str]] = []
    for i, raw in enumerate(sents[:12]):
        sent = strip_opener(re.sub(r"^(?:i see(?: the issue)?[!.,:]*\s*[-—–]?\s*)", "", raw.strip(), flags=I))
        sent = sent.lstrip("-—–:;,. ")
        n = len(words(sent))
        if n < 6 or n > 60 or sent.endswith("?") or PLAN_START_RE.match(sent) or _SELF_RE.match(sent):
            continue
        if _not_a_finding(sent):
            continue
        if dangling(sent):
            continue
        if not _STRONG_RE.search(sent) or _HEDGE_RE.search(sent) or not names_something(sent):
            continue
        fix = ""
        for nxt in sents[i + 1 : i + 3]:
            nxt = nxt.strip()
            m = _FIX_LEAD_RE.match(nxt)
            if m:
                rest = nxt[m.end() :].rstrip(":. ")
                if 3 <= len(words(rest)) <= 30 and not re.match(r"^(?:check|see|look|read|verify|try|run)\b", rest, I):
                    fix = cap(upper_first(rest), 150)
                break
            if (
                len(sent) + len(nxt) < 300
                and names_something(nxt)
                and not nxt.endswith(("?", ":"))
                and not PLAN_START_RE.match(nxt)
                and not _HEDGE_RE.search(nxt)
                and not _not_a_finding(nxt)
                and len(words(nxt)) >= 5
            ):
                sent = f"{sent.rstrip()} {nxt}"  # the explanation goes on: keep it whole
                continue
            break
        out.append((sent, fix))
    return out[:3]


def _confirmation(s: Stream, pos: int, checks: list[Call], failures: list[Call], sent: str) -> Call | None:
    """The passing check that confirms a diagnosis made at ``pos``, or None (refuted or never checked)."""
    nxt = _next_check(checks, pos)
    if nxt is None or s.status(nxt) != "ok":
        return None
    if _refuted_between(s, pos, nxt.pos):
        return None
    if any(pos <= f.pos < nxt.pos and shell.family(f.command) == shell.family(nxt.command) for f in failures):
        return None
    return nxt


def _refuted_between(s: Stream, start: int, end: int) -> bool:
    """The session says it was wrong, or the user pushes back, between a diagnosis and its check (a user who
    answers "go ahead" does not; one who says "no, that's not it" does)."""
    for p in range(start + 1, min(end + 1, len(s.turns))):
        t = s.turns[p]
        if p in s.user_positions and t.role == "user" and evidence.rejects(t.text):
            return True
        if t.role == "assistant" and t.text and _REFUTE_RE.search(t.text):
            return True
    return False


def _fixed_what_it_names(s: Stream, start: int, end: int, body: str) -> Call | None:
    """An edit after a diagnosis (up to the check that passed after it) to a file the diagnosis names or carrying
    one of its code words: the code the diagnosis describes was changed, so it described the state before."""
    refs = evidence.code_words(body)
    for c in s.calls:
        if start < c.pos < end and c.name in EDIT_TOOLS and c.ok and c.path:
            changed = str(c.inp.get("new_string") or c.inp.get("content") or "")
            if any(r in c.path or r in changed for r in refs):
                return c
    return None


def _recent_failure(s: Stream, pos: int, failures: list[Call]) -> Call | None:
    """The failing command right before ``pos`` (within a few positions), if any."""
    before = [f for f in failures if f.pos <= pos and pos - f.pos <= 12]
    return before[-1] if before else None


def _final_resolutions(found: list[tuple[int, Cand]]) -> list[Cand]:
    """Of diagnoses confirmed by the same check, keep the two closest to it (the run's final resolution)."""
    by_check: dict[int, list[Cand]] = {}
    for check_pos, c in found:
        by_check.setdefault(check_pos, []).append(c)
    out: list[Cand] = []
    for group in by_check.values():
        group.sort(key=lambda c: (-c.pos, -c.score))
        out.extend(group[:2])
    return out


# ---------------------------------------------------------------------------------------------------------
# 3. why-comments written into the code


_COMMENT_RE = re.compile(r"^\s*(?:#|//|--|/\*+|\*)\s*(.+?)\s*(?:\*/)?$")
_WHY_RE = re.compile(
    r"\b(?:because|by design|so that|otherwise|must|workaround|note:|important:|not supported|doesn'?t|does not|"
    r"can'?t|cannot|won'?t|required|needed so|avoid|due to|warns?|instead of|never|always|keep in sync|"
    r"must stay|don'?t|do not)\b",
    I,
)
MAX_COMMENTS = 4


def why_comments(s: Stream) -> list[Cand]:
    """Comments Claude added to code that say why ("MapSet is opaque by design; dialyzer warns …")."""
    out: list[Cand] = []
    for call in s.calls:
        if call.name not in EDIT_TOOLS or not call.path or not call.ok:
            continue
        if re.search(r"\.(?:md|txt|rst|json|lock)$|(?:^|/)(?:test|tests|spec)/", call.path):
            continue
        for k, text in enumerate(comments(_added_lines(call))):
            if len(words(text)) < 6 or not _WHY_RE.search(text) or _HEDGE_RE.search(text) or filters.one_off(text):
                continue
            if _removed_later(s, call, text):
                continue  # rewritten or dropped later in the session: the code no longer says it
            rel = short_path(call.path, call.turn.cwd)
            content = cap(f"{rel}: {upper_first(text.rstrip('.'))}.", MAX_CONTENT)
            c = cand("gotcha", content, call.turn, s.gpos[call.pos], call.turns(), text, sub=70 + k,
                     applies_when=f"when changing {rel}", source_ref=rel, score=2.5, basis="edit")  # fmt: skip
            c.hints = [rel]
            out.append(c)
            break
        if len(out) >= MAX_COMMENTS:
            break
    return out


def _removed_later(s: Stream, call: Call, comment: str) -> bool:
    """A later edit of the same file took the comment out: its first words, whitespace aside, are gone."""
    probe = " ".join(comment.split()[:5])
    return takes_out(s.later_edits(call), lambda text: probe in " ".join(text.split()))


def comments(lines: list[str]) -> list[str]:
    """The comments among added lines, a comment wrapped over consecutive lines joined into one."""
    out: list[str] = []
    joining = False
    for line in lines:
        m = _COMMENT_RE.match(line)
        if not m or not m.group(1).strip():
            joining = False
            continue
        text = m.group(1).strip()
        if joining:
            out[-1] = f"{out[-1]} {text}"
        else:
            out.append(text)
        joining = True
    return out


def _added_lines(call: Call) -> list[str]:
    inp = call.inp
    if isinstance(inp.get("content"), str):
        return inp["content"].splitlines()
    pairs = []
    if isinstance(inp.get("edits"), list):
        pairs = [(str(e.get("old_string") or ""), str(e.get("new_string") or "")) for e in inp["edits"]
                 if isinstance(e, dict)]  # fmt: skip
    else:
        pairs = [(str(inp.get("old_string") or ""), str(inp.get("new_string") or ""))]
    out = []
    for old, new in pairs:
        before = {x.strip() for x in old.splitlines()}
        out.extend(x for x in new.splitlines() if x.strip() and x.strip() not in before)
    return out
