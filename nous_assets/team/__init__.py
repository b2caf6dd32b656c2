"""Team mode's domain code that no laptop step needs (the Dagster layer is ``nous_assets/defs/assets/team.py``)."""
