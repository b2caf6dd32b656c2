"""Bearer tokens per client: random, shown once, stored as a salted digest.

A token reads ``nous_<token_id>.<secret>``: ``token_id`` (public, 12 hex digits) finds the stored row,
``secret`` (32 random bytes, URL-safe base64) is checked against ``HMAC-SHA256(salt, secret)`` in constant
time. Neither the token nor the secret is stored or logged, so a copy of the database grants nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from nous_assets.store.sqlite.service_store import ServiceStore, TokenRecord
from nous_assets.timeutil import now_iso

PREFIX = "nous_"
SCOPES = ("client", "ops")
_TOKEN = re.compile(r"^nous_([0-9a-f]{12})\.([A-Za-z0-9_-]{20,100})$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")


@dataclass(frozen=True)
class Principal:
    """Who a valid token speaks for: one client of one tenant, with its scopes."""

    token_id: str
    tenant_id: str
    client_id: str
    scopes: tuple[str, ...]


def check_name(kind: str, value: str) -> str:
    """Client and tenant names: letters, digits and ``._@-``, at most 128 characters."""
    if not _NAME.match(value or ""):
        raise ValueError(f"{kind} {value!r} must be 1-128 letters, digits or . _ @ - (starting with a letter or digit)")
    return value


def _digest(salt: str, secret: str) -> str:
    return hmac.new(bytes.fromhex(salt), secret.encode(), hashlib.sha256).hexdigest()


def create(store: ServiceStore, *, client_id: str, tenant_id: str, scopes: tuple[str, ...] = ("client",)) -> str:
    """Make, store (hashed) and return a new token; the caller shows it once."""
    check_name("client", client_id)
    check_name("tenant", tenant_id)
    unknown = set(scopes) - set(SCOPES)
    if unknown:
        raise ValueError(f"unknown token scope(s) {sorted(unknown)}; known: {', '.join(SCOPES)}")
    token_id, secret, salt = secrets.token_hex(6), secrets.token_urlsafe(32), secrets.token_hex(16)
    store.add_token(TokenRecord(token_id, tenant_id, client_id, tuple(scopes), salt, _digest(salt, secret), now_iso()))
    return f"{PREFIX}{token_id}.{secret}"


def verify(store: ServiceStore, token: str) -> Principal | None:
    """The principal of a live, matching token; None for anything else (malformed, unknown, revoked, wrong)."""
    match = _TOKEN.match(token or "")
    if match is None:
        return None
    record = store.find_token(match.group(1))
    if record is None or record.revoked_at is not None:
        return None
    if not hmac.compare_digest(record.digest, _digest(record.salt, match.group(2))):
        return None
    return Principal(record.token_id, record.tenant_id, record.client_id, record.scopes)


def token_id_of(token: str) -> str | None:
    """The public half of a token (for messages); never the secret."""
    match = _TOKEN.match(token or "")
    return match.group(1) if match else None
