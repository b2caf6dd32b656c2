"""The recall gate (consolidate/gate.py): a cluster is consolidated only when its key terms find its members."""

from __future__ import annotations

import numpy as np
import pytest
from consolidation_texts import HOOK_1, HOOK_2, LABEL_1, PORT

from nous_assets.consolidate.gate import TOP_K, gate, key_phrases, key_terms
from nous_assets.consolidate.similarity import item
from nous_assets.embed.light import LightMiniLM

DECOYS = [(HOOK_1 if n % 2 else HOOK_2).replace("`mix format`", f"`mix format` (step {n})") for n in range(3 * TOP_K)]
"""Memories saying what the cluster says, well encoded: they fill every query's top k."""


@pytest.fixture(scope="module")
def embedder() -> LightMiniLM:
    return LightMiniLM()


def _scope(embedder, texts, vectors=None):
    vecs = vectors if vectors is not None else embedder.embed(texts)
    return [item(f"k{n}", t, np.asarray(v, dtype=np.float32), ()) for n, (t, v) in enumerate(zip(texts, vecs,
                                                                                                   strict=True))]


def test_key_terms_are_what_the_cluster_says_and_the_scope_does_not():
    terms = key_terms([HOOK_1, HOOK_2], [HOOK_1, HOOK_2, LABEL_1, PORT])
    assert len(terms) == 5 and "format" in terms
    assert "the" not in terms and "with" not in terms
    assert key_phrases(terms) == [" ".join(terms[0:3]), " ".join(terms[1:4]), " ".join(terms[2:5])]
    assert key_phrases(terms[:2]) == [" ".join(terms[:2])]


def test_a_well_encoded_cluster_passes(embedder):
    texts = [HOOK_1, HOOK_2, LABEL_1, PORT]
    items = _scope(embedder, texts)
    passed, deferred = gate([("k0", "k1")], items, {i.key: t for i, t in zip(items, texts, strict=True)}, embedder)
    assert passed == [("k0", "k1")] and deferred == []


def test_a_cluster_its_own_terms_cannot_find_is_deferred(embedder):
    texts = [HOOK_1, HOOK_2, *DECOYS]
    real = embedder.embed(texts)
    rng = np.random.default_rng(0)
    vectors = [rng.standard_normal(len(real[0])), rng.standard_normal(len(real[0])), *real[2:]]  # badly encoded
    items = _scope(embedder, texts, vectors)
    text_of = {i.key: t for i, t in zip(items, texts, strict=True)}
    passed, deferred = gate([("k0", "k1")], items, text_of, embedder)
    assert passed == [] and deferred == [("k0", "k1")]
    assert gate([("k0", "k1")], items, text_of, None) == ([("k0", "k1")], [])  # no embedder: no index to test
