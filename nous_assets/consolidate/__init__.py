"""Consolidation: memories that say one thing become one observation (seed 003's CX14, no LLM).

:mod:`~nous_assets.consolidate.similarity` scores pairs of a scope's memories on a composite signal,
:mod:`~nous_assets.consolidate.clusters` groups them with HDBSCAN behind a cohesion gate,
:mod:`~nous_assets.consolidate.observation` turns a group into an observation (anchor, novel details, members
cited) and :mod:`~nous_assets.consolidate.run` writes the observations, and closes stale ones, as events.
"""
