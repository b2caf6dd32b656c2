"""How an extraction provider fails, and whether the queue should try again.

Two outcomes matter to the caller:

* :class:`ExtractorUnavailable` (transient, ``retryable = True``): the provider could not be reached or did
  not answer — CLI missing or failing, timeout, network error, HTTP 5xx/429, missing credentials. Nothing
  about the batch is wrong, so the queue item is retried with backoff (up to ``queue_max_attempts``).
* :class:`~nous_assets.extract.schema.ExtractionSchemaError` (permanent): the provider answered, but its
  output is not valid JSON or fails the extraction schema. Re-exported here so callers need one import.

Neither ever leaves anything written: providers only return records that passed
:func:`~nous_assets.extract.schema.validate_learnings`.
"""

from __future__ import annotations

from nous_assets.errors import NousError
from nous_assets.extract.schema import ExtractionSchemaError

__all__ = ["ExtractionSchemaError", "ExtractorError", "ExtractorUnavailable", "is_retryable"]


class ExtractorError(NousError):
    """Base class for provider failures other than schema errors."""

    retryable: bool = False


class ExtractorUnavailable(ExtractorError):
    """The provider could not produce an answer right now (transient; retry later)."""

    retryable = True


def is_retryable(exc: BaseException) -> bool:
    """True when a failed extraction is worth retrying (see the module docstring)."""
    return bool(getattr(exc, "retryable", False))
