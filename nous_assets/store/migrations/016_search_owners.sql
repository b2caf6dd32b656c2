-- 016: a project's search reads only its own rows. Every candidate query of a project used to rank or scan
-- the matches of all projects and drop the others' afterwards (at 100 projects, ~97% of the work thrown
-- away). Each searched table now says whose a row is, so the index itself narrows to the project:
--
-- * memories_fts.owner: one token, 'k<hex of project_id>x' for a project memory and 'kglobalx' for a global
--   one (hex keeps any project id a single token; 'g', 'l', 'o' are never hex digits; the stemmer changes
--   no word ending in 'x'). A project's MATCH adds `owner : (its token OR kglobalx)`, a doclist
--   intersection, and bm25 gives the column weight 0.
-- * concepts.owner: the memory's project_id, NULL for a global memory, indexed with the concept, so a
--   concept's project members are an index range instead of a scan of every project's.
-- * chunks_fts.owner: the same token for the folder a chunk was read from (which never changes).
--
-- A memory's project or scope changes only by UPDATE (re-projection, identity remaps): the trigger
-- below carries it to both copies, whoever writes it. store/projector.py and store/transcript_chunks.py
-- write the owners of new rows.
ALTER TABLE concepts ADD COLUMN owner TEXT;
UPDATE concepts SET owner = (
    SELECT CASE WHEN m.scope = 'global' THEN NULL ELSE m.project_id END FROM memories m WHERE m.id = concepts.memory_id
);
CREATE INDEX idx_concepts_owner ON concepts(concept, owner);

CREATE VIRTUAL TABLE memories_fts_016 USING fts5(content, concepts, owner, tokenize = 'porter unicode61');
INSERT INTO memories_fts_016(rowid, content, concepts, owner)
SELECT f.rowid, f.content, f.concepts,
    CASE WHEN m.scope = 'global' THEN 'kglobalx' ELSE 'k' || lower(hex(m.project_id)) || 'x' END
FROM memories_fts f JOIN memories m ON m.id = f.rowid;
DROP TABLE memories_fts;
ALTER TABLE memories_fts_016 RENAME TO memories_fts;

CREATE TRIGGER memories_owner AFTER UPDATE OF project_id, scope ON memories
WHEN OLD.project_id IS NOT NEW.project_id OR OLD.scope IS NOT NEW.scope
BEGIN
    UPDATE concepts SET owner = CASE WHEN NEW.scope = 'global' THEN NULL ELSE NEW.project_id END
    WHERE memory_id = NEW.id;
    UPDATE memories_fts SET owner =
        CASE WHEN NEW.scope = 'global' THEN 'kglobalx' ELSE 'k' || lower(hex(NEW.project_id)) || 'x' END
    WHERE rowid = NEW.id;
END;

CREATE VIRTUAL TABLE chunks_fts_016 USING fts5(text, context, dated, owner, tokenize = 'porter unicode61');
INSERT INTO chunks_fts_016(rowid, text, context, dated, owner)
SELECT f.rowid, f.text, f.context, f.dated, 'k' || lower(hex(c.project_id)) || 'x'
FROM chunks_fts f JOIN transcript_chunks c ON c.id = f.rowid;
DROP TABLE chunks_fts;
ALTER TABLE chunks_fts_016 RENAME TO chunks_fts;
