"""Reconciliation layer: contradictions between current memories (the NLI tier), cached in ``nli_results``."""

import dagster as dg

from nous_assets.defs.assets.capture import ingest_run
from nous_assets.defs.assets.memory import memories
from nous_assets.defs.assets.retrieval import embeddings
from nous_assets.defs.partitions import daily_asset
from nous_assets.defs.resources import NousResource
from nous_assets.pipeline import derived as steps
from nous_assets.store.reads import nli_results

GROUP = "reconcile"


@daily_asset(
    name="nli_results",
    group_name=GROUP,
    deps=[memories, embeddings],
    kinds={"sqlite"},
    description="Contradictions between current memories of a project: pairs sharing concepts (Jaccard >= "
    "concept_overlap_for_nli) or close in vector space, with concurrent vector clocks, labelled by the configured "
    "classifier (rules by default; llm or a local cross-encoder) and cached in nli_results per model version. "
    "Confident contradictions append LearningContradicted pairs, or LearningSuperseded (last-writer-wins by "
    "valid_from) for two values of one single-valued fact; memories projects them on its next run.",
)
def nli_results_asset(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    with nous.connection() as conn:
        found = steps.nli(ingest_run(context, nous, conn))
        labels = nli_results.label_counts(conn)
    stats = found.stats
    return dg.MaterializeResult(
        metadata={
            "classifier": dg.MetadataValue.text(found.classifier),
            "memories_compared": dg.MetadataValue.int(stats.memories),
            "candidate_pairs": dg.MetadataValue.int(stats.candidates),
            "pairs_classified": dg.MetadataValue.int(stats.classified),
            "contradictions_found": dg.MetadataValue.int(stats.contradictions),
            "contradicted_events": dg.MetadataValue.int(stats.contradicted_events),
            "superseded_events": dg.MetadataValue.int(stats.superseded_events),
            "labels_cached": dg.MetadataValue.json(labels),
        }
    )
