-- 022: find the memories the transcripts disproved by the turn that made the claim. Search marks a transcript
-- chunk holding that turn (its claim was later refuted or superseded) and ranks it below what still holds
-- (retrieve/status_rank.py). A memory's anchor turn is the first uuid of its provenance; the index is partial,
-- so it holds only refuted and superseded memories and costs nothing for the rest.
CREATE INDEX idx_memories_rejected_anchor ON memories(json_extract(provenance_json, '$.uuids[0]'))
WHERE status IN ('refuted', 'superseded');
