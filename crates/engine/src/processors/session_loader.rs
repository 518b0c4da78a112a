//! `session-loader` (priority 100): session messages become the history in intermediate form;
//! attachments stay references. Also the seed 001 safety net: the build option `input` is
//! appended as the newest user message unless the session already ends with it.

use crate::history::{prefetch_shared, PREFETCH_AHEAD};
use crate::model::Role;
use crate::pipeline::{
    AttachmentRef, PipelineContext, PipelineMessage, Placement, Processor, ProcessorDescriptor,
    ResolvedConfig, Source, SourceKind,
};
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
        ctx: &mut PipelineContext<'_>,
        _: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let session = ctx.session;
        let mut history = crate::history::History::with_capacity(session.messages.len() + 1);
        for (i, stored) in session.messages.iter().enumerate() {
            if let Some(ahead) = session.messages.get(i + PREFETCH_AHEAD) {
                prefetch_shared(&ahead.content);
            }
            let mut message =
                PipelineMessage::new(stored.role, stored.content.clone(), Source::history(i));
            message.name = stored.name.clone();
            message.attachments = (0..stored.attachments.len())
                .map(|a| AttachmentRef {
                    message: i as u32,
                    attachment: a as u32,
                })
                .collect();
            history.push(message);
        }
        ctx.history = history;
        ctx.info(ID, format!("loaded {} messages", session.messages.len()));

        if let Some(input) = ctx
            .options
            .input
            .as_deref()
            .filter(|s| !s.trim().is_empty())
        {
            let already_sent = session
                .messages
                .last()
                .is_some_and(|m| m.role == Role::User && m.content.trim() == input.trim());
            if already_sent {
                ctx.info(
                    ID,
                    "the session already ends with the input; not appended again",
                );
            } else {
                ctx.history.push(PipelineMessage::new(
                    Role::User,
                    input,
                    Source::new(SourceKind::Input, Placement::List),
                ));
                ctx.info(ID, "input appended as the newest user message");
            }
        }
        Ok(())
    }
}
