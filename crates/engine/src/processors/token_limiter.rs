//! `token-limiter` (priority 400): the budget of SPEC 5.6.
//!
//! Strategy `fixed-preset`: every non-history message is fixed (depth-injected ones stay in
//! their places); history is dropped oldest first until the total fits; the newest user message
//! is never dropped. History is counted from the newest backwards and only until the budget is
//! spent, so a 100,000-message session costs the messages that fit, not the whole history.

use crate::history::{prefetch_shared, PREFETCH_AHEAD};
use crate::model::Role;
use crate::pipeline::{
    ConfigField, DropAction, DroppedItem, PipelineContext, Processor, ProcessorDescriptor,
    ResolvedConfig,
};
use crate::EngineError;

pub struct TokenLimiter;

const ID: &str = "token-limiter";

impl Processor for TokenLimiter {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Token limiter",
            description: "Fits the context into the model's window minus the reply reserve, \
                          dropping the oldest history first.",
            priority: 400,
            is_core: false,
            default_enabled: true,
            config_fields: vec![
                ConfigField::select("strategy", "Strategy", &["fixed-preset"], "fixed-preset")
                    .describe("fixed-preset: templates are fixed, history is dropped oldest first."),
                ConfigField::boolean("truncateOverflowing", "Cut the oldest kept message", false)
                    .describe("Fill the remaining budget with the end of the first message that no longer fits."),
            ],
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let budget = ctx.budget();
        let overhead = ctx.profile.overhead();
        let mut messages = std::mem::take(&mut ctx.messages);
        let newest_user = messages
            .iter()
            .rposition(|m| m.source.kind.is_history() && m.role == Role::User);
        let droppable = |i: usize, m: &crate::pipeline::PipelineMessage| {
            m.source.kind.is_history() && Some(i) != newest_user
        };

        let mut fixed = overhead.reply;
        for (i, m) in messages.iter_mut().enumerate() {
            if !droppable(i, m) {
                fixed += ctx.count_message(m);
            }
        }
        let history_indices: Vec<usize> = (0..messages.len())
            .filter(|&i| droppable(i, &messages[i]))
            .collect();

        // Newest first: keep while it fits; the first that does not fit and everything older go.
        let mut remaining = budget.saturating_sub(fixed);
        if fixed > budget {
            ctx.over_budget = Some(fixed - budget);
            ctx.warn(
                ID,
                format!("the fixed part alone ({fixed} tokens) exceeds the budget of {budget}; all droppable history is dropped"),
            );
        }
        let mut cut_at = 0; // history_indices[..cut_at] are dropped
        for (k, &i) in history_indices.iter().enumerate().rev() {
            let t = ctx.count_message(&mut messages[i]);
            if fixed <= budget && t <= remaining {
                remaining -= t;
            } else {
                cut_at = k + 1;
                break;
            }
        }

        // truncateOverflowing: the first message that did not fit keeps its end, to fill the rest.
        let mut truncated = None;
        if config.bool("truncateOverflowing") && cut_at > 0 && fixed <= budget {
            let i = history_indices[cut_at - 1];
            let m = &messages[i];
            let name_cost = m.name.as_ref().map_or(0, |n| {
                overhead.per_name + ctx.tokens.count(ctx.tokenizer.kind, n)
            });
            let room = remaining.saturating_sub(overhead.per_message + name_cost);
            if room > 0 {
                let before = ctx.count_message(&mut messages[i]);
                let tail = ctx
                    .tokenizer
                    .kind
                    .keep_last_tokens(messages[i].content(), room as usize);
                if !tail.trim().is_empty() {
                    let m = &mut messages[i];
                    m.set_content(tail);
                    m.truncated = true;
                    let after = ctx.count_message(m);
                    truncated = Some((i, before.saturating_sub(after)));
                    cut_at -= 1;
                }
            }
        }

        // Record the drops as runs of consecutive history, then remove them.
        let dropped_set = &history_indices[..cut_at];
        let mut runs: Vec<DroppedItem> = Vec::new();
        let mut previous: Option<u32> = None;
        for &i in dropped_set {
            let tokens = messages[i].tokens();
            let index = messages[i].source.history_index;
            let continues = matches!((previous, index), (Some(p), Some(h)) if h == p + 1);
            match runs.last_mut() {
                Some(run) if continues => {
                    run.count += 1;
                    run.tokens = run.tokens.zip(tokens).map(|(a, b)| a + b);
                    run.last_history_index = index;
                }
                _ => runs.push(DroppedItem {
                    processor: ID.into(),
                    action: DropAction::Dropped,
                    source: messages[i].source.clone(),
                    count: 1,
                    last_history_index: index,
                    tokens,
                    reason: format!("over the budget of {budget} tokens (oldest history first)"),
                }),
            }
            previous = index;
        }
        if let Some((i, cut)) = truncated {
            runs.push(DroppedItem {
                processor: ID.into(),
                action: DropAction::Truncated,
                source: messages[i].source.clone(),
                count: 1,
                last_history_index: None,
                tokens: Some(cut),
                reason: format!("cut to its last tokens to fill the budget of {budget}"),
            });
        }
        let dropped_tokens = match runs.iter().map(|r| r.tokens).sum::<Option<u32>>() {
            Some(t) => format!("{t} tokens"),
            None => "not all counted".into(),
        };
        let dropped_count = dropped_set.len();
        if dropped_count > 0 {
            let mut keep = vec![true; messages.len()];
            for &i in dropped_set {
                keep[i] = false;
            }
            // Dropping most of a long history releases a shared text per message; hint those
            // a few messages ahead so that the misses overlap (see `prefetch_shared`).
            let mut kept = Vec::with_capacity(messages.len() - dropped_count);
            let mut rest = messages.into_iter();
            let mut keep = keep.into_iter();
            while let Some(message) = rest.next() {
                if let Some(ahead) = rest.as_slice().get(PREFETCH_AHEAD) {
                    prefetch_shared(ahead.content_arc());
                }
                if keep.next().unwrap_or(true) {
                    kept.push(message);
                }
            }
            messages = kept;
        }
        ctx.messages = messages;
        ctx.dropped.extend(runs);
        ctx.info(
            ID,
            format!(
                "budget {budget}: kept {} of {} history messages; dropped {dropped_count} ({dropped_tokens}){}",
                history_indices.len() - dropped_count + usize::from(newest_user.is_some()),
                history_indices.len() + usize::from(newest_user.is_some()),
                if truncated.is_some() { "; cut one" } else { "" }
            ),
        );
        Ok(())
    }
}
