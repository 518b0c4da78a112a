//! `asset-resolver` (priority 10000, last): every attachment still referenced is checked against
//! the model's provider format and capabilities, and asked of the asset source (a path outside
//! the session's folder, a file that is gone). What the model takes and the source has stays, to
//! be read and encoded only when the request body is built (`providers::request_body`); anything
//! else becomes a short text note in the message and a warning, never a silent drop and never the
//! contents of a file it should not read. Besides the kind and type, the message's role matters:
//! a format may take media on user messages only (`providers::accepts_on`), e.g. an image on an
//! assistant message is refused by OpenAI Chat Completions and Anthropic Messages.

use crate::model::Role;
use crate::pipeline::{
    DropAction, DroppedItem, PipelineContext, Processor, ProcessorDescriptor, ResolvedConfig,
};
use crate::providers::{accepts, accepts_on};
use crate::texts;
use crate::EngineError;

pub struct AssetResolver;

const ID: &str = "asset-resolver";

impl Processor for AssetResolver {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Asset resolver",
            description: "Turns attachments into the provider's form; what the model cannot take \
                          becomes a text note.",
            priority: 10_000,
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
        // No stored message has attachments: neither has any message made of them.
        if ctx.blackboard.history_attachments == Some(false) {
            return Ok(());
        }
        let format = ctx.profile.provider_format;
        let caps = ctx.profile.capabilities;
        let session = ctx.session;
        let assets = ctx.assets;
        let mut warnings = Vec::new();
        let mut dropped = Vec::new();
        let mut kept_count = 0;
        // The leading system messages are the top-level system text of the formats that have one.
        let leading = ctx
            .messages
            .iter()
            .take_while(|m| m.role == Role::System)
            .count();
        for (i, m) in ctx.messages.iter_mut().enumerate() {
            if !m.has_attachments() {
                continue;
            }
            let on_role = accepts_on(format, m.role, i < leading);
            let mut notes = String::new();
            let attachments = m.attachments().into_owned();
            let mut kept = Vec::with_capacity(attachments.len());
            for r in &attachments {
                let Some(a) = r.resolve(session) else {
                    continue;
                };
                let checked = on_role
                    .clone()
                    .and_then(|()| accepts(format, &caps, a))
                    .and_then(|()| assets.check(a));
                match checked {
                    Ok(()) => {
                        kept.push(*r);
                        kept_count += 1;
                    }
                    Err(why) => {
                        crate::providers::push_not_sent(&mut notes, a, &why);
                        warnings.push(
                            texts::NOT_SENT
                                .with("name", &a.name)
                                .with("model", ctx.model)
                                .part("why", why.clone()),
                        );
                        dropped.push(DroppedItem::one(
                            ID,
                            DropAction::Dropped,
                            m.source().into_owned(),
                            None,
                            texts::REPLACED_BY_NOTE
                                .with("name", &a.name)
                                .part("why", why),
                        ));
                    }
                }
            }
            if !notes.is_empty() {
                let text = format!("{}{notes}", m.content());
                m.set_content(text);
            }
            m.set_attachments(kept);
        }
        for w in warnings {
            ctx.warn(ID, w);
        }
        ctx.dropped.extend(dropped);
        if kept_count > 0 {
            ctx.info(ID, texts::SENT_AS_FILES.with("count", kept_count));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{parse_session, Role};
    use crate::pipeline::{AttachmentRef, PipelineMessage, Source};
    use crate::processors::testing::{options, with_context};
    use serde_json::json;

    #[test]
    fn what_the_model_takes_stays_and_the_rest_becomes_a_note() {
        let session = parse_session(
            &json!({ "formatVersion": 1, "id": "s", "messages": [
                { "role": "user", "content": "hear this", "attachments": [
                    { "id": "a", "kind": "audio", "mime": "audio/ogg", "name": "v.ogg", "dataBase64": "AA==" },
                    { "id": "i", "kind": "image", "mime": "image/png", "name": "p.png", "dataBase64": "AA==" } ] } ] })
            .to_string(),
        )
        .expect("valid");
        with_context(
            &AssetResolver,
            &[],
            &session,
            &options(),
            |mut ctx, config| {
                let mut m = PipelineMessage::new(Role::User, "hear this", Source::history(0));
                m.set_attachments(vec![
                    AttachmentRef {
                        message: 0,
                        attachment: 0,
                    },
                    AttachmentRef {
                        message: 0,
                        attachment: 1,
                    },
                ]);
                ctx.messages.push(m);
                AssetResolver.execute(&mut ctx, config).expect("runs");
                let m = &ctx.messages[0];
                // gpt-4o's chat API takes WAV and MP3 only: the OGG becomes a note.
                assert_eq!(
                    *m.attachments(),
                    [AttachmentRef {
                        message: 0,
                        attachment: 1
                    }]
                );
                assert!(
                    m.content()
                        .contains("[Attachment \"v.ogg\" (audio/ogg) not sent"),
                    "{}",
                    m.content()
                );
                assert_eq!(ctx.dropped.len(), 1);
                assert!(ctx.logs.iter().any(|l| l.message.contains("v.ogg")));
            },
        );
    }
}
