"""The embedding contract: texts in, L2-normalised float32 vectors out.

Providers are chosen by ``settings.embed.provider``; every vector row records the model and
dimensions it was made with, so a change of either is detected and re-embedded in the background.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class EmbeddingProvider(Protocol):
    name: str  # "local" | "openai"
    model: str
    dimensions: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Shape (len(texts), dimensions), dtype float32, rows L2-normalised."""
        ...
