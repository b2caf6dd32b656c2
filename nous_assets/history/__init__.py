"""What a project's whole history shows, kept in the event log (:mod:`.update`): the brief the pure miner
(:mod:`nous_assets.brief`) finds in every session of the project, and the memories a later session's removal of a
file made stale. Runs as the ``project_history`` asset, after extraction and before the projection."""
