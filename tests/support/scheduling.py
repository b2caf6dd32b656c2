"""What :mod:`tests.conftest` schedules by under xdist: the groups that go to one worker, and the seconds the
slow tests take. Here, not in the conftest, so ``tests/test_scheduling.py`` can check them: a ``conftest`` import
by name finds whichever of the suite's conftest modules was loaded last."""

SHARED_FIXTURE_GROUPS = {"corpus_pipeline": "corpus"}  # conftest fixtures worth one worker: fixture -> group
MODULE_GROUPS = ("tests/pipeline/test_poisoning.py",)  # its module fixtures are also taken with getfixturevalue
GROUP_SETUP_SECONDS = {"corpus": 50, "tests/capture/test_redact_corpus.py": 35, "tests/lifecycle/test_archive.py": 11}
KNOWN_SLOW_SECONDS = {  # nodeid prefix -> seconds on one worker (durations of a full run; refresh when they drift)
    "tests/pipeline/test_incremental.py::test_killed_backfill": 65,
    "tests/pipeline/test_poisoning.py::test_no_poisoning_attempt_reaches_a_packet": 20,
    "tests/pipeline/test_poisoning.py::test_every_way_out": 29,
    "tests/evaluate/test_replay_bench.py::test_replay_of_two_duet_sessions_end_to_end": 90,
    "tests/store/test_projection.py::test_incremental_projection_in_any_batch_split": 15,
    "tests/defs/test_run.py::test_nous_run_serves_quietly": 160,  # 115 s idle, the Ctrl-C moments run meanwhile
    "tests/defs/test_first_run.py::": 20,
    "tests/capture/test_redact.py::test_real_transcripts": 33,
    "tests/evaluate/test_locomo_bench.py::test_retrieval_benchmark": 32,
    "tests/evaluate/test_memories_bench.py::test_bench_runs": 31,
    "tests/evaluate/test_recall_questions.py::test_bench_end_to_end": 35,
    "tests/evaluate/test_recall_questions.py::test_usage_errors": 6,
    "tests/pipeline/test_lossless.py::test_cli_backfill": 28,
    "tests/defs/test_nli_kill.py::": 18,
    "tests/store/contract/test_contract_vectors.py::test_a_small_tenant": 12,
    "tests/lifecycle/test_archive.py::test_kill_9": 8,
    "tests/identity/test_worktree_listings.py::test_the_four_flutter": 23,
    "tests/retrieve/test_packet.py::test_packet_is_ordered": 20,
    "tests/resolver/test_claude_code_e2e.py::": 5,
    "tests/store/test_retention.py::test_with_decay": 10,
    "tests/embed/test_throughput.py::": 6,
    "tests/pipeline/test_corpus_backfill.py::test_backfill_twice": 7,
    "tests/store/test_retention.py::test_decay_is_idempotent": 4,
    "tests/pipeline/test_identity_pipeline.py::test_real_worktrees": 10,
    "tests/pipeline/test_incremental.py::test_partition_range": 9,
    "tests/service/test_schemathesis.py::": 8,
    "tests/reconcile/test_one_memory_per_learning.py::test_for_any_order": 4,
    "tests/defs/test_definitions.py::test_dagster_cli": 7,
    "tests/mcp_server/test_tools_over_stdio.py::": 2,
}
