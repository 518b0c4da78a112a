-- What no part of Promptloom ever read goes: the shared regex rules (a build applies only a
-- preset's own rules, and regex scripts are imported into a preset), the app-wide processor
-- settings (a preset's own and the model profile's are the only layers) and the mark on
-- built-in presets (restoring one goes by its id in the embedded list). The backup taken before
-- this migration keeps whatever they held.
DROP TABLE regex_rules;
DROP TABLE processor_settings;
ALTER TABLE presets DROP COLUMN builtin;
