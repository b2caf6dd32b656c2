"""Settings: environment defaults (never a hard-coded ~/.claude) and clear errors for bad config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nous_assets.errors import ConfigError
from nous_assets.settings import load_settings


def test_defaults_follow_env_fallbacks(tmp_path):
    s = load_settings({"HOME": str(tmp_path)})
    assert s.claude_config_dir == tmp_path / ".claude"
    assert s.data_dir == tmp_path / ".local" / "share" / "nous"
    assert s.db_path == s.data_dir / "cortex.db"
    assert s.archive_dir == s.data_dir / "archive"
    assert s.project_glob == str(tmp_path / ".claude" / "projects" / "**" / "*.jsonl")
    assert s.enable_userpromptsubmit is False and s.reextract_on_version_change is False
    assert s.config_path == tmp_path / ".claude" / "nous" / "config.json"


def test_env_overrides(tmp_path):
    env = {
        "HOME": str(tmp_path),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"),
        "XDG_DATA_HOME": str(tmp_path / "xdg"),
        "NOUS_DB_PATH": str(tmp_path / "x.db"),
        "NOUS_ENABLE_USERPROMPTSUBMIT": "true",
        "NOUS_REEXTRACT_ON_VERSION_CHANGE": "1",
    }
    s = load_settings(env)
    assert s.data_dir == tmp_path / "xdg" / "nous"
    assert s.db_path == tmp_path / "x.db"
    assert s.project_glob.startswith(str(tmp_path / "cc" / "projects"))
    assert s.enable_userpromptsubmit and s.reextract_on_version_change


def _with_config(tmp_path: Path, text: str) -> dict[str, str]:
    cfg = tmp_path / ".claude" / "nous" / "config.json"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(text)
    return {"HOME": str(tmp_path)}


def test_thresholds_come_from_config_file(tmp_path):
    env = _with_config(tmp_path, json.dumps({"thresholds": {"dedup_jaccard": 0.8, "injection_budget_chars": 6000}}))
    t = load_settings(env).thresholds
    assert t.dedup_jaccard == 0.8 and t.injection_budget_chars == 6000


def test_intervention_thresholds_come_from_config_file(tmp_path):
    env = _with_config(tmp_path, json.dumps({"thresholds": {"intervention_ttl_seconds": 3600,
                                                            "intervention_min_confidence": 0.75}}))  # fmt: skip
    t = load_settings(env).thresholds
    assert t.intervention_ttl_seconds == 3600 and t.intervention_min_confidence == 0.75
    assert t.intervention_cooldown_seconds == 3 * 86400  # the default where config says nothing


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("{not json", "invalid JSON at line 1"),
        ("[1, 2]", "top level must be a JSON object"),
        ('{"thresholds": {"dedup_jaccard": "low"}}', "'thresholds.dedup_jaccard' must be a number"),
        ('{"thresholds": {"archiv_below": 0.1}}', "unknown key 'thresholds.archiv_below'"),
        ('{"thresholds": {"contradiction_multiplier": 2}}', "'thresholds.contradiction_multiplier' must be in (0, 1]"),
        ('{"thresholds": {"injection_budget_chars": 20000}}', "injection_budget_chars"),
        ('{"thresholds": {"queue_max_attempts": 2.5}}', "must be a whole number"),
        ('{"colour": "blue"}', "unknown key 'colour'"),
        ('{"extractor": "magic"}', "key 'extractor'"),
        ('{"thresholds": []}', "key 'thresholds' must be an object"),
        ('{"thresholds": {"intervention_min_confidence": 1.5}}', "'thresholds.intervention_min_confidence' must be"),
        ('{"thresholds": {"intervention_ttl_seconds": -1}}', "'thresholds.intervention_ttl_seconds' must not be"),
    ],
)
def test_malformed_config_names_file_and_key(tmp_path, text, fragment):
    env = _with_config(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_settings(env)
    assert fragment in str(info.value)
    assert "config.json" in str(info.value)


def test_bad_boolean_env_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="NOUS_ENABLE_USERPROMPTSUBMIT"):
        load_settings({"HOME": str(tmp_path), "NOUS_ENABLE_USERPROMPTSUBMIT": "maybe"})


def test_retrieve_and_embed_sections(tmp_path):
    env = _with_config(
        tmp_path,
        json.dumps({"retrieve": {"mode": "rrf", "weights": {"vector": 0.3}, "top_k": 8},
                    "embed": {"provider": "openai", "dimensions": 512}}),
    )
    s = load_settings(env)
    assert s.retrieve.mode == "rrf" and s.retrieve.weights.vector == 0.3 and s.retrieve.weights.text == 0.15
    assert s.retrieve.top_k == 8 and s.embed.provider == "openai" and s.embed.dimensions == 512
    assert s.retrieve.chunk_context_weight == 0.5 and s.retrieve.chunk_date_weight == 0.5  # defaults


@pytest.mark.parametrize(
    ("section", "fragment"),
    [
        ({"retrieve": {"mode": "magic"}}, "'retrieve.mode'"),
        ({"retrieve": {"weights": {"vibes": 1}}}, "unknown key 'retrieve.weights.vibes'"),
        ({"retrieve": {"weights": {"text": "high"}}}, "'retrieve.weights.text' must be a number"),
        ({"embed": {"provider": "cloud"}}, "'embed.provider'"),
        ({"embed": {"dimensions": 0}}, "embed.dimensions"),
        ({"retrieve": {"chunk_context_weight": 1.5}}, "'retrieve.chunk_context_weight' must be in"),
        ({"retrieve": {"chunk_date_weight": -1}}, "'retrieve.chunk_date_weight' must not be negative"),
    ],
)
def test_bad_retrieve_or_embed_config(tmp_path, section, fragment):
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(").replace(".", r"\.")):
        load_settings(_with_config(tmp_path, json.dumps(section)))


@pytest.mark.parametrize("key", ["no_such_threshold"])
def test_thresholds_nothing_reads_are_not_offered(tmp_path, key):
    """Issue 9 item 7: `nous config` shows only what takes effect; a retired key is a clear error, not a no-op."""
    env = _with_config(tmp_path, json.dumps({"thresholds": {key: 0.5}}))
    with pytest.raises(ConfigError, match=f"unknown key 'thresholds.{key}'"):
        load_settings(env)
    assert not hasattr(load_settings({"HOME": str(tmp_path / "other")}).thresholds, key)


def test_lifecycle_thresholds_are_read_and_checked(tmp_path):
    """Issue 10: archive_below is back (retention reads it) with the decay and rotation numbers."""
    env = _with_config(tmp_path, json.dumps({"thresholds": {"archive_below": 0.2, "rotation_bound": 50}}))
    t = load_settings(env).thresholds
    assert (t.archive_below, t.rotation_bound, t.decay_period_days) == (0.2, 50, 30)
    for bad, fragment in [({"archive_below": 0.5}, "archive_below"), ({"decay_factor": 0}, "decay_factor"),
                          ({"rotation_bound": 0}, "rotation_bound"), ({"relearn_ambiguous": 0.9}, "relearn_ambiguous")]:
        with pytest.raises(ConfigError, match=fragment):
            load_settings(_with_config(tmp_path, json.dumps({"thresholds": bad})))


def test_hot_tier_days_sets_the_default_archive_cutoff(tmp_path):
    """``nous archive`` without --before moves what is older than ``thresholds.hot_tier_days``."""
    settings = load_settings(_with_config(tmp_path, json.dumps({"thresholds": {"hot_tier_days": 30}})))
    assert settings.thresholds.hot_tier_days == 30
    with pytest.raises(ConfigError, match="hot_tier_days' must be >= 1"):
        load_settings(_with_config(tmp_path, json.dumps({"thresholds": {"hot_tier_days": 0}})))


@pytest.mark.parametrize(
    ("start", "fragment"), [("2019-12-31", "on or after 2020-01-01"), ("01/02/2025", "YYYY-MM-DD")]
)
def test_partition_start_must_name_a_partition_day(tmp_path, start, fragment):
    env = {**_with_config(tmp_path, "{}"), "NOUS_PARTITION_START": start}
    with pytest.raises(ConfigError, match=fragment):
        load_settings(env)


def test_settings_survive_the_trip_through_run_config(tmp_path):
    """`NousResource.of(settings)` carries resolved settings as JSON: the round trip loses nothing."""
    from nous_assets.settings import settings_from_json, settings_to_json

    env = _with_config(tmp_path, json.dumps({"thresholds": {"reinforce_delta": 0.3}, "opt_out_projects": ["-x"],
                                             "retrieve": {"weights": {"text": 0.5}}, "embed": {"batch_size": 7}}))
    settings = load_settings({**env, "NOUS_DATA_DIR": str(tmp_path / "d"), "NOUS_PARTITION_START": "2024-03-01"})
    assert settings_from_json(settings_to_json(settings)) == settings
