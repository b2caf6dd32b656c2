"""The memory lifecycle beyond the projection: hot/cold tiers of the event log (``archive``)."""
