//! `memory` (priority 160): the summary's coverage and long-term memory (RULES 5.15).
//!
//! The engine does no searching: the library embeds the input, searches the session's vectors
//! and hands the hits in as build options ([`BuildOptions::memory`]), with the stored position
//! the session's summary covers ([`BuildOptions::summarized_through`]). This processor
//!
//! - leaves out of the history the stored messages the summary covers, when `omitSummarized` is
//!   on (the summary stands for them wherever the preset writes `{{summary}}`);
//! - makes each hit an injection candidate of kind `memory`, placed before the chat history or
//!   at a depth in it, with its score and the stored message it recalls in its provenance. The
//!   token limiter counts them in the memory section and drops the ones whose message is still
//!   in the context after the history is fitted (RULES 5.6).
//!
//! [`BuildOptions::memory`]: crate::pipeline::BuildOptions::memory
//! [`BuildOptions::summarized_through`]: crate::pipeline::BuildOptions::summarized_through

use crate::limits::{MEMORY_HITS, MEMORY_HIT_BYTES};
use crate::model::{AnchorPosition, InjectionStrategy, Role};
use crate::pipeline::{
    ConfigField, DroppedItem, InjectionCandidate, MemorySource, PipelineContext, Placement,
    Processor, ProcessorDescriptor, ResolvedConfig, Source, SourceKind,
};
use crate::said::Said;
use crate::texts;
use crate::EngineError;

pub struct Memory;

/// The summary prompt shipped (RULES 5.15); a preset sets its own in this processor's settings.
pub const DEFAULT_SUMMARY_PROMPT: &str = "You keep the running summary of a long chat. Write \
    the summary again so that it also covers the new messages: who the people are, what happened, \
    what was decided or promised, and what is still open. Keep names, facts and numbers exact. \
    Write plain prose in the chat's language, at most 300 words, and nothing but the summary.";

const ID: &str = "memory";

impl Processor for Memory {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Memory",
            description: "Places the older messages long-term memory recalled for the input, and \
                          leaves out the messages the summary covers when asked to.",
            priority: 160,
            is_core: false,
            default_enabled: true,
            config_fields: vec![
                ConfigField::boolean("omitSummarized", "Leave out what the summary covers", false)
                    .describe(
                        "The history starts after the last message the session's summary covers.",
                    ),
                ConfigField::select(
                    "position",
                    "Where recalled messages go",
                    &["before-history", "in-chat"],
                    "before-history",
                ),
                ConfigField::number("depth", "Depth in the chat", 4.0)
                    .describe("With \"in-chat\": how many messages from the end of the chat."),
                ConfigField::select("role", "Role", &["system", "user"], "system"),
                ConfigField::text("format", "Format", "[Earlier, {role}] {text}").describe(
                    "Each recalled message's text: {role} is who wrote it, {text} what was written.",
                ),
                ConfigField::text("summaryPrompt", "Summary prompt", DEFAULT_SUMMARY_PROMPT)
                    .describe("What the model is asked when the session's summary is made."),
                ConfigField::number("summaryEvery", "Summarize after new messages", 20.0)
                    .describe("An update is due after this many messages the summary does not cover."),
                ConfigField::number("summaryKeepRecent", "Newest messages never summarized", 4.0),
                ConfigField::boolean("summaryAuto", "Update the summary automatically", false)
                    .describe(
                        "After a stored reply, when an update is due, the summary is made in the \
                         background through the connection and model that sent.",
                    ),
            ],
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        if config.bool("omitSummarized") {
            if let Some(through) = ctx.options.summarized_through {
                omit_summarized(ctx, through);
            }
        }
        if let Some(reason) = &ctx.options.memory_skipped {
            ctx.warn(ID, texts::MEMORY_SKIPPED.part("reason", reason.clone()));
        }
        let hits = &ctx.options.memory;
        if hits.is_empty() {
            return Ok(());
        }
        if hits.len() > MEMORY_HITS {
            ctx.warn(
                ID,
                texts::MEMORY_TOO_MANY
                    .with("count", hits.len())
                    .with("limit", MEMORY_HITS),
            );
        }
        let in_chat = config.str("position") == "in-chat";
        let depth = config.number("depth").unwrap_or(4.0).max(0.0) as u32;
        let role = if config.str("role") == "user" {
            Role::User
        } else {
            Role::System
        };
        let strategy = if in_chat {
            InjectionStrategy {
                depth: Some(depth),
                ..InjectionStrategy::default()
            }
        } else {
            InjectionStrategy {
                anchor_target: Some("chat_history".into()),
                anchor_position: Some(AnchorPosition::Before),
                ..InjectionStrategy::default()
            }
        };
        let format = config.str("format").to_string();
        let mut placed = 0;
        let mut warnings: Vec<Said> = Vec::new();
        for hit in hits.iter().take(MEMORY_HITS) {
            let mut text = hit.text.as_str();
            if text.len() > MEMORY_HIT_BYTES {
                let mut end = MEMORY_HIT_BYTES;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text = &text[..end];
                warnings.push(
                    texts::MEMORY_CUT
                        .with("index", hit.index.map_or(-1, i64::from))
                        .with("limit", MEMORY_HIT_BYTES),
                );
            }
            if text.trim().is_empty() {
                continue;
            }
            // One pass, so a `{text}` inside the recalled text is left as written.
            let content = fill(&format, hit.role.as_str(), text);
            let score = (hit.score.clamp(-1.0, 1.0).max(0.0) * 1000.0).round() as u32;
            ctx.blackboard.injections.push(InjectionCandidate {
                role,
                content,
                strategy: strategy.clone(),
                source: Source {
                    memory: Some(MemorySource {
                        index: hit.index,
                        message_id: hit.message_id.clone(),
                        score,
                    }),
                    processor: Some(ID.to_string()),
                    ..Source::new(SourceKind::Memory, Placement::List)
                },
            });
            placed += 1;
        }
        for w in warnings {
            ctx.warn(ID, w);
        }
        let place: Said = if in_chat {
            texts::MEMORY_IN_CHAT.with("depth", depth)
        } else {
            texts::MEMORY_BEFORE_HISTORY.into()
        };
        ctx.info(
            ID,
            texts::MEMORY_PLACED
                .with("count", placed)
                .part("where", place),
        );
        Ok(())
    }
}

/// `format` with `{role}` and `{text}` filled in, in one pass over the format only.
fn fill(format: &str, role: &str, text: &str) -> String {
    let mut out = String::with_capacity(format.len() + text.len());
    let mut rest = format;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("{text}") {
            out.push_str(text);
            rest = after;
        } else if let Some(after) = tail.strip_prefix("{role}") {
            out.push_str(role);
            rest = after;
        } else {
            out.push('{');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The history without the stored messages up to and including `through`, which the summary
/// covers; the pending input always stays.
fn omit_summarized(ctx: &mut PipelineContext<'_, '_>, through: u32) {
    let total = ctx.history.len();
    let covered = |m: &crate::pipeline::PipelineMessage<'_>| {
        m.kind() == SourceKind::History && m.history_index().is_some_and(|i| i <= through)
    };
    let mut dropped: Vec<DroppedItem> = Vec::new();
    let reason: Said = texts::MEMORY_COVERED.with("index", through);
    for m in ctx.history.iter().filter(|m| covered(m)) {
        DroppedItem::push_history_run(&mut dropped, ID, m, &reason);
    }
    let removed: usize = dropped.iter().map(|d| d.count as usize).sum();
    if removed == 0 {
        return;
    }
    ctx.history.retain(|m| !covered(m));
    ctx.dropped.extend(dropped);
    ctx.info(
        ID,
        texts::MEMORY_OMITTED
            .with("removed", removed)
            .with("total", total),
    );
}

#[cfg(test)]
mod tests {
    use super::fill;

    #[test]
    fn the_format_is_filled_once() {
        assert_eq!(
            fill("[{role}] {text}", "user", "a {role} b"),
            "[user] a {role} b"
        );
        assert_eq!(fill("{x} {text", "user", "t"), "{x} {text");
    }
}
