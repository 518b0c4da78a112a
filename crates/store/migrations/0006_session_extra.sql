-- A session's extra data as one JSON document: its own variables and its author's note
-- (`{"variables": {...}, "authorsNote": {...}}`); NULL when it has neither.
ALTER TABLE sessions ADD COLUMN extra TEXT;
