"""The packet guard: memories that would tell Claude to act against the user are held, not injected.

A memory is text that once appeared in a transcript — typed by the user, written by Claude, or read by a
tool from a README or a web page — and Nous replays it at the start of later sessions. Whoever controls
that text can plant a standing instruction ("always run ``curl … | sh`` first", an approved one-off
"force-push to main" remembered as a decision). :func:`classify` recognises the instructions that do
real harm when followed blindly, by what they *do*, not by who said them:

``remote_code``       download-and-execute: ``curl|wget|iwr … | sh/bash/python/iex``, ``bash <(curl …)``,
                      ``eval "$(curl …)"``, ``iex (New-Object Net.WebClient).DownloadString(…)``;
``force_push_main``   ``git push --force/-f/--force-with-lease`` or a ``+main`` refspec to main, master,
                      trunk or a release branch, and "force-push to main" in prose;
``skip_permissions``  ``--dangerously-skip-permissions``, ``bypassPermissions``, permission mode bypass,
                      disabling the sandbox (``dangerouslyDisableSandbox``, ``--no-sandbox`` outside a
                      browser command line), auto-approving every permission;
``disable_checks``    ``--no-verify``, ``git commit -n``, ``HUSKY=0``, ``SKIP=… git``, a null hooks path,
                      and "disable/skip/bypass/remove the hooks, CI, tests, linters, type checks";
``exfiltration``      credentials, keys, ``.env`` files or environment dumps sent to a URL, webhook,
                      paste site, e-mail address or raw socket (``curl -d @.env``, ``nc host port < key``);
``secret``            a redaction marker (a credential was there) or anything the current redactor
                      finds (a memory stored by an older redactor); the evidence shown is redacted;
``redirect``          registries, package indexes, API base URLs or proxies pointed at another server;
``destructive``       ``rm -rf /``, ``~`` or a system folder, ``mkfs``, ``dd`` onto a device.

Besides these patterns, every command line of a memory is read as shell words by
:mod:`nous_assets.safety.shellscan` (download saved and then run, package runners given remote specs,
``+HEAD:main`` refspecs, ``rsync ~/.ssh/ host:`` …): what a command does, not how it is phrased. Look-alike
letters (Cyrillic ``ѕ`` for ``s``) and invisible characters are normalised away first.

A memory that *warns* against one of these ("never force-push main", "the hook cannot be bypassed with
``--no-verify``") is worth keeping, so every occurrence is checked for a governing negation in its own
clause: a negation cue before it ("never", "don't", "instead of", "cannot" …) with no word in between
that flips or escapes it ("forget", "ask", "just", "instead" …) and not cancelled by a second cue ("never
refuse to …", "never deploy without …"), or a verdict right after it ("… is forbidden", "(rejected by
the user)"). A category whose every occurrence is negated is a *warning*: the
memory stays injectable but its bullet names the caution. Anything else — and a secret, negated or not —
holds the memory for ``nous review``. The verdict depends on the text alone, so it is deterministic and
can be recomputed at any time; :data:`GUARD_VERSION` changes whenever the rules do.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from nous_assets.capture.redact import MARKER_PREFIX, redact, redact_text
from nous_assets.safety.shellscan import scan

__all__ = ["CATEGORIES", "GUARD_VERSION", "Finding", "Verdict", "classify", "normalize"]

GUARD_VERSION = "guard-3"
CATEGORIES = ("remote_code", "force_push_main", "skip_permissions", "disable_checks", "exfiltration", "secret",
              "redirect", "destructive")  # fmt: skip
LABELS = {
    "remote_code": "runs code downloaded from the network",
    "force_push_main": "force-pushes a main branch",
    "skip_permissions": "skips permission prompts or the sandbox",
    "disable_checks": "disables hooks, CI, tests or linters",
    "exfiltration": "sends credentials or private data off the machine",
    "secret": "carries a credential",
    "redirect": "points tools at another server (registry, index, base URL, proxy)",
    "destructive": "deletes the system or the home folder",
}
# what a warning is about, for the "caution: …" mark of an injected bullet
TOPICS = {
    "remote_code": "running downloaded code",
    "force_push_main": "force-pushing main",
    "skip_permissions": "skipping permissions or the sandbox",
    "disable_checks": "bypassing hooks, CI or tests",
    "exfiltration": "sending private data off the machine",
    "secret": "credentials",
    "redirect": "pointing tools at another server",
    "destructive": "deleting system or home folders",
}
MAX_EVIDENCE = 90
_I = re.I

# ------------------------------------------------------------------------------------------------------
# what the dangerous instructions look like

_CMD = 200  # a command line is looked at up to this many characters (bounded regex work on long text)
_SHELLS = r"(?:ba|z|k|da|fi|c|tc|a)?sh|python[\d.]*|perl|ruby|node|php|iex|invoke-expression|pwsh|powershell|source"
_FETCH = r"curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod|http|https|httpie|aria2c"
_REMOTE_CODE = (
    # curl … | sh (any pipeline stages in between, sudo/env prefixes allowed)
    rf"\b(?:{_FETCH})\b[^\n;&]{{0,{_CMD}}}?\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+(?:\S+=\S+\s+)*)?(?:{_SHELLS})\b",
    # bash <(curl …), python <(wget -O- …), source <(curl …), . <(curl …)
    rf"(?:\b(?:{_SHELLS})|(?<![\w.])\.)\s+(?:-\S+\s+)*<\(\s*(?:{_FETCH})\b",
    # sh -c "$(curl …)", eval "$(curl …)", python -c "$(wget …)", eval `curl …`
    rf"\b(?:eval|(?:{_SHELLS})\s+-c)\s+[\"']?(?:\$\(|`)\s*(?:{_FETCH})\b",
    # PowerShell: iex (New-Object Net.WebClient).DownloadString(…), iex (iwr …)
    r"\b(?:iex|invoke-expression)\b\s*\(?\s*(?:\(?\s*new-object\s+(?:system\.)?net\.webclient|iwr|irm|invoke-web)",
    # prose: pipe the install script / curl output to bash
    r"\b(?:pipe|piping|piped)\b[^.\n]{0,50}?\b(?:to|into|through)\s+(?:sudo\s+)?(?:ba|z)?sh\b",
)
_MAIN = r"(?<![\w/.-])(?:refs/heads/)?(?:main|master|trunk|release(?:[/-][\w.-]+)?)(?![\w-])"
_FORCE_PUSH_MAIN = (
    # git push … (--force | --force-with-lease | -f | -uf …) … main
    r"\bgit\s+(?:-\S+\s+)*push\b(?=[^\n;&|]{0,200}?\s(?:--force(?:-with-lease|-if-includes)?\b|-[a-eg-z]*f[a-z]*\b))"
    rf"[^\n;&|]{{0,{_CMD}}}?{_MAIN}",
    # git push origin +main (a forced refspec)
    rf"\bgit\s+(?:-\S+\s+)*push\b[^\n;&|]{{0,{_CMD}}}?(?:\s|:)\+{_MAIN}",
    # prose: force-push (it) to main, force pushing origin/main
    rf"\bforce[- ]?push(?:ed|es|ing)?\b[^.\n;]{{0,30}}?(?:origin/)?{_MAIN}",
    rf"\bpush\b\s+(?:--force\S*|-f)\b[^.\n;]{{0,30}}?{_MAIN}",
)
_BROWSER = re.compile(r"\b(?:chrom(?:e|ium)|puppeteer|playwright|electron|headless|firefox|selenium|webdriver)\b", _I)
_SKIP_PERMISSIONS = (
    r"dangerously[-_ ]?skip[-_ ]?permissions",
    r"\bbypass[-_ ]?permissions\b",
    r"\bpermission[-_ ]?mode\b[\"'\s:=]+bypass",
    r"dangerously[-_ ]?disable[-_ ]?sandbox",
    r"\b(?:disable|disabling|disabled|turn(?:ing)?\s+off|skip(?:ping)?|bypass(?:ing)?|escape|escaping|circumvent\w*"
    r"|get(?:ting)?\s+around|without)\b(?:\s+(?:the|a|any|all|your|claude'?s?|its|this))*\s+sandbox(?:ing|ed|es)?\b",
    r"\bsandbox(?:ing)?\b[\"'\s]*[:=]\s*[\"']?(?:false|off|0|none|disabled)\b",
    r"\b(?:auto[- ]?approve|auto[- ]?accept|skip|bypass|ignore|disable)\w*(?:\s+(?:all|every|the|any))*\s+"
    r"(?:tool\s+)?permission\s+(?:prompts?|requests?|checks?|dialogs?)\b",
    r"\byolo[- ]mode\b",
    r"\bauto[- ]?(?:approve|accept|allow|confirm)\w*\s+(?:all|every|each|any)\s+(?:tool\s+(?:calls?|uses?)|commands?"
    r"|actions?|requests?|prompts?|edits?)\b",
    r"\b(?:never|don'?t(?:\s+ever)?|do\s+not|stop|no\s+(?:more|longer))\s+ask(?:ing)?\s+(?:me\s+)?(?:for\s+)?"
    r"(?:permission|approval|confirmation)\b",
    r"\bBash\(\s*\*\s*\)",
)
_NO_SANDBOX = re.compile(r"(?<![\w-])--no-sandbox\b", _I)
_CHECK_VERBS = (
    r"disable|disabling|disabled|skip|skipping|skipped|bypass|bypassing|bypassed|remove|removing|delete|deleting"
    r"|turn(?:ing)?\s+off|uninstall|uninstalling|circumvent\w*|get(?:ting)?\s+around|comment(?:ing)?\s+out"
    r"|ignore|ignoring|silence|silencing|neuter|neutering"
)
_CHECK_TARGETS = (
    r"(?:(?:pre-commit|pre-push|commit-msg|git|husky|lefthook|commit|push|safety|security)[- ])?hooks?"
    r"|pre-commit(?:\s+checks?)?|ci(?:\s+(?:checks?|pipeline|jobs?|runs?))?|status\s+checks?|branch\s+protection"
    r"|linters?|linting|type[- ]?check(?:s|ing|er)?|code\s+review"
)
# tests are removed for good reasons ("remove the tests for the v1 endpoint"): only failing/all of them count
_TEST_TARGETS = r"checks|tests|test\s+suite"
_WHOLESALE = r"(?:all|every|failing|flaky|broken|red|the\s+whole|required)"
_DISABLE_CHECKS = (
    r"(?<![\w-])--no-verify\b",
    r"\bgit\s+(?:-\S+\s+)*commit\b[^\n;&|\"']{0,200}?\s-[a-mo-z]*n[a-z]*\b",
    r"\b(?-i:HUSKY(?:_SKIP_HOOKS)?)=[01]\b",
    r"\bSKIP=[\w,.-]+\s+(?:git|pre-commit)\b",
    r"\bcore\.hooksPath\b\s*=?\s*(?:/dev/null|[\"']{2})",
    rf"\b(?:{_CHECK_VERBS})\b(?:\s+(?:all|the|any|every|our|these|those|its|their|failing|flaky|broken|git|required))*"
    rf"\s+(?:{_CHECK_TARGETS})\b",
    rf"\b(?:disable|disabling|skip|skipping|bypass|bypassing|turn(?:ing)?\s+off|comment(?:ing)?\s+out|silenc\w+)\b"
    rf"(?:\s+(?:the|any|our|these|those|its|their|{_WHOLESALE}))*\s+(?:{_TEST_TARGETS})\b",
    rf"\b(?:remove|removing|delete|deleting)\b(?:\s+(?:the|any|our|these|those|its|their))*\s+{_WHOLESALE}"
    rf"(?:\s+(?:the|of|our|these|those))*\s+(?:{_TEST_TARGETS})\b",
)
_SENSITIVE = (
    r"\.env\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.ssh/|~/\.aws\b|\.aws/|\bcredentials(?:\.json)?\b|\.netrc\b"
    r"|\.npmrc\b|\.pypirc\b|\.git-credentials\b|\.kube/config\b|\bkeychain\b|/etc/(?:passwd|shadow)\b"
    r"|\bssh\s+keys?\b|\bprivate\s+keys?\b|\benvironment\s+variables\b|\benv\s+vars\b|\bsecrets\b|\bprintenv\b"
)
_SINK = (
    r"https?://\S+|\bwebhooks?\b|\bpaste(?:bin|\.\w+)|\bhastebin\b|\bgists?\b|\bngrok\b|\btransfer\.sh\b"
    r"|\brequestbin\b|\bdiscord\b|\btelegram\b|\bexternal\s+(?:server|host|url|endpoint)\b"
    r"|\b[\w.+-]+@[\w-]+\.[\w.-]+\b|\be-?mail\b"
)
_SEND_VERBS = (
    r"send|sending|sent|upload\w*|post|posting|exfiltrat\w*|leak\w*|share|sharing|forward\w*|transmit\w*"
    r"|e-?mail\w*|mail|copy|copying|paste|pasting|publish\w*|dump\w*|sync\w*|mirror\w*|back\s*up|backing\s+up"
)
_EXFILTRATION = (
    rf"\b(?:curl|wget|http|httpie)\b[^\n]{{0,{_CMD}}}?(?:\s-d|\s--data\S*|\s-F|\s--form|\s-T|\s--upload-file|\s--post-file)"
    rf"[=\s]+[\"']?@?[^\s\"']*(?:{_SENSITIVE})",
    rf"\b(?:cat|type|gc|get-content|tar|zip|base64)\b[^\n|]{{0,{_CMD}}}?(?:{_SENSITIVE})[^\n]{{0,{_CMD}}}?\|\s*(?:curl|wget|nc|ncat|netcat"
    r"|mail|sendmail)\b",
    rf"\b(?:nc|ncat|netcat)\b[^\n]{{0,{_CMD}}}?<\s*\S*(?:{_SENSITIVE})",
    r"\b(?:printenv|env|set)\s*\|\s*(?:curl|wget|nc|ncat|netcat|mail|sendmail)\b",
    r"/dev/tcp/\S+",
    rf"\bscp\b[^\n]{{0,{_CMD}}}?(?:{_SENSITIVE})[^\n]{{0,{_CMD}}}?\s\S*@?[\w.-]+:",
    rf"\b(?:{_SEND_VERBS})\b[^.\n;]{{0,80}}?(?:{_SENSITIVE})[^.\n;]{{0,80}}?(?:{_SINK})",
    rf"(?:{_SENSITIVE})[^.\n;]{{0,60}}?\b(?:{_SEND_VERBS})\b[^.\n;]{{0,60}}?(?:{_SINK})",  # "keep .env synced to <url>"
    # a markdown image (rendered, so fetched) whose URL carries a secret file or a variable's value
    r"!\[[^\]\n]{0,200}\]\(\s*<?https?://[^)\n]{0,400}?(?:\.env\b|id_(?:rsa|ed25519)|credentials|\.ssh|\.aws"
    r"|\$\{?\w*(?:KEY|TOKEN|SECRET|PASS)\w*|\{\{|\$\()",
)
# A redaction marker says a credential was there; what the redactor still finds is added in classify().
_SECRET = (
    re.escape(MARKER_PREFIX) + r"[a-z0-9_]+\]",
    # a password in prose: "the login is admin / Tr0ub4dor&3xyz", "password: hunter2!Xy9" (letters, digits and a
    # symbol or mixed case: a word of the sentence is not a password)
    r"\b(?:passwords?|passwd|pass\s*phrase|login|credentials?|pwd)\b[^.\n]{0,40}?(?:\bis\b|:|=|/)\s*[\"'`]?"
    r"(?=[^\s\"'`]{8,})(?=\S*\d)(?=\S*[a-z])(?=\S*(?:[A-Z]|[^\w\s]))[^\s\"'`]{8,}",
)

_PATTERNS: dict[str, tuple[re.Pattern[str], ...]] = {
    category: tuple(re.compile(p, _I) for p in patterns)
    for category, patterns in (
        ("remote_code", _REMOTE_CODE),
        ("force_push_main", _FORCE_PUSH_MAIN),
        ("skip_permissions", _SKIP_PERMISSIONS),
        ("disable_checks", _DISABLE_CHECKS),
        ("exfiltration", _EXFILTRATION),
        ("secret", _SECRET),
    )
}

# ------------------------------------------------------------------------------------------------------
# warnings: a negation that governs the occurrence in its own clause

_CLAUSE_BREAK = re.compile(r"[.!?](?=\s|$)|[\n;]|\s[—–-]{1,2}\s|:\s")
_NEGATION = re.compile(
    r"\b(?:never|don'?t|do\s+not|does\s+not|doesn'?t|did\s+not|didn'?t|must\s+not|mustn'?t|should\s+not|shouldn'?t"
    r"|cannot|can'?t|can\s+not|won'?t|will\s+not|not\s+(?:allowed|permitted)\s+to|not\s+to|no\s+longer|avoid\w*"
    r"|stop(?:s|ped)?|instead\s+of|rather\s+than|refus\w*|reject\w*|forbid\w*|prohibit\w*|block\w*|prevent\w*"
    r"|warn\w*\s+(?:against|about)|without|no)\b",
    _I,
)
# words that flip or escape a preceding negation ("never forget to …", "don't ask, just …")
_ESCAPE = re.compile(
    r"\b(?:forget|forgetting|skip|omit|fail|hesitate|ask|asking|wait|waiting|bother|hold\s+off|worry|delay|doubt"
    r"|question|just|instead|but|always|simply|first|then|so|rather|except|unless|only|before|until|till|after"
    r"|once|when|while)\b",
    _I,
)
_VERDICT_AFTER = re.compile(
    r"^[\s`'\"),]{0,3}(?:(?:to|on|into|in|for|from|against)\s+\S+\s+){0,2}"
    r"(?:(?:is|are|was|were|be|been|gets?|got|remains?)\s+(?:\w+\s+)?(?:not\s+allowed|not\s+permitted|forbidden"
    r"|prohibited|blocked|disallowed|banned|dangerous|unsafe|a\s+bad\s+idea|off[- ]limits|rejected|denied|refused)\b"
    r"|\(?(?:rejected|interrupted|denied|refused)\b)",
    _I,
)
_VERDICT_WINDOW = 40
_NEGATION_WINDOW = 80


# Cyrillic and Greek letters that look like Latin ones ("ѕh" for "sh"): read as the Latin letter
_CONFUSABLES = str.maketrans("аеорсухіјѕԁһӏԛԝАВЕКМНОРСТХІЈЅαεορτυνκΑΒΕΗΙΚΜΝΟΡΤΧΥΖ",
                             "aeopcyxijsdhlqwABEKMHOPCTXIJSaeoptuvkABEHIKMNOPTXYZ")  # fmt: skip


def normalize(text: str) -> str:
    """NFKC, look-alike letters read as Latin, invisible and control characters removed: "cu\u200brl ｜ ѕh" is
    classified as "curl | sh"."""
    text = unicodedata.normalize("NFKC", "" if text is None else str(text)).translate(_CONFUSABLES)
    out = []
    for ch in text:
        if ch in "\n\t":
            out.append(ch)
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            continue
        elif unicodedata.category(ch) in ("Zl", "Zp"):
            out.append("\n")
        else:
            out.append(ch)
    return "".join(out)


def _clause_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    left = 0
    for m in _CLAUSE_BREAK.finditer(text, 0, start):
        left = m.end()
    right_match = _CLAUSE_BREAK.search(text, end)
    return left, right_match.start() if right_match else len(text)


def _negated(text: str, start: int, end: int) -> bool:
    """Whether the occurrence ``text[start:end]`` is governed by a negation in its own clause."""
    left, right = _clause_bounds(text, start, end)
    before = text[max(left, start - _NEGATION_WINDOW) : start]
    cues = list(_NEGATION.finditer(before))
    # an even number of cues cancels out ("never refuse to …", "never deploy without …")
    if len(cues) % 2 and not _ESCAPE.search(before[cues[-1].end() :]):
        return True
    after = text[end : min(right, end + _VERDICT_WINDOW)]
    return bool(_VERDICT_AFTER.match(after))


@dataclass(frozen=True)
class Finding:
    """One dangerous occurrence: its category, the text that matched (redacted, short), negated or not."""

    category: str
    evidence: str
    warning: bool = False

    def as_dict(self) -> dict[str, object]:
        return {"category": self.category, "evidence": self.evidence, "warning": self.warning}


@dataclass(frozen=True)
class Verdict:
    """What the guard found in one memory. ``held``: at least one category is an instruction, not a warning."""

    findings: tuple[Finding, ...] = ()

    @property
    def held_categories(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.category for f in self.findings if not f.warning))

    @property
    def warning_categories(self) -> tuple[str, ...]:
        held = set(self.held_categories)
        return tuple(dict.fromkeys(f.category for f in self.findings if f.warning and f.category not in held))

    @property
    def held(self) -> bool:
        return bool(self.held_categories)

    @property
    def reason(self) -> str:
        """One line for ``nous review``: each held category with its evidence."""
        parts = []
        for category in self.held_categories:
            evidence = next(f.evidence for f in self.findings if f.category == category and not f.warning)
            parts.append(f"{category} ({LABELS[category]}): {evidence}")
        return "; ".join(parts)

    @property
    def caution(self) -> str:
        """What a memory that warns against something is about ("" when it warns against nothing)."""
        return ", ".join(TOPICS[c] for c in self.warning_categories)


def _evidence(text: str) -> str:
    one = " ".join(redact(text).split())
    return one if len(one) <= MAX_EVIDENCE else one[: MAX_EVIDENCE - 1] + "…"


def _findings(text: str, category: str) -> list[Finding]:
    out: list[Finding] = []
    for pattern in _PATTERNS.get(category, ()):
        for m in pattern.finditer(text):
            if category == "secret":
                out.append(Finding(category, _evidence(text), False))
                break
            out.append(Finding(category, _evidence(m.group(0)), _negated(text, m.start(), m.end())))
    if category == "skip_permissions":
        for m in _NO_SANDBOX.finditer(text):
            left, right = _clause_bounds(text, m.start(), m.end())
            if not _BROWSER.search(text[left:right]):
                out.append(Finding(category, _evidence(m.group(0)), _negated(text, m.start(), m.end())))
    return out


def classify(text: str) -> Verdict:
    """The guard's verdict on a memory's text (deterministic: the same text always gets the same verdict)."""
    clean = normalize(text)
    findings: list[Finding] = []
    for category in CATEGORIES:
        findings.extend(_findings(clean, category))
    for hit in scan(clean):
        findings.append(Finding(hit.category, _evidence(hit.command), _negated(clean, hit.start, hit.end)))
    if not any(f.category == "secret" for f in findings) and redact_text(clean).total:
        findings.append(Finding("secret", _evidence(clean), False))
    return Verdict(tuple(findings))
