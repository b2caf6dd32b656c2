"""Communities (consolidate/communities.py): a project's topics from the graph of its memories, on real memory
texts embedded by the real MiniLM (torch-free float32: the vectors the pipeline stores)."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from consolidation_texts import CHAKRA, HOOK_1, HOOK_2, HOOK_3, LABEL_1, LABEL_2, PORT

from nous_assets.consolidate.communities import MIN_TOPIC, _terms, communities, label
from nous_assets.consolidate.similarity import item
from nous_assets.embed.light import LightMiniLM

HOOKS = [HOOK_1, HOOK_2, HOOK_3, "`mix format --check-formatted` runs in CI: a commit that is not formatted fails."]
OTHERS = [LABEL_1, LABEL_2, PORT, CHAKRA]


@pytest.fixture(scope="module")
def vectors() -> dict[str, np.ndarray]:
    texts = HOOKS + OTHERS
    return dict(zip(texts, (np.asarray(v, dtype=np.float32) for v in LightMiniLM().embed(texts)), strict=True))


def _items(vectors, texts, concepts=lambda t: ()):
    return [item(f"k{n}", t, vectors[t], concepts(t)) for n, t in enumerate(texts)]


def test_memories_about_one_thing_form_a_topic_and_the_rest_form_none(vectors):
    items = _items(vectors, HOOKS + OTHERS)
    sessions = {i.key: f"s{n}" for n, i in enumerate(items)}
    topics = communities(items, set(), sessions, {"obs-1": ("k0", "k1")})
    hooks = {i.key for i in items[: len(HOOKS)]}
    assert topics and set(topics[0].members) == hooks  # the formatting hook, told four ways
    assert topics[0].observations == ("obs-1",)  # the observation of two of its members lives in it
    assert "format" in topics[0].label
    assert all(len(t.members) >= MIN_TOPIC for t in topics)
    assert not any({"k4", "k5"} <= set(t.members) and len(t.members) < MIN_TOPIC for t in topics)


def test_the_map_does_not_depend_on_the_order_memories_come_in(vectors):
    texts = HOOKS + OTHERS
    expected = communities(_items(vectors, texts), set(), {})
    for seed in range(4):
        shuffled = texts[:]
        random.Random(seed).shuffle(shuffled)
        keyed = [item(f"k{texts.index(t)}", t, vectors[t], ()) for t in shuffled]
        assert communities(keyed, set(), {}) == expected


def test_a_stored_edge_and_a_shared_session_join_what_similarity_alone_would_not(vectors):
    items = _items(vectors, [PORT, CHAKRA, LABEL_1])
    assert communities(items, set(), {}) == []  # three unrelated memories: no topic
    edges = {frozenset(("k0", "k1")), frozenset(("k1", "k2"))}
    (topic,) = communities(items, edges, {})
    assert topic.members == ("k0", "k1", "k2")


def test_the_label_names_what_the_topic_shares_and_the_rest_of_the_scope_does_not():
    scope = [item(f"m{n}", f"`lib/app/{n}.ex` is Elixir code", None, ("elixir", f"part {n}")) for n in range(6)]
    topic = [item("t1", "`mix test` needs `config/test.exs`", None, ("elixir", "tests")),
             item("t2", "`mix test --seed 0` reads `config/test.exs`", None, ("elixir", "tests"))]
    everywhere = Counter(term for it in scope + topic for term in _terms(it))
    name = label(topic, everywhere, len(scope + topic))
    assert name.startswith("`config/test.exs`") and "elixir" not in name  # every memory says elixir
