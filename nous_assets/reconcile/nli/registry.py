"""The configured NLI classifier (``nli.classifier`` in config.json, or ``NOUS_NLI_CLASSIFIER``)."""

from __future__ import annotations

from nous_assets.reconcile.nli.base import Classifier
from nous_assets.reconcile.nli.rules import RulesClassifier
from nous_assets.settings import Settings


def get_classifier(settings: Settings) -> Classifier:
    nli = settings.nli
    if nli.classifier == "llm":
        from nous_assets.reconcile.nli.llm import ClaudeCliClassifier, OpenAIClassifier

        return ClaudeCliClassifier(settings) if nli.llm_provider == "claude" else OpenAIClassifier(settings)
    if nli.classifier == "cross-encoder":
        from nous_assets.reconcile.nli.cross_encoder import CrossEncoderClassifier

        return CrossEncoderClassifier(nli.model_dir, batch_size=nli.batch_size)
    return RulesClassifier()
