-- What came back with a reply (connection, model, finish reason, usage, timings) and the other
-- replies to the same turn (swipes), each a JSON document; NULL for the messages that have none.
ALTER TABLE messages ADD COLUMN reply TEXT;
ALTER TABLE messages ADD COLUMN swipes TEXT;
