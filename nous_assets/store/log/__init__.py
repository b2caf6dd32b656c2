"""The event log family: event types and validation shared by both backends, history look-ups, publishing
one log into another, the cold-tier archive, bi-temporal reads, the push cursor."""
