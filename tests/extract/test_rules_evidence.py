"""Evidence and status (rules/evidence.py): what a candidate rests on, and what the rest of its session showed."""

from __future__ import annotations

from excerpts import (
    FLUTTER_REVIEW,
    FLUTTER_VERIFY,
    IRONCLAW_MERGE,
    SPOTTER_A0Y,
    WAKIL_CI,
    WAKIL_QMD,
    assistant,
    bash,
    edit,
    excerpt,
    extract,
    line_of,
    result,
    run,
    stream_of,
    user,
    whole,
)

from nous_assets.extract.rules.evidence import cites, removed_paths
from nous_assets.extract.rules.session import build_streams


def _by_uuid(rel: str, batch) -> dict:
    return {t.uuid: t for t in batch.turns}


def _lines(rel: str, batch, record: dict) -> list[int]:
    turns = _by_uuid(rel, batch)
    return [line_of(rel, turns[e["uuid"]]) for e in record["evidence"] if e["uuid"] in turns]


def test_real_rejected_explanation_becomes_refuted():
    # ironclaw 69ab36dd L1126: "the `source` command … is causing the old script version to be loaded";
    # L1130 the user: "Note that it's not using an old version of the script … Your 'fix' didn't work either."
    batch = excerpt(IRONCLAW_MERGE, 1100, 1140)
    (r,) = [r for r in extract(batch) if "old script version" in r["content"]]
    assert r["status"] == "refuted"
    assert [e["status"] for e in r["evidence"]] == ["hypothesis", "refuted"]
    assert _lines(IRONCLAW_MERGE, batch, r) == [1125, 1130]
    assert "not using an old version" in r["evidence"][1]["what"]


def test_real_unconfirmed_diagnosis_is_a_hypothesis():
    # same session, L1132 on: "The `// \"UNKNOWN\"` in your jq expression is being interpreted as a comment" —
    # nothing confirmed it (the session's later fixes failed too): reasoning, not a learning
    out = extract(excerpt(IRONCLAW_MERGE, 1100, 1160))
    (r,) = [r for r in out if "interpreted as a comment" in r["content"]]
    assert r["status"] == "hypothesis"


def test_real_intermediate_fix_the_session_undid_is_superseded():
    # spotter fa812bfe: `mix credo --strict …` fails on an alias (L401); the edit that "fixed" it is put back by a
    # later edit (L520): that fix did not stand
    batch = whole(SPOTTER_A0Y)
    (r,) = [r for r in extract(batch) if r["content"].startswith("`mix credo --strict lib/spotter/services/active")]
    assert r["status"] == "superseded"
    assert _lines(SPOTTER_A0Y, batch, r) == [401, 520]
    assert "undone" in r["evidence"][-1]["what"]


def test_real_diagnosis_the_same_check_then_disproves_is_refuted():
    # spotter fa812bfe L500: "The `rescue` is what causes the compiler to think the alias is unused." — the same
    # `mix credo --strict` fails again at L519
    batch = whole(SPOTTER_A0Y)
    (r,) = [r for r in extract(batch) if r["content"].startswith("The `rescue` is what causes")]
    assert r["status"] == "refuted" and _lines(SPOTTER_A0Y, batch, r) == [500, 519]


def test_real_file_the_session_deleted_supersedes_what_it_learned_about_it():
    # flutter-docker-image 4382554b: config/debian_13_trixie.sources is added (L80–L247), then `git rm` (L288)
    batch = whole(FLUTTER_REVIEW)
    about = [r for r in extract(batch) if "debian_13_trixie.sources" in r["content"]]
    assert about and all(r["status"] == "superseded" for r in about)
    assert {_lines(FLUTTER_REVIEW, batch, r)[-1] for r in about} == {288}


def test_real_reversed_plan_is_superseded_and_the_new_one_holds():
    # wakil 5c5242ad L82: asked how CI authenticates, answered "Claude Code GitHub App / OAuth"; L93 the user:
    # "actually lets go with the ANTHROPIC_API_KEY approach you recommended"
    batch = whole(WAKIL_CI)
    decisions = {r["content"][:60]: r for r in extract(batch) if r["kind"] == "decision"}
    (old,) = [r for k, r in decisions.items() if "How should the CI job authenticate" in k]
    (new,) = [r for k, r in decisions.items() if "ANTHROPIC_API_KEY" in k]
    assert old["status"] == "superseded" and new["status"] == "stated"
    assert _lines(WAKIL_CI, batch, old) == [82, 93]
    assert "(replacing: Decision: asked \"How should the CI job authenticate" in new["content"]  # stands on its own


def test_real_wish_settled_by_a_later_choice_is_superseded():
    # wakil 09cc95ef: the user wants the QMD index stored in wakil.db; told qmd owns its own SQLite file, the user
    # picks "Sibling file in .wakil/" — the wish is history, the choice holds
    out = extract(whole(WAKIL_QMD))
    (wish,) = [r for r in out if r["kind"] == "preference" and "stored in wakil's db" in r["content"]]
    (choice,) = [r for r in out if r["kind"] == "decision" and "Sibling file in .wakil/" in r["content"]]
    assert wish["status"] == "superseded" and choice["status"] == "stated"


def test_real_removal_with_a_cd_is_relative_to_the_session():
    # flutter-docker-image 9c4f30d9 L118: `cd <checkout>; …; rm openspec/changes/loud-deb-pin-resolution/research.md`
    (removal, *_) = [r for s in build_streams(whole(FLUTTER_VERIFY)) for r in removed_paths(s)]
    assert removal.path == "openspec/changes/loud-deb-pin-resolution/research.md"


def test_the_user_confirming_an_explanation_verifies_it():
    out = run(
        user("Why does the queue stall?"),
        assistant("The queue stalls because `lease_seconds` is shorter than the slowest extraction in worker.py."),
        user("yes, exactly"),
    )
    assert [r["status"] for r in out if "lease_seconds" in r["content"]] in ([], ["verified"])


def test_checks_that_passed_are_verified_and_user_words_stated():
    out = run(
        assistant("", bash("uv run pytest -q", "b1")),
        result("b1", "ImportError: cannot import name 'tomllib' (requires-python is 3.10)", is_error=True),
        assistant("", edit("/home/dev/proj/pyproject.toml", "e1", 'requires-python = ">=3.10"',
                           'requires-python = ">=3.11"')),
        result("e1", "The file /home/dev/proj/pyproject.toml has been updated successfully."),
        assistant("", bash("uv run pytest -q", "b2")),
        result("b2", "275 passed"),
        user("From now on, always run the tests with `uv run pytest -q` before committing."),
    )
    statuses = {r["kind"]: r["status"] for r in out}
    assert statuses.get("gotcha") == "verified" and statuses.get("preference") == "stated"


def test_a_path_is_cited_as_a_whole_segment_only():
    assert cites("see docs/setup.md for details", "docs/setup.md")
    assert cites("everything under docs/old/ is generated", "docs/old")
    assert not cites("see docs/setup.md.bak", "docs/setup.md")
    assert not cites("mydocs/setup.md", "docs/setup.md")
    assert not cites("run the build first", "build")  # a bare word is prose as often as a path


def test_stream_of_a_real_session_has_no_removals_when_nothing_was_removed():
    assert removed_paths(stream_of(excerpt(WAKIL_CI, 1, 60))) == []
