-- 024: a value of a fact tools print (a git hook's checks) that closes an older value naming all the older one
-- named restates it (LearningSuperseded with payload.restates): the sessions that saw the older value count for
-- the newer (store/reads/recurrence.py). This index finds, from a learning, the values it restated.
CREATE INDEX idx_learning_events_restated
    ON learning_events(json_extract(payload_json, '$.superseded_by'))
    WHERE event_type = 'LearningSuperseded' AND json_extract(payload_json, '$.restates') = 1;
