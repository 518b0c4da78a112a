//! SillyTavern's formats (RULES 7).

pub mod card;
pub mod card_export;
pub mod card_preset;
pub mod chat;
pub mod context;
pub mod export;
pub mod instruct;
pub mod master;
pub mod preset;
mod preset_keys;
mod preset_settings;
pub mod regex;
pub mod sysprompt;
pub mod world_info;
pub mod world_info_settings;
