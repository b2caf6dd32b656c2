"""The ingest step as domain code: capture a range of days, extract them, promote the file cursors, then the
derived steps (history, outcomes, retention, project, embed, link, NLI, interventions, packets), one ordered
list of named steps (:data:`~nous_assets.pipeline.steps.INGEST_STEPS`).

No Dagster here: the laptop's assets (``nous_assets/defs/assets``) call one step each and turn its stats into
metadata; team mode (``nous_assets/defs/team``) calls the same functions on a developer's staging database and
on the tenant's working database. A code location that skips a step names it, with the reason, in a
:class:`~nous_assets.pipeline.steps.Plan`.
"""
