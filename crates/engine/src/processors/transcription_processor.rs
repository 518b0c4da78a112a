//! `transcription-processor` (priority 250): text attachments are read and inlined into their
//! message; for a model without the modality, the stored transcript of an audio, video, image or
//! document attachment is inlined in its place. What is inlined leaves the attachment list, so
//! the asset resolver only sees what still has to travel as a file.

use crate::model::{Attachment, AttachmentKind};
use crate::pipeline::{
    ConfigField, PipelineContext, Processor, ProcessorDescriptor, ResolvedConfig,
};
use crate::texts;
use crate::EngineError;

pub struct TranscriptionProcessor;

const ID: &str = "transcription-processor";

/// MIME types read as text besides `text/*`.
const TEXT_TYPES: &[&str] = &[
    "application/json",
    "application/xml",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/javascript",
    "application/x-sh",
    "application/sql",
];

pub fn is_text(attachment: &Attachment) -> bool {
    let mime = attachment.mime.to_ascii_lowercase();
    attachment.kind == AttachmentKind::Text
        || mime.starts_with("text/")
        || TEXT_TYPES.contains(&mime.as_str())
}

impl Processor for TranscriptionProcessor {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Transcription",
            description: "Inlines text attachments, and stored transcripts for models that cannot \
                          take the original medium.",
            priority: 250,
            is_core: false,
            default_enabled: true,
            config_fields: vec![
                ConfigField::boolean("inlineText", "Inline text attachments", true),
                ConfigField::number("maxTextChars", "Longest text inlined", 200_000.0)
                    .describe("Longer text is cut, with a note saying so."),
                ConfigField::boolean("useTranscripts", "Use stored transcripts", true)
                    .describe("For a model without the medium's modality."),
            ],
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        if ctx.blackboard.history_attachments == Some(false) {
            return Ok(());
        }
        let inline_text = config.bool("inlineText");
        let use_transcripts = config.bool("useTranscripts");
        let max_chars = config
            .number("maxTextChars")
            .map_or(200_000, |n| n.max(0.0) as usize);
        let caps = ctx.profile.capabilities;
        let session = ctx.session;
        let (mut inlined, mut transcribed) = (0, 0);
        let mut warnings = Vec::new();
        for i in 0..ctx.history.len() {
            let Some(m) = ctx.history.get(i) else { break };
            if !m.has_attachments() {
                continue;
            }
            let mut text = m.content().to_string();
            let attachments = m.attachments().into_owned();
            let mut kept = Vec::with_capacity(attachments.len());
            for r in &attachments {
                let Some(a) = r.resolve(session) else {
                    continue;
                };
                if inline_text && is_text(a) {
                    match ctx.assets.load(a) {
                        Ok(bytes) => {
                            let body = String::from_utf8_lossy(&bytes);
                            let mut body: String = body.chars().take(max_chars).collect();
                            if body.len() < bytes.len() && body.chars().count() == max_chars {
                                body.push_str(&format!("\n[… cut at {max_chars} characters]"));
                            }
                            text.push_str(&format!(
                                "\n\n[Attachment: {}]\n{}",
                                a.name,
                                body.trim_end()
                            ));
                            inlined += 1;
                        }
                        Err(e) => {
                            warnings
                                .push(texts::TEXT_NOT_READ.with("name", &a.name).part("why", e));
                            kept.push(*r);
                        }
                    }
                    continue;
                }
                let lacks = match a.kind {
                    AttachmentKind::Image => !caps.vision,
                    AttachmentKind::Audio => !caps.audio,
                    AttachmentKind::Video => !caps.video,
                    AttachmentKind::Document | AttachmentKind::Text => !caps.documents,
                };
                match (&a.transcript, lacks && use_transcripts) {
                    (Some(t), true) if !t.trim().is_empty() => {
                        text.push_str(&format!("\n\n[Transcript of {}]\n{}", a.name, t.trim_end()));
                        transcribed += 1;
                    }
                    _ => kept.push(*r),
                }
            }
            if kept.len() != attachments.len() {
                let mut m = m.clone();
                m.set_attachments(kept);
                m.set_content(text);
                ctx.history.replace(i, m);
            }
        }
        for w in warnings {
            ctx.warn(ID, w);
        }
        if inlined + transcribed > 0 {
            ctx.info(
                ID,
                texts::TRANSCRIBED
                    .with("inlined", inlined)
                    .with("transcribed", transcribed),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{parse_session, Session};
    use crate::pipeline::PipelineMessage;
    use crate::processors::testing::{options, with_context};
    use serde_json::json;

    fn session() -> Session {
        parse_session(
            &json!({ "formatVersion": 1, "id": "s", "messages": [
                { "role": "user", "content": "look", "attachments": [
                    { "id": "t", "kind": "text", "mime": "text/plain", "name": "notes.txt",
                      "dataBase64": "b25lIHR3byB0aHJlZQ==" },
                    { "id": "i", "kind": "image", "mime": "image/png", "name": "p.png",
                      "dataBase64": "AA==", "transcript": "a photo" },
                    { "id": "j", "kind": "document", "mime": "application/json", "name": "d.json",
                      "dataBase64": "%%%" } ] } ] })
            .to_string(),
        )
        .expect("valid")
    }

    /// Runs the processor (model gpt-4o: it takes images) and returns the history message.
    fn run(settings: &[(&str, serde_json::Value)]) -> (PipelineMessage<'static>, Vec<String>) {
        let session = session();
        with_context(
            &TranscriptionProcessor,
            settings,
            &session,
            &options(),
            |mut ctx, config| {
                // As the session loader leaves it: the stored message, its three attachments.
                ctx.history
                    .push(PipelineMessage::stored(ctx.session, 0).expect("message 0"));
                TranscriptionProcessor
                    .execute(&mut ctx, config)
                    .expect("runs");
                let warnings = ctx
                    .logs
                    .iter()
                    .filter(|l| l.level == crate::pipeline::LogLevel::Warning);
                let warnings = warnings.map(|l| l.message.clone()).collect();
                let m = ctx.history.get(0).expect("message").clone();
                (m.into_owned(), warnings)
            },
        )
    }

    #[test]
    fn text_attachments_are_inlined_and_the_media_the_model_takes_stays() {
        let (m, warnings) = run(&[]);
        assert_eq!(
            m.content(),
            "look\n\n[Attachment: notes.txt]\none two three"
        );
        // The image stays for the provider (gpt-4o has vision); its transcript is not used.
        assert_eq!(m.attachments().len(), 2);
        assert_eq!(m.attachments()[0].attachment, 1);
        // A text file that does not decode is kept as an attachment, with a warning naming it.
        assert_eq!(m.attachments()[1].attachment, 2);
        assert!(
            warnings.iter().any(|w| w.contains("d.json")),
            "{warnings:?}"
        );
    }

    #[test]
    fn long_text_is_cut_with_a_note_and_inlining_can_be_switched_off() {
        let (m, _) = run(&[("maxTextChars", json!(3))]);
        assert!(
            m.content().contains("one\n[… cut at 3 characters]"),
            "{}",
            m.content()
        );
        let (m, _) = run(&[("inlineText", json!(false))]);
        assert_eq!(m.content(), "look");
        assert_eq!(m.attachments().len(), 3);
    }
}
