-- What came back with a reply (connection, model, finish reason, usage, timings) and the other
-- replies to the same turn (swipes), each a JSON document, and where the shown reply stands
-- among them (NULL: last); NULL for the messages that have none.
ALTER TABLE messages ADD COLUMN reply TEXT;
ALTER TABLE messages ADD COLUMN swipes TEXT;
ALTER TABLE messages ADD COLUMN swipe_at INTEGER;
