"""A deterministic, offline learning extractor: regular expressions over one session's turns.

It is the provider that always works (no network, no model) and the baseline the LLM providers are
compared with. Six rules, each yielding self-contained one-line learnings:

1. **correction** – a user message that pushes back on the previous assistant turn ("no, …", "that's
   wrong", "X, not Y", "you should have", a rejected tool call followed by an explanation …). The content
   quotes the user, says what Claude had said/done, and what Claude did next; ``weakens`` names the
   corrected claim or action.
2. **preference** – "always/never …", "from now on …", "don't …", "please use …", "I'd rather …",
   "we want/use …".
3. **decision** – "let's go with/use …", "we'll use …", "decided to …", and an assistant proposal the user
   approved ("yes", "ok", "go ahead", or picking option "A") — unless the proposal is a one-off operation
   (push, force-push, merge, deploy, run, delete …): approving it once is not a standing decision.
4. **error_fix** – a failing Bash call followed, within a few turns, by edits/commands after which the same
   kind of command succeeds.
5. **command** / **configuration** – build/test/lint/install/migration/run commands that succeeded
   (deduplicated, at most five, preferring ones that ended a failure or that the user asked for) and
   summaries of config-file edits.
6. **fact** – what the user states about themselves, the project or the world.

Only real user prompts are mined for speech (not meta, compact summaries, slash-command wrappers, task
notifications, subagent prompts); ``acompact-`` subagent side-calls are ignored entirely, and thinking is
never read.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nous_assets.capture.parser import ToolResult, ToolUse, Turn
from nous_assets.extract.base import SessionBatch
from nous_assets.extract.concepts import extract_concepts, infer_domain

__all__ = ["HeuristicExtractor"]

MAX_CONTENT = 400
MAX_PER_BATCH = 60
KIND_CAPS = {"command": 5, "configuration": 5, "error_fix": 12, "fact": 12, "decision": 15, "preference": 20}
FIX_WINDOW = 40  # turns (within one transcript stream) in which a failing command must be fixed
MAX_PROVENANCE_TURNS = 16

_TYPE_BY_KIND = {
    "correction": "learning",
    "preference": "learning",
    "decision": "learning",
    "error_fix": "learning",
    "command": "knowledge",
    "configuration": "knowledge",
    "fact": "knowledge",
}
_KIND_RANK = {"correction": 0, "preference": 1, "decision": 2, "error_fix": 3, "fact": 4, "configuration": 5,
              "command": 6}  # fmt: skip

# ---------------------------------------------------------------------------------------------------------
# text cleaning

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]|\x1b[=>]")
_WRAPPER_TAGS = (
    "system-reminder", "command-name", "command-message", "command-args", "local-command-stdout",
    "local-command-stderr", "local-command-caveat", "task-notification", "user-prompt-submit-hook",
    "persisted-output", "bash-input", "bash-stdout", "bash-stderr", "ide_selection", "ide_opened_file",
)  # fmt: skip
_TAG_BLOCK_RE = re.compile(r"<(" + "|".join(_WRAPPER_TAGS) + r")\b[^>]*>.*?</\1>", re.S)
_LOOSE_TAG_RE = re.compile(r"</?(?:" + "|".join(_WRAPPER_TAGS) + r")\b[^>]*>")
_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.S)
_EMOJI_RE = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d]")
_BOX_RE = re.compile(r"[\u2500-\u259f\u2190-\u21ff\u2800-\u28ff]+")
_MD_RE = re.compile(r"\*\*|__|~~|^#{1,6}\s*|^\s*>\s?|^\s*(?:[-*+]|\d+[.)])\s+", re.M)
_SENT_SPLIT_RE = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")
_WS_RE = re.compile(r"[ \t]+")

_FILLER_RE = re.compile(
    r"^(?:ok(?:ay)?|k|uh+|um+|hm+|ah+|oh+|well|so|sorry|thanks?|thank you|cool|great|nice|alright|right|"
    r"yes|yeah|yep|yup|sure|no|nope|wait|hmm+|wow|lol|wth|ugh|perfect|excellent|good|done|awesome)[.!,?:)\s]*$",
    re.I,
)
_TRIVIAL_RE = re.compile(
    r"^(?:ok(?:ay)?|k|thanks?|thank you|ty|continue|go on|keep going|next|done|yes|no|y|n|sure|cool|great|nice|"
    r"lgtm|perfect|proceed|go|continue implementation|continue until (?:all are )?done|carry on|resume|"
    r"how'?s it going|status|hi|hello|hey)[.!?\s]*$",
    re.I,
)
_ASSISTANT_FILLER_RE = re.compile(
    r"^(?:perfect|great|excellent|good|done|ok(?:ay)?|sure|got it|you'?re (?:absolutely )?right|i see|now i see|"
    r"ah+|nice|awesome|found (?:it|the issue)|interesting|understood|all green|clean|expected|good catch|"
    r"good question|right|now|hmm|alright)\b",
    re.I,
)


def _strip_noise(text: str) -> str:
    text = _ANSI_RE.sub("", text)
    text = _TAG_BLOCK_RE.sub(" ", text)
    text = _LOOSE_TAG_RE.sub(" ", text)
    return text


def _clean_md(text: str) -> str:
    """Markdown and decoration out, line structure kept."""
    text = _FENCE_RE.sub(" [code] ", _strip_noise(text))
    text = _EMOJI_RE.sub("", text)
    text = _BOX_RE.sub(" ", text)
    text = _MD_RE.sub("", text)
    return "\n".join(_WS_RE.sub(" ", line).strip() for line in text.splitlines())


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cap(text: str, limit: int) -> str:
    text = _one_line(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-") + "…"


_QUOTED_RE = re.compile(r"\"[^\"\n]{3,240}\"|“[^”\n]{3,240}”")


def _sentences(text: str) -> list[str]:
    """Split on sentence ends and newlines, never inside a short double-quoted span."""
    quoted: list[str] = []

    def hide(m: re.Match[str]) -> str:
        quoted.append(m.group(0))
        return f"\x00{len(quoted) - 1}\x00"

    masked = _QUOTED_RE.sub(hide, text)
    out = []
    for part in _SENT_SPLIT_RE.split(masked):
        if part and part.strip():
            out.append(re.sub(r"\x00(\d+)\x00", lambda m: quoted[int(m.group(1))], part.strip()))
    return out


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9][\w'./:-]*", text)


_LOG_LINE_RE = re.compile(
    r"^(?:[>$#❯%]|\[[\w ]*\]|\d{1,2}:\d{2}|\d{4}-\d{2}-\d{2}|at\s|File \"|[-+]{2,}|[=~^]{2,}|\s*\d+\s*[│|→])"
)


def _is_prose_line(line: str) -> bool:
    if _LOG_LINE_RE.match(line):
        return False
    words = _words(line)
    if len(words) < 3:
        return False
    letters = sum(ch.isalpha() or ch.isspace() for ch in line)
    if letters < 0.7 * len(line):
        return False
    symbolic = sum(1 for w in line.split() if re.search(r"[{}()<>=;/\\\[\]@$|]", w))
    return symbolic <= max(1, len(line.split()) // 3)


def _leading_prose(text: str, limit: int = 1500) -> str:
    """The user's own words at the start of a message; stops where a pasted log/code block begins."""
    kept: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if _is_prose_line(line):
            kept.append(line)
            if sum(len(k) for k in kept) > limit:
                break
        elif kept:
            break
    out = ""
    for line in kept:
        if not out:
            out = line
        elif out[-1] in ".!?:;)" or len(out.rsplit("\n", 1)[-1]) < 40:
            out += "\n" + line
        else:
            out += " " + line  # a hard-wrapped sentence
    return out


# ---------------------------------------------------------------------------------------------------------
# speech patterns (user messages)

_I = re.I
_APPROVAL_RE = re.compile(
    r"^(?:yes|yep|yeah|yup|ok(?:ay)?|sure|sounds good|go ahead|do it|please do|lgtm|perfect|great|approved|"
    r"agreed|let'?s do it|proceed|ship it|works for me|that works|makes sense|go for it|absolutely|correct)\b"
    r"(?:[ ,]+(?:please|thanks|go ahead|do it|proceed|sounds good))*[.!]*$",
    _I,
)
_OPTION_RE = re.compile(r"^(?:option\s+|go with\s+|let'?s do\s+)?\(?([a-e1-5])\)?[.!]?(?:\s+please)?$", _I)
_QUESTION_PROPOSAL_RE = re.compile(
    r"\b(?:want me to|should i|shall i|would you like me to|do you want me to|should we|shall we|can i|may i)\s+"
    r"(.+?)\s*\?*$",
    _I,
)
_PRONOUN_OBJECT_RE = re.compile(
    r"^(?:go ahead(?: with)?|proceed(?: with)?|do|add|make|implement|fix|apply|continue|start)?\s*"
    r"(?:that|it|this|them|those|these|so|the change|the changes|the fix)?\s*(?:now|for you|too|as well)?$",
    _I,
)
_RECOMMEND_RE = re.compile(
    r"\b(?:i can|i could|i'?ll|i will|i'?d (?:suggest|recommend|go with)|i recommend|i suggest|i propose|"
    r"my recommendation|recommended|we should|we could|the (?:approach|plan|solution|fix) (?:is|would be))\b",
    _I,
)
# A "yes" approves one action at one moment ("Shall I push and open a PR?"): operations on the repository,
# processes or the network are one-off actions, not durable decisions, and must not come back as standing
# instructions in later sessions ("force-push to main" approved once is not "we force-push to main").
_ONE_OFF_RE = re.compile(
    r"^(?:(?:go ahead and|now|also|just|first|then|finally|quickly)\s+)*"
    r"(?:force[- ]?push|push|commit|merge|rebase|squash|amend|cherry-pick|revert|reset|stash|tag|release|publish|"
    r"deploy|kill|restart|re-?run|run|execute|delete|drop|wipe|purge|curl|wget|pipe|send|upload|"
    r"(?:continue|finish|abort) (?:with )?the (?:rebase|merge|cherry-pick)|(?:open|create|raise) (?:a |the )?"
    r"(?:pr|pull request|merge request)|close (?:the|this) (?:pr|pull request|issue))\b",
    _I,
)
_SECTION_RE = re.compile(
    r"^(?:the )?(?:approach|plan|proposal|recommendation|solution|proposed (?:fix|change)s?)\b", _I
)

_CORRECTION_START_RE = re.compile(
    r"^(?:no|nope|nah|wrong|incorrect|stop|undo|revert|don'?t do that|that'?s not it)\b(?![-'])", _I
)
_CORRECTION_ANY_RE = re.compile(
    r"\b(?:that'?s|that is|this is|it'?s|you'?re|you are) (?:wrong|not right|incorrect|not correct|not what i)"
    r"|\bnot what i (?:asked|wanted|meant|said)\b"
    r"|\byou should(?:n'?t| not)? have\b"
    r"|\bi (?:said|told you|asked you|already said|meant)\b"
    r"|\bdon'?t do that\b|\bplease (?:stop|don'?t)\b|\bstop (?:doing|using|adding|changing|it)\b"
    r"|\bwrong (?:file|branch|directory|dir|path|place|command|one|function|approach|repo|project|version|way)\b"
    r"|\bwhy (?:did|would) you\b"
    r"|\byou (?:broke|forgot|missed|ignored|deleted|removed|didn'?t)\b"
    r"|\bstill (?:doesn'?t|does not|isn'?t|is not|not|fails|failing|broken|wrong|no)\b"
    r"|\b(?:doesn'?t|does not|didn'?t|did not|isn'?t|is not) (?:work|fix|help)\b"
    r"|^actually\b|\bactually,"
    r"|\b(?:is|was|are|were) (?:the |a |an )?[\w./:@-]+(?: [\w./:@-]+){0,4},? not (?:the |a )?[\w./:@-]+"
    r"|\bnot [\w./:@-]+(?: [\w./:@-]+){0,3},? but\b"
    r"|\binstead\b",
    _I,
)
_NEGATED_RE = re.compile(
    r", not (?:the |a )?([\w./:@-]+(?: [\w./:@-]+){0,2})|\bnot ([\w./:@-]+(?: [\w./:@-]+){0,3}),? but\b"
    r"|\binstead of ([\w./:@ -]{2,40}?)(?=[,.;]|$| we| let)"
    r"|\brather than ([\w./:@ -]{2,40}?)(?=[,.;]|$)",
    _I,
)
_ACK_RE = re.compile(
    r"\b(?:you'?re (?:absolutely )?right|got it|understood|good (?:point|catch)|my (?:mistake|bad)|sorry|"
    r"i see|ah,? |you are right|fair point|makes sense)\b",
    _I,
)

_DECISION_RE = re.compile(
    r"\blet'?s (?:go with|use|switch to|stick with|stay with|keep|adopt|move to|migrate to|choose|pick|drop|replace|"
    r"start with|build it (?:in|with)|write it in)\b"
    r"|\bwe'?ll (?:use|go with|switch to|stick with|keep|adopt|move to|migrate to|drop)\b"
    r"|\bwe will (?:use|go with|switch to|stick with|keep|adopt|move to|migrate to|drop)\b"
    r"|\bwe'?re going (?:to use|to go with|to switch to|with)\b"
    r"|\b(?:i|we) (?:have |'ve )?decided\b|\bdecided to\b|\bdecision is\b|\bgoing with\b"
    r"|\binstead of .{2,60}?,? (?:we'?ll|let'?s|we will|we should|use)\b|\bthe plan is\b",
    _I,
)
_PREF_HIGH_RE = re.compile(
    r"^(?:please )?(?:always|never)\b|\b(?:always|never) (?:use|run|do|add|write|commit|push|call|create|put|"
    r"make|test|mock|edit|touch|import|include|leave|ask|check|prefer|start|keep|rebase|merge|format|"
    r"delete|remove|change|modify|skip|install|update|hardcode|force)\b|\bfrom now on\b|\bgoing forward\b"
    r"|\bin the future\b|\bevery time you\b",
    _I,
)
_PREF_RE = re.compile(
    r"^(?:please )?(?:don'?t|do not)\b(?! (?:know|worry|think|see|understand|care|remember|have|mind|get|need))"
    r"|\bplease (?:use|don'?t|do not|avoid|keep|prefer|make sure|stick to|write|put)\b"
    r"|\b(?:i|we) (?:prefer|like to|always|never|usually)\b|^prefer\b|\bi'?d (?:rather|prefer|like|love)\b"
    r"|\bmake sure (?:to|you|that|it)\b|\b(?:i|we) (?:really |explicitly |definitely )?want\b"
    r"|\bwe (?:really |explicitly |definitely )?(?:don'?t|do not) want\b|\bwe use\b"
    r"|\bwe (?:don'?t|do not|never) use\b|\bremember (?:that|to)\b|\bkeep in mind\b"
    r"|^(?:avoid|stop using|use)\b|\bwe do [\w-]+-first\b|\b[\w-]+-first\b"
    r"|\b(?:it|this|that|they) (?:needs|has) to be\b|\bneeds to be\b|\bshould (?:always|never)\b|\brather than\b",
    _I,
)
_FACT_RE = re.compile(
    r"\b(?:i'?m|i am) (?:using|on|running|working (?:on|with)|based in|a|an|the)\b"
    r"|\bmy (?:name|email|username|machine|os|setup|laptop|computer|editor|shell|role|team|company)\b"
    r"|\bwe'?re (?:in|on|using|running|deploying|targeting|building)\b|\bwe are (?:in|on|using|running)\b"
    r"|\b(?:our|this|the) (?:api|server|app|application|project|repo|repository|database|db|ci|backend|frontend|"
    r"service|cluster|stack|codebase|pipeline|deployment|production|staging|team|branch|main branch)\b"
    r".{0,60}?\b(?:is|are|runs?|uses?|lives?|deploys?|has|needs|requires|talks to|is hosted|depends on)\b"
    r"|\bwe (?:deploy|host|run|ship|build|release) (?:to|on|with|in|from)\b"
    r"|\bthis (?:project|repo|codebase|app|service) (?:uses|is|runs|has|needs|requires|depends)\b"
    r"|\b(?:has become|is now|became) available\b|\bsince your (?:knowledge )?cut-?off\b"
    r"|\b(?:was|has been|got) (?:released|deprecated|renamed|removed|merged)\b|\bno longer (?:exists|works|supported)\b"
    r"|\bis deprecated\b|\b(?:you can|you'?ll need to|you need to|just) run\b"
    r"|^run [`'\"]?[\w./-]+.{0,80}?\bto (?:see|find|get|check|list|show|start|build|run|view)\b",
    _I,
)
_HEDGE_RE = re.compile(
    r"\b(?:i don'?t know|not sure|i wonder|wondering|maybe|might|perhaps|if we want|whether|i guess|i bet|"
    r"i'?m guessing|do you think|could you|can you|would you|how (?:hard|do|can|would))\b",
    _I,
)
_TIP_RE = re.compile(r"\b(?:you can|you'?ll need to|you need to|just) run\b|^run\b", _I)
_PASTE_INTRO_RE = re.compile(
    r"\b(?:this is from|here is|here'?s|this is the (?:output|log|error|trace)|see below|below is)\b", _I
)
_TEMPORAL_LOW_RE = re.compile(
    r"\b(?:for now|temporar(?:y|ily)|until (?:we|the|it|they|next)|for the time being|at the moment|right now|"
    r"this week|for this (?:sprint|release)|(?:in|on|with|for) (?:react|python|node|django|rails|elixir|phoenix|"
    r"go|rust|java|typescript|postgres|ios|android|v(?:ersion)?)\s*v?\d+(?:\.\d+)*|as of (?:v|version )?\d)",
    _I,
)
_IDENTIFIER_RE = re.compile(r"\b[a-z]+_[a-z_]+\b|\b[A-Z][a-z]+[A-Z]\w+\b|\b[a-z]+[A-Z]\w+\b")
_PROJECT_MARKER_RE = re.compile(
    r"`[^`]+`|\b[\w-]+/[\w./-]+|\b\w+\.(?:py|ex|exs|ts|tsx|js|jsx|rs|go|rb|json|toml|ya?ml|md|sql|sh|heex|css|html)\b"
    r"|\b(?:we|we'?re|we'?ll|let'?s|our|us|this (?:project|repo|codebase|app|"
    r"service|branch|test|file)|these (?:tests|files)|the (?:project|repo|app|api|server|ci|database|db|codebase|"
    r"branch|pr))\b",
    _I,
)
_GENERATED_RE = re.compile(
    r"^(?:summarize this|your task is to create a detailed summary|this session is being continued|"
    r"caveat: the messages below|base directory for this skill|<)",
    _I,
)
_TRANSCRIPT_LINE_RE = re.compile(r"^(?:user|agent|assistant|human|claude)\s*:", _I | re.M)

# ---------------------------------------------------------------------------------------------------------
# commands

_READ_ONLY_FAMILIES = {
    "ls", "cat", "head", "tail", "grep", "rg", "find", "pwd", "echo", "which", "wc", "tree", "sed", "awk", "sleep",
    "file", "stat", "du", "df", "env", "printenv", "jq", "less", "more", "diff", "sort", "uniq", "cut", "xargs",
    "git status", "git log", "git diff", "git show", "git branch", "git ls-files", "git rev-parse", "git remote",
    "git fetch", "git stash", "git blame", "git config", "python -c", "node -e", "bd", "gh pr", "gh api", "type",
    "true", "false", "test", "[", "date", "whoami", "uname", "id", "ps", "lsof", "curl", "wget", "open", "tmux",
}  # fmt: skip
_CMD_PREFIX_SKIP = {"cd", "source", ".", "export", "set", "echo", "sleep", "true", "pushd", "popd", "unset", "mkdir"}
_ENV_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_INTERPRETERS = {"python", "python3", "node", "ruby", "bash", "sh", "zsh", "perl", "deno", "bun", "tsx", "ts-node"}
_SUB_CLIS = {
    "git", "mix", "npm", "pnpm", "yarn", "cargo", "go", "docker", "docker-compose", "uv", "pip", "pip3", "poetry",
    "make", "gh", "bd", "kubectl", "bundle", "rails", "alembic", "terraform", "brew", "apt", "apt-get",
    "prisma", "dotnet", "gradle", "mvn", "hatch", "pdm", "conda", "helm", "flask", "django-admin",
}  # fmt: skip
_CATEGORY_RES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("test", re.compile(
        r"^(?:pytest|python -m pytest|mix test|(?:npm|pnpm|yarn|bun) (?:run )?test\b|go test|cargo test|"
        r"npx (?:vitest|jest|playwright|mocha)|vitest|jest|mocha|rspec|bundle exec|make test|tox|nox|phpunit|"
        r"deno test|bun test|gradle test|mvn test|ctest|dotnet test|(?:npm|pnpm|yarn) run (?:test|e2e)\S*)")),
    ("migration", re.compile(
        r"^(?:alembic|mix ecto\.\S+|mix ash\.\S+|mix ash_\S+|prisma|npx prisma|rails db:\S+|python manage\.py|"
        r"manage\.py|django-admin|(?:npm|pnpm|yarn) run db:\S+|flask db|sequelize|knex|diesel)")),
    ("lint", re.compile(
        r"^(?:ruff|mypy|pyright|black|isort|flake8|pylint|eslint|biome|prettier|mix format|mix credo|"
        r"mix dialyzer|tsc|npx (?:eslint|biome|prettier|tsc|knip|@biomejs\S*)|cargo (?:clippy|fmt)|gofmt|"
        r"golangci-lint|(?:npm|pnpm|yarn|bun) run (?:lint|check|typecheck|format|fmt|tsc)\S*|knip|shellcheck|"
        r"rubocop|pre-commit|lefthook)")),
    ("install", re.compile(
        r"^(?:pip install|pip3 install|uv (?:add|sync|pip)|(?:npm|pnpm|yarn|bun) (?:install|i|ci|add)\b|"
        r"mix deps\.\S+|cargo add|bundle install|poetry (?:add|install)|brew install|apt(?:-get)? install|"
        r"go get|go mod|conda install|pdm (?:add|install)|hatch env)")),
    ("build", re.compile(
        r"^(?:make|(?:npm|pnpm|yarn|bun) run (?:build|compile|bundle)\S*|cargo build|mix compile|go build|"
        r"docker build|docker compose build|node build\.js|esbuild|vite build|npx vite|gradle build|"
        r"mvn (?:package|install)|uv build|python -m build|tsc -b|mix assets\.\S+|\S*build\.sh)")),
    ("run", re.compile(
        r"^(?:mix phx\.server|iex -S mix|(?:npm|pnpm|yarn|bun) (?:run )?(?:dev|start|serve|preview)\b|uvicorn|"
        r"gunicorn|flask run|docker compose up|docker-compose up|docker run|container run|\S*run\.sh|"
        r"cargo run|go run|python manage\.py runserver)")),
)  # fmt: skip
_CATEGORY_DOMAIN = {
    "test": "testing", "lint": "linting", "build": "build", "install": "dependencies", "migration": "database",
    "run": "runtime",
}  # fmt: skip
_CATEGORY_LABEL = {
    "test": "Test command",
    "lint": "Lint/check command",
    "build": "Build command",
    "install": "Install command",
    "migration": "Migration/codegen command",
    "run": "Run command",
}
_BYPASS_RE = re.compile(r"--no-verify|--force(?![-\w])|--skip-\w+|\|\|\s*true\b")
_FAIL_TEXT_RE = re.compile(
    r"^Traceback \(most recent call last\)|^FAILED\b|^ERROR\b|^E\s{2,}\w|\b[1-9]\d* (?:failed|failures?|errors?)\b"
    r"|^\s*error(?:\[\w+\])?:|^\s*\*\* \(\w|^npm ERR!|^\s*✘|\bcommand not found\b|^fatal:",
    re.M,
)
_SUMMARY_LINE_RE = re.compile(
    r"\b\d+ (?:doctests?|tests?|passed|examples?|specs?|properties)\b.*|\bfound no issues\b.*|"
    r"\ball checks passed\b.*|\bsuccessfully (?:installed|built|compiled|migrated)\b.*|\bno (?:errors|issues)\b.*|"
    r"\bgenerated \S+ app\b|\bmigrated\b.*|\bbuild (?:succeeded|complete[d]?)\b.*|\bchecked \d+ files?\b.*|"
    r"\bformatted \d+ files?\b.*|\bfixed \d+ files?\b.*|\bresolution completed\b.*",
    re.I,
)

# ---------------------------------------------------------------------------------------------------------
# configuration files

_CONFIG_NAMES = {
    "pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "package.json", "dockerfile", "containerfile",
    "docker-compose.yml", "docker-compose.yaml", "compose.yaml", "compose.yml", "makefile", "cargo.toml", "go.mod",
    "mix.exs", "gemfile", ".env.example", ".env.sample", ".env.template", ".gitignore", ".dockerignore", "biome.json",
    "biome.jsonc", "knip.json", ".lefthook.yml", "lefthook.yml", ".pre-commit-config.yaml", "ruff.toml", "mypy.ini",
    "pytest.ini", "alembic.ini", ".editorconfig", ".npmrc", ".nvmrc", ".tool-versions", "hooks.json", ".formatter.exs",
    ".credo.exs", "deno.json", "bunfig.toml", "netlify.toml", "vercel.json", "fly.toml", "procfile", "justfile",
}  # fmt: skip
_CONFIG_PATTERNS = re.compile(
    r"(?:^|/)(?:tsconfig[\w.-]*\.json|\.eslintrc[\w.]*|\.prettierrc[\w.]*|[\w-]+\.config\.(?:js|ts|mjs|cjs|json)|"
    r"\.github/workflows/[\w.-]+\.ya?ml|config/[\w./-]+\.(?:exs|ya?ml|toml|json|ini)|[\w.-]+\.(?:ya?ml|toml|ini|cfg|conf))$",
    _I,
)
_CONFIG_SKIP = re.compile(
    r"(?:^|/)(?:node_modules|_build|deps|\.git|\.venv|venv|dist|build|target|\.claude|\.beads)/|\.lock$|lock\.(?:json|yaml)$",
    _I,
)
_TOOL_NAMES = {"Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "Read", "Grep", "Glob", "Task"}
_EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit", "str_replace_based_edit_tool", "create_file"}


# ---------------------------------------------------------------------------------------------------------
# internal structures


@dataclass
class _Call:
    pos: int  # stream position of the assistant turn
    turn: Turn
    use: ToolUse
    inp: dict[str, Any]
    result_pos: int | None = None
    result_turn: Turn | None = None
    result: ToolResult | None = None

    @property
    def command(self) -> str:
        value = self.inp.get("command")
        return value if isinstance(value, str) else ""

    @property
    def path(self) -> str:
        for key in ("file_path", "path", "notebook_path"):
            value = self.inp.get(key)
            if isinstance(value, str) and value:
                return value
        return ""

    def turns(self) -> list[Turn]:
        return [self.turn] + ([self.result_turn] if self.result_turn is not None else [])


@dataclass
class _Stream:
    turns: list[Turn]
    gpos: list[int]  # batch index of each turn
    sidechain: bool
    calls: list[_Call] = field(default_factory=list)
    by_use: dict[str, _Call] = field(default_factory=dict)
    user_positions: list[int] = field(default_factory=list)


@dataclass
class _Cand:
    kind: str
    content: str
    anchor: Turn
    pos: int  # batch index of the anchor
    sub: int
    turns: list[Turn]
    hints: list[str] = field(default_factory=list)
    score: float = 0.0
    weakens: str | None = None
    temporal: str = "medium"
    scope: str = "project"
    concept_text: str = ""
    link_key: str | None = None  # command family (ties a command to the error_fix it closed)
    domain: str | None = None
    families: frozenset[str] = frozenset()


# ---------------------------------------------------------------------------------------------------------
# small helpers


def _loads(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _short_path(path: str, cwd: str | None) -> str:
    path = path.replace("\\", "/")
    if cwd:
        root = cwd.rstrip("/") + "/"
        if path.startswith(root):
            return path[len(root) :]
    parts = [p for p in path.split("/") if p]
    return "/".join(parts[-3:]) if len(parts) > 3 else path


def _is_real_user(t: Turn) -> bool:
    if t.role != "user" or t.kind != "message" or t.is_meta or t.is_compact_summary:
        return False
    text = t.text.lstrip()
    return bool(text) and not text.startswith(("[Request interrupted", "<task-notification", "<local-command"))


def _is_interrupt(t: Turn) -> bool:
    return t.role == "user" and t.text.lstrip().startswith("[Request interrupted")


def _split_segments(cmd: str) -> list[list[str]]:
    segments = []
    for seg in re.split(r"\s*(?:&&|\|\||;|\n)\s*", cmd):
        seg = seg.split("|", 1)[0].strip()
        if not seg:
            continue
        toks = seg.split()
        while toks and (_ENV_ASSIGN_RE.match(toks[0]) or toks[0] in ("sudo", "time", "command", "exec", "nohup")):
            toks = toks[1:]
        if toks:
            segments.append(toks)
    return segments


def _family_of(toks: list[str]) -> str:
    head = posixpath.basename(toks[0]).lower()
    rest = [t for t in toks[1:] if not t.startswith("-")]
    if head in ("python3", "python3.11", "python3.12"):
        head = "python"
    if head in _INTERPRETERS:
        if len(toks) > 2 and toks[1] == "-m":
            return f"{head} -m {toks[2]}"
        if len(toks) > 1 and toks[1] in ("-c", "-e"):
            return f"{head} {toks[1]}"
        if head in ("deno", "bun") and rest and rest[0] in ("run", "test", "install", "add"):
            return f"{head} {' '.join(rest[:2]) if rest[0] == 'run' else rest[0]}"
        return f"{head} {posixpath.basename(rest[0])}" if rest else head
    if head in ("npm", "pnpm", "yarn") and rest and rest[0] == "run" and len(rest) > 1:
        return f"{head} run {rest[1]}"
    if head == "npx" and rest:
        return f"npx {rest[0]}"
    if head == "git":
        i = 1
        while i < len(toks) and toks[i].startswith("-"):
            i += 2 if toks[i] in ("-C", "-c") else 1
        return f"git {toks[i]}" if i < len(toks) else "git"
    if head in _SUB_CLIS and rest:
        return f"{head} {rest[0]}"
    return head


def _main_segment(cmd: str) -> list[str]:
    segments = _split_segments(cmd)
    candidates = [s for s in segments if posixpath.basename(s[0]) not in _CMD_PREFIX_SKIP]
    if not candidates:
        return segments[0] if segments else []
    for seg in candidates:
        fam = _family_of(seg)
        if fam == "git add" and len(candidates) > 1:
            continue
        return seg
    return candidates[0]


def _family(cmd: str) -> str:
    seg = _main_segment(cmd)
    return _family_of(seg) if seg else ""


def _category(cmd: str) -> str | None:
    seg = _main_segment(cmd)
    if not seg:
        return None
    text = " ".join([posixpath.basename(seg[0]).replace("python3", "python")] + seg[1:])
    for name, rx in _CATEGORY_RES:
        if rx.match(text):
            return name
    return None


def _clean_cmd(cmd: str, cwd: str | None, limit: int = 110) -> str:
    text = cmd.strip()
    text = re.sub(r"\s*2>&1|\s*2>\s*/dev/null|\s*>\s*/dev/null", "", text)
    text = re.sub(r"\s*\|\s*(?:tail|head)(?:\s+-n)?\s+-?\d+\b", "", text)
    text = re.sub(r"\s*\|\s*grep\s+(?:-\w+\s+)*(?:\"[^\"]*\"|'[^']*'|\S+)", "", text)
    text = re.sub(r"\s*(?:;|&&)\s*echo\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?=;|&&|$)", "", text)
    text = re.sub(r"\s*\|\|\s*true\s*$", "", text)
    text = re.sub(r"^\s*(?:;|&&)\s*|\s*(?:;|&&)\s*$", "", text)
    if cwd:
        root = cwd.rstrip("/")
        text = re.sub(rf"^cd\s+['\"]?{re.escape(root)}['\"]?\s*&&\s*", "", text)
        text = text.replace(root + "/", "")
    text = re.sub(r"^cd\s+(/[\w.@-]+)+/([\w.@-]+)\s*&&", r"cd \2 &&", text)
    first = text.splitlines()[0] if text else ""
    if "\n" in text or "<<" in first:
        first = re.sub(r"([\"']?)\$\(cat <<.*$", r"\1…\1", first)
        first = first.rstrip() + ("" if first.rstrip().endswith(("…", '…"', "…'")) else " …")
    first = re.sub(r'(-m\s+)"[^"]{40,}"?', r'\1"…"', first)
    return _cap(first, limit)


def _path_args(cmd: str) -> list[str]:
    seg = _main_segment(cmd)
    return [
        t.strip("'\"")
        for t in seg[1:]
        if not t.startswith("-")
        and ("/" in t or t == "." or re.search(r"\.\w{1,5}$", t))
        and "=" not in t
        and not t.startswith(("http:", "https:"))
    ]


def _same_target(failed: str, ok: str) -> bool:
    """True when ``ok`` runs on what ``failed`` ran on (or on everything: no path arguments at all)."""
    ok_args = _path_args(ok)
    if not ok_args:
        return True
    ok_text = " ".join(ok_args) + " " + ok
    return all(posixpath.basename(a.rstrip("/")) in ok_text for a in _path_args(failed))


def _status(call: _Call) -> str:
    """``ok`` / ``fail`` / ``unknown`` for a Bash call."""
    tr = call.result
    if tr is None:
        return "unknown"
    text = tr.text or ""
    head = text[:400]
    if tr.interrupted or head.lstrip().startswith("[Request interrupted") or "doesn't want to proceed" in head:
        return "unknown"
    if "Command running in background" in head or "<tool_use_error>" in head:
        return "unknown"
    if tr.is_error:
        return "fail"
    m = re.match(r"\s*Exit code (\d+)", text)
    if m:
        return "fail" if m.group(1) != "0" else "ok"
    if _category(call.command) and _FAIL_TEXT_RE.search(_ANSI_RE.sub("", _tail_text(text))):
        return "fail"
    return "ok"


def _tail_text(text: str, head: int = 20000, tail: int = 6000) -> str:
    if len(text) <= head + tail:
        return text
    return text[:head] + "\n" + text[-tail:]


_ERR_PRIORITY: tuple[re.Pattern[str], ...] = (
    re.compile(r"^(?:fatal|error(?:\[\w+\])?|ERROR|Error|npm ERR!)[:!]?\s+\S.*|^✘ \[ERROR\].*|.*\berror TS\d+:.*"
               r"|^\S+:\d+:\d+:? error\b.*"),
    re.compile(r"^\*\* \(\w[\w.]*\).*"),
    re.compile(r"^[A-Z]\w*(?:\.\w+)*(?:Error|Exception|Exit|Interrupt)\b:?.*"),
    re.compile(r"^×\s*(?!Some errors were emitted).+"),
    re.compile(r"^\d+\) test .+"),
    re.compile(r"^\S+\.\w+:\d+(?::\d+)?:[\w/-]+$|^\[[A-Z]\]\s+\w.+"),
    re.compile(r"^(?:FAILED|FAIL)\b.*|.*\b\d+ failed\b.*"),
    re.compile(r".*\b(?:no such file or directory|command not found|permission denied|not found|cannot|can't|"
               r"could not|couldn't|unable to|undefined|unrecognized|invalid|missing|refused|denied|"
               r"not formatted|unused|conflict|ignored|not processed|no files were processed|never match)\b.*",
               re.I),
    re.compile(r".*\b(?:fail(?:ed|ure|s)?|error|exception)\b.*", re.I),
)  # fmt: skip
_ERR_NOISE_RE = re.compile(
    r"^(?:exit code \d+|hint:|compiling \d+|generated \w+ app|running exunit|getting extensions|running setup|"
    r"warning:|\s*at |file \"|\^+$|~+$|>|\$|rebasing \(|recorded resolution|environment variables loaded|"
    r"finished in|randomized with seed|\d+ (?:doctests?|tests?),|resolving|checking \d+ source|please |run '|"
    r"use `|to push the current branch|to have this happen|see \"git help|found \d+ errors?|error: process completed|"
    r"exit status \d|summary: \(done|.*lefthook v\d|checked \d+ files?|formatted \d+ files?|stacktrace:|code:)",
    re.I,
)


def _junky(line: str) -> bool:
    symbols = sum(1 for ch in line if ch in "{}[]%<>=#|\\")
    return symbols > 6 or symbols > 0.12 * len(line)


def _error_lines(text: str) -> list[str]:
    text = _ANSI_RE.sub("", _tail_text(text)).replace("\\n", "\n").replace("\r", "\n")
    text = re.sub("[\u2716\u2717\u274c]", "×", text)
    lines = []
    for raw in text.splitlines():
        line = _EMOJI_RE.sub("", _BOX_RE.sub(" ", raw)).strip(" \t│┃|⠙✔")
        line = re.sub(r"^\s*\d+\s*[→│|]\s*|^E\s{2,}", "", line).strip()
        if line and not _ERR_NOISE_RE.match(line) and re.search(r"[A-Za-z]{3}", line) and not _junky(line):
            lines.append(line)
    return lines


def _pick_error(lines: list[str], *, fallback: bool = True) -> str:
    for rx in _ERR_PRIORITY:
        for i, line in enumerate(lines):
            if not rx.match(line):
                continue
            m = re.match(r"^\d+\) test (.+?)(?: \([\w.]+\))?$", line)
            if m:
                follow = next((ln for ln in lines[i + 1 : i + 6] if "Assertion" in ln or ln.startswith("**")), "")
                return _cap(f"test '{m.group(1)}' failed" + (f": {follow}" if follow else ""), 170)
            if line[0] == "×":
                line = line[1:].strip()
                rule = re.match(r"^\S+:\d+:\d+\s+([\w/-]+)$", lines[i - 1]) if i else None
                if rule:
                    line = f"{rule.group(1)}: {line}"
            elif re.match(r"^\S+\.\w+:\d+(?::\d+)?:[\w/-]+$", line) and i + 1 < len(lines):
                line = f"{line} {lines[i + 1]}"
            line = re.sub(r"^\[[A-Z]\]\s*", "", line)
            return _cap(line, 170)
    return _cap(lines[0], 170) if lines and fallback else ""


def _error_line(text: str) -> str:
    """The most telling line of a failure output (ANSI, box drawing and progress noise removed)."""
    lines = _error_lines(text)
    if not lines:
        return ""
    sections = [m.group(1) for m in re.finditer(r"^\[([A-Z]{3,})\]", text.replace("\\n", "\n"), re.M)]
    if sections and "validation failed" in text[:300].lower():
        body = [
            ln
            for ln in lines
            if not re.match(r"^\[[A-Z]{3,}\]", ln)
            and "validation failed" not in ln.lower()
            and not re.match(
                r"^(?:checking|analysis|software design|code readability|refactoring|finding suitable"
                r"|run '|fix these|plt is up to date|no :ignore_warnings|starting dialyzer"
                r"|total errors"
                r"|warning|consistency|design)",
                ln,
                re.I,
            )
        ]
        detail = _pick_error(body, fallback=False) if body else ""
        head = "pre-commit validation failed (" + ", ".join(dict.fromkeys(sections)) + ")"
        return _cap(head + (": " + detail if detail else ""), 170)
    return _pick_error(lines)


_DIAG_RE = re.compile(
    r"\b(?:the (?:issue|problem|cause|fix|root cause|solution|error|reason) (?:is|was)|because|this means|"
    r"is caused|needs? to|requires?|doesn'?t support|does not support|must|is that|creates?|causes?|"
    r"only works|isn'?t available|is not available|expects?|is missing|was missing|instead of)\b",
    re.I,
)
_PLAN_START_RE = re.compile(
    r"^(?:now,? )?(?:let me|let'?s|i'?ll|i will|i'?m going to|next,? |then,? |first,? |now (?:add|update|create|"
    r"write|run|fix|let)|time to|moving on)\b",
    re.I,
)


def _key_sentence(text: str, limit: int = 170, *, mode: str = "any") -> str:
    """The informative sentence of an assistant message.

    ``mode="any"``: diagnosis > statement > plan; ``"explain"``: diagnosis only (a cause/reason) or "";
    ``"reason"``: diagnosis > statement, never a bare "let me …" plan.
    """
    cleaned = _clean_md(text)
    sentences = []
    for s in _sentences(cleaned):
        s = re.sub(r"^(?:step \d+[:.]?|[-*•])\s*", "", s.strip(" :"), flags=re.I)
        if len(_words(s)) < 4 or s == "[code]":
            continue
        if _ASSISTANT_FILLER_RE.match(s) and len(_words(s)) <= 6:
            continue
        s = re.sub(
            r"^(?:perfect|great|excellent|good|done|ok(?:ay)?|you'?re (?:absolutely )?right|got it|"
            r"i see|ah+|interesting|now i see what'?s happening)[!.,:]*\s+",
            "",
            s,
            flags=re.I,
        )
        sentences.append(s)
    if not sentences:
        return ""
    for s in sentences[:8]:
        if _DIAG_RE.search(s) and not s.endswith("?") and not _PLAN_START_RE.match(s):
            return _cap(s, limit)
    if mode == "explain":
        return ""
    statements = [s for s in sentences if not s.endswith("?") and not _PLAN_START_RE.match(s)]
    if statements and len(_words(statements[0])) >= 5:
        return _cap(statements[0], limit)
    if mode == "reason":
        return ""
    return _cap(sentences[0], limit)


def _quote(sentences: Sequence[str], limit: int = 240) -> str:
    text = " ".join(s.strip() for s in sentences if s.strip())
    text = text.replace('"', "'")
    return _cap(text, limit)


def _scope(text: str) -> str:
    return "project" if _PROJECT_MARKER_RE.search(text) or _IDENTIFIER_RE.search(text) else "global"


def _temporal(text: str, default: str = "medium") -> tuple[str, str]:
    m = _TEMPORAL_LOW_RE.search(text)
    if m:
        return "low", m.group(0)
    return default, ""


def _fit(parts: Sequence[str], limit: int = MAX_CONTENT) -> str:
    text = _one_line("".join(parts))
    return _cap(text, limit)


# ---------------------------------------------------------------------------------------------------------
# the extractor


class HeuristicExtractor:
    """Regex/heuristic learning extractor (see module docstring). Deterministic and offline."""

    name = "heuristic"
    version = "heuristic-1"

    def __init__(self, *, max_per_batch: int = MAX_PER_BATCH, kind_caps: dict[str, int] | None = None) -> None:
        self.max_per_batch = max_per_batch
        self.kind_caps = dict(KIND_CAPS if kind_caps is None else kind_caps)

    # -- public --------------------------------------------------------------------------------------

    def extract(self, batch: SessionBatch) -> list[dict[str, Any]]:
        streams = self._streams(batch)
        cands: list[_Cand] = []
        for stream in streams:
            if not stream.sidechain:
                cands.extend(self._speech(stream))
            fixes, closers = self._error_fixes(stream)
            cands.extend(fixes)
            cands.extend(self._commands(stream, closers))
            cands.extend(self._configs(stream, fixes))
        chosen = self._select(cands)
        return self._render(batch, chosen)

    # -- streams -------------------------------------------------------------------------------------

    def _streams(self, batch: SessionBatch) -> list[_Stream]:
        groups: dict[tuple[str, str], _Stream] = {}
        for gi, t in enumerate(batch.turns):
            agent = t.agent_id or ""
            if agent.startswith("acompact-"):
                continue
            key = (t.source_path, agent)
            stream = groups.get(key)
            if stream is None:
                stream = groups[key] = _Stream([], [], sidechain=bool(agent) or t.is_sidechain)
            stream.sidechain = stream.sidechain or t.is_sidechain
            stream.turns.append(t)
            stream.gpos.append(gi)
        for stream in groups.values():
            for pos, t in enumerate(stream.turns):
                if t.role == "assistant":
                    for use in t.tool_uses:
                        call = _Call(pos, t, use, _loads(use.input_json))
                        stream.calls.append(call)
                        if use.id:
                            stream.by_use.setdefault(use.id, call)
                elif t.role == "user" and t.tool_results:
                    for tr in t.tool_results:
                        call = stream.by_use.get(tr.tool_use_id)
                        if call is not None and call.result is None:
                            call.result, call.result_turn, call.result_pos = tr, t, pos
                if _is_real_user(t):
                    stream.user_positions.append(pos)
        return list(groups.values())

    # -- rules 1, 2, 3, 6: what the user says --------------------------------------------------------

    def _speech(self, s: _Stream) -> list[_Cand]:
        out: list[_Cand] = []
        users = s.user_positions
        for ui, pos in enumerate(users):
            turn = s.turns[pos]
            prev_user = users[ui - 1] if ui else -1
            next_user = users[ui + 1] if ui + 1 < len(users) else len(s.turns)
            episode = [t for t in s.turns[prev_user + 1 : pos] if t.role == "assistant" and t.kind == "message"]
            between = s.turns[prev_user + 1 : pos]
            after = [t for t in s.turns[pos + 1 : next_user] if t.role == "assistant" and t.kind == "message"]
            out.extend(self._speech_one(s, pos, turn, episode, between, after))
        return out

    def _speech_one(
        self, s: _Stream, pos: int, turn: Turn, episode: list[Turn], between: list[Turn], after: list[Turn]
    ) -> list[_Cand]:
        raw = _strip_noise(turn.text).strip()
        if not raw or _GENERATED_RE.match(raw) or len(_TRANSCRIPT_LINE_RE.findall(raw)) >= 2:
            return []
        if raw.startswith("/") and len(raw.split()) <= 3:
            return []  # a slash command typed as text
        prose = _leading_prose(_clean_md(raw)) or (_one_line(_clean_md(raw)) if len(raw) < 200 else "")
        compact = _one_line(prose)
        gpos = s.gpos[pos]
        out: list[_Cand] = []
        episode_text = [t for t in episode if t.text.strip()]

        # 3b. approval of an assistant proposal / choice of an option
        option = _OPTION_RE.match(compact)
        if option and episode_text:
            chosen = self._option_text(episode_text, option.group(1))
            if chosen:
                content = _fit([f"Decision (the user chose option {option.group(1).upper()}): {chosen}"])
                out.append(
                    self._cand(
                        "decision", content, turn, gpos, 0, [turn, episode_text[-1]], chosen, "medium", _scope(chosen)
                    )
                )
            return out
        sentences = _sentences(prose)
        if not sentences:
            return out
        first = sentences[0]
        if _APPROVAL_RE.match(first) and episode_text and self._asks(episode_text[-1].text):
            proposal = self._proposal(episode_text[-1].text)
            if proposal and not _ONE_OFF_RE.match(proposal):
                approval = _cap(first, 30).replace('"', "'")
                content = _fit(
                    [f"Decision: {proposal.rstrip('.')}", f' (proposed by Claude, approved by the user: "{approval}")']
                )
                out.append(
                    self._cand(
                        "decision", content, turn, gpos, 0, [turn, episode_text[-1]], proposal, "medium", "project"
                    )
                )
            sentences = sentences[1:]
        if _TRIVIAL_RE.match(compact) or len(_words(compact)) < 3:
            return out

        used: set[int] = set()
        # 1. corrections
        correction = self._correction(s, pos, turn, sentences, episode, between, after)
        if correction is not None:
            cand, idx = correction
            out.append(cand)
            used.update(idx)

        # 2, 3, 6. sentence-level rules
        sub = 1
        i = 0
        while i < len(sentences):
            if i in used:
                i += 1
                continue
            sent = sentences[i]
            kind = self._classify(sent)
            if kind is None:
                i += 1
                continue
            picked = [sent]
            used.add(i)
            prev = sentences[i - 1] if i > 0 else ""
            if (
                prev
                and i - 1 not in used
                and len(sent) < 140
                and self._classify(prev) is None
                and not prev.endswith("?")
                and not _FILLER_RE.match(prev)
                and len(prev) <= 100
            ):
                picked.insert(0, prev)  # "todomvc is great. let's use something simple" - the object comes first
                used.add(i - 1)
            j = i + 1
            while j < len(sentences) and j not in used:
                nxt = sentences[j]
                nkind = self._classify(nxt)
                length = len(" ".join(picked))
                if nkind == kind and length < 120:
                    picked.append(nxt)
                    used.add(j)
                    j += 1
                    continue
                if (
                    nkind is None
                    and length < 70
                    and not nxt.endswith("?")
                    and len(nxt) <= 160
                    and not _FILLER_RE.match(nxt)
                    and not _HEDGE_RE.search(nxt)
                    and not re.match(r"^(?:but|and|so|also|or)\b", nxt, _I)
                ):
                    picked.append(nxt)
                    used.add(j)
                    j += 1
                break
            i = j
            quote = _quote(picked)
            temporal, note = _temporal(
                quote, "high" if kind == "preference" and _PREF_HIGH_RE.search(quote) else "medium"
            )
            label = {"preference": "User preference", "decision": "Decision", "fact": "User-stated fact"}[kind]
            if kind == "fact" and _TIP_RE.search(quote):
                label = "User tip"
            content = _fit([f'{label}: "{quote}"', f' (time-bound: "{note}")' if note else ""])
            out.append(self._cand(kind, content, turn, gpos, sub, [turn], quote, temporal, _scope(quote)))
            sub += 1
        return out[:4]

    @staticmethod
    def _classify(sentence: str) -> str | None:
        s = sentence.strip()
        if len(_words(s)) < 3 or _FILLER_RE.match(s):
            return None
        question = s.endswith("?")
        if _PASTE_INTRO_RE.search(s):
            return None
        if _PREF_HIGH_RE.search(s) and not question:
            return "preference"
        if _HEDGE_RE.search(s) or question:
            return None
        if _DECISION_RE.search(s):
            return "decision"
        if _PREF_RE.search(s):
            return "preference"
        if _FACT_RE.search(s):
            return "fact"
        return None

    def _correction(
        self,
        s: _Stream,
        pos: int,
        turn: Turn,
        sentences: list[str],
        episode: list[Turn],
        between: list[Turn],
        after: list[Turn],
    ) -> tuple[_Cand, set[int]] | None:
        if not episode:
            return None
        rejected = any(tr.is_error and "doesn't want to proceed" in tr.text for t in between for tr in t.tool_results)
        interrupted = any(_is_interrupt(t) for t in between[-3:])
        start = None
        for i, sent in enumerate(sentences[:6]):
            if _FILLER_RE.match(sent) and not _CORRECTION_START_RE.match(sent):
                continue
            if _CORRECTION_START_RE.match(sent) or _CORRECTION_ANY_RE.search(sent):
                if _DECISION_RE.search(sent) and not _CORRECTION_START_RE.match(sent):
                    continue  # "let's use X instead of Y" is a decision
                start = i
                break
        if start is None and rejected:
            body = [i for i, x in enumerate(sentences) if not _FILLER_RE.match(x)]
            if body and len(_words(" ".join(sentences))) >= 4:
                start = body[0]
        if start is None:
            return None
        weak_marker = not _CORRECTION_START_RE.match(sentences[start])
        if start > 0 and weak_marker and not _FILLER_RE.match(sentences[start - 1]):
            start -= 1  # a mid-message marker ("instead", "actually"): keep the sentence that sets it up
        idx = {start}
        picked = [sentences[start]]
        for j in range(start + 1, min(len(sentences), start + 3)):
            if len(" ".join(picked)) > 170 or self._classify(sentences[j]) in ("preference", "decision"):
                break
            picked.append(sentences[j])
            idx.add(j)
        quote = _quote(picked, 220)
        context, weak = self._context(s, episode, between, rejected, interrupted)
        follow = self._followup(after)
        negated = _NEGATED_RE.search(" ".join(picked))
        weakens = weak
        if negated:
            what = next(g for g in negated.groups() if g)
            weakens = f"{what.strip()} — {weak}" if weak else what.strip()
        content = _fit(
            [
                f'User correction: "{quote}"',
                f" — after Claude {context}" if context else "",
                f"; Claude then {follow}" if follow else "",
            ]
        )
        gpos = s.gpos[pos]
        turns = [turn] + episode[-1:] + after[:1]
        temporal, _ = _temporal(quote)
        cand = self._cand(
            "correction",
            content,
            turn,
            gpos,
            0,
            turns,
            quote + " " + (context or ""),
            temporal,
            _scope(quote + " " + (context or "")),
        )
        cand.weakens = _cap(weakens or quote, 200)
        return cand, idx

    def _context(
        self, s: _Stream, episode: list[Turn], between: list[Turn], rejected: bool, interrupted: bool
    ) -> tuple[str, str]:
        """(phrase for the content, description for ``weakens``) of what Claude did before the correction."""
        last = episode[-1]
        cwd = last.cwd
        action = ""
        if last.tool_uses:
            action = self._describe_uses(last.tool_uses, cwd)
        said = ""
        for t in reversed(episode):
            if t.text.strip():
                said = _key_sentence(t.text, 150)
                break
        if rejected and action:
            return f"tried to {action} (rejected by the user)", f"Claude's attempt to {action}"
        if interrupted and action:
            return f"started to {action} (interrupted)", f"Claude's attempt to {action}"
        if said:
            said_q = said.replace('"', "'")
            return f'said "{said_q}"', said
        if action:
            return action, action
        return "", ""

    @staticmethod
    def _describe_uses(uses: Sequence[ToolUse], cwd: str | None) -> str:
        edits: list[str] = []
        cmds: list[str] = []
        other: list[str] = []
        for u in uses:
            inp = _loads(u.input_json)
            if u.name in _EDIT_TOOLS:
                p = inp.get("file_path") or inp.get("path") or inp.get("notebook_path")
                if isinstance(p, str):
                    sp = _short_path(p, cwd)
                    if sp not in edits:
                        edits.append(sp)
            elif u.name == "Bash":
                c = inp.get("command")
                if isinstance(c, str):
                    cmds.append(f"`{_clean_cmd(c, cwd, 70)}`")
            elif u.name in ("Task", "Agent"):
                other.append("delegate to a subagent")
            elif u.name in ("WebFetch", "WebSearch"):
                other.append("search the web")
        parts = []
        if edits:
            parts.append("edit " + ", ".join(edits[:2]))
        if cmds:
            parts.append("run " + ", ".join(cmds[:1]))
        parts.extend(other[:1])
        return " and ".join(parts)

    def _followup(self, after: list[Turn]) -> str:
        """What Claude did after the correction: a stated diagnosis, else its first action, else its reply."""
        reply = ""
        for t in after[:4]:
            text = t.text.strip()
            if text:
                diag = _key_sentence(text, 140, mode="explain")
                if diag:
                    return 'concluded "' + diag.replace('"', "'") + '"'
                if not reply:
                    reply = _key_sentence(text, 140, mode="reason")
            if t.tool_uses:
                desc = self._describe_uses(t.tool_uses, t.cwd)
                if desc:
                    desc = desc.replace("edit ", "edited ", 1).replace("run ", "ran ", 1)
                    return desc.replace("delegate to", "delegated to").replace("search the web", "searched the web")
        return 'replied "' + reply.replace('"', "'") + '"' if reply else ""

    @staticmethod
    def _asks(text: str) -> bool:
        cleaned = _clean_md(text)
        tail = " ".join(_sentences(cleaned)[-3:])
        return "?" in tail or bool(_RECOMMEND_RE.search(cleaned))

    @staticmethod
    def _option_text(episode: list[Turn], label: str) -> str:
        rx = re.compile(rf"^\s*(?:option\s+)?\(?{re.escape(label)}[).:]\s*(.+)$", _I)
        for t in reversed(episode):
            for line in _strip_noise(t.text).splitlines():
                plain = line.replace("**", "").replace("__", "").strip()
                m = rx.match(plain)
                if m and len(_words(m.group(1))) >= 2:
                    return _cap(_clean_md(m.group(1)).replace("\n", " "), 300)
        return ""

    @staticmethod
    def _proposal(text: str) -> str:
        cleaned = _clean_md(text)
        sentences = [x for x in _sentences(cleaned) if x != "[code]"]
        for sent in reversed(sentences[-4:]):
            m = _QUESTION_PROPOSAL_RE.search(sent)
            if m:
                obj = m.group(1).strip(" ?.")
                if not _PRONOUN_OBJECT_RE.fullmatch(obj) and len(_words(obj)) >= 3:
                    return _cap(obj[0].upper() + obj[1:], 260)
        lines = cleaned.splitlines()
        for i, line in enumerate(lines):
            if _SECTION_RE.match(line.strip(" :*")):
                items = []
                for nxt in lines[i + 1 : i + 8]:
                    body = nxt.strip()
                    if not body:
                        if items:
                            break
                        continue
                    if len(_words(body)) >= 3:
                        items.append(body.rstrip("."))
                    if len(items) == 2:
                        break
                if items:
                    return _cap("; ".join(items), 260)
        for sent in sentences:
            if _RECOMMEND_RE.search(sent) and len(_words(sent)) >= 5 and not sent.endswith("?"):
                return _cap(sent.rstrip(":"), 260)
        return _key_sentence(text, 220)

    # -- rule 4: error -> fix ------------------------------------------------------------------------

    def _error_fixes(self, s: _Stream) -> tuple[list[_Cand], dict[int, str]]:
        """Error->fix learnings, plus {index of the closing call in s.calls: error line} for rule 5."""
        bash = [(i, c) for i, c in enumerate(s.calls) if c.use.name == "Bash" and c.command]
        status = {i: _status(c) for i, c in bash}
        consumed: set[int] = set()
        out: list[_Cand] = []
        closers: dict[int, str] = {}
        for n, (i, call) in enumerate(bash):
            if status[i] != "fail" or i in consumed:
                continue
            fam = _family(call.command)
            if not fam or fam in _READ_ONLY_FAMILIES or fam.split()[0] in _READ_ONLY_FAMILIES:
                continue
            if call.result_pos is None:
                continue
            chain = [call]
            success: tuple[int, _Call] | None = None
            for k, other in bash[n + 1 :]:
                if other.pos - call.pos > FIX_WINDOW:
                    break
                if _family(other.command) != fam:
                    continue
                if status[k] == "fail":
                    chain.append(other)
                    consumed.add(k)
                elif status[k] == "ok":
                    success = (k, other)
                    break
            if success is None:
                continue
            k, ok_call = success
            first, last = chain[0], chain[-1]
            cwd = first.turn.cwd
            errors: list[str] = []
            for c in chain:
                line = _error_line(c.result.text if c.result else "")
                if line and line not in errors:
                    errors.append(line)
            if not errors:
                continue
            edits: list[str] = []
            commands: list[str] = []
            fix_turns: list[Turn] = []
            explanation = ""
            chain_ids = {id(c) for c in chain}
            for c in s.calls:
                if not (first.pos < c.pos < ok_call.pos) or id(c) in chain_ids:
                    continue
                if c.use.name in _EDIT_TOOLS and c.path and not (c.result and c.result.is_error):
                    sp = _short_path(c.path, cwd)
                    if sp not in edits:
                        edits.append(sp)
                    fix_turns.extend(c.turns())
                elif c.use.name == "Bash" and c.command and _status(c) == "ok":
                    f2 = _family(c.command)
                    if (
                        f2
                        and f2 != fam
                        and f2 not in _READ_ONLY_FAMILIES
                        and f2.split()[0] not in _READ_ONLY_FAMILIES
                        and not f2.startswith("git ")
                    ):
                        cc = _clean_cmd(c.command, cwd, 60)
                        if cc not in commands:
                            commands.append(cc)
                        fix_turns.extend(c.turns())
            for t in s.turns[first.pos + 1 : ok_call.pos + 1]:
                if t.role == "assistant" and t.text.strip():
                    explanation = _key_sentence(t.text, 130, mode="explain")
                    if explanation:
                        break
            if not _same_target(last.command, ok_call.command):
                continue  # the "success" ran on something else: it confirms nothing
            failed_cmd = _clean_cmd(first.command, cwd, 90)
            ok_cmd = _clean_cmd(ok_call.command, cwd, 90)
            same = ok_cmd == failed_cmd or ok_cmd == _clean_cmd(last.command, cwd, 90)
            if not edits and not commands and same:
                continue  # a plain re-run: nothing learned
            fix_parts: list[str] = []
            if edits:
                fix_parts.append("editing " + ", ".join(edits[:3]) + (" and more" if len(edits) > 3 else ""))
            if commands:
                fix_parts.append("running " + ", ".join(f"`{c}`" for c in commands[:2]))
            bypass = _BYPASS_RE.search(ok_call.command) and not _BYPASS_RE.search(first.command)
            if same:
                tail = ", then the same command succeeded"
            elif bypass:
                tail = f", then worked around it with `{ok_cmd}` (bypasses the check)"
            elif fix_parts:
                tail = f", then `{ok_cmd}` succeeded"
            else:
                tail = ""
                fix_parts.append(f"running `{ok_cmd}` instead")
            if bypass and not fix_parts:
                fix_parts.append("nothing")
                tail = f"; worked around it with `{ok_cmd}` (bypasses the check)"
            err_text = f'"{errors[0]}"' + (f' (later "{_cap(errors[-1], 90)}")' if len(errors) > 1 else "")
            err_text = err_text.replace('""', '"')
            fixed = "; fixed by " + " and ".join(fix_parts) if fix_parts != ["nothing"] else ""
            content = _fit(
                [
                    f"`{failed_cmd}` failed with {err_text}",
                    fixed,
                    tail,
                    f". Cause: {explanation}" if explanation else "",
                ]
            )
            turns = [first.turn] + [t for c in chain for t in c.turns()] + fix_turns + ok_call.turns()
            anchor = first.result_turn or first.turn
            cand = self._cand(
                "error_fix",
                content,
                anchor,
                s.gpos[first.result_pos],
                0,
                turns,
                " ".join([failed_cmd, *errors, *edits, *commands, explanation]),
                "medium",
                "project",
            )
            cand.hints = [*edits, failed_cmd, "Bash"]
            cand.link_key = f"{fam}@{ok_call.pos}"
            cand.score = 3 + len(edits) + len(commands)
            out.append(cand)
            closers[k] = errors[0]
        return out, closers

    # -- rule 5: commands that worked and configuration edits -----------------------------------------

    def _commands(self, s: _Stream, closers: dict[int, str]) -> list[_Cand]:
        best: dict[str, tuple[int, _Call, str]] = {}
        for i, call in enumerate(s.calls):
            if call.use.name != "Bash" or not call.command or _status(call) != "ok":
                continue
            cat = _category(call.command)
            if cat is None:
                continue
            fam = _family(call.command)
            best.pop(fam, None)  # keep the last successful variant, at its own position
            best[fam] = (i, call, cat)
        out: list[_Cand] = []
        user_texts = [(p, _leading_prose(_clean_md(_strip_noise(s.turns[p].text))).lower()) for p in s.user_positions]
        for fam, (i, call, cat) in best.items():
            cwd = call.turn.cwd
            cmd = _clean_cmd(call.command, cwd)
            score = {"test": 2.0, "build": 1.5, "lint": 1.2, "migration": 1.2, "install": 1.0, "run": 1.0}[cat]
            after_fix = i in closers
            if after_fix:
                score += 3
            asked = any(
                p < call.pos and fam.split()[0] in txt and (len(fam.split()) == 1 or fam.split()[-1] in txt)
                for p, txt in user_texts
            )
            if asked:
                score += 2
            summary = ""
            if call.result is not None:
                found = [m.group(0) for m in _SUMMARY_LINE_RE.finditer(_ANSI_RE.sub("", _tail_text(call.result.text)))]
                found = [f for f in found if f.count("(") == f.count(")")]
                strong = [f for f in found if re.search(r"passed|failures?|failed|no issues|no errors|success", f, _I)]
                if strong or found:
                    summary = _cap((strong or found)[-1].strip(" .:()"), 90)
            label = _CATEGORY_LABEL[cat]
            where = ""
            m = re.match(r"cd ([\w./@-]+) &&", cmd)
            if m:
                where = f" (run from {m.group(1)}/)"
            content = _fit(
                [
                    f"{label} that worked in this project: `{cmd}`{where}",
                    f" — {summary}" if summary else "",
                    " (it succeeded after the failure was fixed)" if after_fix else "",
                    " (the user asked for it)" if asked and not after_fix else "",
                ]
            )
            anchor = call.turn
            cand = self._cand(
                "command", content, anchor, s.gpos[call.pos], 0, call.turns(), f"{cmd} {summary}", "medium", "project"
            )
            cand.hints = [cmd, "Bash"]
            cand.score = score
            cand.link_key = f"{fam}@{call.pos}" if after_fix else None
            cand.domain = _CATEGORY_DOMAIN[cat]
            cand.families = frozenset(
                _family_of(seg)
                for seg in _split_segments(call.command)
                if posixpath.basename(seg[0]) not in _CMD_PREFIX_SKIP
            )
            out.append(cand)
        # one learning per tool: "mix format && mix compile" adds nothing once "mix compile" is kept
        out.sort(key=lambda c: (-c.score, -c.pos))
        kept: list[_Cand] = []
        for c in out:
            if any(c.families & k.families for k in kept):
                continue
            kept.append(c)
        return sorted(kept, key=lambda c: c.pos)

    def _configs(self, s: _Stream, fixes: list[_Cand]) -> list[_Cand]:
        per_file: dict[str, list[_Call]] = {}
        for call in s.calls:
            if call.use.name not in _EDIT_TOOLS or not call.path:
                continue
            if call.result is None or call.result.is_error:
                continue
            path = call.path.replace("\\", "/")
            name = posixpath.basename(path).lower()
            if _CONFIG_SKIP.search(path):
                continue
            if name not in _CONFIG_NAMES and not _CONFIG_PATTERNS.search(path):
                continue
            per_file.setdefault(path, []).append(call)
        fix_uuids = {u for c in fixes for t in c.turns for u in t.uuids}
        out: list[_Cand] = []
        for path, calls in per_file.items():
            cwd = calls[0].turn.cwd
            rel = _short_path(path, cwd)
            added: list[str] = []
            removed: list[str] = []
            created = False
            for call in calls:
                a, r, c = self._diff(call)
                created = created or c
                for line in a:
                    if line not in added:
                        added.append(line)
                for line in r:
                    if line not in removed:
                        removed.append(line)
            if not added and not removed:
                continue
            reason = ""
            first = calls[0]
            for t in reversed(s.turns[max(0, first.pos - 2) : first.pos + 1]):
                if t.role == "assistant" and t.text.strip():
                    reason = _key_sentence(t.text, 130, mode="reason")
                    if reason:
                        break
            shown = [f"`{_cap(x, 70)}`" for x in added[:3]]
            if created:
                change = "created it with " + "; ".join(shown)
            elif shown:
                change = "added " + "; ".join(shown)
            else:
                change = "removed " + "; ".join(f"`{_cap(x, 70)}`" for x in removed[:2])
            content = _fit([f"Configuration change in {rel}: {change}", f" — {reason}" if reason else ""])
            turns = [t for c in calls for t in c.turns()]
            cand = self._cand(
                "configuration",
                content,
                first.turn,
                s.gpos[first.pos],
                1,
                turns,
                f"{rel} {' '.join(added[:3])} {reason}",
                "medium",
                "project",
            )
            cand.hints = [rel, first.use.name]
            cand.score = (
                1
                + (2 if fix_uuids.intersection(first.turn.uuids) else 0)
                + (1 if reason else 0)
                - (0.5 if created else 0)
            )
            out.append(cand)
        return out

    @staticmethod
    def _diff(call: _Call) -> tuple[list[str], list[str], bool]:
        def meaningful(lines: list[str]) -> list[str]:
            keep = []
            for line in lines:
                x = line.strip()
                if not x or re.fullmatch(r"[\[\](){},;]+|end|do|\]\)?,?|\}\)?,?", x):
                    continue
                if x.endswith(("{", "[", "(")) or re.search(r":\s*(?:\"\"|''|\[\]|\{\})?,?$", x):
                    continue  # an opener or an empty value carries no information
                if re.match(r"^\"(?:name|version|description|private|license|author|\$schema|type|main)\":", x):
                    continue
                if re.match(r"^(?:#|//|--|/\*|\*)", x) and len(x) < 4:
                    continue
                keep.append(x)
            return keep

        inp = call.inp
        if call.use.name == "Write" or "content" in inp:
            content = inp.get("content")
            lines = meaningful(content.splitlines()) if isinstance(content, str) else []
            return lines[:4], [], True
        pairs: list[tuple[str, str]] = []
        if isinstance(inp.get("edits"), list):
            for e in inp["edits"]:
                if isinstance(e, dict):
                    pairs.append((str(e.get("old_string") or ""), str(e.get("new_string") or "")))
        else:
            pairs.append(
                (
                    str(inp.get("old_string") or inp.get("old_str") or ""),
                    str(inp.get("new_string") or inp.get("new_str") or ""),
                )
            )
        added: list[str] = []
        removed: list[str] = []
        for old, new in pairs:
            old_lines = meaningful(old.splitlines())
            new_lines = meaningful(new.splitlines())
            old_set, new_set = set(old_lines), set(new_lines)
            added.extend(x for x in new_lines if x not in old_set)
            removed.extend(x for x in old_lines if x not in new_set)
        return added, removed, False

    # -- selection and rendering ---------------------------------------------------------------------

    @staticmethod
    def _cand(
        kind: str,
        content: str,
        anchor: Turn,
        pos: int,
        sub: int,
        turns: list[Turn],
        concept_text: str,
        temporal: str,
        scope: str,
    ) -> _Cand:
        return _Cand(kind, content, anchor, pos, sub, turns, concept_text=concept_text, temporal=temporal, scope=scope)

    def _select(self, cands: list[_Cand]) -> list[_Cand]:
        seen: set[str] = set()
        unique: list[_Cand] = []
        for c in sorted(cands, key=lambda c: (c.pos, c.sub, _KIND_RANK[c.kind])):
            if len(c.content) < 10:
                continue
            key = re.sub(r"[^a-z0-9]+", " ", c.content.lower()).strip()
            if key in seen:
                continue
            seen.add(key)
            unique.append(c)
        by_kind: dict[str, list[_Cand]] = {}
        for c in unique:
            by_kind.setdefault(c.kind, []).append(c)
        kept: list[_Cand] = []
        for kind, items in by_kind.items():
            cap = self.kind_caps.get(kind)
            if cap is not None and len(items) > cap:
                ranked = sorted(items, key=lambda c: (-c.score, c.pos, c.sub))
                items = ranked[:cap]
            kept.extend(items)
        if len(kept) > self.max_per_batch:
            kept = sorted(kept, key=lambda c: (_KIND_RANK[c.kind], -c.score, c.pos))[: self.max_per_batch]
        return sorted(kept, key=lambda c: (c.pos, c.sub, _KIND_RANK[c.kind]))

    def _render(self, batch: SessionBatch, chosen: list[_Cand]) -> list[dict[str, Any]]:
        concepts_of: list[list[str]] = []
        domains: list[str] = []
        for c in chosen:
            base = c.concept_text or c.content
            evidence = [h for h in c.hints if h not in _TOOL_NAMES]
            first_domain = c.domain or infer_domain(base + " " + " ".join(evidence))
            pad = [
                d
                for d in (
                    first_domain if first_domain != "general" else "",
                    c.kind.replace("_", " "),
                    *[h for h in c.hints if len(h) < 40],
                )
                if d
            ]
            concepts = extract_concepts(base, evidence, pad=pad)
            concepts_of.append(concepts)
            domains.append(c.domain or infer_domain(base + " " + " ".join(evidence), concepts))
        edges = self._edges(chosen, concepts_of)
        out: list[dict[str, Any]] = []
        for i, c in enumerate(chosen):
            uuids: list[str] = []
            offsets: list[int] = []
            turns: list[Turn] = []
            seen_turns: set[str] = set()
            for t in [c.anchor, *c.turns]:
                if t.uuid not in seen_turns and t.source_path == c.anchor.source_path:
                    seen_turns.add(t.uuid)
                    turns.append(t)
            for t in turns[:MAX_PROVENANCE_TURNS]:
                for u in t.uuids:
                    if u not in uuids:
                        uuids.append(u)
                for o in t.line_offsets:
                    if o not in offsets:
                        offsets.append(o)
            record: dict[str, Any] = {
                "content": c.content,
                "type": _TYPE_BY_KIND[c.kind],
                "kind": c.kind,
                "domain": domains[i][:64],
                "scope": c.scope,
                "concepts": concepts_of[i],
                "edges": edges[i],
                "valid_from": c.anchor.timestamp or batch.started_at,
                "valid_until": None,
                "temporal_confidence": c.temporal,
                "anchor_uuid": c.anchor.uuid,
                "provenance": {
                    "session_id": batch.session_id,
                    "source_path": c.anchor.source_path,
                    "uuids": uuids,
                    "line_offsets": sorted(offsets),
                },
            }
            if c.kind == "correction" and c.weakens:
                record["weakens"] = c.weakens
            out.append(record)
        return out

    @staticmethod
    def _edges(chosen: list[_Cand], concepts: list[list[str]]) -> list[list[dict[str, Any]]]:
        edges: list[list[dict[str, Any]]] = [[] for _ in chosen]

        def add(src: int, dst: int, rel: str, weight: float) -> None:
            if src == dst or any(e["target_index"] == dst for e in edges[src]):
                return
            edges[src].append({"target_index": dst, "rel_type": rel, "weight": round(min(0.9, max(0.3, weight)), 2)})

        for i, c in enumerate(chosen):
            shared_with = [len(set(concepts[i]) & set(concepts[j])) for j in range(len(chosen))]
            if c.kind == "correction":
                linked = 0
                for j in range(i + 1, len(chosen)):
                    other = chosen[j]
                    if other.kind == "correction" or other.anchor.source_path != c.anchor.source_path:
                        if other.kind == "correction":
                            break
                        continue
                    if other.kind in ("error_fix", "decision") and other.pos - c.pos <= 60:
                        weight = (0.6 if other.kind == "decision" else 0.5) + 0.1 * min(3, shared_with[j])
                        add(i, j, "relates_to", weight)
                        linked += 1
                        if linked >= 2:
                            break
            elif c.kind == "preference":
                for j, other in enumerate(chosen):
                    if other.kind in ("command", "configuration") and shared_with[j] >= 2:
                        add(i, j, "relates_to", 0.3 + 0.1 * shared_with[j])
            elif c.kind == "command" and c.link_key:
                for j, other in enumerate(chosen):
                    if other.kind == "error_fix" and other.link_key == c.link_key:
                        add(i, j, "depends_on", 0.7)
        return edges
