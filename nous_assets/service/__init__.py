"""``nous serve``: the spec's Agent-Service Interface over the storage providers, and its clients.

``models`` (request/response shapes: the identity and idempotency envelopes), ``tokens`` (bearer tokens,
stored hashed), ``pool`` (connections of the configured backend), ``handlers`` (what each endpoint does,
plain functions over the providers), ``app`` (the FastAPI wiring: auth, size limit, errors, OpenAPI),
``transport`` (uvicorn on 127.0.0.1 or a Unix socket), ``client`` (the standard-library HTTP client of
``nous push`` and ``nous pull``), ``push`` and ``pull``. Nothing here runs SQL: storage is the store's.
"""
