//! `session-loader` (priority 100): session messages become the history in intermediate form;
//! attachments stay references. Also the pending input (RULES 5.3): the build option `input` is
//! appended as the newest user message unless the session already ends with it.
//!
//! Its settings (RULES 5.11.6) say how the speakers' names go with the history, as SillyTavern's
//! `names_behavior` does: `keep` (each stored message's name, as stored), `none` (no names),
//! `completion` (the `name` field on every user and assistant message, the input included, made
//! of letters, digits and `_`), `content` (`Name: ` before the text of every user and assistant
//! message, the input included). `names` is for chat completion: in text completion the
//! instruct template writes the names.

use crate::cache::shape_of;
use crate::model::{Role, Session};
use crate::pipeline::{
    CompatDefaults, ConfigField, PipelineContext, PipelineMessage, Placement, Processor,
    ProcessorDescriptor, ResolvedConfig, Source, SourceKind,
};
use crate::texts;
use crate::EngineError;

pub struct SessionLoader;

const ID: &str = "session-loader";

impl Processor for SessionLoader {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Session loader",
            description:
                "Reads the session's messages into the pipeline; appends the pending input.",
            priority: 100,
            is_core: true,
            default_enabled: true,
            config_fields: vec![
                ConfigField::select("names", "Speakers' names", NAMES, "keep").describe(
                    "keep: each message's stored name. none: no names. completion: the name field on every user and assistant message, letters, digits and _ only. content: \"Name: \" before the text of every user and assistant message.",
                ),
            ],
        }
    }

    fn sillytavern(&self) -> Option<CompatDefaults> {
        Some(CompatDefaults::new(texts::SESSION_LOADER_COMPAT).set("names", "none"))
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let session = ctx.session;
        // In text completion the instruct template writes the names (RULES 5.12).
        let names = if ctx.instruct.is_some() {
            "keep"
        } else {
            config.str("names")
        };
        // Each stored message goes in as a reference to the session: nothing is copied until a
        // processor changes it.
        let named = names != "none";
        let mut attachments = false;
        // Whether every stored text is the one the session's last build found: then what later
        // processors kept by stored text holds without their reading the session again.
        let seen = ctx.cache.take_stored_texts(&session.id);
        let mut same = seen.len() == session.messages.len();
        let mut shape = 0u64;
        ctx.history = session
            .messages
            .iter()
            .enumerate()
            .map(|(i, stored)| {
                attachments |= !stored.attachments.is_empty();
                same = same && seen.has(i, &stored.content, stored.role);
                shape = shape.wrapping_add(shape_of(i, stored));
                PipelineMessage::from_stored_as(i, stored, named)
            })
            .collect();
        ctx.history.mark_loaded();
        ctx.blackboard.history_attachments = Some(attachments);
        let generation = ctx.cache.keep_stored_texts(session, seen, same, shape);
        ctx.found_stored_texts(generation);
        ctx.info(ID, texts::LOADED.with("count", session.messages.len()));

        let input = ctx
            .options
            .input
            .as_deref()
            .filter(|s| !s.trim().is_empty());
        let kind = ctx.options.generation_type;
        if let Some(input) = input {
            if !kind.takes_input() {
                // A quiet request sends it as its prompt; a continuation and the user's own next
                // message take none (RULES 5.14).
                if kind != crate::pipeline::GenerationType::Quiet {
                    ctx.info(ID, texts::INPUT_NOT_FOR_TYPE.with("type", kind.as_str()));
                }
            } else if input_to_append(session, Some(input)).is_none() {
                ctx.info(ID, texts::INPUT_ALREADY_SENT);
            } else {
                ctx.history.push(PipelineMessage::new(
                    Role::User,
                    input,
                    Source::new(SourceKind::Input, Placement::List),
                ));
                ctx.info(ID, texts::INPUT_APPENDED);
            }
        }
        if names == "completion" || names == "content" {
            name_speakers(ctx, names == "content");
        }
        Ok(())
    }
}

/// The `names` settings: see the module's comment.
const NAMES: &[&str] = &["keep", "none", "completion", "content"];

/// `names: completion` or `content`: every user and assistant message named by its stored name,
/// else the user profile's or the character's (the preset's name when it has none), in the
/// `name` field made of letters, digits and `_` (at most 64), or before the text as `Name: `.
fn name_speakers(ctx: &mut PipelineContext<'_, '_>, in_content: bool) {
    let user = ctx
        .session
        .user_profile
        .as_ref()
        .map_or("User", |p| p.name.as_str());
    let character = ctx
        .preset
        .character
        .as_ref()
        .map_or(ctx.preset.name.as_str(), |c| c.name.as_str());
    let mut history = std::mem::take(&mut ctx.history).into_vec();
    for m in &mut history {
        let fallback = match m.role {
            Role::User => user,
            Role::Assistant => character,
            _ => continue,
        };
        let name = m.name().unwrap_or(fallback).to_string();
        if in_content {
            let text = format!("{name}: {}", m.content());
            m.set_content(text);
            m.set_name(None);
        } else {
            let field = field_name(&name);
            if m.name() != Some(field.as_str()) {
                m.set_name(Some(field));
            }
        }
    }
    ctx.history = history.into_iter().collect();
}

/// A name as OpenAI's `name` field takes it: letters, digits and `_`, at most 64; anything else
/// becomes `_`, one for each UTF-16 unit of it (SillyTavern's rule, on JavaScript's strings).
fn field_name(name: &str) -> String {
    let mut field = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            field.push(c);
        } else {
            field.extend(std::iter::repeat_n('_', c.len_utf16()));
        }
    }
    field.truncate(64);
    field
}

/// The input a turn appends to `session` (RULES 5.3): none when it is blank, or when the session
/// already ends with it as the user's message. What a build sends and what a send stores
/// (`promptloom_library::send::append_turn`) follow this one rule.
pub fn input_to_append<'a>(session: &Session, input: Option<&'a str>) -> Option<&'a str> {
    let input = input.filter(|s| !s.trim().is_empty())?;
    let already_sent = session
        .messages
        .last()
        .is_some_and(|m| m.role == Role::User && m.content.trim() == input.trim());
    (!already_sent).then_some(input)
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::processors::testing::{options, with_context};

    /// A chat between Ana (the user) and Bo, with a narrator's line and a name that is not
    /// a valid field name; the input "And now?".
    fn load(settings: &[(&str, Value)]) -> Vec<(Role, String, Option<String>)> {
        let session: Session = serde_json::from_value(json!({
            "formatVersion": 1, "id": "s",
            "userProfile": { "name": "Ana" },
            "messages": [
                { "role": "user", "name": "Ana", "content": "Hi\r\nthere" },
                { "role": "assistant", "name": "Bo the Bard 🎻", "content": "Hello." },
                { "role": "system", "name": "Narrator", "content": "Night falls." },
                { "role": "assistant", "content": "Unnamed." }
            ]
        }))
        .unwrap();
        let mut options = options();
        options.input = Some("And now?".into());
        with_context(
            &SessionLoader,
            settings,
            &session,
            &options,
            |mut ctx, config| {
                SessionLoader.execute(&mut ctx, config).unwrap();
                ctx.history
                    .iter()
                    .map(|m| {
                        (
                            m.role,
                            m.content().to_string(),
                            m.name().map(str::to_string),
                        )
                    })
                    .collect()
            },
        )
    }

    fn names(loaded: &[(Role, String, Option<String>)]) -> Vec<Option<&str>> {
        loaded.iter().map(|(_, _, n)| n.as_deref()).collect()
    }

    // RULES 5.11.6
    #[test]
    fn names_keep_sends_each_stored_name_and_leaves_the_text() {
        let loaded = load(&[]);
        assert_eq!(
            names(&loaded),
            [
                Some("Ana"),
                Some("Bo the Bard 🎻"),
                Some("Narrator"),
                None,
                None
            ]
        );
        assert_eq!(loaded[0].1, "Hi\r\nthere");
    }

    #[test]
    fn names_none_sends_no_name() {
        let loaded = load(&[("names", json!("none"))]);
        assert_eq!(names(&loaded), [None; 5]);
        assert_eq!(loaded[1].1, "Hello.");
    }

    #[test]
    fn names_completion_names_user_and_assistant_messages_in_the_field() {
        let loaded = load(&[("names", json!("completion"))]);
        // The violin is two UTF-16 units: two underscores, as SillyTavern writes it.
        assert_eq!(
            names(&loaded),
            [
                Some("Ana"),
                Some("Bo_the_Bard___"),
                Some("Narrator"),
                Some("T"),
                Some("Ana")
            ]
        );
    }

    #[test]
    fn names_content_writes_the_name_before_the_text_and_no_field() {
        let loaded = load(&[("names", json!("content"))]);
        let texts: Vec<&str> = loaded.iter().map(|(_, t, _)| t.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Ana: Hi\r\nthere",
                "Bo the Bard 🎻: Hello.",
                "Night falls.",
                "T: Unnamed.",
                "Ana: And now?"
            ]
        );
        assert_eq!(names(&loaded), [None, None, Some("Narrator"), None, None]);
    }

    #[test]
    fn a_long_name_is_cut_to_64_in_the_field() {
        assert_eq!(field_name(&"a".repeat(80)).len(), 64);
        assert_eq!(field_name("Zoë-1"), "Zo__1");
    }
}
