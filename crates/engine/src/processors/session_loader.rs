//! `session-loader` (priority 100): session messages become the history in intermediate form;
//! attachments stay references. Also the pending input (RULES 5.3): the build option `input` is
//! appended as the newest user message unless the session already ends with it.

use crate::model::{Role, Session};
use crate::pipeline::{
    PipelineContext, PipelineMessage, Placement, Processor, ProcessorDescriptor, ResolvedConfig,
    Source, SourceKind,
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
            config_fields: Vec::new(),
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        _: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let session = ctx.session;
        // Each stored message goes in as a reference to the session: nothing is copied until a
        // processor changes it.
        ctx.history = session
            .messages
            .iter()
            .enumerate()
            .map(|(i, stored)| PipelineMessage::from_stored(i, stored))
            .collect();
        ctx.info(ID, texts::LOADED.with("count", session.messages.len()));

        if let Some(input) = ctx
            .options
            .input
            .as_deref()
            .filter(|s| !s.trim().is_empty())
        {
            if input_to_append(session, Some(input)).is_none() {
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
        Ok(())
    }
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
