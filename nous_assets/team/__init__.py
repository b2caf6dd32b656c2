"""Team mode's domain code (no Dagster): what a developer's run does in its staging database
(:mod:`~nous_assets.team.developer`), what the tenant's working database does with the team's log
(:mod:`~nous_assets.team.packets`), and which ingest steps each runs (:mod:`~nous_assets.team.steps`). The
Dagster layer is ``nous_assets/defs/team/``."""
