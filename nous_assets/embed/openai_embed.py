"""Embeddings through the OpenAI API or any OpenAI-compatible ``/v1/embeddings`` endpoint.

Base URL and key come from :class:`~nous_assets.settings.Settings` (``NOUS_OPENAI_BASE_URL`` /
``NOUS_OPENAI_API_KEY`` or the plain ``OPENAI_*`` names). When ``embed.model`` is still the local default
(all-MiniLM-L6-v2) the model is ``text-embedding-3-small``. ``dimensions`` is always sent: the
text-embedding-3 models are Matryoshka-trained, so asking for fewer dimensions keeps the leading
(most informative) ones; the answer is re-normalised to unit length because a shortened vector is not.

Inputs go in batches of at most :data:`MAX_INPUTS_PER_REQUEST` texts and :data:`MAX_CHARS_PER_REQUEST`
characters. The client never retries on its own (``max_retries=0``): a failed run leaves the memories
pending and the next background run picks them up.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from nous_assets.embed.base import EmbedderUnavailable, EmbeddingError
from nous_assets.openai_errors import describe, short
from nous_assets.settings import Settings

__all__ = ["DEFAULT_MODEL", "MAX_CHARS_PER_REQUEST", "MAX_INPUTS_PER_REQUEST", "OpenAIEmbeddings"]

DEFAULT_MODEL = "text-embedding-3-small"
LOCAL_DEFAULT_MODEL = "all-MiniLM-L6-v2"
MAX_INPUTS_PER_REQUEST = 256
MAX_CHARS_PER_REQUEST = 400_000  # ~100k tokens, well under the API's per-request token limit
PLACEHOLDER_KEY = "not-needed"


class OpenAIEmbeddings:
    """:class:`~nous_assets.embed.base.EmbeddingProvider` over ``client.embeddings.create``."""

    name = "openai"

    def __init__(self, settings: Settings, *, client: Any = None) -> None:
        self.settings = settings
        configured = settings.embed.model
        self.model = DEFAULT_MODEL if configured in ("", LOCAL_DEFAULT_MODEL) else configured
        self.dimensions = int(settings.embed.dimensions)
        if self.dimensions < 1:
            raise EmbeddingError(f"embed.dimensions must be positive, got {self.dimensions}")
        self.timeout = float(settings.llm_timeout_seconds)
        self._client = client

    def _api_key(self) -> str:
        if self.settings.openai_api_key:
            return self.settings.openai_api_key
        if self.settings.openai_base_url:
            return PLACEHOLDER_KEY  # local OpenAI-compatible servers usually need no key
        raise EmbedderUnavailable(
            "openai embeddings need an API key: set NOUS_OPENAI_API_KEY or OPENAI_API_KEY "
            '(or NOUS_OPENAI_BASE_URL for a local OpenAI-compatible server), or set embed.provider to "local"'
        )

    def client(self) -> Any:
        if self._client is None:
            try:
                import openai
            except ImportError:
                raise EmbedderUnavailable(
                    "openai embeddings need the `openai` package: run `pip install openai`"
                ) from None
            try:
                self._client = openai.OpenAI(
                    base_url=self.settings.openai_base_url,
                    api_key=self._api_key(),
                    timeout=self.timeout,
                    max_retries=0,
                )
            except openai.OpenAIError as exc:
                raise EmbedderUnavailable(f"cannot create OpenAI client: {short(exc)}") from None
        return self._client

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        parts = [self._request(batch) for batch in _batches(list(texts))]
        matrix = np.vstack(parts) if len(parts) > 1 else parts[0]
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        if not np.all(np.isfinite(matrix)) or np.any(norms == 0):
            raise EmbeddingError(f"{self._where()} returned a zero or non-finite embedding vector")
        return np.ascontiguousarray(matrix / norms, dtype=np.float32)

    def _where(self) -> str:
        return f"OpenAI embeddings endpoint ({self.settings.openai_base_url or 'api.openai.com'}, model {self.model})"

    def _request(self, batch: list[str]) -> np.ndarray:

        client = self.client()
        # the API rejects empty strings; a single space embeds as "nothing" without failing the batch
        inputs = [text if text.strip() else " " for text in batch]
        try:
            response = client.embeddings.create(
                model=self.model, input=inputs, dimensions=self.dimensions, encoding_format="float"
            )
        except Exception as exc:
            failure = describe(exc, self._where(), self.timeout)
            if failure is None:
                raise
            raise (EmbeddingError if failure.permanent else EmbedderUnavailable)(failure.message) from None
        return self._parse(response, len(batch))

    def _parse(self, response: Any, expected: int) -> np.ndarray:
        data = getattr(response, "data", None)
        if not isinstance(data, list) or len(data) != expected:
            got = len(data) if isinstance(data, list) else type(data).__name__
            raise EmbeddingError(f"{self._where()} returned {got} embeddings for {expected} inputs")
        rows: list[Any] = [None] * expected
        for position, item in enumerate(data):
            index = getattr(item, "index", position)
            index = position if index is None else index
            if not isinstance(index, int) or not 0 <= index < expected or rows[index] is not None:
                raise EmbeddingError(f"{self._where()} returned a bad or repeated embedding index {index!r}")
            rows[index] = getattr(item, "embedding", None)
        matrix = np.empty((expected, self.dimensions), dtype=np.float32)
        for i, vector in enumerate(rows):
            if not isinstance(vector, list):
                raise EmbeddingError(
                    f"{self._where()} returned embedding {i} as {type(vector).__name__}, expected a list of floats"
                )
            if len(vector) != self.dimensions:
                raise EmbeddingError(
                    f"{self._where()} returned {len(vector)}-dimensional vectors but embed.dimensions is "
                    f"{self.dimensions}; the server may ignore the `dimensions` parameter — set embed.dimensions "
                    f"to {len(vector)} or use a Matryoshka model such as {DEFAULT_MODEL}"
                )
            try:
                matrix[i] = vector
            except (TypeError, ValueError):
                raise EmbeddingError(f"{self._where()} returned embedding {i} with non-numeric values") from None
        return matrix


def _batches(texts: list[str]) -> Iterator[list[str]]:
    """Consecutive slices of at most MAX_INPUTS_PER_REQUEST texts and (roughly) MAX_CHARS_PER_REQUEST chars."""
    batch: list[str] = []
    chars = 0
    for text in texts:
        if batch and (len(batch) >= MAX_INPUTS_PER_REQUEST or chars + len(text) > MAX_CHARS_PER_REQUEST):
            yield batch
            batch, chars = [], 0
        batch.append(text)
        chars += len(text)
    if batch:
        yield batch
