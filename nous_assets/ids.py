"""Deterministic ids for learnings: the same extraction always lands on the same learning id.

The spec keys a learning by ``sha256(project_id:session_id:learning_index:extractor_version)`` and
derives its id from that key (uuid5), so re-runs, backfills and legacy imports agree without a lookup.
These sit below the store and every producer (``capture/legacy``, ``extract/``, the benchmarks' corpus),
so none of them imports another package to name a learning.
"""

from __future__ import annotations

import hashlib
import uuid

NAMESPACE = uuid.UUID("6b3c2a9e-9f7d-4c1b-8a55-0d4e6f1a2b3c")


def learning_index(anchor_uuid: str, kind: str, ordinal: int = 0) -> int:
    """A stable per-session index for a learning.

    Sessions grow while they are ingested, so ``enumerate()`` positions would shift between
    reads; deriving the index from the record the learning rests on keeps the spec's
    ``sha256(project_id:session_id:learning_index:extractor_version)`` key stable.
    """
    digest = hashlib.sha256(f"{anchor_uuid}:{kind}:{ordinal}".encode()).hexdigest()
    return int(digest[:12], 16)


def idempotency_key(project_id: str, session_id: str, index: int, extractor_version: str) -> str:
    return hashlib.sha256(f"{project_id}:{session_id}:{index}:{extractor_version}".encode()).hexdigest()


def learning_id_for(key: str) -> str:
    """Deterministic learning ids make re-runs land on the same learning everywhere."""
    return str(uuid.uuid5(NAMESPACE, key))
