"""Pick the embedding provider named by ``settings.embed.provider``.

Providers are imported lazily: the local model pulls in torch + sentence-transformers (seconds to
import), the OpenAI one the ``openai`` client; neither should be paid for by code that never embeds.
The errors live in :mod:`nous_assets.embed.base` (re-exported here for callers) so providers never
import this module: imports go registry -> providers -> base, never back.
"""

from __future__ import annotations

from nous_assets.embed.base import EmbedderUnavailable, EmbeddingError, EmbeddingProvider
from nous_assets.settings import Settings

__all__ = ["EmbedderUnavailable", "EmbeddingError", "PROVIDERS", "get_embedder"]

PROVIDERS = ("local", "openai")


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
