"""The packet build's view of Claude Code's own memory: what a project's sessions already load, so a packet
never repeats it (:func:`nous_assets.retrieve.packet.format_packet`'s ``native``).

Read in the pipeline when packets are built, never in the hook: the project's checkout on this machine (the
one :mod:`~nous_assets.retrieve.stale_check` checks citations against) is read with
:func:`nous_assets.capture.native_memory.read_native` — its CLAUDE.md chain with ``@`` imports and the loaded
part of its ``MEMORY.md``. A project with no checkout here, and the global packet, have nothing to compare with.
When what those files say changes, the project's packets are rebuilt (:func:`changed`: a digest per project in
``nous_meta``), even though no memory changed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping

from nous_assets.capture.native_memory import NativeMemory, read_native
from nous_assets.retrieve.citations import checkout_root
from nous_assets.settings import Settings
from nous_assets.store import meta
from nous_assets.store.db import Connection
from nous_assets.store.projection import identity

GLOBAL = "*"
DIGEST_KEY = "native_memory_digest:"


def native_for(
    conn: Connection, settings: Settings, project_id: str, env: Mapping[str, str] | None = None
) -> NativeMemory | None:
    """What Claude Code loads for ``project_id``'s checkout on this machine; None without one (or globally)."""
    if project_id == GLOBAL:
        return None
    root = checkout_root(identity.cwds_of(conn, project_id))
    if root is None:
        return None
    return read_native(root, config_dir=settings.claude_config_dir, env=os.environ if env is None else env)


def digest(native: NativeMemory | None) -> str:
    return native.digest() if native is not None else "-"


def changed(conn: Connection, project_id: str, native: NativeMemory | None) -> bool:
    """Whether what Claude Code loads for the project changed since its packets were last built (False the first
    time a project is seen with nothing loaded: there is nothing to take out)."""
    before = meta.get(conn, _digest_key(project_id))
    return (before or "-") != digest(native)


def record(conn: Connection, project_id: str, native: NativeMemory | None) -> None:
    """Remember what the project's packets were built against (written with its packets)."""
    meta.put(conn, _digest_key(project_id), digest(native))


def _digest_key(project_id: str) -> str:
    """The ``nous_meta`` key for a project: its id hashed, since a project id stored before redaction may carry
    a secret from the folder name, and ``nous redact --rescan`` rewrites values, not keys."""
    return DIGEST_KEY + hashlib.blake2b(project_id.encode("utf-8"), digest_size=8).hexdigest()
