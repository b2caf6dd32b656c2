"""Team mode's Dagster layer, all of it: the code location (``definitions``), its assets, resource and automation.
Its domain code is ``nous_assets/team/``; see ``README.md`` here."""
