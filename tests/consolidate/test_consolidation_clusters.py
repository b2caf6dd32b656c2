"""Clusters and observations on real memory texts from the dev transcripts' stores, embedded by the real MiniLM
(its torch-free float32 form: the same vectors the pipeline stores)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from nous_assets.consolidate.clusters import clusters
from nous_assets.consolidate.observation import Member, anchor_of, novel_details, observe
from nous_assets.consolidate.similarity import item, similarity
from nous_assets.embed.light import LightMiniLM

HOOK_1 = ('`git add lib/spotter/services/transcript_tail_adapter.ex…` failed with "pre-commit validation failed '
          '(FORMAT)"; fixed by running `mix format`')  # fmt: skip
HOOK_2 = ('`git add -A && git commit -m "…"` failed with "pre-commit validation failed (FORMAT)"; fixed by running '
          '`mix format`')  # fmt: skip
LABEL_1 = "AGENTS.md: If the issue has the `in-progress` label, do not work on it — pick a different issue."
LABEL_2 = "AGENTS.md: `in-progress` marks an issue as claimed by an agent — do not start work on it."
OTHER_1 = "The dev server listens on port 4000 when started with mix phx.server."
OTHER_2 = "Chakra UI v3 components crash without a ChakraProvider, so the tree view uses headless Ark UI."
TEXTS = [HOOK_1, HOOK_2, LABEL_1, LABEL_2, OTHER_1, OTHER_2]


@pytest.fixture(scope="module")
def vectors() -> dict[str, np.ndarray]:
    return dict(zip(TEXTS, (np.asarray(v, dtype=np.float32) for v in LightMiniLM().embed(TEXTS)), strict=True))


def _items(vectors: dict[str, np.ndarray], texts: list[str]):
    return [item(f"L{TEXTS.index(t)}", t, vectors[t], ()) for t in texts]


def test_the_same_claim_told_twice_clusters_and_unrelated_memories_stay_alone(vectors):
    found = clusters(_items(vectors, TEXTS), set())
    assert ("L0", "L1") in found and ("L2", "L3") in found  # one hook failure, one label rule
    assert not any({"L4", "L5"} & set(group) for group in found)  # unique memories are left alone


def test_clusters_do_not_depend_on_the_order_memories_come_in(vectors):
    expected = clusters(_items(vectors, TEXTS), set())
    for seed in range(5):
        shuffled = TEXTS[:]
        random.Random(seed).shuffle(shuffled)
        assert clusters(_items(vectors, shuffled), set()) == expected


def test_a_signal_neither_memory_has_is_absent_not_a_disagreement():
    plain_a, plain_b = item("a", OTHER_1, None, ()), item("b", OTHER_2, None, ())
    assert similarity(plain_a, plain_b, 0.8, False) == pytest.approx(0.8)  # no citations, no concepts: the cosine
    cited_a = item("a", "Run `mise run test:ci` before pushing.", None, ())
    cited_b = item("b", "CI runs `mise run test:ci` on every push.", None, ())
    assert cited_a.commands == cited_b.commands == frozenset({"mise run test:ci", "test:ci"})
    assert similarity(cited_a, cited_b, None, False) == 1.0  # the commands are all they have, and they agree
    assert similarity(cited_a, cited_b, 0.2, True) == pytest.approx((0.5 * 0.2 + 0.15 + 0.05) / 0.7)


def _member(lid: str, content: str, status: str = "observed", sessions: int = 1) -> Member:
    return Member(lid, content, status, sessions, 0.5, None, frozenset(), "s")


def test_the_anchor_is_the_best_evidenced_member_whatever_the_order():
    weak, strong, many = _member("a", HOOK_1), _member("b", HOOK_2, "verified"), _member("c", HOOK_1, sessions=3)
    assert anchor_of([weak, strong, many]) is strong and anchor_of([many, strong, weak]) is strong
    assert anchor_of([weak, many]) is many  # among equal statuses, more sessions


def test_an_observation_keeps_what_only_the_others_say_and_cites_every_member():
    anchor = _member("a", "Before committing run `mix format`. The hook rejects unformatted files.", "verified")
    repeat = _member("b", "The hook rejects unformatted files before committing.")
    extra = _member("c", "Formatting changes in generated files are expected and should be committed too.")
    assert novel_details(anchor, [repeat, extra]) == ([extra.content], ["a", "b", "c"])
    observation = observe([extra, repeat, anchor])
    assert observation.anchor is anchor and observation.member_ids == observation.carried == ("a", "b", "c")
    assert observation.content == f"{anchor.content} {extra.content}"
    assert observation.compression > 1.0 and observation.slot == "observation:a"


def test_a_member_the_observation_has_no_room_for_is_not_carried():
    anchor = _member("a", "Before committing run `mix format`. The hook rejects unformatted files.", "verified")
    long = _member("b", " ".join([  # eight different things, 700 characters: not all fit beside the anchor
        "Staging deploys run from the deploy workflow after the image is pushed to the registry.",
        "Database migrations are generated with the ORM command and reviewed by hand before merging.",
        "The mobile client pins its API version in a header that the gateway checks on every request.",
        "Billing webhooks are replayed from the provider dashboard when the worker was down overnight.",
        "Feature flags live in a YAML file that the admin panel reloads without restarting the service.",
        "Load tests use the recorded traffic of a weekday morning, scaled up three times for headroom.",
        "Secrets rotate quarterly through the vault script, which also updates every CI environment.",
        "Screenshots in the docs are regenerated by a headless browser job whenever the theme changes.",
    ]))
    details, carried = novel_details(anchor, [long])
    assert carried == ["a"] and len(" ".join([anchor.content, *details])) <= 600
