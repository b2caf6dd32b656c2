"""The ``rules`` NLI classifier and its labelled set: precision on real and constructed pairs, each rule's
shape, and the hard negatives that must stay neutral."""

from __future__ import annotations

from pathlib import Path

import pytest

from nous_assets.reconcile.nli.base import LABELS, Verdict
from nous_assets.reconcile.nli.rules import RulesClassifier, classify_pair
from tests.support.nli_eval import load_pairs, score

DATA = Path(__file__).resolve().parents[1] / "data" / "nli_pairs.jsonl"
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"


@pytest.fixture(scope="module")
def pairs() -> list[dict]:
    return load_pairs(DATA)


def test_the_labelled_set_has_150_pairs_of_every_label_with_their_origin(pairs):
    assert len(pairs) >= 150
    assert {p["label"] for p in pairs} == set(LABELS)
    assert len({p["id"] for p in pairs}) == len(pairs)
    real = [p for p in pairs if p["origin"] == "transcript"]
    assert len(real) >= 50 and all(p["origin"] in ("transcript", "constructed") for p in pairs)
    for p in real:  # each real text cites the transcript line it was learned from
        for side in ("a_from", "b_from"):
            file, _, line = p[side].rpartition(":")
            assert file.startswith(("transcripts/", "transcripts-dev2/")) and int(line) >= 1, p["id"]


def test_real_pairs_cite_lines_that_exist(pairs):
    real = [p for p in pairs if p["origin"] == "transcript"]
    if not (SHARED / "transcripts").is_dir():
        pytest.skip("../shared/data is not present")
    for p in real:
        for side in ("a_from", "b_from"):
            file, _, line = p[side].rpartition(":")
            with open(SHARED / file, "rb") as fh:
                assert sum(1 for _ in fh) >= int(line), p[side]


def test_rules_precision_on_the_labelled_set_meets_the_target(pairs):
    result = score(RulesClassifier(), pairs)
    assert result["precision"] >= 0.85, result["errors"]
    assert result["tp"] >= 30  # the rules find contradictions, not only avoid false ones
    held_out = score(RulesClassifier(), [p for p in pairs if p.get("split") == "holdout"])
    assert held_out["pairs"] >= 30 and held_out["precision"] >= 0.85, held_out["errors"]


def test_verdicts_do_not_depend_on_the_order_of_the_pair(pairs):
    for p in pairs:
        assert classify_pair(p["a"], p["b"]).label == classify_pair(p["b"], p["a"]).label, p["id"]


@pytest.mark.parametrize(
    ("a", "b", "reason", "single"),
    [
        ("The admin UI is served on port 7000.", "The admin UI is served on port 7100.", "value", True),
        ("Bundle with `webpack`.", "Bundle with `rollup`.", "value", True),
        ("Set RETRIES=3 in the worker env.", "Set RETRIES=5 in the worker env.", "value", True),
        ("Pass `--jobs=2` to the build.", "Pass `--jobs=6` to the build.", "value", True),
        ("Prefer tox over nox for test envs.", "Run the test envs with nox.", "instead", True),
        ("Use uv instead of pip.", "Use pip instead of uv.", "instead", True),
        ("The `old_sync` task is deprecated.", "Run the `old_sync` task every night.", "removal", False),
        ("Dark mode is enabled by default.", "Dark mode is disabled by default.", "antonym", False),
        ("Secrets are rotated monthly.", "Secrets are never rotated monthly.", "negation", False),
    ],
)
def test_each_rule_finds_its_shape_of_contradiction(a, b, reason, single):
    verdict = classify_pair(a, b)
    assert verdict.label == "contradiction" and verdict.reason == reason and verdict.confidence >= 0.7
    assert verdict.single_valued is single


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("config/dev.exs: sets `level: :debug`", "config/prod.exs: sets `level: :info`"),  # other files
        ("Set CACHE_DIR=/tmp/c in .env.", "Set LOG_DIR=/tmp/l in .env."),  # other keys
        ("Check with `just lint`.", "Check with `just typecheck`."),  # one tool, other scripts
        ("Check with `ruff check`.", "Check with `ruff check --fix`."),  # a variant of the same command
        ("Codegen with `protoc --go_out=.`.", "Codegen with `protoc --python_out=.`."),  # other flags
        ("The web app listens on port 3000.", "The docs site listens on port 3001."),  # other subjects
        ("Never commit .env files.", "Do not commit .env files to git."),  # both negative
        ("Use ruff, not flake8.", "Use ruff for linting."),  # agreeing
    ],
)
def test_hard_negatives_are_not_contradictions(a, b):
    assert classify_pair(a, b).label != "contradiction"


def test_same_text_entails_and_verdicts_validate_themselves():
    assert classify_pair("Use uv.", "Use uv.").label == "entailment"
    assert classify_pair("", "anything").label == "neutral"
    with pytest.raises(ValueError):
        Verdict("maybe", 0.5)
    with pytest.raises(ValueError):
        Verdict("neutral", 1.5)
    assert RulesClassifier().classify([]) == []
