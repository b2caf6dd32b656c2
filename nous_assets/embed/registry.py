"""Pick the embedding provider named by ``settings.embed.provider``, and how providers fail.

Providers are imported lazily: the local model pulls in torch + sentence-transformers (seconds to
import), the OpenAI one the ``openai`` client; neither should be paid for by code that never embeds.

Errors: :class:`EmbeddingError` is the base (permanent: bad configuration, malformed answer);
:class:`EmbedderUnavailable` (``retryable = True``) means the provider could not answer right now
(endpoint down, timeout, HTTP 429/5xx, missing credentials or package), so a background
re-embedding run should simply try again later.
"""

from __future__ import annotations

from nous_assets.embed.base import EmbeddingProvider
from nous_assets.errors import NousError
from nous_assets.settings import Settings

__all__ = ["EmbedderUnavailable", "EmbeddingError", "PROVIDERS", "get_embedder"]

PROVIDERS = ("local", "openai")


class EmbeddingError(NousError):
    """An embedding provider failed in a way a user can act on; the message says how."""

    retryable: bool = False


class EmbedderUnavailable(EmbeddingError):
    """The provider cannot embed right now (missing package or key, unreachable endpoint); retry later."""

    retryable = True


def get_embedder(settings: Settings) -> EmbeddingProvider:
    """The configured provider; constructing it is cheap (models and clients load on first ``embed``)."""
    provider = settings.embed.provider
    if provider == "local":
        from nous_assets.embed.local import LocalMiniLM

        return LocalMiniLM.from_settings(settings)
    if provider == "openai":
        from nous_assets.embed.openai_embed import OpenAIEmbeddings

        return OpenAIEmbeddings(settings)
    raise EmbeddingError(f"unknown embedding provider {provider!r} (expected one of {', '.join(PROVIDERS)})")
