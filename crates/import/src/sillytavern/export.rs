//! Export to SillyTavern (later).
