-- Summaries of older turns (RULES 5.15): every summary a session had, newest last. `current`
-- marks the one in use (its text is also the session's `summary`); the range is the stored
-- messages it covers, by position and, where they have one, by id.
CREATE TABLE summaries (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id        TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    text              TEXT NOT NULL,
    first_position    INTEGER NOT NULL,
    last_position     INTEGER NOT NULL,
    first_message_id  TEXT,
    last_message_id   TEXT,
    connection        TEXT,
    model             TEXT,
    edited            INTEGER NOT NULL DEFAULT 0,
    current           INTEGER NOT NULL DEFAULT 0,
    created_at        INTEGER NOT NULL
);
CREATE INDEX summaries_by_session ON summaries (session_id, id);

-- Long-term memory (RULES 5.15): one vector per stored message, made by `model`, as `dim`
-- little-endian f32 numbers of length 1. `message_key` is the message's id, or `#<position>` for
-- a message without one; `content_hash` is the hash of the text the vector was made from, so an
-- edited message is embedded again.
CREATE TABLE memory_vectors (
    session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    message_key   TEXT NOT NULL,
    position      INTEGER NOT NULL,
    content_hash  INTEGER NOT NULL,
    model         TEXT NOT NULL,
    dim           INTEGER NOT NULL,
    vector        BLOB NOT NULL,
    PRIMARY KEY (session_id, message_key)
) WITHOUT ROWID;

-- Per session: the model its vectors are made with (through which connection, by name), and a revision that every write raises, so
-- that a search keeping the vectors in memory knows when to read them again.
CREATE TABLE memory_index (
    session_id  TEXT PRIMARY KEY NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    model       TEXT NOT NULL,
    dim         INTEGER NOT NULL,
    connection  TEXT,
    revision    INTEGER NOT NULL DEFAULT 0,
    updated_at  INTEGER NOT NULL
);
