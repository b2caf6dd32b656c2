"""Pick the embedding provider named by ``settings.embed.provider``.

Providers are imported lazily: the local model pulls in torch + sentence-transformers (seconds to
import), the OpenAI one the ``openai`` client; neither should be paid for by code that never embeds.
The errors live in :mod:`nous_assets.embed.base` (re-exported here for callers) so providers never
import this module: imports go registry -> providers -> base, never back.
"""

from __future__ import annotations

from nous_assets.embed.base import EmbedderUnavailable, EmbeddingError, EmbeddingProvider
from nous_assets.settings import Settings

__all__ = ["EmbedderUnavailable", "EmbeddingError", "PROVIDERS", "get_embedder", "get_query_embedder"]

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


def get_query_embedder(settings: Settings) -> EmbeddingProvider:
    """The provider for a few queries in a short-lived process (``nous search``): the same vectors as
    :func:`get_embedder`, but the local float32 model runs as the torch-free
    :class:`~nous_assets.embed.light.LightMiniLM` (a new process answers in well under a second instead of
    8-12 s of importing torch). Other precisions (bf16, int8) need torch, so they keep the full model."""
    embedder = get_embedder(settings)
    if embedder.name == "local" and getattr(embedder, "precision", None) == "float32":
        from nous_assets.embed.light import LightMiniLM

        return LightMiniLM()
    return embedder
