-- Every save of a preset counts up its revision. The app saves with the revision it opened, so a
-- change made meanwhile by another writer (`promptloom import --into` while the app is open) is
-- detected instead of being overwritten by the next autosave.
ALTER TABLE presets ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
