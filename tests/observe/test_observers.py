"""The observers over a real cortex.db: which conditions become intervention candidates, and which do not."""

from __future__ import annotations

from observe_history import learn, relearn

from nous_assets.observe.run import observe, observe_and_reduce
from nous_assets.retrieve.packet import withheld
from nous_assets.settings import Thresholds
from nous_assets.store.db import IntegrityError, atomic
from nous_assets.store.reads.access_log import insert_accesses
from nous_assets.store.sqlite import interventions
from nous_assets.store.sqlite.projection import project

NOW = "2026-04-01T00:00:00.000000Z"
T = Thresholds()


def _by_reason(candidates) -> dict[str, list]:
    out: dict[str, list] = {}
    for c in candidates:
        for reason in c.reason_codes:
            out.setdefault(reason, []).append(c)
    return out


def test_a_correction_repeated_in_another_session_is_a_candidate(store, conn):
    learn(store, "once", "User correction: the API lives under /v2, not /v1", session="a")
    mem = learn(store, "twice", "User correction: run the linter from the repo root", session="a", day="2026-03-01")
    relearn(store, "twice", session="b", day="2026-03-05")
    relearn(store, "twice", session="b#agent-x", day="2026-03-05")  # a subagent of b: still session b
    project(conn)
    found = _by_reason(observe(conn, T, NOW)[0])
    [candidate] = found["repeated_correction"]
    assert candidate.dedupe_key == "learning:twice" and candidate.target_project_id == "shop"
    assert candidate.evidence["memory_id"] == mem
    assert [s for s, _ in candidate.evidence["sessions"]] == ["a", "b"]
    assert "2 sessions (2026-03-01 to 2026-03-05)" in candidate.payload_text
    assert "linter from the repo root" in candidate.payload_text
    assert candidate.confidence >= T.intervention_min_confidence


def test_a_fact_repeated_is_not_a_correction(store, conn):
    learn(store, "fact", "The API lives under /v2", kind="architecture", session="a")
    relearn(store, "fact", session="b", day="2026-03-05")
    project(conn)
    assert "repeated_correction" not in _by_reason(observe(conn, T, NOW)[0])


def test_relearned_three_times_and_never_injected(store, conn):
    mem = learn(store, "cfg", "config/dev.exs serves on port 4000", kind="configuration", session="a")
    for s in ("b", "c"):
        relearn(store, "cfg", session=s, day="2026-03-06")
    other = learn(store, "cfg2", "config/test.exs uses the sandbox pool", kind="configuration", session="a")
    for s in ("b", "c"):
        relearn(store, "cfg2", session=s, day="2026-03-06")
    project(conn)
    with atomic(conn):
        insert_accesses(conn, [(other, "d", "shop", "session_start", NOW)])
    [candidate] = _by_reason(observe(conn, T, NOW)[0])["relearned_never_injected"]
    assert candidate.evidence["memory_id"] == mem  # the injected one is not a failure


def _served(conn, memory_id: int, project_id: str = "shop") -> None:
    """A session start of ``project_id`` that took ``memory_id``: Nous has served the project."""
    with atomic(conn):
        insert_accesses(conn, [(memory_id, "d", project_id, "session_start", NOW)])


def test_an_injection_failure_flag_counts_even_below_three_sessions(store, conn):
    learn(store, "flagged", "Deploys go through make release", kind="workflow", session="a")
    flag = {"decision": "injection_failure", "tier": 2, "similarity": 0.9, "matched": "flagged"}
    relearn(store, "flagged", session="b", day="2026-03-06", relearn_flag=flag)
    served = learn(store, "other", "The API lives under /v2", kind="architecture", session="a")
    project(conn)
    _served(conn, served)
    assert [c.dedupe_key for c in _by_reason(observe(conn, T, NOW)[0])["relearned_never_injected"]] == [
        "learning:flagged"
    ]


def test_never_recalled_needs_a_project_nous_has_served(store, conn):
    """Imported history: no session start has taken memories yet, so "never recalled" says nothing (flagged or
    not); once one of the project's session starts has, the same history is a finding."""
    learn(store, "cfg", "config/dev.exs serves on port 4000", kind="configuration", session="a")
    flag = {"decision": "injection_failure", "tier": 2, "similarity": 0.9, "matched": "cfg"}
    relearn(store, "cfg", session="b", day="2026-03-06")
    relearn(store, "cfg", session="c", day="2026-03-07", relearn_flag=flag)
    project(conn)
    assert "relearned_never_injected" not in _by_reason(observe(conn, T, NOW)[0])
    elsewhere = learn(store, "else", "Run the app with make dev", kind="command", project_id="blog", session="e")
    project(conn)
    _served(conn, elsewhere, "blog")  # another project's session start
    assert "relearned_never_injected" not in _by_reason(observe(conn, T, NOW)[0])
    served = learn(store, "other", "The API lives under /v2", kind="architecture", session="a")
    project(conn)
    _served(conn, served)
    [candidate] = _by_reason(observe(conn, T, NOW)[0])["relearned_never_injected"]
    assert candidate.dedupe_key == "learning:cfg"


def test_a_dependency_list_left_out_for_the_brief_is_not_an_injection_failure(store, conn):
    """The packet leaves a manifest's dependency list out on purpose (the brief's layout line names the stack):
    learning it again is not the packet failing, and a note quoting it would bring the list back."""
    deps = "Stack (mix.exs): Elixir ~> 1.19 with oban, ash, ash_sqlite, phoenix"
    learn(store, "deps", deps, kind="architecture", session="a", slot="config:mix.exs#deps")
    learn(store, "cfg", "config/dev.exs serves on port 4000", kind="configuration", session="a",
          slot="config:config/dev.exs#read")  # fmt: skip
    for lid in ("deps", "cfg"):
        for s, day in (("b", "2026-03-06"), ("c", "2026-03-07")):
            relearn(store, lid, session=s, day=day)
    served = learn(store, "other", "The API lives under /v2", kind="architecture", session="a")
    project(conn)
    _served(conn, served)
    found = _by_reason(observe(conn, T, NOW, withheld=withheld)[0])["relearned_never_injected"]
    assert [c.dedupe_key for c in found] == ["learning:cfg"]
    assert len(_by_reason(observe(conn, T, NOW)[0])["relearned_never_injected"]) == 2  # without the packet's rule


def test_a_command_failing_the_same_way_in_two_sessions(store, conn):
    learn(store, "push", '`git push` failed with "no upstream branch"; fixed by `git push -u origin HEAD`',
          kind="gotcha", session="a")  # fmt: skip
    relearn(store, "push", session="b", day="2026-03-07")
    learn(store, "lone", '`make` failed with "missing separator"', kind="gotcha", session="a")
    project(conn)
    found = _by_reason(observe(conn, T, NOW)[0])
    assert [c.dedupe_key for c in found["repeated_command_failure"]] == ["learning:push"]


def _contradiction(conn, a, b, confidence=0.9):
    lo, hi = min(a, b), max(a, b)
    conn.execute(
        "INSERT INTO nli_results(memory_id_a, memory_id_b, nli_label, confidence, model_version, updated_at) "
        "VALUES (?, ?, 'contradiction', ?, 'rules-test', ?)",
        (lo, hi, confidence, NOW),
    )


def test_a_domain_dense_with_contradictions_is_a_hotspot(store, conn):
    ids = [learn(store, f"db{i}", f"database note {i}", kind="configuration", domain="database") for i in range(5)]
    calm = [learn(store, f"ui{i}", f"frontend note {i}", kind="configuration", domain="frontend") for i in range(5)]
    project(conn)
    with atomic(conn):
        _contradiction(conn, ids[0], ids[1])
        _contradiction(conn, ids[2], ids[3])
        _contradiction(conn, calm[0], calm[1])  # one pair among five: below the minimum of pairs
        _contradiction(conn, calm[2], calm[3], confidence=0.5)  # below the contradiction confidence
    [hotspot] = _by_reason(observe(conn, T, NOW)[0])["contradiction_density"]
    assert hotspot.dedupe_key == "contradictions:shop:database"
    assert hotspot.evidence["density"] == 0.4 and sorted(hotspot.evidence["pairs"]) == [ids[0:2], ids[2:4]]
    assert "database" in hotspot.payload_text and "2 contradicting pairs among 5 notes" in hotspot.payload_text


def test_observing_twice_writes_nothing_new_and_candidates_are_immutable(store, conn):
    learn(store, "twice", "User correction: run the linter from the repo root", session="a")
    relearn(store, "twice", session="b", day="2026-03-05")
    project(conn)
    first = observe_and_reduce(conn, T, now=NOW)
    assert first.candidates_new == 1 and first.reduced.approved == 1
    again = observe_and_reduce(conn, T, now=NOW)
    assert again.candidates_new == 0 and again.reduced.approved == 0 and again.active == 1
    # new evidence (a third session) is a new candidate, which refreshes the active intervention
    relearn(store, "twice", session="c", day="2026-03-09")
    project(conn)
    third = observe_and_reduce(conn, T, now=NOW)
    assert third.candidates_new == 1 and third.active == 1
    [active] = interventions.current(conn, NOW)
    assert "3 sessions" in active.payload_text
    for sql in ("UPDATE intervention_candidates SET state = 'approved'", "DELETE FROM intervention_candidates"):
        try:
            with atomic(conn):
                conn.execute(sql)
        except IntegrityError as exc:
            assert "append-only" in str(exc)
        else:
            raise AssertionError(f"{sql} was allowed")


def test_an_intervention_ends_when_its_condition_clears(store, conn):
    from nous_assets.store.log.events import LearningEvent

    learn(store, "twice", "User correction: run the linter from the repo root", session="a")
    relearn(store, "twice", session="b", day="2026-03-05")
    project(conn)
    observe_and_reduce(conn, T, now=NOW)
    [active] = interventions.current(conn, NOW)
    store.append(LearningEvent("LearningArchived", "twice", {"reason": "rejected in review: wrong"}, "nous-review",
                               "shop", "user_review", "rej-twice"))  # fmt: skip
    project(conn)
    later = "2026-04-02T00:00:00.000000Z"
    stats = observe_and_reduce(conn, T, now=later)
    assert stats.reduced.expired == 1 and interventions.current(conn, later) == []
    last = interventions.transitions(conn, active.intervention_id)[-1]
    assert last[1:3] == ("expired", "condition no longer observed")
