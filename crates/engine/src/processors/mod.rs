//! The built-in processors of RULES 5.1, one file each, named by id (the lorebook's lives with the
//! rest of the lorebook, in `crate::lorebook`). Each implements `pipeline::Processor`; the
//! engine's `build` module lists them and registers them.

mod asset_resolver;
mod authors_note;
mod character_note;
mod convert_system_to_user;
mod ensure_alternation;
mod ephemeral_injection;
mod history_operations;
mod injection_assembler;
mod instruction_pinning;
mod memory;
mod merge_consecutive_roles;
mod merge_system_to_head;
mod regex_processor;
mod session_loader;
mod squash_system_messages;
mod token_limiter;
mod transcription_processor;

#[cfg(test)]
pub(crate) mod testing;

pub use asset_resolver::AssetResolver;
pub use authors_note::{AuthorsNote, NOTE_ANCHOR};
pub use character_note::CharacterNote;
pub use convert_system_to_user::ConvertSystemToUser;
pub use ensure_alternation::EnsureAlternation;
pub use ephemeral_injection::EphemeralInjection;
pub use history_operations::HistoryOperations;
pub use injection_assembler::{expand_for_session, InjectionAssembler};
pub use instruction_pinning::InstructionPinning;
pub use memory::{Memory, DEFAULT_SUMMARY_PROMPT};
pub use merge_consecutive_roles::MergeConsecutiveRoles;
pub use merge_system_to_head::MergeSystemToHead;
pub use regex_processor::{default_rules, RegexProcessor};
pub use session_loader::{input_to_append, SessionLoader};
pub use squash_system_messages::SquashSystemMessages;
pub use token_limiter::TokenLimiter;
pub use transcription_processor::TranscriptionProcessor;

#[cfg(test)]
/// A whole build for the processors' unit tests (which, as every unit test, may build).
pub(crate) mod full_build {
    use crate::cache::BuildCache;
    use crate::model::{AgentPreset, Session};
    use crate::pipeline::{BuildOptions, BuildRequest, BuildResult};
    use crate::processors::testing::options;

    /// One whole build of `preset` over `session` for gpt-4o at the tests' time, with `options`
    /// (from [`options`]) as `adjust` leaves them.
    pub fn build_full<'s>(
        preset: &AgentPreset,
        session: &'s Session,
        adjust: impl FnOnce(&mut BuildOptions),
    ) -> BuildResult<'s> {
        let mut options = options();
        adjust(&mut options);
        let cache = BuildCache::new();
        crate::build(&BuildRequest {
            preset,
            session,
            kept_rewrites: None,
            model: "gpt-4o",
            options: &options,
            cache: &cache,
            profiles: &[],
            assets: &crate::assets::InlineAssets,
        })
        .expect("builds")
    }
}
