"""The ``cross-encoder`` NLI tier with a tiny BERT the test builds and saves itself, loaded offline from its
directory (sentence-transformers ``CrossEncoder``), never downloaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nous_assets.errors import ConfigError
from nous_assets.reconcile.nli.base import ClassifierUnavailable
from nous_assets.reconcile.nli.cross_encoder import CrossEncoderClassifier
from nous_assets.reconcile.nli.registry import get_classifier
from nous_assets.settings import load_settings

WORDS = "the api server listens on port use uv pip lint with ruff is enabled disabled".split()
PAIRS = [("The API listens on port 80.", "The API listens on port 8080."), ("Use uv.", "Lint with ruff.")]


def build_tiny_model(where: Path, id2label: dict[int, str], winner: str) -> Path:
    """A 1-layer BERT whose head always favours ``winner``, saved with its WordPiece vocabulary."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    where.mkdir(parents=True)
    vocab = where / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, "."]) + "\n")
    tokenizer = BertTokenizer(str(vocab))
    config = BertConfig(
        vocab_size=len(WORDS) + 6, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64, num_labels=3,
        id2label=id2label, label2id={v: k for k, v in id2label.items()},
    )  # fmt: skip
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([6.0 if id2label[i] == winner else 0.0 for i in range(3)]))
    model.save_pretrained(where)
    tokenizer.save_pretrained(where)
    return where


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    labels = {0: "ENTAILMENT", 1: "neutral", 2: "Contradiction"}  # any order and case, as real NLI models vary
    return build_tiny_model(tmp_path_factory.mktemp("nli") / "tiny-nli", labels, "Contradiction")


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def test_a_local_cross_encoder_labels_pairs_offline(tmp_path, tiny_model, offline):
    env = {"HOME": str(tmp_path), "NOUS_NLI_CLASSIFIER": "cross-encoder"}
    config = tmp_path / ".claude" / "nous" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"nli": {"model_dir": str(tiny_model), "batch_size": 8}}))
    classifier = get_classifier(load_settings(env))
    assert isinstance(classifier, CrossEncoderClassifier)
    assert classifier.model_version.startswith("cross-encoder-tiny-nli-")
    verdicts = classifier.classify(PAIRS)
    assert [v.label for v in verdicts] == ["contradiction", "contradiction"]
    assert all(0.9 < v.confidence <= 1.0 for v in verdicts)
    assert classifier.classify([]) == []


def test_another_model_is_another_version(tmp_path, tiny_model, offline):
    other = build_tiny_model(tmp_path / "tiny-nli", {0: "contradiction", 1: "entailment", 2: "neutral"}, "neutral")
    first, second = CrossEncoderClassifier(tiny_model), CrossEncoderClassifier(other)
    assert first.model_version != second.model_version
    assert [v.label for v in second.classify(PAIRS)] == ["neutral", "neutral"]


def test_missing_or_unsuitable_models_fail_with_one_line(tmp_path, offline):
    with pytest.raises(ClassifierUnavailable, match="config.json missing"):
        CrossEncoderClassifier(tmp_path / "nowhere")
    odd = build_tiny_model(tmp_path / "sentiment", {0: "negative", 1: "neutral", 2: "positive"}, "positive")
    with pytest.raises(ClassifierUnavailable, match="has labels"):
        CrossEncoderClassifier(odd).classify(PAIRS)
    with pytest.raises(ConfigError, match="nli.model_dir"):
        load_settings({"HOME": str(tmp_path), "NOUS_NLI_CLASSIFIER": "cross-encoder"})
    with pytest.raises(ConfigError, match="nli.classifier"):
        load_settings({"HOME": str(tmp_path), "NOUS_NLI_CLASSIFIER": "magic"})
