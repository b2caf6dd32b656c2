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
    """The provider for lookups (queries, a packet's fingerprints, consolidation's recall gate), never for vectors
    that are stored: those come from :func:`get_embedder`.

    The local model in float32 or bf16 is looked up with the torch-free
    :class:`~nous_assets.embed.light.LightMiniLM`: a new process (``nous search``, the MCP server's first
    ``recall``, ``nous packet``) answers in about a second instead of 8-12 s of importing torch. For float32 it is
    the same model. For bf16 (the default on CPUs with native bf16) it is the float32 model looking up vectors the
    bf16 model stored: their query vectors agree to a cosine of 0.9999 (min over the 60 coding questions of the
    three dev sets), with the same hit@1/3/10 on each set; 56 of the 60 top-10 lists were identical, the other 4
    swapped near-ties below rank 1. int8 drifts further from float32, so it keeps the full model."""
    embedder = get_embedder(settings)
    if embedder.name == "local":
        from nous_assets.embed.light import LOOKS_UP, LightMiniLM

        if (precision := getattr(embedder, "precision", None)) in LOOKS_UP:
            return LightMiniLM(looks_up=precision)
    return embedder
