"""Checked against the code: a project's memories whose citations no longer resolve in its checkout.

When the project's work tree is on this machine (a cwd its sessions ran in still exists inside a git work
tree), every project memory that could be injected is checked with :class:`~.citations.Checkout` each time
packets are built: a memory naming a file, script, npm script, make target or mise task the checkout no longer
has is stale — not injected, and listed by ``nous review``. This runs in the pipeline, never in the hook. A
project with no checkout here (a colleague's, a deleted clone) is not checked: nothing can be said about it.
"""

from __future__ import annotations

from nous_assets.retrieve.citations import Checkout, checkout_root
from nous_assets.store.projection import identity
from nous_assets.store.reads import stale
from nous_assets.timeutil import now_iso


def check_project(conn, project_id: str) -> tuple[frozenset[int], bool]:
    """(the project's stale memory ids, whether that set changed since the last check); writes the verdict."""
    root = checkout_root(identity.cwds_of(conn, project_id))
    found: list[stale.Stale] = []
    if root is not None:
        checkout, at = Checkout(root), now_iso()
        for memory_id, text in stale.checkable(conn, project_id):
            result = checkout.check(text)
            if result.unresolved:
                unresolved = [{"kind": c.kind, "value": c.value} for c in result.unresolved]
                found.append(stale.Stale(memory_id, project_id, unresolved, str(root), at))
    changed = stale.replace(conn, project_id, found)
    return frozenset(s.memory_id for s in found), changed
