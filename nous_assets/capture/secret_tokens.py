"""Token-level secret detection: every long token of a text is judged by its prefix, shape and context.

Why: pattern rules (:mod:`nous_assets.capture.redact`) find secrets whose *frame* they know (``NAME=…``,
``Bearer …``, ``postgres://user:…@``). A tester's corpus built from gitleaks' catalogue showed the rest:
a key pasted in prose ("here is the sentry token 3f9c…"), ``HEROKU_KEY=…`` in a ``.env`` dump, a token
format nobody listed. This pass looks at the tokens themselves:

1. a known credential **prefix** (:data:`~nous_assets.capture.secret_catalogue.PREFIXES`) is a secret;
2. a **random-looking** token (long, letters and digits interleaved, high Shannon entropy) is a secret
   wherever it stands, unless it is a known id format, a hash in hash context, part of a URL or a path;
3. a **weak-shaped** token (hex, UUID, long digits, letters-only base64, short random) is a secret only in
   secret **context**: a secret word (key, token, password…) or a provider name next to it;
4. Yelp's ``detect-secrets`` (the maintained ``bc-detect-secrets`` fork) runs its provider detectors over
   every line that holds a suspicious token, as a second opinion with its own patterns.

Why these thresholds: git SHAs, UUIDs, digests and ids are hex or structured, identifiers and versions are
words and numbers joined by separators, and base64 blobs come with a ``base64,`` or digest context; a
credential is a long run where letters and digits alternate at random. The real shared transcripts (tens of
MB of code, logs and tool output) are the false-positive check: see ``tests/capture/test_redact_corpus.py``.

Speed: one regex pass finds candidate tokens; most are rejected by cheap character counts before any
entropy or context work, and the library only sees the few lines that still look suspicious.
"""

from __future__ import annotations

import importlib
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from functools import lru_cache

from nous_assets.capture.secret_catalogue import (
    ID_PREFIXES,
    NOT_SECRET_QUALIFIERS,
    PREFIXES,
    PROVIDERS,
    SECRET_WORDS,
    STRONG_SECRET_WORDS,
    prefix_kind,
)

__all__ = ["Span", "find_secret_tokens", "is_random_token", "secret_context"]

Span = tuple[int, int, str]  # start, end, kind

# Token characters: base64 (+ / =), url-safe base64 (- _), dots, colons and tildes. Quotes, blanks, "@",
# brackets and backslashes (JSON escapes) end a token.
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/=~.:-")
_T = "[A-Za-z0-9_+/=~.:-]"
# Candidate tokens: runs of 10+ token characters. Most are words, paths and numbers, ruled out by a
# C-speed test of what every detector needs (see _interesting) before any other work.
_TOKEN = re.compile(rf"{_T}{{10,}}")
_SEPARATORS = re.compile(r"[-_./+=~:]+")
_HEX = re.compile(r"(?:0x)?[0-9a-fA-F]+")
_HEXISH = re.compile(r"(?:0x)?[0-9a-fA-F]+(?:[-_.:]+[0-9a-fA-F]+)*")  # hex with separators: UUIDs, MACs, ranges
_DIGITS = re.compile(r"\d+")
_HEX_RANGE = re.compile(r"[0-9a-f]{7,40}\.\.\.?[0-9a-f]{7,40}")
_NAME = re.compile(r"[A-Za-z0-9_]*[A-Za-z_][A-Za-z0-9_.-]*[A-Za-z0-9_]")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_PLACEHOLDER = re.compile(r"(?i)x{4}|example|your|dummy|placeholder|redacted|sample|changeme|\*{3}")
_HASH_CONTEXT = re.compile(
    r"(?i)(?:sha(?:1|224|256|384|512)|md5|blake2?b?|h1|integrity|digest|checksum|hash|etag|commit|revision|rev"
    r"|base64|nonce|salt|fingerprint|oid|sri|csrf\W?token|signature|cid)\W{0,6}(?:W/\W{0,2})?\Z"
)
_WORD_SEGMENT = re.compile(r"[A-Z]?[a-z]{2,}|[A-Z]{3,}")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_CONSONANTS = re.compile(r"[bcdfghjklmnpqrstvwxzBCDFGHJKLMNPQRSTVWXZ]{4}")  # unlikely inside a real word
_CAMEL_WORD = re.compile(r"[A-Z][a-z]{2,}|^[a-z]{2,}(?=[A-Z])")
_FILE_NAME = re.compile(r"\.(?:[a-z]{1,4}|json|yaml|toml|html|scss|tsx|jsx)(?::\d+){0,2}\Z")
_AZURE_AD_SECRET = re.compile(r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}")
# Formats told by their structure or a marker in the middle rather than by a prefix of their own.
_INFIX_FORMATS = (
    (_AZURE_AD_SECRET, "azure_ad_client_secret"),  # 3 characters, a digit, "Q~", 31-34 more
    (re.compile(r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"), "airtable_token"),
    (re.compile(r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9=_-]{60,70}"), "terraform_token"),
    (re.compile(r"[ps]at\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"), "harness_token"),
    (re.compile(r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk"), "maxmind_license_key"),
    (re.compile(r"sk-[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}"), "openai_api_key"),  # "OpenAI" in base64
    (
        re.compile(r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}"
                   r"\.[A-Za-z0-9+/_=-]{30,120}"),
        "authress_access_key",
    ),
)  # fmt: skip
_INFIX_MARKERS = (".", "Q~", "_mmk", "T3BlbkFJ")  # one of these is in every infix format
_BOUNDARY = re.compile(r"[/=.:@-](?=[A-Za-z0-9_])")  # where a prefixed token may start inside a longer one
_HEX_BODY_KINDS = frozenset({"mailgun_api_key", "lob_api_key"})  # key-/pubkey-, test_/live_: hex bodies only
_RANDOM_BODY_KINDS = frozenset({"freemius_secret_key", "clickhouse_api_key"})
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d")
_BLOB = 200  # longer runs without a known prefix are data (signatures, images, compressed state), not keys
_NO_DIGITS = str.maketrans("", "", "0123456789")
_LETTERS = str.maketrans("", "", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_ALNUM = str.maketrans("", "", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_SWITCH = re.compile(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")
_CASE_FLIP = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[a-z])")
_PREPOSITIONS = frozenset("for to by with from on in at of into".split())
_LEFT_WINDOW = 48
_RIGHT_WINDOW = 40
_CACHE_BELOW = 256
# NAME = value and its variants (the generic rules' separators): a declared type (``xKey string =``), Makefile
# and PHP operators, ``"NAME", "value"``.
_ASSIGNED = re.compile(
    r"(::)?([A-Za-z_][\w.-]*)(?:\\?[\"'][ \t]*,|\\?[\"']?(?::?[ \t]+(?:string|String|str|&str|\[\]byte))?[ \t]*"
    r"(?:=>|:::?=|:=|\?\??=|\|\|=|\.=|=|:))[ \t]*\\?[\"'`]?\Z"
)
_ASSIGN = re.compile(r"[=:]")
_LETTER_RUN = re.compile(r"[A-Za-z]{2}")
_CAMEL_NAME = re.compile(r"[a-z]+(?:[A-Z][a-z0-9]+)+")
_HTML_ATTRIBUTE = re.compile(r"\s([A-Za-z][\w:-]*)=\\*[\"']\Z")
_QUERY_NAME = re.compile(r"[?&;]([A-Za-z0-9_.-]{1,40})=\Z")
_PATH_START = re.compile(r"(?:^|[\s\"'`(=])(?:~|\.{1,2})?/\Z")
_PREFIX_TUPLE = tuple(PREFIXES)
_PREFIX_HEADS = frozenset(p[:2] for p in PREFIXES)
# Character classes of a token (a: lower, A: upper, 0: digit, .: separator), for the cheap first test.
_CLASSES = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+/=~.:-", "a" * 26 + "A" * 26 + "0" * 10 + "." * 8
)
_LIBRARY_WINDOW = 160


def _entropy(data: str) -> float:
    """Shannon entropy in bits per character (the measure detect-secrets and gitleaks use)."""
    n = len(data)
    return -sum(k / n * math.log2(k / n) for k in Counter(data).values())


def _count(token: str, drop: dict[int, None]) -> int:
    """How many characters of ``token`` the translation table ``drop`` deletes (C speed)."""
    return len(token) - len(token.translate(drop))


def _transitions(segment: str) -> int:
    """How often adjacent characters switch between letter and digit (random tokens switch often)."""
    return len(_SWITCH.findall(segment))


def _identifier_like(token: str) -> bool:
    """Words joined by separators or case (``SECP256K1_PRIVATE_KEY_SIZE``, ``Co-Authored-By``, paths)."""
    parts = [p for p in _SEPARATORS.split(token) if p]
    words = sum(len(p) if _WORD_SEGMENT.fullmatch(p) and _VOWEL.search(p) else _camel_letters(p) for p in parts)
    return (len(parts) >= 2 and words * 2 >= sum(len(p) for p in parts)) or _TIMESTAMP.search(token) is not None


def _hex_with_words(token: str) -> bool:
    """A hex head followed by words and numbers (``ebc9…:refs/pull/1/merge``): a commit, not a key.

    (Words *before* hex are a provider's prefix: ``live_pub_880a…`` is a credential.)"""
    parts = [p for p in _SEPARATORS.split(token) if p]
    return (
        len(parts) > 1
        and _HEX.fullmatch(parts[0]) is not None
        and not parts[0].isdigit()
        and all(p.isalpha() or p.isdigit() for p in parts[1:])
    )


def _camel_letters(part: str) -> int:
    """How many letters of ``part`` belong to camelCase words with a vowel (``randomPrivateKey``: all)."""
    return sum(len(w) for w in _CAMEL_WORD.findall(part) if _VOWEL.search(w) and not _CONSONANTS.search(w))


def _camel_case(token: str) -> bool:
    """Letters that read as camelCase words (``getOwnPropertyNames``, ``rootIpnsPublicKey``)."""
    letters = _count(token, _LETTERS)
    camel = sum(_camel_letters(part) for part in _SEPARATORS.split(token))
    return letters > 0 and camel >= 0.6 * letters


def _mixed_segment(token: str, length: int) -> bool:
    """Whether some separator-free run of ``length``+ characters mixes letters and digits."""
    return any(len(p) >= length and not p.isdigit() and not p.isalpha() for p in _SEPARATORS.split(token))


def _case_changes(segment: str) -> int:
    """How often adjacent letters switch case (camelCase switches about once a word, base62 every other)."""
    return len(_CASE_FLIP.findall(segment))


def is_random_token(token: str) -> bool:
    """A token that is random enough to be a credential on its own, without any context.

    Needs 16+ letters and digits, a run of 12+ without separators in which letters and digits (or upper
    and lower case) alternate often, and high entropy; pure hex (hashes, ids) never qualifies on its own.
    """
    alnum = _count(token, _ALNUM)
    if alnum < 16 or alnum > _BLOB or _identifier_like(token):
        return False
    segment = max(_SEPARATORS.split(token), key=len)
    if len(segment) < 12 or _HEX.fullmatch(segment) or segment.isdigit():
        return False
    digits = _count(segment, _NO_DIGITS)
    # base62 letters: case flips at random, far more often than in camelCase
    flips = len(segment) >= 20 and _case_changes(segment) >= 0.45 * len(segment) and _entropy(token) >= 3.8
    if digits < 2 or len(segment) - digits < 4:
        return flips
    if _transitions(segment) < max(4, len(segment) // 7):
        return flips
    return _entropy(token) >= (3.3 if len(token) < 24 else 3.6)


def _weak_shape(token: str) -> bool:
    """A value that is a credential only when its context says so (hex, UUID, digits, base64 letters)."""
    alnum = _count(token, _ALNUM)
    if alnum < 10 or alnum > _BLOB or _PLACEHOLDER.search(token):
        return False
    if token.isdigit():
        return len(token) >= 12
    if _HEXISH.fullmatch(token):
        return alnum >= 16 and not _DIGITS.fullmatch(_SEPARATORS.sub("", token))
    if _hex_with_words(token) or _HEX_RANGE.fullmatch(token):
        return False  # commits: <sha>:refs/heads/main, <sha>..<sha>
    if _identifier_like(token):
        return False
    letters = _count(token, _LETTERS)
    joined = _SEPARATORS.sub("", token)
    if letters >= 10 and _case_changes(joined) >= 0.4 * letters and _entropy(token) >= 3.4:
        return not _camel_case(token)  # base64 letters whose case flips at random, unlike identifiers
    digits = alnum - letters
    if digits == 1 and letters >= 10 and not joined.islower() and not joined.isupper():
        return not _camel_case(token) and _entropy(token) >= 3.3  # base62 with a single digit
    if digits < 2 or letters < 2 or not _mixed_segment(token, 8):
        return False
    return _transitions(joined) >= max(3, len(joined) // 10) and _entropy(token) >= 3.0


def _words(text: str) -> list[str]:
    """Lower-case words of ``text``, camelCase and snake_case split (``adafruitToken`` -> adafruit, token)."""
    return [w.lower() for w in _WORDS.findall(text)]


def _has_secret_word(words: list[str], strong: bool = False, providers: bool = True) -> bool:
    """Whether ``words`` name a credential: a secret word (only the strong ones if ``strong``) or, if
    ``providers``, a provider name."""
    vocabulary = STRONG_SECRET_WORDS if strong else SECRET_WORDS
    if "public" in words or "publishable" in words:
        return False  # publicKeyToken, a publishable key: meant to be seen
    if providers and any(a + b in PROVIDERS for a, b in zip(words, words[1:], strict=False)):
        return True  # MessageBirdClientID: message + bird
    for i, w in enumerate(words):
        hit = w in vocabulary or (providers and w in PROVIDERS) or w.endswith(("token", "secret", "password", "apikey"))
        if hit and not (i > 0 and words[i - 1] in NOT_SECRET_QUALIFIERS) and w not in NOT_SECRET_QUALIFIERS:
            if w in ("key", "api") and i + 1 < len(words) and words[i + 1] in ("id", "version", "name", "url"):
                continue  # KEY_ID, api_version, API_URL
            return True
    return False


def _line_start(text: str, start: int) -> int:
    """Start of the line holding ``start`` (a JSON-escaped ``\\n`` in a raw transcript line counts too)."""
    lo = max(0, start - _LEFT_WINDOW)
    return max(text.rfind("\n", lo, start) + 1, text.rfind("\\n", lo, start) + 2, lo)


def secret_context(text: str, start: int, end: int, strong: bool = False) -> bool:
    """Whether a secret word or a provider name stands next to ``text[start:end]``.

    A value assigned to a name (``"uuid": "…"``, ``HEROKU_KEY=…``, ``content="…"``) is judged by that name
    alone; otherwise by the words before it on its line (or the line above, when it starts a line) and the
    provider names just after it. ``strong`` asks for the words that name a credential outright (key,
    token, password...), for values such as UUIDs that are ordinary ids next to weaker words like "auth".
    """
    assigned = _ASSIGNED.search(text, max(0, start - 64), start)
    if assigned is not None:
        return assigned.group(1) is None and _has_secret_word(_words(assigned.group(2)), strong)
    line_start = _line_start(text, start)
    if not text[line_start:start].strip():  # the value starts its line: <apiToken>\n    value
        line_start = _line_start(text, max(line_start - 2, 0))
    left = text[max(line_start, start - _LEFT_WINDOW) : start]
    line_end = text.find("\n", end, end + _RIGHT_WINDOW)
    right = text[end : line_end if line_end >= 0 else end + _RIGHT_WINDOW]
    if _has_secret_word(_words(left), strong, providers=not strong):
        return True
    after = _words(right)  # "use … for heroku", "… gets rejected by sentry"
    return any(w in PROVIDERS and after[i - 1] in _PREPOSITIONS for i, w in enumerate(after) if i)


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Drop sentence punctuation and separators around a token (``token.``, ``-flag``), and the letter of
    a JSON escape before it (``\\nabc123`` in a raw transcript line starts at ``abc123``)."""
    if start > 0 and text[start - 1] == "\\" and text[start] in "nrtbfu":
        start += 1
    while start < end and text[start] in ".-=/+_:":
        start += 1
    while end > start and text[end - 1] in ".-/~_:":
        end -= 1
    return start, end


def _name_split(token: str) -> int:
    """Offset of the value in ``NAME=value`` or ``name:value`` inside one token (0 when there is no name)."""
    m = _ASSIGN.search(token)
    if m is None:
        return 0
    eq = m.start()
    if eq <= 1 or eq == len(token) - 1 or token[eq + 1] in "=:/":
        return 0
    name = token[:eq]
    if not _NAME.fullmatch(name) or _HEX.fullmatch(name) or _transitions(name) > 3 or not _LETTER_RUN.search(name):
        return 0
    if is_random_token(name) or _weak_shape(name):
        return 0
    # A name is an identifier with a separator or one case (MY_KEY, apiKey, token); base64 rarely is.
    if "_" in name or name.isupper() or name.islower() or _CAMEL_NAME.fullmatch(name) or _has_secret_word(_words(name)):
        return eq + 1
    return 0


def _wordy(body: str) -> bool:
    """A prefix body that is made of words (``secret_manager_access``) is an identifier, not a token."""
    return not any(c.isdigit() for c in body) and (body.islower() or body.isupper()) and "_" in body


@lru_cache(maxsize=65536)
def _judge(token: str) -> tuple[str, bool] | None:
    """``(kind, certain)`` for ``token`` by its prefix and shape alone; certain tokens need no context."""
    hit = prefix_kind(token) if token.startswith(_PREFIX_TUPLE) else None
    if hit is not None:
        kind, n = hit
        body = token[n:]
        if _PLACEHOLDER.search(body) or _wordy(body) or (len(set(body)) < 6 and kind != "age_secret_key"):
            return None  # (an all-zero age key, AGE-SECRET-KEY-1QQQ…, is still a key: the prefix says so)
        loose = (kind in _HEX_BODY_KINDS and not _HEX.fullmatch(body)) or (
            kind in _RANDOM_BODY_KINDS and (_HEX.fullmatch(body) or _identifier_like(body) or _camel_case(body))
        )  # loose prefixes (key-, live_, sk_, 4b1d) need their body's shape; others still judge the token below
        if not loose:
            return kind, True
    for pattern, kind in _INFIX_FORMATS:
        if pattern.fullmatch(token):
            return kind, True
    if _FILE_NAME.search(token):
        return None  # chunk-36jrqfj4.js:2322, report-3f9a.html
    if token.startswith(ID_PREFIXES) or (token.startswith("eyJ") and "." not in token):
        return None  # public id formats; a lone base64 JSON header ({"alg":...}) is not a token
    if _sequential(token):
        return None  # 0123456789abcdef…, ABCDEFGH…: a stub (detect-secrets' heuristic)
    if is_random_token(token):
        return "high_entropy_secret", True
    if _weak_shape(token):
        return "secret", False
    return None


def _html_attribute(text: str, start: int) -> str | None:
    """The attribute name when ``text[start:]`` is the value of an HTML attribute (``<div id="…"``)."""
    m = _HTML_ATTRIBUTE.search(text, max(0, start - 60), start)
    if m is None:
        return None
    tag = text.rfind("<", max(0, start - 4000), m.start())
    if tag < 0 or not text[tag + 1 : tag + 2].isalpha() or text.find(">", tag, m.start()) >= 0:
        return None
    return m.group(1)


def _in_url(text: str, start: int) -> bool:
    """Whether the token is part of a URL: its blank-delimited word (up to 300 characters back) has ``://``."""
    lo = max(0, start - 300)
    word = max(text.rfind(" ", lo, start), text.rfind("\n", lo, start), text.rfind("\t", lo, start), lo - 1) + 1
    return text.find("://", word, start) >= 0 or text.startswith("www.", word)


def _in_public_pem(text: str, start: int) -> bool:
    """Inside a PEM block that is not a private key (a certificate or public key: meant to be shared)."""
    begin = text.rfind("-----BEGIN ", max(0, start - 8000), start)
    return begin >= 0 and text.find("-----END", begin, start) < 0 and "PRIVATE" not in text[begin : begin + 60]


def _in_data_context(text: str, start: int) -> bool:
    """Digests, data URIs, paths and certificates: places where random-looking text is not a credential."""
    left = text[max(0, start - 24) : start]
    return _HASH_CONTEXT.search(left) is not None or _PATH_START.search(left) is not None or _in_public_pem(
        text, start
    )


def _excluded_by_position(text: str, start: int, end: int) -> bool:
    """Hashes in hash context, URLs (but for secret-named query values), paths and data are no credentials."""
    left = text[max(0, start - 24) : start]
    if _in_data_context(text, start):
        return True
    attribute = _html_attribute(text, start)
    if attribute is not None:  # <tag attr="value">: only secret-named attributes hold credentials
        return not _has_secret_word(_words(attribute))
    if _in_url(text, start):
        query = _QUERY_NAME.search(left)
        return query is None or not _has_secret_word(_words(query.group(1)))
    return False


def _interesting(token: str) -> bool:
    """Can the token pass any detector? Each needs letter/digit switches, case humps (base64 letters), a
    12-digit number or a UUID shape; counted on the token's class string at C speed."""
    c = token.translate(_CLASSES)
    if c.count("a0") + c.count("0a") + c.count("A0") + c.count("0A") >= 2 or c.count("aA") >= 3:
        return True
    return "000000000000" in c or (c.count(".") >= 4 and "0000" in c)


def _has_known_prefix(text: str, start: int, end: int) -> bool:
    """Whether the token, or the value of a ``NAME=value`` token, starts with a credential prefix."""
    if text[start : start + 2] in _PREFIX_HEADS and text.startswith(_PREFIX_TUPLE, start, end):
        return True
    eq = text.find("=", start, end) + 1  # NAME=value: the value may carry a known prefix
    return eq > 0 and text[eq : eq + 2] in _PREFIX_HEADS and text.startswith(_PREFIX_TUPLE, eq, end)


def _embedded(text: str, start: int, end: int) -> Span | None:
    """A prefixed token inside a longer one: a branch (``fix/ghp_…``), a folder (``backup-AKIA…``), a path.

    Why: git branches, working directories and file names are stored as metadata, and a token pasted into
    one is no less a credential. The part from the prefix to the next ``/`` (or the end) must be that
    provider's token by :func:`_judge`, with a body that does not read as words (``foo-API-DOCS-GENERATOR``)."""
    token = text[start:end]
    infix = any(marker in token for marker in _INFIX_MARKERS)
    for m in _BOUNDARY.finditer(text, start, end):
        pos = m.end()
        if infix:
            for pattern, kind in _INFIX_FORMATS:
                found = pattern.match(text, pos, end)
                if found is not None and (found.end() == end or text[found.end()] == "/"):
                    return pos, found.end(), kind
        if text[pos : pos + 2] not in _PREFIX_HEADS or not text.startswith(_PREFIX_TUPLE, pos, end):
            continue
        stop = text.find("/", pos, end)
        for e in (stop, end) if stop >= 0 else (end,):  # a base64 body may hold "/" itself
            while e > pos and text[e - 1] in ".:~":
                e -= 1
            hit = prefix_kind(text[pos:e])
            if hit is None or _all_words(text[pos + hit[1] : e]) or _FILE_NAME.search(text, pos, e):
                continue  # (models/hf_ggml-org_…-Q8_0.gguf is a file a library named after its source)
            verdict = _judge(text[pos:e])
            if verdict is not None and verdict[1] and verdict[0] != "high_entropy_secret":
                return pos, e, verdict[0]
    return None


def _all_words(body: str) -> bool:
    """Every part of ``body`` is a word, a number or a letter or two (``DOCUMENTATION-GENERATOR-V2``)."""
    return all(
        len(p) <= 2 or p.isdigit() or (_WORD_SEGMENT.fullmatch(p) is not None and _VOWEL.search(p) is not None)
        for p in _SEPARATORS.split(body)
    )


def _scan(text: str) -> tuple[list[Span], list[tuple[int, int]]]:
    """Spans to redact, and the spans of tokens still suspicious (for the library's second opinion)."""
    spans: list[Span] = []
    suspicious: list[tuple[int, int]] = []
    for m in _TOKEN.finditer(text):
        start, end = m.span()
        if not _interesting(m.group()) and not _has_known_prefix(text, start, end):
            continue  # what every detector needs is missing: most words, paths and numbers stop here
        start, end = _trim(text, start, end)
        if end - start < 10:
            continue
        token = text[start:end]
        if "://" in token:
            suspicious.append((start, end))  # a URL is judged by the library's URL-shaped credentials
            continue
        inner = None if token.startswith(_PREFIX_TUPLE) and prefix_kind(token) else _embedded(text, start, end)
        if inner is not None:
            spans.append(inner)
            continue
        offset = 0 if token.startswith(_PREFIX_TUPLE) and prefix_kind(token) else _name_split(token)
        if offset:
            start += offset
            token = text[start:end]
            if end - start < 10:
                continue
        verdict = _judge(token)
        if verdict is None:
            continue
        kind, certain = verdict
        if kind != "high_entropy_secret" and certain:
            spans.append((start, end, kind))
            continue
        if _excluded_by_position(text, start, end):
            suspicious.append((start, end))  # URLs and the like: the library knows some credential URLs
            continue
        if certain or secret_context(text, start, end, strong=_HEXISH.fullmatch(token) is not None):
            spans.append((start, end, kind))
        else:
            suspicious.append((start, end))
    return spans, suspicious


# -- detect-secrets -----------------------------------------------------------------------------------------
# detect-secrets' provider detectors we consult, with the kind their findings get. Its keyword, entropy,
# private-key and basic-auth plugins are left out: our own rules cover those with stricter stub checks.
_LIBRARY_PLUGINS = (
    ("aws", "AWSKeyDetector", "aws_access_key"),
    ("artifactory", "ArtifactoryDetector", "artifactory_token"),
    ("azure_storage_key", "AzureStorageKeyDetector", "azure_storage_key"),
    ("cloudant", "CloudantDetector", "cloudant_credential"),
    ("discord", "DiscordBotTokenDetector", "discord_bot_token"),
    ("github_token", "GitHubTokenDetector", "github_token"),
    ("ibm_cloud_iam", "IbmCloudIamDetector", "ibm_cloud_iam_key"),
    ("ibm_cos_hmac", "IbmCosHmacDetector", "ibm_cos_hmac_key"),
    ("jwt", "JwtTokenDetector", "jwt"),
    ("mailchimp", "MailchimpDetector", "mailchimp_api_key"),
    ("npm", "NpmDetector", "npm_token"),
    ("sendgrid", "SendGridDetector", "sendgrid_api_key"),
    ("slack", "SlackDetector", "slack_token"),
    ("softlayer", "SoftlayerDetector", "softlayer_api_key"),
    ("square_oauth", "SquareOAuthDetector", "square_token"),
    ("stripe", "StripeDetector", "stripe_key"),
    ("twilio", "TwilioKeyDetector", "twilio_api_key"),
)


def _sequential(token: str) -> bool:
    """detect-secrets' test for keyboard/alphabet runs, on the token without separators."""
    from detect_secrets.filters.heuristic import is_sequential_string

    return is_sequential_string(_SEPARATORS.sub("", token))


@lru_cache(maxsize=1)
def _library_detectors() -> tuple[tuple[str, Callable[[str], Iterable[str]]], ...]:
    """(kind, analyze_string) of each detector; imported on first use (detect-secrets takes ~0.1 s)."""
    out = []
    for module, cls, kind in _LIBRARY_PLUGINS:
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls)()
        out.append((kind, plugin.analyze_string))
    return tuple(out)


def _library_spans(text: str, suspicious: list[tuple[int, int]]) -> list[Span]:
    """Run detect-secrets' detectors around each suspicious token (its line, at most 160 characters each
    side: minified one-line files would otherwise cost a full scan per token); spans of what they find."""
    spans: list[Span] = []
    done_until = -1
    for start, end in suspicious:
        if start < done_until:
            continue
        lo = max(text.rfind("\n", max(0, start - _LIBRARY_WINDOW), start) + 1, start - _LIBRARY_WINDOW, 0)
        hi = text.find("\n", end, end + _LIBRARY_WINDOW)
        hi = hi if hi >= 0 else min(len(text), end + _LIBRARY_WINDOW)
        done_until = hi
        window = text[lo:hi]
        for kind, analyze in _library_detectors():
            for found in analyze(window):
                if len(found) < 10 or _PLACEHOLDER.search(found):
                    continue
                at = window.find(found)
                while at >= 0:
                    a, b = lo + at, lo + at + len(found)
                    if not _in_blob(text, a, b) and not _in_data_context(text, _token_start(text, a)):
                        spans.append((a, b, kind))  # its patterns carry their own context (URLs too)
                    at = window.find(found, at + len(found))
    return spans


def _token_start(text: str, start: int) -> int:
    """Where the run of token characters holding ``start`` begins (at most :data:`_BLOB` back)."""
    left = start
    while left > 0 and text[left - 1] in _TOKEN_CHARS and start - left <= _BLOB:
        left -= 1
    return left


def _in_blob(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` lies inside a run of token characters longer than :data:`_BLOB`."""
    left, right = start, end
    while left > 0 and text[left - 1] in _TOKEN_CHARS and start - left <= _BLOB:
        left -= 1
    while right < len(text) and text[right] in _TOKEN_CHARS and right - end <= _BLOB:
        right += 1
    return right - left > _BLOB


def _find(text: str) -> list[Span]:
    spans, suspicious = _scan(text)
    if suspicious:
        spans.extend(_library_spans(text, suspicious))
    return spans


@lru_cache(maxsize=8192)
def _find_cached(text: str) -> tuple[Span, ...]:
    return tuple(_find(text))


def find_secret_tokens(text: str) -> list[Span]:
    """Non-overlapping ``(start, end, kind)`` spans of the secret tokens in ``text``, in order."""
    if len(text) < 10:
        return []
    found = list(_find_cached(text)) if len(text) < _CACHE_BELOW else _find(text)
    found.sort(key=lambda s: (s[0], -s[1]))
    out: list[Span] = []
    for span in found:
        if out and span[0] < out[-1][1]:
            continue
        out.append(span)
    return out
