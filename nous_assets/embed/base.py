"""The embedding contract: texts in, L2-normalised float32 vectors out.

Providers are chosen by ``settings.embed.provider``; every vector row records the model and
dimensions it was made with, so a change of either is detected and re-embedded in the background.

Errors: :class:`EmbeddingError` is the base (permanent: bad configuration, malformed answer);
:class:`EmbedderUnavailable` (``retryable = True``) means the provider could not answer right now
(endpoint down, timeout, HTTP 429/5xx, missing credentials or package), so a background
re-embedding run should simply try again later. They live here, beside the contract, so providers
and the registry that picks them both import downward and never each other.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from nous_assets.errors import NousError


class EmbeddingError(NousError):
    """An embedding provider failed in a way a user can act on; the message says how."""

    retryable: bool = False


class EmbedderUnavailable(EmbeddingError):
    """The provider cannot embed right now (missing package or key, unreachable endpoint); retry later."""

    retryable = True


class EmbeddingProvider(Protocol):
    name: str  # "local" | "openai"
    model: str
    dimensions: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Shape (len(texts), dimensions), dtype float32, rows L2-normalised."""
        ...
