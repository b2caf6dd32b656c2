"""Project identity: which repository a session, a cwd, a Claude Code folder belongs to.

Pure domain code (no Dagster, no SQL): :mod:`.evidence` reads what transcripts say about places (cwds,
``gitBranch``, ``cd`` / ``git -C`` / ``git worktree add`` commands, ``git worktree list`` output),
:mod:`.resolve` decides the canonical project of each from that evidence (and the worktree layouts it
shows) and the ``.git`` files of paths that still exist (never a subprocess).
:mod:`nous_assets.store.projection.identity` keeps the evidence and the resulting aliases; :mod:`.update` ties them
together for the pipeline. The hook's side lives in :mod:`resolver.project` (standard library only).
"""
