"""The tenant packet builder on its own, over any ``EventStore``/``CacheStore`` (here a second ``cortex.db`` as
the tenant, so no server is needed): a project whose memories are gone is emptied in the tenant's cache, and
a mirror folder never leaves the mirrors folder whatever the tenant id."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))  # eventgen: the shared event builders

from eventgen import extracted, lifecycle  # noqa: E402

from nous_assets.settings import load_settings  # noqa: E402
from nous_assets.store.backend import sqlite_backend  # noqa: E402
from nous_assets.store.db import open_db  # noqa: E402
from nous_assets.team.packets import MIRRORS_DIR, build_tenant_packets, mirror_dir  # noqa: E402
from resolver.fingerprint import fingerprint_key  # noqa: E402


def _default_key(project: str) -> str:
    """The key of a project's default packet (what the mirror builds without a lake)."""
    return f"{project}:{fingerprint_key({'project_id': project, 'branch': None, 'stack': [], 'terms': []})}"


def test_a_project_without_memories_is_emptied_in_the_tenants_cache(nous_env, tmp_path):
    settings = replace(load_settings(), tenant_id="team-x")
    tenant = sqlite_backend(open_db(tmp_path / "tenant.db", create=True), "team-x")
    try:
        stated = {"status": "stated"}  # rules the user stated: evidence enough for a packet line
        tenant.events.append(extracted("A", "Run the linter before pushing to the alpha repo.", key="a",
                                       project="-home-dev-alpha", concepts=["lint"], payload_extra=stated))  # fmt: skip
        tenant.events.append(extracted("B", "The beta service needs the staging VPN for its tests.", key="b",
                                       project="-home-dev-beta", concepts=["vpn"], payload_extra=stated))  # fmt: skip
        first = build_tenant_packets(settings, tmp_path / "staging", tenant.events, tenant.cache)
        assert first.events_mirrored == 2 and first.projects_written >= 2
        built = tenant.cache.built_versions()
        assert {"-home-dev-alpha", "-home-dev-beta"} <= set(built)

        tenant.events.append(lifecycle("LearningArchived", "B", {"reason": "user deleted"}, key="b-gone",
                                       project="-home-dev-beta"))  # fmt: skip
        second = build_tenant_packets(settings, tmp_path / "staging", tenant.events, tenant.cache)
        assert second.events_mirrored == 1 and second.projects_emptied == 1
        assert "-home-dev-beta" not in tenant.cache.built_versions()
        assert "-home-dev-alpha" in tenant.cache.built_versions()
        alpha = tenant.cache.get(_default_key("-home-dev-alpha"))
        assert alpha is not None and "alpha repo" in alpha.packet_text and "beta" not in alpha.packet_text
        assert json.loads(alpha.memory_ids_json) == [tenant.events.get_by_key("a").event_id]
    finally:
        tenant.close()


def test_a_mirror_folder_stays_in_the_mirrors_folder_whatever_the_tenant_id(tmp_path):
    root = tmp_path / "staging"
    assert mirror_dir(root, "team-a") == root / MIRRORS_DIR / "team-a"
    odd = [mirror_dir(root, t) for t in ("../etc", "a/b", "..", ".hidden", "x" * 128)]
    assert all(p.parent == root / MIRRORS_DIR and not p.name.startswith(".") for p in odd)
    assert len(set(odd)) == len(odd) and mirror_dir(root, "a/b") != mirror_dir(root, "a-b")
