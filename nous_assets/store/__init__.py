"""All SQL of Nous, and the storage contract with its two peer backends.

Layout (one folder a family, so a reader finds a table's SQL by what it is for):

* ``protocols`` is the contract: the providers a caller that must run on either backend uses (events,
  projection, vectors, cache, interventions, and the ingest queue's enqueue side where something extracts);
  ``backend`` opens one (:func:`backend.open_backend`) and says what it serves (:class:`backend.Capabilities`),
  so callers ask ``capabilities`` instead of comparing a backend's name.
* ``sqlite/`` and ``pg/`` are the two peer implementations; each provider class *is* the provider and holds
  its SQL. ``db``, ``meta`` and ``migrations/`` are the SQLite database itself; ``pg/db`` and ``pg/migrations/``
  PostgreSQL's.
* ``log/`` (event types and validation shared by both backends, history, publish, archive, bi-temporal
  reads), ``projection/`` (what each event does to a memory; project identity), ``ingest/`` (cursors, the
  floor, transcript files and chunks, redaction rescans), ``search/`` (full-text and vector search, concepts,
  edges), ``reads/`` (the read models of review, doctor, metrics, observers and the MCP tools): the SQLite
  side of a laptop's pipeline, called with a ``cortex.db`` connection.

SQLite (one ``cortex.db`` per developer) is the whole product. PostgreSQL's job is narrower: it is the
team's log of record (every developer's events, published with their keys, in the team's tenant), the
packets built for a tenant that ``nous pull`` copies to a laptop, and what ``nous serve`` keeps (service
tokens and write receipts). Only what that job uses is in the contract; a provider nothing in the product
calls is not kept on PostgreSQL for symmetry.
"""
