"""Embedding throughput levers, checked for what they must not change: reduced-precision vectors stay close to
float32 ones on real transcript text, chunks too short to be worth a vector are skipped yet stay findable by
full-text search, a change of model variant re-embeds instead of mixing vectors, the backlog is embedded in
length order with every vector stored under its own chunk, and a second pass does nothing.

Timings are not tested here: ``benchmarks/bench_capture.py`` measures them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from test_embeddings import FakeEmbedder

from nous_assets.capture.episodes import chunk_rows
from nous_assets.capture.parser import parse_chunk
from nous_assets.embed import local as local_embed
from nous_assets.embed.chunk_embedding import (
    embed_pending_chunks,
    pending_chunk_count,
    skipped_chunk_count,
    upsert_chunks,
    worth_embedding,
)
from nous_assets.embed.local import MODEL_NAME, LocalMiniLM, resolve_precision
from nous_assets.settings import ConfigError, load_settings
from nous_assets.store.ingest import transcript_chunks
from nous_assets.turns import Turn

REAL_FILES = (
    "spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
    "episodic-memory/long-conversation.jsonl",
    "fasthooks",
)


@pytest.fixture(scope="module")
def real_turns(shared_corpus: Path) -> list[Turn]:
    """Turns of a few real shared transcripts (three projects, a user's short replies among them)."""
    paths: list[Path] = []
    for name in REAL_FILES:
        where = shared_corpus / name
        paths += sorted(where.rglob("*.jsonl")) if where.is_dir() else [where]
    turns: list[Turn] = []
    for path in paths:
        turns += parse_chunk(path.read_bytes(), base_offset=0, path=str(path), project_id=path.parent.name).turns
    return turns


@pytest.fixture(scope="module")
def real_texts(real_turns: list[Turn]) -> list[str]:
    return [row[6] for row in chunk_rows(real_turns)]


def _vectors(conn) -> dict[int, bytes]:
    return {int(r[0]): bytes(r[1]) for r in conn.execute("SELECT chunk_id, embedding FROM chunk_vectors")}


def _meta_models(conn) -> set[str]:
    return {r[0] for r in conn.execute("SELECT DISTINCT model FROM chunk_vector_meta")}


# ------------------------------------------------------------------------------------------------ precision


@pytest.fixture(scope="module")
def precisions() -> Iterator[dict[str, LocalMiniLM]]:
    """The real local model in each precision (converted from the one float32 load)."""
    yield {p: LocalMiniLM(batch_size=32, precision=p) for p in ("float32", "bfloat16", "int8")}


def test_reduced_precision_vectors_stay_close_to_float32_on_real_transcript_text(precisions, real_texts) -> None:
    sample = real_texts[::2][:96]  # every other chunk: short replies, prose and pasted code alike
    assert len(sample) >= 60
    exact = precisions["float32"].embed(sample)
    bf16 = precisions["bfloat16"].embed(sample)
    int8 = precisions["int8"].embed(sample)
    for vectors in (bf16, int8):
        assert vectors.dtype == np.float32 and vectors.shape == exact.shape
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    bf16_cos = np.sum(exact * bf16, axis=1)
    assert bf16_cos.min() >= 0.98, f"bfloat16: lowest cosine to float32 {bf16_cos.min():.4f}"
    # int8 dynamic quantization is the coarser option (not the default): close on average, looser per text
    int8_cos = np.sum(exact * int8, axis=1)
    assert int8_cos.mean() >= 0.95 and np.median(int8_cos) >= 0.95, f"int8: mean {int8_cos.mean():.4f}"


def test_each_precision_is_its_own_stored_model_name(precisions) -> None:
    names = {p: provider.model for p, provider in precisions.items()}
    assert names["float32"] == MODEL_NAME  # vectors made before precisions existed stay valid
    assert len(set(names.values())) == 3 and all(n.startswith(MODEL_NAME) for n in names.values())


def test_auto_precision_follows_the_cpus_native_bf16(tmp_path: Path) -> None:
    with_bf16 = tmp_path / "bf16"
    with_bf16.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n")
    without = tmp_path / "avx2"
    without.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 fma\n")
    assert resolve_precision("auto", with_bf16) == "bfloat16"
    assert resolve_precision("auto", without) == "float32"
    assert resolve_precision("auto", tmp_path / "absent") == "float32"
    assert resolve_precision("int8", with_bf16) == "int8"


def test_precision_and_min_words_are_settings(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    env = {"HOME": str(tmp_path), "NOUS_CONFIG_FILE": str(config)}
    config.write_text('{"embed": {"precision": "int8", "min_words": 2}}')
    embed = load_settings(env).embed
    assert (embed.precision, embed.min_words) == ("int8", 2)
    config.write_text('{"embed": {"precision": "fp8"}}')
    with pytest.raises(ConfigError, match="embed.precision"):
        load_settings(env)


# ------------------------------------------------------------------------------------------------ skip rule


def test_skip_rule_by_shape() -> None:
    for text in ("ok", "continue", "/mcp", "yes.", "✅ Done", "A", "42", "👍👍", "check again"):
        assert not worth_embedding(text, 3), text
    for text in ("did you push?", "use pnpm, not npm", "Implement spotter-gqc", "how's it going?"):
        assert worth_embedding(text, 3), text
    assert worth_embedding("ok", 0)  # min_words 0 embeds everything


def test_skipped_real_chunks_have_no_vector_but_stay_findable_by_fts(conn, real_turns) -> None:
    upsert_chunks(conn, real_turns)
    total = transcript_chunks.count(conn)
    provider = FakeEmbedder()
    done, left = embed_pending_chunks(conn, provider, batch_size=32, min_words=3)
    assert (done, left) == (total, 0)
    skipped = skipped_chunk_count(conn, provider.model, provider.dimensions)
    vectors = _vectors(conn)
    assert len(vectors) + skipped == total
    assert 0 < skipped < total * 0.1  # a few acknowledgements and commands, not the conversation
    skipped_rows = conn.execute(
        "SELECT c.id, c.text FROM transcript_chunks c JOIN chunk_vector_meta m ON m.chunk_id = c.id "
        "WHERE m.content_hash LIKE 'skip:%'"
    ).fetchall()
    assert len(skipped_rows) == skipped
    embedded_texts = {t for call in provider.calls for t in call}
    for chunk_id, text in skipped_rows:
        assert chunk_id not in vectors and text not in embedded_texts
        assert not worth_embedding(text, 3) and len(text) < 200
        words = [w for w in text.split() if any(ch.isalpha() for ch in w)]
        if words:  # findable: full-text search on its own words returns it
            match = " ".join('"' + w.replace('"', "") + '"' for w in words[:2])
            assert chunk_id in transcript_chunks.text_matches(conn, match, project_id=None, as_at=None, limit=1000)
    # nothing is pending, and a second pass neither embeds nor re-marks anything
    assert pending_chunk_count(conn, provider.model, provider.dimensions) == 0
    calls = len(provider.calls)
    assert embed_pending_chunks(conn, provider, batch_size=32, min_words=3) == (0, 0)
    assert len(provider.calls) == calls and _vectors(conn) == vectors


# ------------------------------------------------------------------------------------------------ batching


def test_backlog_is_embedded_in_length_order_each_vector_under_its_own_chunk(conn, real_turns) -> None:
    upsert_chunks(conn, real_turns)
    provider = FakeEmbedder()
    embed_pending_chunks(conn, provider, batch_size=16)
    lengths = [[len(t) for t in call] for call in provider.calls]
    assert all(a[-1] <= b[0] for a, b in zip(lengths, lengths[1:], strict=False))  # across the whole backlog
    assert all(call == sorted(call) for call in lengths)
    check = FakeEmbedder()
    stored = _vectors(conn)
    assert len(stored) == transcript_chunks.count(conn)
    for chunk_id, text in conn.execute("SELECT id, text FROM transcript_chunks"):
        assert stored[chunk_id] == check.embed([text])[0].tobytes()


def test_a_changed_chunk_is_embedded_again_and_nothing_else(conn, real_turns) -> None:
    upsert_chunks(conn, real_turns)
    provider = FakeEmbedder()
    embed_pending_chunks(conn, provider, batch_size=64)
    before = _vectors(conn)
    first = next(t for t in real_turns if chunk_rows([t]))
    edited = replace(first, text=first.text + " (edited later)")
    assert upsert_chunks(conn, [edited]) == (0, 1)
    again = FakeEmbedder()
    done, left = embed_pending_chunks(conn, again, batch_size=64)
    assert (done, left) == (1, 0) and again.calls == [[edited.text.strip()[:1000]]]
    after = _vectors(conn)
    assert after.keys() == before.keys() and sum(after[k] != before[k] for k in after) == 1


# ------------------------------------------------------------------------------------------------ variants


def test_switching_variant_re_embeds_and_never_mixes_vectors(conn, real_turns) -> None:
    upsert_chunks(conn, real_turns)
    total = transcript_chunks.count(conn)
    first = FakeEmbedder(model="minilm", dimensions=8)
    embed_pending_chunks(conn, first, batch_size=64, min_words=3)
    assert _meta_models(conn) == {"minilm"}
    second = FakeEmbedder(model="minilm@bf16", dimensions=8)  # same dimensions: only the name tells them apart
    assert pending_chunk_count(conn, second.model, 8) == total
    done, left = embed_pending_chunks(conn, second, batch_size=64, max_batches=2, min_words=3)
    assert (done, left) == (128, total - 128)
    # mid-switch: the old variant's vectors are gone, the new ones are the only ones a search can see
    assert _meta_models(conn) == {"minilm@bf16"}
    check = FakeEmbedder(model="minilm@bf16", dimensions=8)
    for chunk_id, blob in _vectors(conn).items():
        text = conn.execute("SELECT text FROM transcript_chunks WHERE id = ?", (chunk_id,)).fetchone()[0]
        assert blob == check.embed([text])[0].tobytes()
    done, left = embed_pending_chunks(conn, second, batch_size=64, min_words=3)
    assert left == 0 and _meta_models(conn) == {"minilm@bf16"}
    assert len(_vectors(conn)) + skipped_chunk_count(conn, "minilm@bf16", 8) == total


def test_models_of_each_precision_are_loaded_once(precisions) -> None:
    for precision, provider in precisions.items():
        provider.embed(["once"])
        assert local_embed.load_model(precision) is local_embed.load_model(precision)
