-- The connections a user sends through: a name, and the document the application layer reads
-- (dialect, base URL, default model, extra headers and body fields, the environment variable
-- that may hold the key). Never the key itself: keys live in the OS keychain only.
CREATE TABLE connections (
    name        TEXT PRIMARY KEY NOT NULL,
    document    TEXT NOT NULL,
    updated_at  INTEGER NOT NULL
);
