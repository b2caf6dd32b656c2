"""NLI settings: the overlap and cosine thresholds and the classifier section of config.json."""

from __future__ import annotations

import json

import pytest

from nous_assets.errors import ConfigError
from nous_assets.reconcile.nli.registry import get_classifier
from nous_assets.reconcile.nli.rules import RulesClassifier
from nous_assets.settings import load_settings, settings_from_json, settings_to_json


def _env(tmp_path, config: dict) -> dict[str, str]:
    path = tmp_path / ".claude" / "nous" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config))
    return {"HOME": str(tmp_path)}


def test_nli_thresholds_and_section_come_from_config(tmp_path):
    env = _env(tmp_path, {"thresholds": {"concept_overlap_for_nli": 0.6, "nli_vector_cosine": 0.9},
                          "nli": {"batch_size": 16}})  # fmt: skip
    settings = load_settings(env)
    assert settings.thresholds.concept_overlap_for_nli == 0.6 and settings.thresholds.nli_vector_cosine == 0.9
    assert settings.nli.classifier == "rules" and settings.nli.batch_size == 16
    assert isinstance(get_classifier(settings), RulesClassifier)
    assert settings_from_json(settings_to_json(settings)) == settings  # how a run's resource carries them


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ({"thresholds": {"concept_overlap_for_nli": 1.5}}, "concept_overlap_for_nli"),
        ({"thresholds": {"nli_vector_cosine": 0}}, "nli_vector_cosine"),
        ({"nli": {"llm_provider": "bard"}}, "nli.llm_provider"),
        ({"nli": {"batch_size": 0}}, "nli.batch_size"),
        ({"nli": {"colour": "red"}}, "unknown key 'nli.colour'"),
    ],
)
def test_bad_nli_settings_name_the_key(tmp_path, config, fragment):
    with pytest.raises(ConfigError, match=fragment):
        load_settings(_env(tmp_path, config))
