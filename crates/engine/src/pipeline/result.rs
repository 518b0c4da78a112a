//! What a build returns: the final messages with tokens and provenance, the budget, what was
//! dropped or cut and why, warnings and logs.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{LogEntry, LogLevel, PipelineContext, PipelineMessage, Source, SourceKind};
use crate::model::Role;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BuiltMessage {
    pub role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Shared with the pipeline (and, for history, with the stored session): a build over a long
    /// session references its text instead of copying it.
    pub content: Arc<str>,
    /// Content tokens plus the format's per-message overhead.
    pub tokens: u32,
    pub source: Source,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<super::AttachmentRef>,
    /// Provenance of texts a formatter joined into this message, after `source`'s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<Source>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct TokenSummary {
    /// Every message plus the reply priming of the format.
    pub total: u32,
    pub budget: u32,
    /// False when the model's tokenizer is estimated.
    pub exact: bool,
    pub tokenizer: String,
    pub context_window: u32,
    pub reserved_reply: u32,
    /// How far the fixed part alone exceeds the budget, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_budget: Option<u32>,
    /// Totals by source kind (`template`, `history`, ...), for the preview's token bar.
    pub by_source: BTreeMap<String, u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum DropAction {
    Dropped,
    Truncated,
}

/// A message (or a run of consecutive history messages) that a processor removed or cut.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DroppedItem {
    pub processor: String,
    pub action: DropAction,
    /// The (first) message's source.
    pub source: Source,
    /// How many messages this item covers: a run of history dropped for one reason is one item.
    pub count: u32,
    /// For a run of history: the stored index of its last message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_history_index: Option<u32>,
    /// Tokens removed, where every covered message was counted (the limiter stops counting
    /// history at the first message that no longer fits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u32>,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BuildResult {
    /// The recipe that applied.
    pub recipe: Option<String>,
    pub model: String,
    /// The model profile that applied.
    pub profile: String,
    pub messages: Vec<BuiltMessage>,
    pub tokens: TokenSummary,
    pub dropped: Vec<DroppedItem>,
    /// Warnings and errors among the logs.
    pub warnings: Vec<LogEntry>,
    pub logs: Vec<LogEntry>,
    /// Macro variables after the build.
    pub variables: BTreeMap<String, String>,
    /// What the lorebook activated (and why) and what its budget cut; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lorebook: Option<crate::processors::LorebookReport>,
}

impl PipelineContext<'_> {
    /// Counts what is not counted yet, resolves stored message ids and packs the result.
    pub(crate) fn finish(mut self) -> BuildResult {
        let messages = std::mem::take(&mut self.messages);
        // Totals per source kind, summed in a table and named once: no string per message.
        let mut by_kind: Vec<(SourceKind, u32)> = Vec::new();
        let mut total = self.profile.overhead().reply;
        let mut built = Vec::with_capacity(messages.len());
        for mut m in messages {
            let tokens = self.count_message(&mut m);
            total += tokens;
            match by_kind.iter_mut().find(|(kind, _)| *kind == m.source.kind) {
                Some((_, sum)) => *sum += tokens,
                None => by_kind.push((m.source.kind, tokens)),
            }
            // Moved, not cloned: a clone and a drop per message would be two locked
            // operations on text that is rarely in cache.
            let PipelineMessage {
                role,
                name,
                content,
                mut source,
                attachments,
                truncated,
                mut merged,
                ..
            } = m;
            for s in std::iter::once(&mut source).chain(merged.iter_mut()) {
                if let Some(i) = s.history_index {
                    s.message_id = self
                        .session
                        .messages
                        .get(i as usize)
                        .and_then(|m| m.id.clone());
                }
            }
            built.push(BuiltMessage {
                role,
                name,
                content,
                tokens,
                source,
                truncated,
                attachments,
                merged,
            });
        }
        let by_source: BTreeMap<String, u32> = by_kind
            .into_iter()
            .map(|(kind, sum)| (kind.as_str().to_string(), sum))
            .collect();
        let mut history_counts = std::mem::take(&mut self.history_counts);
        history_counts.truncate(self.session.messages.len());
        self.tokens
            .keep_history_counts(self.tokenizer.kind, &self.session.id, history_counts);
        let budget = self.budget();
        if self.over_budget.is_none() && total > budget {
            // The limiter did not run (or could not cut enough): still say so.
            self.over_budget = Some(total - budget);
        }
        if let Some(over) = self.over_budget {
            self.log(
                "token-limiter",
                LogLevel::Error,
                format!("over budget by {over} tokens ({total} of {budget})"),
            );
        }
        let warnings = self
            .logs
            .iter()
            .filter(|l| l.level >= LogLevel::Warning)
            .cloned()
            .collect();
        BuildResult {
            recipe: self.recipe,
            model: self.model.to_string(),
            profile: self.profile.id.clone(),
            messages: built,
            tokens: TokenSummary {
                total,
                budget,
                exact: self.tokenizer.exact,
                tokenizer: self.tokenizer.label(),
                context_window: self.profile.context_window,
                reserved_reply: self.profile.reserved_reply,
                over_budget: self.over_budget,
                by_source,
            },
            dropped: self.dropped,
            warnings,
            logs: self.logs,
            variables: self.variables,
            lorebook: self.blackboard.lorebook.take(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use chrono::DateTime;

    use crate::model::{parse_preset, parse_session, Session};
    use crate::pipeline::{BuildOptions, BuildRequest};
    use crate::tokens::TokenCache;

    const PRESET: &str = r#"{"formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [
            {"id": "sys", "role": "system", "content": "You are {{char}}."},
            {"id": "hist", "role": "system", "type": "chat_history"}],
        "contextRecipes": [{"id": "r", "modelFilter": ["*"], "steps": [
            {"messageId": "sys", "enabled": true}, {"messageId": "hist", "enabled": true}]}]}"#;

    const SESSION: &str = r#"{"formatVersion": 1, "id": "s", "messages": [
        {"role": "user", "content": "Hello there."},
        {"role": "assistant", "content": "Hi! How can I help?"},
        {"role": "user", "content": "Tell me about the mill."}]}"#;

    #[test]
    fn a_rebuild_counts_history_from_the_kept_counts_and_recounts_only_changed_text() {
        let preset = parse_preset(PRESET).unwrap();
        let mut session = parse_session(SESSION).unwrap();
        let options =
            BuildOptions::at(DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap());
        let tokens = TokenCache::new();
        let build = |session: &Session| {
            crate::build(&BuildRequest {
                assets: &crate::assets::InlineAssets,
                preset: &preset,
                session,
                model: "gpt-4o",
                options: &options,
                tokens: &tokens,
                profiles: &[],
            })
            .unwrap()
        };
        let first = build(&session);
        assert_eq!(
            tokens.stats(),
            (0, 4),
            "one template and three history texts counted"
        );
        let second = build(&session);
        assert_eq!(second.messages, first.messages);
        assert_eq!(tokens.stats(), (4, 4), "nothing counted again");

        // New text in the same place is counted, never read from the kept counts.
        session.messages[1].content = Arc::from("Hi! How can I help you today, traveller?");
        let third = build(&session);
        assert_eq!(tokens.stats(), (7, 5));
        let expected =
            crate::tokens::TokenizerKind::O200kBase.count(&session.messages[1].content) as u32 + 3;
        assert_eq!(third.messages[2].tokens, expected);
        assert_ne!(third.messages[2].tokens, first.messages[2].tokens);
    }
}
