//! `token-limiter` (priority 400): the budget of RULES 5.6.
//!
//! Strategy `fixed-preset`: every non-history message is fixed (depth-injected ones stay in
//! their places); history is dropped oldest first until the total fits; the newest user message
//! is never dropped. History is counted from the newest backwards and only until the budget is
//! spent, so a 100,000-message session costs the messages that fit, not the whole history.
//!
//! Strategy `proportional` (RULES 5.6) first cuts each section to its share; see [`cut_sections`].

use crate::model::Role;
use crate::pipeline::{
    ConfigField, DropAction, DroppedItem, PipelineContext, PipelineMessage, Processor,
    ProcessorDescriptor, ResolvedConfig, SourceKind,
};
use crate::said::Text;
use crate::texts;
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
                ConfigField::select(
                    "strategy",
                    "Strategy",
                    &["fixed-preset", "proportional"],
                    "fixed-preset",
                )
                .describe(
                    "fixed-preset: templates are fixed, history is dropped oldest first. \
                     proportional: each section is cut to its share first.",
                ),
                ConfigField::number("shareSystem", "Share: system and presets", 20.0),
                ConfigField::number("shareSummary", "Share: summary", 10.0),
                ConfigField::number(
                    "shareMemory",
                    "Share: memory (lorebook, recalled messages)",
                    10.0,
                ),
                ConfigField::number("shareHistory", "Share: history", 55.0),
                ConfigField::number("shareInput", "Share: current input", 5.0),
                ConfigField::boolean("truncateOverflowing", "Cut the oldest kept message", false)
                    .describe("Fill the remaining budget with the end of the first message that no longer fits."),
            ],
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let budget = ctx.budget();
        let overhead = ctx.profile.overhead();
        let mut messages = std::mem::take(&mut ctx.messages);
        if config.str("strategy") == "proportional" {
            cut_sections(ctx, &mut messages, config, budget);
        }
        let newest_user = messages
            .iter()
            .rposition(|m| m.kind().is_history() && m.role == Role::User);
        let droppable = |i: usize, m: &crate::pipeline::PipelineMessage| {
            m.kind().is_history() && Some(i) != newest_user
        };

        // One pass sorts the messages: over a long history each is looked at once here.
        let mut fixed = overhead.reply;
        let mut history_indices: Vec<usize> = Vec::with_capacity(messages.len());
        for (i, m) in messages.iter_mut().enumerate() {
            if droppable(i, m) {
                history_indices.push(i);
            } else {
                fixed += ctx.count_message(m);
            }
        }

        // Newest first: keep while it fits; the first that does not fit and everything older go.
        let mut remaining = budget.saturating_sub(fixed);
        if fixed > budget {
            ctx.over_budget = Some(fixed - budget);
            ctx.warn(
                ID,
                texts::FIXED_OVER_BUDGET
                    .with("fixed", fixed)
                    .with("budget", budget),
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
            let name_cost = m.name().map_or(0, |n| {
                overhead.per_name + ctx.cache.count(ctx.tokenizer.vocabulary, n)
            });
            let room = remaining.saturating_sub(overhead.per_message + name_cost);
            if room > 0 {
                let before = ctx.count_message(&mut messages[i]);
                let tail = ctx
                    .tokenizer
                    .vocabulary
                    .keep_last_tokens(messages[i].content(), room as usize);
                if !tail.trim().is_empty() {
                    let m = &mut messages[i];
                    m.set_truncated(tail);
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
            let index = messages[i].history_index();
            let continues = matches!((previous, index), (Some(p), Some(h)) if h == p + 1);
            match runs.last_mut() {
                Some(run) if continues => {
                    run.count += 1;
                    run.tokens = run.tokens.zip(tokens).map(|(a, b)| a + b);
                    run.last_history_index = index;
                }
                _ => runs.push(DroppedItem {
                    last_history_index: index,
                    ..DroppedItem::one(
                        ID,
                        DropAction::Dropped,
                        messages[i].source().into_owned(),
                        tokens,
                        texts::HISTORY_OVER_BUDGET.with("budget", budget),
                    )
                }),
            }
            previous = index;
        }
        if let Some((i, cut)) = truncated {
            runs.push(DroppedItem::one(
                ID,
                DropAction::Truncated,
                messages[i].source().into_owned(),
                Some(cut),
                texts::CUT_TO_FIT.with("budget", budget),
            ));
        }
        let dropped_tokens = match runs.iter().map(|r| r.tokens).sum::<Option<u32>>() {
            Some(t) => texts::TOKENS.with("count", t),
            None => texts::NOT_ALL_COUNTED.into(),
        };
        let dropped_count = dropped_set.len();
        if dropped_count > 0 {
            let mut keep = vec![true; messages.len()];
            for &i in dropped_set {
                keep[i] = false;
            }
            let mut keep = keep.into_iter();
            messages.retain(|_| keep.next().unwrap_or(true));
        }
        drop_recalled_in_context(ctx, &mut messages);
        ctx.messages = messages;
        ctx.dropped.extend(runs);
        let summary = if truncated.is_some() {
            texts::LIMITED_CUT_ONE
        } else {
            texts::LIMITED
        };
        ctx.info(
            ID,
            summary
                .with("budget", budget)
                .with(
                    "kept",
                    history_indices.len() - dropped_count + usize::from(newest_user.is_some()),
                )
                .with(
                    "total",
                    history_indices.len() + usize::from(newest_user.is_some()),
                )
                .with("dropped", dropped_count)
                .part("tokens", dropped_tokens),
        );
        Ok(())
    }
}

/// A message recalled from long-term memory whose stored message is still in the context once the
/// history is fitted says nothing new: it goes (RULES 5.6, 5.15).
fn drop_recalled_in_context(
    ctx: &mut PipelineContext<'_, '_>,
    messages: &mut Vec<PipelineMessage>,
) {
    if !messages.iter().any(|m| m.kind() == SourceKind::Memory) {
        return;
    }
    let kept: std::collections::HashSet<u32> = messages
        .iter()
        .filter(|m| m.kind() == SourceKind::History)
        .filter_map(|m| m.history_index())
        .collect();
    let mut keep = Vec::with_capacity(messages.len());
    for m in messages.iter() {
        let source = m.source();
        let inside = m.kind() == SourceKind::Memory
            && source
                .memory
                .as_ref()
                .and_then(|r| r.index)
                .is_some_and(|i| kept.contains(&i));
        if inside {
            ctx.dropped.push(DroppedItem::one(
                ID,
                DropAction::Dropped,
                source.into_owned(),
                m.tokens(),
                texts::MEMORY_IN_CONTEXT,
            ));
        }
        keep.push(!inside);
    }
    let mut k = keep.into_iter();
    messages.retain(|_| k.next().unwrap_or(true));
}

/// The sections of the `proportional` strategy (RULES 5.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    System,
    Summary,
    Memory,
    History,
    Input,
}

impl Section {
    /// The name of a section that can be cut (history and the input never are).
    fn said(self) -> Text {
        match self {
            Section::System => texts::SECTION_SYSTEM,
            Section::Summary => texts::SECTION_SUMMARY,
            Section::Memory => texts::SECTION_MEMORY,
            Section::History | Section::Input => unreachable!("never cut to a share"),
        }
    }
}

/// `proportional`: every section but history and the current input is cut to its share of the
/// budget (messages kept in order; the first that overflows keeps its head, the rest of the
/// section goes). What a section leaves unused is then free for history, which the
/// `fixed-preset` pass fits into whatever remains, so history receives its own share plus every
/// unused one. The current input is never cut; when it is larger than its share, the excess comes
/// out of history's.
fn cut_sections(
    ctx: &mut PipelineContext<'_, '_>,
    messages: &mut Vec<PipelineMessage>,
    config: &ResolvedConfig,
    budget: u32,
) {
    let share = |key: &str| config.number(key).unwrap_or(0.0).max(0.0);
    let shares = [
        (Section::System, share("shareSystem")),
        (Section::Summary, share("shareSummary")),
        (Section::Memory, share("shareMemory")),
        (Section::History, share("shareHistory")),
        (Section::Input, share("shareInput")),
    ];
    let total: f64 = shares.iter().map(|(_, s)| s).sum();
    if total <= 0.0 {
        ctx.warn(ID, texts::ZERO_SHARES);
        return;
    }
    let cap = |section: Section| {
        let s = shares
            .iter()
            .find(|(x, _)| *x == section)
            .map_or(0.0, |(_, s)| *s);
        (f64::from(budget) * s / total) as u32
    };
    let newest_user = messages
        .iter()
        .rposition(|m| m.kind().is_history() && m.role == Role::User);
    let summary_steps = summary_steps(ctx);
    let section_of = |i: usize, m: &PipelineMessage| -> Section {
        if Some(i) == newest_user {
            Section::Input
        } else if m.kind().is_history() {
            Section::History
        } else if matches!(m.kind(), SourceKind::Lorebook | SourceKind::Memory) {
            Section::Memory
        } else if m
            .source()
            .step_index
            .is_some_and(|s| summary_steps.contains(&(s as usize)))
        {
            Section::Summary
        } else {
            Section::System
        }
    };
    let sections: Vec<Section> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| section_of(i, m))
        .collect();
    let overhead = ctx.profile.overhead().per_message;
    let mut keep = vec![true; messages.len()];
    for section in [Section::System, Section::Summary, Section::Memory] {
        let cap = cap(section);
        let mut used = 0u32;
        let mut full = false;
        for i in (0..messages.len()).filter(|&i| sections[i] == section) {
            let tokens = ctx.count_message(&mut messages[i]);
            if !full && used + tokens <= cap {
                used += tokens;
                continue;
            }
            let room = cap.saturating_sub(used + overhead);
            // A head too short to carry meaning is not worth sending.
            if !full && room >= 16 {
                let head = ctx
                    .tokenizer
                    .vocabulary
                    .keep_first_tokens(messages[i].content(), room as usize);
                let m = &mut messages[i];
                m.set_truncated(head);
                let after = ctx.count_message(m);
                used += after;
                ctx.dropped.push(DroppedItem::one(
                    ID,
                    DropAction::Truncated,
                    m.source().into_owned(),
                    Some(tokens.saturating_sub(after)),
                    texts::SECTION_CUT
                        .part("section", section.said())
                        .with("cap", cap),
                ));
            } else {
                keep[i] = false;
                ctx.dropped.push(DroppedItem::one(
                    ID,
                    DropAction::Dropped,
                    messages[i].source().into_owned(),
                    Some(tokens),
                    texts::SECTION_DROPPED
                        .part("section", section.said())
                        .with("cap", cap),
                ));
            }
            full = true;
        }
        ctx.info(
            ID,
            texts::SECTION_USED
                .part("section", section.said())
                .with("used", used)
                .with("cap", cap),
        );
    }
    if keep.contains(&false) {
        let mut k = keep.into_iter();
        messages.retain(|_| k.next().unwrap_or(true));
    }
}

/// Step indices of the chosen recipe whose text uses `{{summary}}`: the summary section.
fn summary_steps(ctx: &PipelineContext<'_, '_>) -> Vec<usize> {
    let Some(recipe) = ctx.chosen_recipe() else {
        return Vec::new();
    };
    recipe
        .steps
        .iter()
        .enumerate()
        .filter(|(_, step)| {
            let text = step
                .overrides
                .as_ref()
                .and_then(|o| o.content.as_deref())
                .or_else(|| {
                    ctx.preset
                        .template(&step.message_id)
                        .and_then(|t| t.content.as_deref())
                })
                .unwrap_or("");
            text.to_ascii_lowercase().contains("{{summary}}")
        })
        .map(|(i, _)| i)
        .collect()
}
