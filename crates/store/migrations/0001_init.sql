-- Promptloom's first schema. Documents are the engine's native JSON (formatVersion 1); the
-- columns beside them are what lists and lookups need without parsing.

CREATE TABLE presets (
    id          TEXT PRIMARY KEY NOT NULL,
    name        TEXT NOT NULL,
    document    TEXT NOT NULL,
    -- Installed from presets/ on first start; restorable.
    builtin     INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE sessions (
    id            TEXT PRIMARY KEY NOT NULL,
    title         TEXT,
    user_profile  TEXT,
    summary       TEXT,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);

CREATE TABLE messages (
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    id           TEXT,
    role         TEXT NOT NULL,
    name         TEXT,
    content      TEXT NOT NULL,
    attachments  TEXT,
    created_at   TEXT,
    PRIMARY KEY (session_id, position)
) WITHOUT ROWID;

-- User model profiles (the built-in ones live in the engine).
CREATE TABLE model_profiles (
    id          TEXT PRIMARY KEY NOT NULL,
    document    TEXT NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- The library of regex rules shared by every preset (a preset's own rules are in its document).
CREATE TABLE regex_rules (
    id          TEXT PRIMARY KEY NOT NULL,
    position    INTEGER NOT NULL,
    document    TEXT NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- Application-wide processor settings, by processor id (a preset's own are in its document).
CREATE TABLE processor_settings (
    processor_id  TEXT PRIMARY KEY NOT NULL,
    config        TEXT NOT NULL,
    updated_at    INTEGER NOT NULL
);

CREATE TABLE app_settings (
    key    TEXT PRIMARY KEY NOT NULL,
    value  TEXT NOT NULL
);
