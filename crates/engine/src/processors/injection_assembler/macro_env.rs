//! The assembler's macros (RULES 4): the environment a build's texts are expanded in (the names,
//! the character's fields, the newest history messages, the time), the state that carries from
//! one text to the next, the history's own macros with `macrosInHistory`, and the same expansion
//! for a message written into a session outside a build.

use std::collections::BTreeMap;

use super::LogLine;
use crate::macros::{
    expand, expand_kept, has_macros, needs_expansion, ExpansionTrace, MacroEnv, MacroMemo,
    MacroState,
};
use crate::model::{AgentPreset, Character, Role, Session};
use crate::pipeline::{BuildOptions, PipelineMessage, SourceKind};
use crate::texts;

/// The newest history messages of any role, of the user and of the assistant, as the earlier
/// processors left the history: what `{{lastMessage}}`, `{{lastUserMessage}}` and
/// `{{lastCharMessage}}` read; and the message indexes and the time `{{lastMessageId}}`,
/// `{{firstIncludedMessageId}}` and `{{idle_duration}}` read (RULES 4.2).
pub(super) struct LastMessages<'s> {
    any: String,
    user: String,
    assistant: String,
    last_id: Option<usize>,
    first_included: Option<usize>,
    idle_since: Option<&'s str>,
}

impl<'s> LastMessages<'s> {
    pub(super) fn of(history: &[PipelineMessage<'_>], session: &'s Session) -> Self {
        let last_of = |role: Option<Role>| {
            history
                .iter()
                .rev()
                .find(|m| role.is_none_or(|r| m.role == r))
                .map(|m| m.content().to_string())
                .unwrap_or_default()
        };
        let stored = session.messages.len();
        // The input, when appended, is the newest message, numbered after the stored ones.
        let input = history
            .last()
            .is_some_and(|m| m.kind() == SourceKind::Input);
        let count = stored + usize::from(input);
        let first_included = history.first().map(|m| match m.history_index() {
            Some(i) => i as usize,
            None => stored,
        });
        // The user's message before the newest message (RULES 4.2, `{{idle_duration}}`).
        let before_newest = &session.messages[..stored.saturating_sub(usize::from(!input))];
        let idle_since = before_newest
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .and_then(|m| m.created_at.as_deref());
        LastMessages {
            any: last_of(None),
            user: last_of(Some(Role::User)),
            assistant: last_of(Some(Role::Assistant)),
            last_id: count.checked_sub(1),
            first_included,
            idle_since,
        }
    }

    pub(super) fn none() -> Self {
        LastMessages {
            any: String::new(),
            user: String::new(),
            assistant: String::new(),
            last_id: None,
            first_included: None,
            idle_since: None,
        }
    }
}

/// The macro environment (RULES 4.2): the user profile, the preset's character (its name
/// falling back to the preset's), the session's summary, the model id, the newest history texts
/// and the build's timestamp; the session seeds the random macros (RULES 4.3).
pub(super) fn macro_env<'x>(
    preset: &'x AgentPreset,
    session: &'x Session,
    model: &'x str,
    options: &BuildOptions,
    last: &'x LastMessages<'x>,
    legacy_names: bool,
) -> MacroEnv<'x> {
    let character = preset.character.as_ref();
    let field = |f: fn(&Character) -> &Option<String>| {
        character.and_then(|c| f(c).as_deref()).unwrap_or("")
    };
    let profile = session.user_profile.as_ref();
    MacroEnv {
        user: profile.map(|p| p.name.as_str()).unwrap_or("User"),
        char_name: character.map(|c| c.name.as_str()).unwrap_or(&preset.name),
        description: field(|c| &c.description),
        personality: field(|c| &c.personality),
        scenario: field(|c| &c.scenario),
        persona: profile.and_then(|p| p.content.as_deref()).unwrap_or(""),
        mes_examples: field(|c| &c.example_dialogue),
        wi_before: "",
        wi_after: "",
        summary: session.summary.as_deref().unwrap_or(""),
        model,
        last_message: &last.any,
        last_user_message: &last.user,
        last_char_message: &last.assistant,
        last_message_id: last.last_id,
        first_included_message_id: last.first_included,
        idle_since: last.idle_since,
        legacy_names,
        timestamp: options.timestamp,
        session_id: &session.id,
        message_count: session.messages.len(),
    }
}

/// `text` with its macros expanded as a build of `preset` over `session` at `timestamp` would
/// expand them (RULES 4), for a message written into the session outside a build: a new chat's
/// greeting, which SillyTavern stores with `{{user}}` and `{{char}}` already replaced.
pub fn expand_for_session(
    preset: &AgentPreset,
    session: &Session,
    text: &str,
    timestamp: chrono::DateTime<chrono::FixedOffset>,
) -> String {
    if !has_macros(text) {
        return text.to_string();
    }
    let last = LastMessages::none();
    let options = BuildOptions::at(timestamp);
    let env = macro_env(preset, session, "", &options, &last, false);
    let variables = preset.variables.clone().unwrap_or_default();
    let mut state = MacroState::new(&env, variables);
    crate::macros::expand(text, &env, &mut state, "greeting").text
}

/// What a build records of its macros: nothing (the live preview), what the turn-to-turn diff
/// reads (`traceMacros`), or everything the macro tracer shows (`traceMacrosInDetail`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Trace {
    Off,
    Hashes,
    Detail,
}

impl Trace {
    pub(super) fn of(options: &BuildOptions) -> Self {
        if options.trace_macros_in_detail {
            Trace::Detail
        } else if options.trace_macros {
            Trace::Hashes
        } else {
            Trace::Off
        }
    }
}

/// The macros of one assembly: the environment, and the variables and random stream that carry
/// from one text to the next (RULES 4.3).
pub(super) struct Macros<'x> {
    pub(super) env: MacroEnv<'x>,
    pub(super) state: MacroState,
    /// With the build option `traceMacros`, each text expanded with the macros it evaluated,
    /// for the turn-to-turn diff; `None` without it.
    pub(super) traces: Option<Vec<ExpansionTrace>>,
    /// Where template expansions are kept between builds, and the environment's fingerprint;
    /// none while tracing (a kept expansion has no trace).
    memo: Option<(&'x MacroMemo, u64)>,
}

impl<'x> Macros<'x> {
    pub(super) fn new(
        env: MacroEnv<'x>,
        variables: BTreeMap<String, String>,
        trace: Trace,
        memo: &'x MacroMemo,
    ) -> Self {
        let state = MacroState::new(&env, variables);
        let (state, traces) = match trace {
            Trace::Off => (state, None),
            Trace::Hashes => (state.traced(), Some(Vec::new())),
            Trace::Detail => (state.traced_in_detail(), Some(Vec::new())),
        };
        let trace = !matches!(trace, Trace::Off);
        let memo = (!trace).then(|| (memo, env.fingerprint()));
        Macros {
            env,
            state,
            traces,
            memo,
        }
    }

    /// `text` with its macros expanded (RULES 4); each warning is logged under `position`.
    pub(super) fn expand(&mut self, text: &str, position: &str, log: &mut Vec<LogLine>) -> String {
        self.expand_with(text, || position.to_string(), None, log)
    }

    /// [`Self::expand`] of a template's text, with the position said only when it is needed:
    /// the expansion is kept between builds when it reads only the environment (RULES 4.5).
    pub(super) fn expand_at(
        &mut self,
        text: &str,
        position: impl FnOnce() -> String,
        log: &mut Vec<LogLine>,
    ) -> String {
        self.expand_with(text, position, self.memo, log)
    }

    fn expand_with(
        &mut self,
        text: &str,
        position: impl FnOnce() -> String,
        memo: Option<(&MacroMemo, u64)>,
        log: &mut Vec<LogLine>,
    ) -> String {
        if !needs_expansion(text, &self.env) && self.traces.is_none() {
            return text.to_string();
        }
        let position = position();
        let out = match memo {
            Some((memo, fingerprint)) => expand_kept(
                text,
                &self.env,
                fingerprint,
                &mut self.state,
                &position,
                memo,
            ),
            None => expand(text, &self.env, &mut self.state, &position),
        };
        if let Some(traces) = &mut self.traces {
            traces.push(ExpansionTrace {
                position,
                text: xxhash_rust::xxh3::xxh3_64(text.as_bytes()),
                macros: self.state.take_trace(),
            });
            return with_warnings(out, traces.last().map_or("", |t| &t.position), log);
        }
        with_warnings(out, &position, log)
    }
}

/// The expansion's text, its warnings logged under `position`.
fn with_warnings(out: crate::macros::Expansion, position: &str, log: &mut Vec<LogLine>) -> String {
    log.extend(out.warnings.into_iter().map(|w| {
        LogLine::Warning(
            texts::MACRO_WARNING
                .with("position", position)
                .part("warning", w),
        )
    }));
    out.text
}

/// With the `macrosInHistory` setting, the history's macros are expanded first, oldest first
/// (RULES 4.1, 4.3).
pub(super) fn expand_history(
    history: &mut [PipelineMessage<'_>],
    macros: &mut Macros<'_>,
    log: &mut Vec<LogLine>,
) {
    for (i, m) in history.iter_mut().enumerate() {
        if needs_expansion(m.content(), &macros.env) {
            let text = macros.expand(m.content(), &format!("history:{i}"), log);
            m.set_content(text);
        }
    }
}
