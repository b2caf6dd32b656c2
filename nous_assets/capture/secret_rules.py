"""The redactor's rule catalogue: what a secret looks like, kind by kind (the engine is :mod:`.redact`).

Each :class:`Rule` is one compiled pattern (one pass over the text) made of :class:`Alt` alternatives: the
group that holds the secret, its kind (``[REDACTED:<kind>]``) and a check that vets the candidate value.
Value checks live here with the rules they vet; :func:`secret_key_kind` names the kind of a JSON key whose
value is a secret whatever it looks like. Bump ``redact.REDACTOR_VERSION`` when a change here changes what
is found.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["RULES", "Alt", "Rule", "is_placeholder", "secret_key_kind"]

# --------------------------------------------------------------------------------------------------------
# Value checks. Each takes the candidate secret and says whether it really looks like one.

# Placeholders in provider-shaped tokens: kept strict, since a random token may contain any 3 letters.
_TOKEN_PLACEHOLDER = re.compile(r"(?i)x{4}|example|your|dummy|placeholder|redacted|\*{3}|(.)\1{5,}")

# Placeholders and references in generic values (``API_KEY=your-key-here``, ``token: ${TOKEN}``).
_PLACEHOLDER = re.compile(
    r"""(?ix)
    ^\$ | \$\{ | \$\( | \{\{ | \{% | %\( | %s | <[^<>]*> | ^< | >$
    | x{3} | \*{3} | \.{3} | \u2026
    | your | example | dummy | sample | fake | placeholder | redacted | change[-_ ]?me | replace | todo
    | [-_]here\b | os\.environ | process\.env | getenv | \benv[.\[(]
    | ^(?:none|null|nil|undefined|true|false|string|str|required|optional|secret|password|token)$
    | (.)\1{5,}
    """
)
_KEYWORD_IN_VALUE = re.compile(r"(?i)pass(?:word|wd)|secret|token|api[_-]?key|credential|private[_-]?key")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+")
# A file path (two slashes or an extension); base64 may start with "/" too, but then rarely looks like this.
_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.@-]*(?:/[\w.@-]*)+|(?:~|\.{1,2})?/[\w@-]+\.\w{1,5}")
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*")
_BASE64ISH = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_NAMEISH = re.compile(r"[A-Za-z_.:|/#@\[\]-]+")


def is_placeholder(value: str) -> bool:
    """A stub or a reference (``your-key-here``, ``${TOKEN}``, ``os.environ[...]``), not a secret."""
    return _PLACEHOLDER.search(value) is not None


def _real_token(value: str, _m: re.Match[str]) -> bool:
    """A provider-shaped token that is not an obvious placeholder such as ``ghp_xxxx...``."""
    return _TOKEN_PLACEHOLDER.search(value) is None


def _random_token(value: str, m: re.Match[str]) -> bool:
    """Loose prefixes (``sk-``, ``xoxb-``) also need digits and letters, so kebab-case words are kept."""
    return _real_token(value, m) and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _mixed_case_token(value: str, m: re.Match[str]) -> bool:
    """Hugging Face tokens are letters only, so ask for mixed case instead of digits."""
    body = value[3:]
    return _real_token(value, m) and body != body.lower() and body != body.upper()


def _looks_random_letters(value: str) -> bool:
    """Letters-only base64 (``bXlzZWNyZXQ``) versus camelCase identifiers (``hashedPassword``)."""
    if not _BASE64ISH.fullmatch(value):
        return False
    letters = [c for c in value if c.isalpha()]
    if not letters:
        return False
    upper = sum(c.isupper() for c in letters) / len(letters)
    return 0.3 <= upper <= 0.7


_CAMEL_WORD = re.compile(r"[A-Z][a-z]{2,}|^[a-z]{2,}")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_CONSONANT_RUN = re.compile(r"[bcdfghjklmnpqrstvwxzBCDFGHJKLMNPQRSTVWXZ]{4}")  # rare inside a real word


def _reads_as_words(value: str) -> bool:
    """Most letters belong to camelCase words (``MessageEventHandler``, ``getElementById``), unlike a key."""
    letters = sum(c.isalpha() for c in value)
    words = sum(len(w) for w in _CAMEL_WORD.findall(value) if _VOWEL.search(w) and not _CONSONANT_RUN.search(w))
    return letters > 0 and words >= 0.6 * letters


def _random_letters(value: str) -> bool:
    """Mixed-case letters that read as no words (``suBKWXSEMfOsli``): a short key, not an identifier.

    Why: some providers issue letters-only ids and keys of 12-15 characters, shorter than the base64 test
    of :func:`_looks_random_letters` accepts; camelCase names are told apart by their words."""
    if len(value) < 12 or not value.isalpha() or value.islower() or value.isupper():
        return False
    upper = sum(c.isupper() for c in value) / len(value)
    return 0.2 <= upper <= 0.8 and not _reads_as_words(value)


def _chain(core: str) -> bool:
    """``a=b=c``, ``x==0``, ``KEY=value``: an expression or a nested assignment, not a value holding ``=``.

    Keys such as ``b_4475-4umq=-3fn9…`` or ``hpq7=ow11ii`` hold ``=`` among random characters; a chain is
    made of names and numbers only."""
    pieces = core.split("=")
    return any(not p for p in pieces) or all(_NAMEISH.fullmatch(p) or _NUMBER.fullmatch(p) for p in pieces)


def _type_name(value: str) -> bool:
    """The type of an annotation (``key: ed25519Seed``, ``token: MessageEventHandler``), not a YAML value.

    Why not every identifier-shaped value: ``etsy_token: bephljie1iciynwyroykespc`` is YAML holding a key;
    a long type name reads as words."""
    if _TYPE_NAME.fullmatch(value) is None:
        return False
    return len(value) <= 12 or "_" in value or _reads_as_words(value)


def _plausible_secret(value: str, quoted: bool) -> bool:
    """Whether the value of a secret-named assignment is a real secret rather than code, prose or a stub."""
    value = value.lstrip(":@")  # curl's user:password without a user (":pass"), a header value read as "@…"
    if len(value) < 8 or is_placeholder(value):
        return False
    if any(c.isspace() for c in value) or "://" in value:
        return False
    if _KEYWORD_IN_VALUE.search(value):
        return False  # a name or a stub: "DB_PASSWORD", "access_token", "password123", "my-secret"
    if _NUMBER.fullmatch(value) or _PATH.fullmatch(value) or _DOTTED.fullmatch(value):
        return False
    if len(value) < 20 and _HEX.fullmatch(value):
        return False  # short hex is a hash or an id (publicKeyToken="1fc8b3b9a1e18e3b"), real hex keys are longer
    if _looks_random_letters(value) or _random_letters(value):
        return True  # base64 assigned to a secret name, even without digits
    if not any(c.isdigit() for c in value) and _NAMEISH.fullmatch(value):
        return False  # words and identifiers: "send_message", "xet-auth", "[IMG_BREAK]", hashedPassword
    if quoted:
        return True
    if any(c in "([{" for c in value):
        return False  # a call or subscript: get(x), Optional[str]
    core = value.rstrip("=")  # "=" as base64 padding, or among random characters, but not a chain like a=b=c
    return "=" not in core or not _chain(core)


_COMPARISONS = frozenset({"==", "===", "!=", "!=="})
# An identifier with at most two letter/digit switches: a type or variable name, not a generated value.
_TYPE_NAME = re.compile(r"[A-Za-z_$][A-Za-z_$]*\d*[A-Za-z_$]*")


def _generic_check(value: str, m: re.Match[str]) -> bool:
    """Vet a ``NAME <op> value`` match.

    ``token == Literal`` compares with an expression (only a quoted literal there is a hard-coded secret),
    and a bare ``pass:``/``pwd:`` is prose ("First pass: ..."), unlike ``DB_PASS=...``.
    """
    quoted = m.group("uq") is None
    op = m.group("op") if "op" in m.re.groupindex else None
    if op is not None and op[0] == ">":  # <apiToken>value</apiToken>: a start tag, its value, an end tag
        name_start = _name_start(m)
        element = name_start > 0 and m.string[name_start - 1] == "<" and _CLOSING_TAG.match(m.string, m.end())
        return bool(element) and _plausible_secret(value, True)
    if op == "," and (not quoted or not any(c in "\"'" for c in m.string[m.end("kw") : m.start("op")])):
        return False  # only "NAME", "value" (setProperty, setdefault): f(token, x) is a call
    if not quoted and op in _COMPARISONS:
        return False
    if not quoted and (value.endswith(".") or "?." in value):
        return False  # an expression cut at a subscript: req.cookies?.['token']
    if not quoted and op == ":" and _type_name(value):
        return False  # a type annotation: privateKey: Uint8Array, key: ed25519Seed
    if not quoted and op == ":" and m.string[m.start() : m.end("kw")] in ("pass", "pwd"):
        return False
    # An ARN or a type name is not an assignment: arn:aws:secretsmanager:...:secret:x, AWS::IAM::AccessKey.
    name_start = _name_start(m)
    if _NAMESPACED.search(m.string, max(0, name_start - 200), name_start):
        return False
    return _plausible_secret(value, quoted)


def _url_password_check(value: str, m: re.Match[str]) -> bool:
    """``postgres://postgres:postgres@`` and ``user:password@`` are defaults and docs, not secrets."""
    if value == m.group("user") or is_placeholder(value):
        return False
    return (
        value.lower() not in {"pass", "passwd", "pwd", "tiger"}  # scott:tiger, SQLAlchemy's example
        and not _KEYWORD_IN_VALUE.search(value)
        and not _NUMBER.fullmatch(value)
    )


def _basic_auth_check(value: str, _m: re.Match[str]) -> bool:
    """``Basic <b64>`` is only a credential if it decodes to printable ``user:password``; prose says "basic usage"."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    return decoded.isprintable() and ":" in decoded[1:]


def _bearer_check(value: str, _m: re.Match[str]) -> bool:
    """Real bearer tokens have digits (or are long random letters); "bearer authentication." is prose."""
    if len(value) < 8 or is_placeholder(value) or _KEYWORD_IN_VALUE.search(value):
        return False
    return any(c.isdigit() for c in value) or _looks_random_letters(value)


def _curl_user_check(value: str, m: re.Match[str]) -> bool:
    """``docker -u 1000:1000`` is a uid:gid, not a password; a user name alone is a key only if random."""
    if is_placeholder(value) or (_NUMBER.fullmatch(value) and len(value) < 12):
        return False  # (a long number is an id-shaped key: curl -u deploy:550696457924007706)
    return m.start("cu") == -1 or (any(c.isdigit() for c in value) and any(c.isalpha() for c in value))


def _mysql_check(value: str, _m: re.Match[str]) -> bool:
    return len(value) >= 4 and not is_placeholder(value)


# --------------------------------------------------------------------------------------------------------
# Kinds of generic secret-named keys.

_KEY_KINDS: tuple[tuple[str, str], ...] = (
    ("password", "password"),
    ("passwd", "password"),
    ("passphrase", "password"),
    ("pass", "password"),
    ("pwd", "password"),
    ("apikey", "api_key"),
    ("accesskey", "access_key"),
    ("privatekey", "private_key"),
    ("key", "secret_key"),
    ("secret", "secret"),
    ("token", "token"),
    ("credential", "credential"),
    ("credentials", "credential"),
    ("authorization", "authorization"),
)


_NAMED_KINDS: tuple[tuple[str, str], ...] = (
    ("secretaccesskey", "aws_secret_key"),  # AWS_SECRET_ACCESS_KEY, SecretAccessKey
    ("awssecretkey", "aws_secret_key"),
    ("sharedaccesskey", "azure_storage_key"),
    ("accountkey", "azure_storage_key"),  # AccountKey=... in Azure connection strings
)


def _keyword_kind(keyword: str) -> str:
    """``DB_PASSWORD`` -> ``password``, ``clientSecret`` -> ``secret``, ``X-Api-Key`` -> ``api_key``."""
    norm = re.sub(r"[^a-z]", "", keyword.lower())
    if norm.startswith("heroku") and norm.endswith(("key", "token")):
        return "heroku_api_key"  # HEROKU_API_KEY=<uuid>
    if norm.startswith(("dd", "datadog")) and norm.endswith("key"):
        return "datadog_api_key"  # DD_API_KEY, DD_APP_KEY, DATADOG_API_KEY
    for suffix, kind in _NAMED_KINDS + _KEY_KINDS:
        if norm.endswith(suffix):
            return kind
    return "secret"


# JSON keys whose string value is a secret whatever it looks like (after normalising away case, separators
# and a trailing number): ``api_key``, ``clientSecret``, ``X-Api-Key``, ``password2``.
_SECRET_KEY_SUFFIXES = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "authkey",
    "encryptionkey",
    "signingkey",
    "masterkey",
    "credential",
    "credentials",
    "authorization",
)


@lru_cache(maxsize=4096)
def secret_key_kind(key: str) -> str | None:
    """The kind of secret a JSON key names (``clientSecret`` -> ``secret``), or None for other keys."""
    norm = re.sub(r"[^a-z0-9]", "", key.lower()).rstrip("0123456789")
    if norm.endswith(_SECRET_KEY_SUFFIXES):
        return _keyword_kind(norm)
    return None


# --------------------------------------------------------------------------------------------------------
# Rules, applied in order. Specific shapes come before generic assignments so a key pasted as
# ``OPENAI_API_KEY=sk-proj-...`` is counted as ``openai_api_key``.
#
# Speed: this runs over hundreds of MB. Python's ``re`` scans at ~1-2 GB/s only for a pattern that starts
# with a literal character (a leading character class, lookbehind, group or IGNORECASE makes it try every
# position, 10-50x slower), and each pattern is one pass over the text. So every pattern starts with a
# literal; alternatives sharing a literal prefix share a pattern; left-edge checks are done in Python
# (``not_after``); keyed shapes that generic assignments already find (``AWS_SECRET_ACCESS_KEY=``,
# ``DD_API_KEY=``, ``AccountKey=``) get their kind from the name instead of a pass of their own; and
# case-insensitive rules (``on_lower``) are written in lower case and run over ``text.lower()``, whose
# offsets are those of ``text`` (a text whose length changes when lowered, e.g. one holding "İ", falls back
# to ``re.IGNORECASE``). Short texts are first gated on ``triggers``, and short strings are memoised.

Check = Callable[[str, re.Match[str]], bool]
KindOf = Callable[[re.Match[str]], str]


@dataclass(frozen=True, slots=True)
class Alt:
    """One alternative of a rule: which group is the secret, its kind, and how to vet it."""

    regex: str
    kind: str
    groups: tuple[str, ...] = ("v",)  # the secret: the first group that took part; () = the whole match
    check: Check | None = _real_token
    kind_of: KindOf | None = None
    not_after: str = ""  # the match is ignored when the character before it is one of these
    back: int = 0  # the secret starts this many characters before the match (a whole-match alternative)


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: re.Pattern[str]
    pattern_ci: re.Pattern[str] | None  # on_lower rules: the same pattern with IGNORECASE, for the fallback
    triggers: tuple[str, ...]  # any match contains one of these (lower case for on_lower rules)
    alts: tuple[tuple[str | None, Alt], ...]  # (name of the empty group marking the alternative, alternative)


def _rule(
    triggers: tuple[str, ...],
    *alts: Alt,
    on_lower: bool = False,
    dotall: bool = False,
    prefix: int = 0,
) -> Rule:
    """Join alternatives into one pattern (one pass over the text).

    They must share their first ``prefix`` literal characters: an empty group placed right after those
    tells which alternative matched, and ``re`` keeps its fast literal scan (a group at the very start of
    each alternative would make it try every position).
    """
    if len(alts) == 1:
        regex, named = alts[0].regex, ((None, alts[0]),)
    else:
        assert prefix > 0 and len({alt.regex[:prefix] for alt in alts}) == 1, alts
        named = tuple((f"alt{i}", alt) for i, alt in enumerate(alts))
        regex = "|".join(f"{alt.regex[:prefix]}(?P<{name}>){alt.regex[prefix:]}" for name, alt in named)
    flags = re.DOTALL if dotall else 0
    pattern_ci = re.compile(regex, flags | re.IGNORECASE) if on_lower else None
    return Rule(re.compile(regex, flags), pattern_ci, triggers, named)


_WORD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_TOKEN_EDGE = _WORD + "_-"
_R = r"(?![A-Za-z0-9_-])"  # right edge of a token
_Q = r"""\\?["']?"""  # an optional quote, maybe JSON-escaped
# curl -u user:password (the password), -u :password, and -u key: (an API key sent as the user name)
_CURL_CREDENTIAL = (
    r"(?:(?P<cu>[^\s:\"'\\]{8,}):(?=[\s\"'\\]|\Z)|[^\s:\"'\\]*:(?P<cv>[^\s\"'\\]+))"
)
_KSEP = _Q + r"[ \t]{0,8}(?:=|:)[ \t]{0,8}" + _Q  # closing key quote, separator, opening value quote
# The separator of a generic assignment: a closing quote, a declared type (Go ``xToken string =``, Kotlin
# ``xToken: String =``), and an operator: comparisons (vetted away), ``=>``, Makefile ``::=``/``:::=``/``?=``,
# ``??=``/``||=``, PHP ``.=``, ``=``, ``:``, a comma between a quoted name and a quoted value
# (``System.setProperty("X_TOKEN", "...")``) and ``>`` closing an XML start tag (``<apiToken>\n  ...\n</``).
_SEP = (
    _Q + r"""(?::?[ \t]+(?:string|str|&str|\[\]byte)(?=[ \t]*=))?[ \t]{0,8}"""
    r"""(?P<op>===?|!==?|=>|:::?=|:=|\?\??=|\|\|=|\.=|=|:|,|>(?:[ \t]|\\[nrt]|\r?\n){0,40})[ \t]{0,8}"""
)
_CLOSING_TAG = re.compile(r"(?:[ \t]|\\[nrt]|\r?\n){0,40}</")
_VALUE = (
    r"""(?:\\"(?P<eq>[^"\\\r\n]*)\\"|"(?P<dq>[^"\\\r\n]*)"|'(?P<sq>[^'\\\r\n]*)'|`(?P<bq>[^`\\\r\n]*)`"""
    r"""|(?P<uq>[^\s"'`,;&|<>\\)\]}\[]+))"""
)
_VALUE_GROUPS = ("eq", "dq", "sq", "bq", "uq")
_KW_END = r"(?:[_-]?\d{1,3})?(?![a-z0-9_])"  # DB_PASSWORD2, but not max_tokens or passwordHash
_KEY_PREFIXES = ("api", "access", "secret", "private", "auth", "encryption", "signing", "master", "app",
                 "application", "jwt", "hmac", "consumer", "account")  # fmt: skip
_KEY_BEHIND = "|".join(f"(?<={p}{sep}key)" for p in _KEY_PREFIXES for sep in ("", "_", "-"))
_NAME_TAIL = re.compile(r"[A-Za-z0-9_.-]*\Z")
_NAMESPACED = re.compile(r"(?:::|\b(?:arn|urn):[^\s\"']*:)\Z", re.IGNORECASE)


def _name_start(m: re.Match[str]) -> int:
    """Where the whole name around the keyword starts (``DB_PASSWORD`` for a match on ``password``)."""
    end = m.end("kw")
    name = _NAME_TAIL.search(m.string, max(0, end - 40), end)
    return name.start() if name else end


def _generic_kind(m: re.Match[str]) -> str:
    """Kind from the whole name ending at the keyword: ``X_API_KEY`` -> ``api_key``, ``DD_API_KEY`` -> datadog."""
    return _keyword_kind(m.string[_name_start(m) : m.end("kw")])


def _generic_alt(keyword_regex: str) -> Alt:
    """``NAME=value``, ``NAME: value``, ``"name": "value"``, ``export NAME='v'``, ``name := v``, ``x == "v"``."""
    return Alt(
        keyword_regex + r"(?P<kw>)" + _KW_END + _SEP + _VALUE,
        "",
        _VALUE_GROUPS,
        _generic_check,
        _generic_kind,
    )


def _generic(keyword_regex: str, trigger: str) -> Rule:
    return _rule((trigger,), _generic_alt(keyword_regex), on_lower=True)


def _pem_check(_value: str, m: re.Match[str]) -> bool:
    """Elided keys (``MIIE...``) are documentation; a real one has full lines of base64."""
    return re.search(r"[A-Za-z0-9+/=]{32,}", m.group("pem_body")) is not None


RULES: tuple[Rule, ...] = (
    # The user's opt-out marker; an unclosed tag hides the rest of the text (privacy first). A tag in
    # backticks is someone talking about the feature ("wrap it in `<private>`"), not using it.
    _rule(
        ("<private>",),
        Alt(r"<private>(?!`).*?(?:</private>|\Z)", "private", (), None, not_after="`"),
        on_lower=True,
        dotall=True,
    ),
    _rule(
        ("-----BEGIN",),
        # PEM private keys, multi-line or JSON-escaped; truncated ones (no END line) too.
        Alt(
            r"-----BEGIN[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"
            r"(?P<pem_body>[A-Za-z0-9+/=\s\\:,.-]{40,}?)"
            r"(?:-----END[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----|(?![A-Za-z0-9+/=\s\\:,.-]))",
            "private_key",
            (),
            _pem_check,
        ),
    ),
    _rule(
        ("sk-",),
        Alt(r"sk-ant-[A-Za-z0-9_-]{20,}", "anthropic_api_key", (), not_after=_TOKEN_EDGE),
        Alt(r"sk-[A-Za-z0-9_-]{20,}", "openai_api_key", (), _random_token, not_after=_TOKEN_EDGE),
        prefix=2,
    ),
    _rule(("sig=",), Alt(r"sig=(?<=[?&]sig=)(?P<v>[A-Za-z0-9%+/]{20,}(?:%3D|=)*)", "azure_sas_token")),
    _rule(
        ("gh", "github_pat_"),
        Alt(
            r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})" + _R,
            "github_token",
            (),
            not_after=_TOKEN_EDGE,
        ),
    ),
    _rule(
        ("gl",),
        Alt(r"gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}", "gitlab_token", (), not_after=_TOKEN_EDGE),
    ),
    _rule(
        ("x",),
        Alt(r"x(?:ox[abposre]|app)-[A-Za-z0-9-]{10,}", "slack_token", (), _random_token, not_after=_TOKEN_EDGE),
    ),
    _rule(
        ("hooks.slack.com",),
        Alt(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<slk>[A-Za-z0-9_/+-]{10,})",
            "slack_webhook",
            ("slk",),
        ),
    ),
    _rule(
        ("webhook.office.com",),
        Alt(r"webhook\.office\.com/webhook(?:b2)?/(?P<teams>[^\s\"'\\<>]{20,})", "teams_webhook", ("teams",)),
    ),
    _rule(
        ("https://",),
        Alt(
            r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/(?P<dsc>[A-Za-z0-9_-]{20,})",
            "discord_webhook",
            ("dsc",),
        ),
    ),
    _rule(
        ("hf_",),
        Alt(r"hf_[A-Za-z0-9]{30,}" + _R, "huggingface_token", (), _mixed_case_token, not_after=_TOKEN_EDGE),
    ),
    _rule(("whsec_",), Alt(r"whsec_[A-Za-z0-9]{24,}" + _R, "stripe_key", (), not_after=_TOKEN_EDGE)),
    # sk_live_, rk_live_, pk_live_, sk_test_: found from the "_live_" part (one fast pass), then widened.
    _rule(
        ("_",),
        Alt(
            r"_(?:live_(?<=[spr]k_live_)|test_(?<=sk_test_))[A-Za-z0-9]{16,}" + _R,
            "stripe_key",
            (),
            not_after=_TOKEN_EDGE,
            back=2,
        ),
    ),
    _rule(("pypi-AgE",), Alt(r"pypi-AgE[A-Za-z0-9_-]{50,}", "pypi_token", (), not_after=_TOKEN_EDGE)),
    _rule(
        ("A",),
        Alt(r"AIza[0-9A-Za-z_-]{35}" + _R, "google_api_key", (), not_after=_TOKEN_EDGE),
        Alt(
            r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])",  # key ids; AIDA/AROA... are user/role ids
            "aws_access_key",
            (),
            not_after=_WORD,
        ),
        Alt(
            r"AC[0-9a-f]{32}" + _Q + r"[ \t]{0,8}[,:][ \t]{0,8}" + _Q + r"(?P<twa>[0-9a-f]{32})(?![A-Za-z0-9])",
            "twilio_auth_token",
            ("twa",),
            _random_token,
            not_after=_WORD,
        ),
        prefix=1,
    ),
    _rule(("GOCSPX-",), Alt(r"GOCSPX-[A-Za-z0-9_-]{20,}", "google_oauth_token", (), not_after=_TOKEN_EDGE)),
    _rule(("ya29.",), Alt(r"ya29\.[0-9A-Za-z_-]{20,}", "google_oauth_token", (), not_after=_TOKEN_EDGE)),
    _rule(
        ("S",),
        Alt(r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", "twilio_api_key", (), _random_token, not_after=_WORD),
        Alt(r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}" + _R, "sendgrid_api_key", (), not_after=_TOKEN_EDGE),
        prefix=1,
    ),
    _rule(("npm_",), Alt(r"npm_[A-Za-z0-9]{36}" + _R, "npm_token", (), not_after=_TOKEN_EDGE)),
    _rule(("HRKU-",), Alt(r"HRKU-[A-Za-z0-9_-]{20,}", "heroku_api_key", (), not_after=_TOKEN_EDGE)),
    _rule(("_v1_",), Alt(r"do[opr]_v1_[a-f0-9]{64}" + _R, "digitalocean_token", (), not_after=_TOKEN_EDGE)),
    _rule(
        ("eyJ",),
        Alt(
            r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]+)?" + _R, "jwt", (), not_after=_TOKEN_EDGE
        ),
    ),
    # scheme://user:password@host for any scheme (postgres, mysql, mongodb+srv, redis, amqp, https...).
    _rule(
        ("://",),
        Alt(
            r"://(?<=[A-Za-z0-9]://)(?P<user>[^\s:/?#@\"'\\<>\[\]]*):(?P<v>[^\s/?#\"'\\<>\[\]]+)@(?=[^\s/?#@\"'\\<>])",
            "url_password",
            check=_url_password_check,
        ),
    ),
    _rule(
        ("--",),
        # curl --user user:password
        Alt(r"--user[ \t]+" + _Q + _CURL_CREDENTIAL, "password", ("cv", "cu"), _curl_user_check),
        # --password hunter2 (the --password=hunter2 form is a generic assignment).
        Alt(
            r"--(?i:(?P<kw>password|passwd|pass|token|api-key|apikey|secret|client-secret|access-token"
            r"|auth-token|access-key|secret-key|private-key))[ \t]+" + _VALUE,
            "",
            _VALUE_GROUPS,
            _generic_check,
            _generic_kind,
            not_after=_WORD,
        ),
        prefix=2,
    ),
    # curl -u user:password (but not docker -u 1000:1000).
    _rule(
        ("-u",),
        Alt(
            r"-u[ \t]+" + _Q + _CURL_CREDENTIAL,
            "password",
            ("cv", "cu"),
            check=_curl_user_check,
            not_after=_WORD + "_-",
        ),
    ),
    # Keyed shapes, matched case-insensitively on the lower-cased text.
    _rule(
        ("private_key_id",),
        Alt(r"private_key_id" + _KSEP + r"(?P<v>[a-f0-9]{32,64})(?![a-f0-9])", "gcp_private_key_id"),
        on_lower=True,
    ),
    # Sidekiq Pro/Enterprise gem server credentials: BUNDLE_GEMS__CONTRIBSYS__COM=hex8:hex8 (no secret word).
    _rule(
        ("contribsys",),
        Alt(r"contribsys__com" + _KSEP + r"(?P<v>[a-f0-9]{8}:[a-f0-9]{8})(?![a-f0-9])", "sidekiq_secret"),
        on_lower=True,
    ),
    _rule(
        ("bearer", "basic"),
        Alt(
            r"bearer[ \t]+(?P<bt>[a-z0-9._~+/-]+=*)(?![a-z0-9._~+/=-])",
            "bearer_token",
            ("bt",),
            _bearer_check,
            not_after=_WORD + "_",
        ),
        Alt(
            r"basic[ \t]+(?P<ba>[a-z0-9+/]{6,}={0,2})(?![a-z0-9+/=])",
            "basic_auth",
            ("ba",),
            _basic_auth_check,
            not_after=_WORD + "_",
        ),
        on_lower=True,
        prefix=1,
    ),
    # mysql -psecret
    _rule(
        ("mysql",),
        Alt(
            r"mysql(?:dump|admin)?\b[^\n|;&]*?[ \t]-p(?P<v>[^\s\"'\\-][^\s\"'\\]*)",
            "password",
            check=_mysql_check,
            not_after=_WORD + "_",
        ),
        on_lower=True,
    ),
    _generic(r"p(?:ass(?:word|wd|phrase|(?<![a-z]pass))|wd(?<![a-z]pwd))", "p"),
    _generic(r"key(?:" + _KEY_BEHIND + r")", "key"),
    _generic(r"secret", "secret"),
    _generic(r"token", "token"),
    _generic(r"credentials?", "credential"),
    _rule(
        ("authorization",),
        # Authorization: token abc... (GitHub, Django REST framework)
        Alt(
            r"authorization" + _KSEP + r"[ \t]{0,8}token[ \t]+(?P<atk>[a-z0-9._~+/-]+=*)(?![a-z0-9._~+/=-])",
            "bearer_token",
            ("atk",),
            _bearer_check,
        ),
        _generic_alt(r"authorization"),
        on_lower=True,
        prefix=len("authorization"),
    ),
)
