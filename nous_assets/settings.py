"""One typed settings object, read from the environment and ``nous/config.json``.

Paths come from the environment (never hard-coded to ``~/.claude``); tunable thresholds come
from the JSON config file (spec gap G12) so users can change them without touching code.
Nothing is read at import time: call :func:`load_settings` when needed.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import date
from pathlib import Path
from typing import Any

from nous_assets.errors import ConfigError
from resolver import paths
from resolver.paths import FALSE_WORDS, TRUE_WORDS

FIRST_PARTITION_DAY = "2020-01-01"
"""The first day of the Dagster daily partitions (a constant, so the asset graph never depends on settings);
``partition_start`` picks which of those days the CLI and the sensor ingest, and may not go further back."""
RECALL_BUDGET_RANGE = (500, 20_000)
"""Characters an MCP ``recall`` answer may be asked to fill: it is read into Claude's context, a few pages at most."""


@dataclass(frozen=True)
class Thresholds:
    """Policy numbers from the spec, overridable in ``config.json`` under ``"thresholds"``.

    Only numbers some code reads are here (``nous config`` shows what takes effect): the spec's
    ``hot_tier_days`` is the default cutoff of ``nous archive`` (events recorded earlier go cold).
    """

    initial_reinforcement: float = 0.5
    reinforce_delta: float = 0.1
    weaken_delta: float = -0.2
    contradiction_multiplier: float = 0.7
    superseded_multiplier: float = 0.5
    nli_contradiction_confidence: float = 0.7
    concept_overlap_for_nli: float = 0.5
    nli_vector_cosine: float = 0.7
    dedup_jaccard: float = 0.75
    relearn_near_miss: float = 0.65
    relearn_cosine: float = 0.85  # tier 2: TF-IDF cosine at or above which a learning rewords a memory
    relearn_ambiguous: float = 0.70  # tier 2 cosines from here up to relearn_cosine: near-misses, tier 3 asked
    relearn_boost_delta: float = 0.3  # decision matrix "merge and boost"
    decay_period_days: int = 30  # a memory idle for a whole period of this many days decays once for it
    decay_factor: float = 0.5  # what one idle period leaves of a positive reinforcement score
    archive_below: float = 0.1  # a memory whose score falls below this is archived
    rotation_bound: int = 2000  # memories kept per scope (a project, or the global scope); the rest archived
    recency_half_life_days: float = 30.0
    injection_budget_chars: int = 8000  # a ceiling, not a target: lines must earn their place
    packet_min_confidence: float = 0.65  # retrieve/confidence.py: the bar a memory's evidence must reach
    # consolidation (issue 24): the cohesion a cluster needs, and how far its quality may tighten it
    consolidation_cohesion: float = 0.6
    consolidation_cohesion_max: float = 0.75
    # observers and interventions (issue 10, deliverable 5): when a candidate is emitted, kept, shown
    intervention_min_confidence: float = 0.6
    intervention_ttl_seconds: int = 7 * 86400
    intervention_cooldown_seconds: int = 3 * 86400
    intervention_max_per_packet: int = 3
    intervention_repeat_sessions: int = 2  # a user correction said again in this many sessions
    intervention_relearn_sessions: int = 3  # learned in this many sessions and never injected
    intervention_failure_sessions: int = 2  # the same command failure (a gotcha) in this many sessions
    intervention_contradiction_density: float = 0.2  # contradiction pairs per current memory of a domain
    intervention_contradiction_min_pairs: int = 2
    claude_md_min_sessions: int = 3  # `nous review claude-md`: memories recurring in this many sessions
    recall_budget_chars: int = 6000  # an MCP `recall` answer when the caller names no budget
    queue_max_attempts: int = 3
    queue_lease_seconds: int = 300
    queue_backoff_base_seconds: float = 30.0
    hot_tier_days: int = 90
    # team mode (issue 12): `nous serve` refuses larger request bodies (413); `nous push` sends this many per batch
    serve_max_body_bytes: int = 4 * 1024 * 1024
    push_batch_events: int = 200


@dataclass(frozen=True)
class ScoringWeights:
    """The spec's seven-dimension weights (sum 1.0 by default); config ``retrieve.weights``."""

    text: float = 0.15
    concept: float = 0.15
    vector: float = 0.15
    graph: float = 0.15
    reinforce: float = 0.15
    temporal: float = 0.15
    recency: float = 0.10


@dataclass(frozen=True)
class RetrieveSettings:
    """config ``retrieve``: fusion mode, weights, RRF constant, MMR trade-off, result size."""

    mode: str = "weighted"  # weighted | rrf
    weights: ScoringWeights = field(default_factory=ScoringWeights)
    rrf_k: int = 60
    mmr_lambda: float = 0.7
    top_k: int = 12
    candidates: int = 200
    # bm25 weight of a transcript chunk's neighbouring turns and of its date words, next to its own text (1.0)
    chunk_context_weight: float = 0.5
    chunk_date_weight: float = 0.5


@dataclass(frozen=True)
class EmbedSettings:
    """config ``embed``: provider (local MiniLM or OpenAI), model, dimensions, batch size, and how long one
    pipeline run may spend embedding (model load included); what is left waits for the next run.
    ``precision`` is the local model's arithmetic (auto: bfloat16 where the CPU computes it natively, else
    float32; or float32, bfloat16, int8 — vectors are stored under a name per variant, so a change
    re-embeds); ``min_words`` is how many words (two or more letters) a transcript chunk needs to be
    embedded at all: shorter ones ("ok", "continue", "/mcp") stay findable by full-text search only."""

    provider: str = "local"  # local | openai
    model: str = "all-MiniLM-L6-v2"
    dimensions: int = 384
    batch_size: int = 64
    run_budget_seconds: float = 300.0
    precision: str = "auto"  # local provider only: auto | float32 | bfloat16 | int8
    min_words: int = 3


@dataclass(frozen=True)
class NliSettings:
    """config ``nli``: which classifier labels candidate pairs of memories (``rules``, ``llm`` or
    ``cross-encoder``), the LLM route (``openai`` endpoint or the ``claude`` CLI, with the endpoint, key and
    model of the extractor settings), the local cross-encoder model directory (never downloaded), and how
    many pairs one call or one transaction takes."""

    classifier: str = "rules"  # rules | llm | cross-encoder
    llm_provider: str = "openai"  # openai | claude
    model_dir: str = ""
    batch_size: int = 64


@dataclass(frozen=True)
class Settings:
    claude_config_dir: Path
    data_dir: Path
    db_path: Path
    archive_dir: Path
    project_glob: str
    enable_userpromptsubmit: bool = False
    reextract_on_version_change: bool = False
    partition_start: str = "2025-01-01"
    config_path: Path | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)
    extractor: str = "heuristic"
    relearn_judge: str = "off"  # tier 3 of re-learning detection: off | openai
    opt_out_projects: tuple[str, ...] = ()
    openai_base_url: str | None = None
    openai_api_key: str | None = None
    openai_model: str = "gpt-4o-mini"
    claude_bin: str = "claude"
    claude_model: str = "sonnet"
    llm_timeout_seconds: float = 120.0
    db_busy_timeout_ms: int = 30_000  # how long a write waits for another process's lock on cortex.db
    retrieve: RetrieveSettings = field(default_factory=RetrieveSettings)
    embed: EmbedSettings = field(default_factory=EmbedSettings)
    nli: NliSettings = field(default_factory=NliSettings)
    backend: str = "sqlite"  # sqlite (one cortex.db) | postgres (team mode: NOUS_PG_DSN, NOUS_TENANT)
    pg_dsn: str | None = None
    tenant_id: str = "local"
    server_url: str | None = None  # nous push / nous pull: NOUS_SERVER_URL (http://host:port or unix:///path)
    server_token: str | None = field(default=None, repr=False)  # NOUS_SERVER_TOKEN: never printed or passed on

    @property
    def lake_dir(self) -> Path:
        return self.data_dir / "lake"

    @property
    def wake_marker(self) -> Path:
        """Touched by the Stop hook; makes the next sensor tick scan at once."""
        return self.data_dir / paths.WAKE_NAME

    @property
    def access_spool(self) -> Path:
        """Injections the SessionStart hook logged here while the database was busy."""
        return self.data_dir / paths.SPOOL_NAME


def _env_bool(env: dict[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None:
        return default
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ConfigError(f"environment variable {name}={raw!r} is not a boolean (use true/false)")


def _env_int(env: dict[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(f"environment variable {name}={raw!r} must be a whole number >= 0")
    return value


def default_config_path(claude_config_dir: Path, env: dict[str, str]) -> Path:
    explicit = env.get("NOUS_CONFIG_FILE")
    return Path(explicit).expanduser() if explicit else claude_config_dir / "nous" / "config.json"


def _check_number(path: Path, key: str, value: Any, expected: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{path}: key {key!r} must be a number, got {type(value).__name__} {value!r}")
    if expected is int:
        if isinstance(value, float) and not value.is_integer():
            raise ConfigError(f"{path}: key {key!r} must be a whole number, got {value!r}")
        return int(value)
    return float(value)


def _read_config(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: config file is not valid UTF-8") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a JSON object, got {type(data).__name__}")
    return data


_TOP_LEVEL_KEYS = {
    "thresholds", "partition_start", "extractor", "relearn_judge", "opt_out_projects", "embed", "retrieve", "nli"
}  # fmt: skip


_UNIT_INTERVAL = (
    "contradiction_multiplier", "superseded_multiplier", "concept_overlap_for_nli", "nli_vector_cosine",
    "nli_contradiction_confidence", "decay_factor",
)  # fmt: skip
"""Thresholds that are fractions in (0, 1]."""


def _parse_thresholds(path: Path, raw: Any) -> Thresholds:
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: key 'thresholds' must be an object, got {type(raw).__name__}")
    known = {f.name: f for f in fields(Thresholds)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            raise ConfigError(f"{path}: unknown key 'thresholds.{key}' (known: {', '.join(sorted(known))})")
        expected = int if isinstance(getattr(Thresholds(), key), int) else float
        values[key] = _check_number(path, f"thresholds.{key}", value, expected)
    thresholds = replace(Thresholds(), **values)
    for name in _UNIT_INTERVAL:
        if not 0 < (v := getattr(thresholds, name)) <= 1:
            raise ConfigError(f"{path}: key 'thresholds.{name}' must be in (0, 1], got {v}")
    if thresholds.injection_budget_chars <= 0 or thresholds.injection_budget_chars > 10_000:
        raise ConfigError(
            f"{path}: key 'thresholds.injection_budget_chars' must be in 1..10000 "
            "(Claude Code replaces larger context with a preview)"
        )
    low, high = RECALL_BUDGET_RANGE
    if not low <= thresholds.recall_budget_chars <= high:
        raise ConfigError(f"{path}: key 'thresholds.recall_budget_chars' must be in {low}..{high}")
    if thresholds.queue_max_attempts < 1:
        raise ConfigError(f"{path}: key 'thresholds.queue_max_attempts' must be >= 1")
    for name in ("intervention_min_confidence", "packet_min_confidence"):
        if not 0 <= getattr(thresholds, name) <= 1:
            raise ConfigError(f"{path}: key 'thresholds.{name}' must be in [0, 1]")
    if not 0 < thresholds.consolidation_cohesion <= thresholds.consolidation_cohesion_max <= 1:
        raise ConfigError(f"{path}: keys 'thresholds.consolidation_cohesion' <= "
                          "'thresholds.consolidation_cohesion_max' must be in (0, 1]")  # fmt: skip
    for name in ("intervention_ttl_seconds", "intervention_cooldown_seconds", "intervention_max_per_packet",
                 "intervention_repeat_sessions", "intervention_relearn_sessions", "intervention_failure_sessions",
                 "intervention_contradiction_min_pairs", "claude_md_min_sessions"):  # fmt: skip
        if getattr(thresholds, name) < 0:
            raise ConfigError(f"{path}: key 'thresholds.{name}' must not be negative")
    _check_lifecycle(path, thresholds)
    if thresholds.hot_tier_days < 1:
        raise ConfigError(f"{path}: key 'thresholds.hot_tier_days' must be >= 1 (days of events kept in cortex.db)")
    if thresholds.serve_max_body_bytes < 1024:
        raise ConfigError(f"{path}: key 'thresholds.serve_max_body_bytes' must be >= 1024")
    if not 1 <= thresholds.push_batch_events <= 1000:
        raise ConfigError(f"{path}: key 'thresholds.push_batch_events' must be in 1..1000 (the server's batch limit)")
    return thresholds


def _check_lifecycle(path: Path, t: Thresholds) -> None:
    """Re-learning, decay and archival numbers that would make the lifecycle misbehave are refused."""
    if not 0 < t.relearn_ambiguous <= t.relearn_cosine <= 1:
        raise ConfigError(
            f"{path}: keys 'thresholds.relearn_ambiguous' <= 'thresholds.relearn_cosine' must be in (0, 1]"
        )
    if t.decay_period_days < 1 or t.rotation_bound < 1:
        raise ConfigError(f"{path}: keys 'thresholds.decay_period_days' and 'thresholds.rotation_bound' must be >= 1")
    if not 0 <= t.archive_below < t.initial_reinforcement:
        raise ConfigError(
            f"{path}: key 'thresholds.archive_below' must be in [0, initial_reinforcement), got {t.archive_below} "
            "(a new memory would be archived at once)"
        )
    if t.relearn_boost_delta <= 0:
        raise ConfigError(f"{path}: key 'thresholds.relearn_boost_delta' must be positive")


def _parse_section(path: Path, name: str, raw: Any, cls: type, nested: dict[str, type] | None = None) -> Any:
    """A flat typed section of config.json: known keys only, values of the default's type."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: key {name!r} must be an object, got {type(raw).__name__}")
    defaults = cls()
    known = {f.name for f in fields(cls)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            raise ConfigError(f"{path}: unknown key '{name}.{key}' (known: {', '.join(sorted(known))})")
        default = getattr(defaults, key)
        if nested and key in nested:
            values[key] = _parse_section(path, f"{name}.{key}", value, nested[key])
        elif isinstance(default, str):
            if not isinstance(value, str):
                raise ConfigError(f"{path}: key '{name}.{key}' must be a string, got {value!r}")
            values[key] = value
        else:
            values[key] = _check_number(path, f"{name}.{key}", value, int if isinstance(default, int) else float)
            if values[key] < 0:
                raise ConfigError(f"{path}: key '{name}.{key}' must not be negative")
    return replace(defaults, **values)


def _check_partition_start(path: Path, value: Any) -> None:
    """A 'YYYY-MM-DD' date on or after :data:`FIRST_PARTITION_DAY` (days before it have no partition)."""
    try:
        ok = isinstance(value, str) and len(value) == 10 and bool(date.fromisoformat(value))
    except ValueError:
        ok = False
    if not ok:
        raise ConfigError(f"{path}: key 'partition_start' (or NOUS_PARTITION_START) must be a date 'YYYY-MM-DD'")
    if value < FIRST_PARTITION_DAY:
        raise ConfigError(
            f"{path}: key 'partition_start' (or NOUS_PARTITION_START) must be on or after {FIRST_PARTITION_DAY}, "
            f"the first daily partition; got {value}"
        )


NLI_CLASSIFIERS = ("rules", "llm", "cross-encoder")
EMBED_PRECISIONS = ("auto", "float32", "bfloat16", "int8")


def _parse_nli(path: Path, raw: Any, env: dict[str, str]) -> NliSettings:
    """config ``nli`` (``NOUS_NLI_CLASSIFIER`` overrides the classifier): known names and a usable setup."""
    nli = _parse_section(path, "nli", raw, NliSettings)
    if env.get("NOUS_NLI_CLASSIFIER"):
        nli = replace(nli, classifier=env["NOUS_NLI_CLASSIFIER"])
    if nli.classifier not in NLI_CLASSIFIERS:
        raise ConfigError(
            f"{path}: key 'nli.classifier' must be one of {', '.join(NLI_CLASSIFIERS)}, got {nli.classifier!r}"
        )
    if nli.llm_provider not in ("openai", "claude"):
        raise ConfigError(f"{path}: key 'nli.llm_provider' must be openai or claude, got {nli.llm_provider!r}")
    if nli.classifier == "cross-encoder" and not nli.model_dir:
        raise ConfigError(f"{path}: key 'nli.model_dir' must name a local model directory for the cross-encoder")
    if nli.batch_size < 1:
        raise ConfigError(f"{path}: key 'nli.batch_size' must be >= 1")
    return nli


def _parse_backend(env: dict[str, str]) -> tuple[str, str | None, str]:
    """``NOUS_BACKEND`` (sqlite | postgres), ``NOUS_PG_DSN`` (required for postgres) and ``NOUS_TENANT``."""
    backend = (env.get("NOUS_BACKEND") or "sqlite").strip().lower()
    if backend not in ("sqlite", "postgres"):
        raise ConfigError(f"environment variable NOUS_BACKEND={backend!r} must be sqlite or postgres")
    dsn = env.get("NOUS_PG_DSN") or None
    if backend == "postgres" and not dsn:
        raise ConfigError(
            "NOUS_BACKEND=postgres needs NOUS_PG_DSN (e.g. postgresql://nous@db.internal:5432/nous)"
        )
    tenant = env.get("NOUS_TENANT") or "local"
    if len(tenant) > 128 or not tenant.isprintable() or not tenant.strip():
        raise ConfigError("environment variable NOUS_TENANT must be a printable name of at most 128 characters")
    return backend, dsn, tenant


def load_settings(env: dict[str, str] | None = None) -> Settings:
    """Resolve settings from ``env`` (default ``os.environ``) and the JSON config file.

    Raises :class:`ConfigError` with the file and key for any malformed value.
    """
    env = dict(os.environ if env is None else env)
    home = Path(env.get("HOME") or Path.home())
    claude_dir = Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude").expanduser()
    data_dir, db_path, archive_dir = paths.data_dir(env), paths.db_path(env), paths.archive_dir(env)
    project_glob = env.get("NOUS_PROJECT_GLOB") or str(claude_dir / "projects" / "**" / "*.jsonl")

    config_path = default_config_path(claude_dir, env)
    raw = _read_config(config_path)
    for key in raw:
        if key not in _TOP_LEVEL_KEYS:
            raise ConfigError(f"{config_path}: unknown key {key!r} (known: {', '.join(sorted(_TOP_LEVEL_KEYS))})")
    thresholds = _parse_thresholds(config_path, raw.get("thresholds", {}))
    partition_start = raw.get("partition_start", "2025-01-01")
    partition_start = env.get("NOUS_PARTITION_START") or partition_start
    _check_partition_start(config_path, partition_start)
    extractor = env.get("NOUS_EXTRACTOR") or raw.get("extractor", "heuristic")
    if extractor not in {"heuristic", "claude", "openai"}:
        raise ConfigError(f"{config_path}: key 'extractor' must be heuristic, claude or openai, got {extractor!r}")
    relearn_judge = env.get("NOUS_RELEARN_JUDGE") or raw.get("relearn_judge", "off")
    if relearn_judge not in ("off", "openai"):
        raise ConfigError(f"{config_path}: key 'relearn_judge' must be off or openai, got {relearn_judge!r}")
    retrieve = _parse_section(config_path, "retrieve", raw.get("retrieve", {}), RetrieveSettings,
                              {"weights": ScoringWeights})
    if retrieve.mode not in ("weighted", "rrf"):
        raise ConfigError(f"{config_path}: key 'retrieve.mode' must be weighted or rrf, got {retrieve.mode!r}")
    if not 0 <= retrieve.mmr_lambda <= 1:
        raise ConfigError(f"{config_path}: key 'retrieve.mmr_lambda' must be in [0, 1]")
    for key in ("chunk_context_weight", "chunk_date_weight"):
        if not 0 <= getattr(retrieve, key) <= 1:
            raise ConfigError(f"{config_path}: key 'retrieve.{key}' must be in [0, 1]")
    embed = _parse_section(config_path, "embed", raw.get("embed", {}), EmbedSettings)
    if env.get("NOUS_EMBED_PROVIDER"):
        embed = replace(embed, provider=env["NOUS_EMBED_PROVIDER"])
    if embed.provider not in ("local", "openai"):
        raise ConfigError(f"{config_path}: key 'embed.provider' must be local or openai, got {embed.provider!r}")
    if embed.dimensions < 1 or embed.batch_size < 1:
        raise ConfigError(f"{config_path}: keys 'embed.dimensions' and 'embed.batch_size' must be positive")
    if embed.precision not in EMBED_PRECISIONS:
        raise ConfigError(
            f"{config_path}: key 'embed.precision' must be one of {', '.join(EMBED_PRECISIONS)}, "
            f"got {embed.precision!r}"
        )
    nli = _parse_nli(config_path, raw.get("nli", {}), env)
    backend, pg_dsn, tenant_id = _parse_backend(env)
    opt_out = raw.get("opt_out_projects", [])
    if not isinstance(opt_out, list) or not all(isinstance(p, str) for p in opt_out):
        raise ConfigError(f"{config_path}: key 'opt_out_projects' must be a list of project ids")

    return Settings(
        claude_config_dir=claude_dir,
        data_dir=data_dir,
        db_path=db_path,
        archive_dir=archive_dir,
        project_glob=project_glob,
        enable_userpromptsubmit=_env_bool(env, "NOUS_ENABLE_USERPROMPTSUBMIT", False),
        reextract_on_version_change=_env_bool(env, "NOUS_REEXTRACT_ON_VERSION_CHANGE", False),
        partition_start=partition_start,
        config_path=config_path,
        thresholds=thresholds,
        extractor=extractor,
        relearn_judge=relearn_judge,
        opt_out_projects=tuple(opt_out),
        openai_base_url=env.get("NOUS_OPENAI_BASE_URL") or env.get("OPENAI_BASE_URL") or None,
        openai_api_key=env.get("NOUS_OPENAI_API_KEY") or env.get("OPENAI_API_KEY") or None,
        openai_model=env.get("NOUS_OPENAI_MODEL") or "gpt-4o-mini",
        claude_bin=env.get("NOUS_CLAUDE_BIN") or "claude",
        claude_model=env.get("NOUS_CLAUDE_MODEL") or "sonnet",
        db_busy_timeout_ms=_env_int(env, "NOUS_DB_BUSY_TIMEOUT_MS", 30_000),
        retrieve=retrieve,
        embed=embed,
        nli=nli,
        backend=backend,
        pg_dsn=pg_dsn,
        tenant_id=tenant_id,
        server_url=env.get("NOUS_SERVER_URL") or None,
        server_token=env.get("NOUS_SERVER_TOKEN") or None,
    )


def settings_to_json(settings: Settings) -> str:
    """The resolved settings as JSON: what ``nous config`` shows, and how a run's resource carries them.

    The server token is left out: a Dagster run's config is stored, and no run needs it."""
    data = asdict(settings)
    data.pop("server_token", None)
    return json.dumps(data, default=str, sort_keys=True)


_PATH_FIELDS = ("claude_config_dir", "data_dir", "db_path", "archive_dir", "config_path")


def settings_from_json(text: str) -> Settings:
    """The inverse of :func:`settings_to_json` (settings resolved once, handed to a Dagster run as config)."""
    raw = json.loads(text)
    for name in _PATH_FIELDS:
        if raw.get(name) is not None:
            raw[name] = Path(raw[name])
    retrieve = dict(raw["retrieve"])
    retrieve["weights"] = ScoringWeights(**retrieve["weights"])
    raw["retrieve"] = RetrieveSettings(**retrieve)
    raw["embed"] = EmbedSettings(**raw["embed"])
    raw["nli"] = NliSettings(**raw["nli"])
    raw["thresholds"] = Thresholds(**raw["thresholds"])
    raw["opt_out_projects"] = tuple(raw["opt_out_projects"])
    return Settings(**raw)
