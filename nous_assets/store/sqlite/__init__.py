"""The SQLite providers of the storage contract over one ``cortex.db`` (one tenant): events, projection,
cache, queue, interventions, and the service store. Each class *is* the provider; its module holds its SQL."""
