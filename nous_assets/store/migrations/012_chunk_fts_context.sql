-- 012: a transcript chunk is indexed with its neighbours and its date, each in its own FTS column, so
-- bm25 can weight them apart: `text` (the chunk itself), `context` (up to two chunks before and after it
-- in the same session: the question a reply answers, the reply a shared photo got) and `dated` (the day
-- it was said, e.g. "2023-05-08 8 May 2023"). Only the index changes: the embedded text stays the chunk's own.
-- store/transcript_chunks.py keeps it so on every write; this rebuilds it once from the stored chunks.
DROP TABLE chunks_fts;
CREATE VIRTUAL TABLE chunks_fts USING fts5(text, context, dated, tokenize = 'porter unicode61');
INSERT INTO chunks_fts(rowid, text, context, dated)
SELECT id, text,
    trim(coalesce(lag(text, 2) OVER w, '') || ' ' || coalesce(lag(text, 1) OVER w, '') || ' '
        || coalesce(lead(text, 1) OVER w, '') || ' ' || coalesce(lead(text, 2) OVER w, '')),
    CASE WHEN date GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]' THEN
        date || ' ' || CAST(CAST(substr(date, 9, 2) AS INTEGER) AS TEXT) || ' '
        || CASE substr(date, 6, 2)
            WHEN '01' THEN 'January' WHEN '02' THEN 'February' WHEN '03' THEN 'March' WHEN '04' THEN 'April'
            WHEN '05' THEN 'May' WHEN '06' THEN 'June' WHEN '07' THEN 'July' WHEN '08' THEN 'August'
            WHEN '09' THEN 'September' WHEN '10' THEN 'October' WHEN '11' THEN 'November' ELSE 'December' END
        || ' ' || substr(date, 1, 4)
    ELSE date END
FROM transcript_chunks
WINDOW w AS (PARTITION BY session_id ORDER BY timestamp, id);
