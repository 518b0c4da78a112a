//! `regex-processor` (priority 200): the preset's regex rules (RULES 5.2) on the prompt only. Rules
//! of scope `history` or `both` rewrite the history here; rules of scope `templates` or `both` are
//! handed to the injection assembler on the blackboard, which applies them to each template
//! message after macros. The stored session is never changed: the engine only reads it.
//!
//! The default rules strip the legacy note and favourite blocks (the markers of RULES 5.5), which
//! older clients saved into the history together with the user's text.

use std::sync::Arc;

use crate::limits::{PATTERN_BUILD_BYTES, REGEX_BUILD_GROWTH, REGEX_RULE_GROWTH};
use crate::model::{RegexRule, RegexScope, Role};
use crate::pipeline::{
    ConfigField, KeptAt, KeptRewrite, PipelineContext, Processor, ProcessorDescriptor,
    ResolvedConfig,
};
use crate::regex_rule::{rewrite, CompiledRule, PatternError};
use crate::said::{Said, Text};
use crate::texts;
use crate::EngineError;

use super::ephemeral_injection::{DOCUMENT_END, DOCUMENT_START, QUOTE_END, QUOTE_START};

mod kept;

use kept::{note, HistoryRewrites, Replay, RuleOutcome, Tally, NOTHING};

pub struct RegexProcessor;

const ID: &str = "regex-processor";

/// The built-in rules, switched by the `defaultRules` setting.
pub fn default_rules() -> Vec<RegexRule> {
    let strip = |id: &str, name: &str, start: &str, end: &str| RegexRule {
        id: id.into(),
        name: Some(name.into()),
        pattern: format!(r"{}[\s\S]*?{}\s*", regex::escape(start), regex::escape(end)),
        replacement: String::new(),
        flags: String::new(),
        scope: RegexScope::History,
        roles: Some(vec![Role::User]),
        min_depth: None,
        max_depth: None,
        enabled: true,
    };
    vec![
        strip(
            "builtin-strip-legacy-note",
            "Strip legacy note blocks",
            DOCUMENT_START,
            DOCUMENT_END,
        ),
        strip(
            "builtin-strip-legacy-favourites",
            "Strip legacy favourite blocks",
            QUOTE_START,
            QUOTE_END,
        ),
    ]
}

impl Processor for RegexProcessor {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Regex rules",
            description: "Rewrites history and template text with the preset's regex rules, for \
                          the prompt only; the stored session is never changed.",
            priority: 200,
            is_core: false,
            default_enabled: true,
            config_fields: vec![ConfigField::boolean("defaultRules", "Built-in rules", true)
                .describe("Strip the legacy note and favourite blocks that older clients saved into the history.")],
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let builtin = if config.bool("defaultRules") {
            default_rules()
        } else {
            Vec::new()
        };
        let preset_rules = ctx.preset.regex_rules.as_deref().unwrap_or_default();
        let mut history_rules = Vec::new();
        for rule in builtin.iter().chain(preset_rules).filter(|r| r.enabled) {
            let compiled = match CompiledRule::new(rule, &mut ctx.patterns) {
                Ok(c) => c,
                // Validation refuses invalid patterns on save; a build still never fails on one.
                Err(PatternError::Invalid(e)) => {
                    ctx.warn(
                        ID,
                        texts::RULE_INVALID.with("rule", &rule.id).part("why", e),
                    );
                    continue;
                }
                Err(PatternError::OverBudget) => {
                    ctx.warn(
                        ID,
                        texts::RULE_OVER_BUDGET
                            .with("rule", &rule.id)
                            .with("mib", PATTERN_BUILD_BYTES >> 20),
                    );
                    continue;
                }
            };
            if matches!(rule.scope, RegexScope::Templates | RegexScope::Both) {
                ctx.blackboard.template_rules.push(compiled.clone());
            }
            if matches!(rule.scope, RegexScope::History | RegexScope::Both) {
                history_rules.push(compiled);
            }
        }
        if history_rules.is_empty() {
            return Ok(());
        }
        // What these rules made of each stored message in the session's last build is kept, so
        // that a rebuild after a template edit runs no pattern over a history it has seen. What a
        // message's rules made of it depends on that message alone; the build's cap on growth is
        // applied over those outcomes in history order, so a kept outcome gives what a fresh build
        // gives.
        let key = rules_key(&history_rules);
        let memo_rules = history_rules.len() <= 64;
        let depth_matters = history_rules
            .iter()
            .any(|r| r.min_depth.is_some() || r.max_depth.is_some());
        let session = ctx.session;
        let keeper = ctx.kept_rewrites;
        let mut memo = ctx.cache.take_kept::<HistoryRewrites>(&session.id, key);
        memo.sync(session, ctx.blackboard.stored_texts);
        let n = ctx.history.len();
        // Which roles any rule is for, where depth does not matter: asked of every message.
        let for_role = (!depth_matters)
            .then(|| Role::ALL.map(|role| history_rules.iter().any(|r| r.applies(role, None))));
        let mut changed = vec![0u32; history_rules.len()];
        let mut too_long = vec![0u32; history_rules.len()];
        let mut kept_tally = Tally::default();
        let mut left_over_cap = 0u32;
        let mut made: Vec<NewRewrite> = Vec::new();
        // The stored messages, when they are still as the session loader put them in: what the
        // rules make of them is then what they made in the last build over the same stored
        // texts, replayed from the list of what that build rewrote (RULES 5.2).
        let stored_len = session.messages.len();
        let generation = ctx.blackboard.stored_texts.filter(|_| {
            memo_rules
                && !depth_matters
                && ctx.history.loaded() == stored_len
                && ctx.blackboard.regex_growth == 0
        });
        let mut from = 0;
        if let (Some(g), Some(k), Some(replay)) = (generation, keeper, &memo.replay) {
            if replay.generation == g && replay.len == stored_len {
                if let Some(growth) = replay.apply(k, &mut ctx.history, &mut changed, &mut too_long)
                {
                    ctx.blackboard.regex_growth += growth;
                    from = stored_len;
                }
            }
        }
        // What this pass rewrote among the stored messages, for the next build to replay; `None`
        // once one of them cannot be replayed.
        let mut record = (from == 0 && keeper.is_some())
            .then_some(generation)
            .flatten()
            .map(|g| Replay::new(g, stored_len));
        for i in from..n {
            if i == stored_len {
                if let Some(r) = &mut record {
                    kept_tally.flush(&mut changed, &mut too_long);
                    r.close(&changed, &too_long, ctx.blackboard.regex_growth);
                }
            }
            let Some(m) = ctx.history.get(i) else { break };
            let (role, depth) = (m.role, (n - 1 - i) as u32);
            let applies = match for_role {
                Some(roles) => roles[role.index()],
                None => history_rules.iter().any(|r| r.applies(role, Some(depth))),
            };
            if !applies {
                continue;
            }
            if ctx.blackboard.regex_growth >= REGEX_BUILD_GROWTH {
                left_over_cap += 1;
                record = record.filter(|_| i >= stored_len);
                continue;
            }
            let depth_key = if depth_matters { depth } else { u32::MAX };
            // A stored message as stored is read straight from the session, and only when what
            // was kept of it is not known to hold.
            let (stored, content) = match m.as_rewritable() {
                Some((h, message)) => (Some(h).filter(|_| memo_rules), &message.content),
                None => (None, m.content_arc()),
            };
            // The common case on a warm rebuild: kept, and the rules did nothing to it.
            let kept = stored.and_then(|h| memo.get(h, content, role, depth_key).map(|o| (h, o)));
            let text = match kept {
                Some((_, None)) => {
                    kept_tally.add(&NOTHING, &mut changed, &mut too_long);
                    None
                }
                Some((h, Some(outcome))) => {
                    kept_tally.add(outcome, &mut changed, &mut too_long);
                    let RuleOutcome {
                        text,
                        kept_at,
                        changed,
                        too_long,
                    } = outcome;
                    text.as_ref().map(|text| {
                        // Borrowed from the caller's store, else a text of this build's.
                        match keeper.and_then(|k| k.share(text, kept_at)) {
                            Some(shared) => {
                                Change::Kept(shared, *kept_at, (h, *changed, *too_long))
                            }
                            None => Change::Text(Arc::clone(text.content_arc())),
                        }
                    })
                }
                None => {
                    let done = rewrite(
                        history_rules
                            .iter()
                            .enumerate()
                            .filter(|(_, r)| r.applies(role, Some(depth))),
                        m.content(),
                    );
                    for &k in &done.too_long {
                        too_long[k] += 1;
                    }
                    for &k in &done.changed {
                        changed[k] += 1;
                    }
                    let text: Option<Arc<str>> = done.text.map(Arc::from);
                    // Kept (one bit a rule) only where there are at most 64 rules.
                    let bits = |rules: &[usize]| rules.iter().fold(0u64, |b, &k| b | (1u64 << k));
                    let outcome = || (bits(&done.changed), bits(&done.too_long));
                    match (stored, text) {
                        // Kept as parts the next builds share, made after the pass.
                        (Some(h), Some(text)) => {
                            let (changed, too_long) = outcome();
                            made.push(NewRewrite {
                                at: i,
                                stored: h,
                                text: Arc::clone(&text),
                                role,
                                depth: depth_key,
                                changed,
                                too_long,
                                taken: false,
                            });
                            Some(Change::Made(made.len() - 1, text))
                        }
                        (Some(h), None) => {
                            let (changed, too_long) = outcome();
                            let outcome = RuleOutcome {
                                changed,
                                too_long,
                                ..NOTHING
                            };
                            memo.set(h, content, role, depth_key, outcome);
                            None
                        }
                        (None, text) => text.map(Change::Text),
                    }
                }
            };
            if let Some(change) = text {
                let grown = change.text().len().saturating_sub(content.len());
                if ctx.blackboard.regex_growth + grown > REGEX_BUILD_GROWTH {
                    ctx.blackboard.regex_growth = REGEX_BUILD_GROWTH;
                    left_over_cap += 1;
                    record = record.filter(|_| i >= stored_len);
                    continue;
                }
                ctx.blackboard.regex_growth += grown;
                let stored_at = i < stored_len;
                match change {
                    Change::Kept(r, at, again) => match ctx.history.set_rewritten(i, r) {
                        Ok(()) if stored_at => note(&mut record, &ctx.history, i, at),
                        Ok(()) => {}
                        // Made from the stored message as it was sent then (its name sent or
                        // not): made again after the pass, for this build and the next.
                        Err(r) => made.push(NewRewrite {
                            at: i,
                            stored: again.0,
                            text: Arc::clone(r.content_arc()),
                            role,
                            depth: depth_key,
                            changed: again.1,
                            too_long: again.2,
                            taken: true,
                        }),
                    },
                    Change::Made(k, _) => made[k].taken = true,
                    Change::Text(text) => {
                        ctx.history.set_content(i, text);
                        record = record.filter(|_| !stored_at);
                    }
                }
            }
        }
        kept_tally.flush(&mut changed, &mut too_long);
        if n == stored_len {
            if let Some(r) = &mut record {
                r.close(&changed, &too_long, ctx.blackboard.regex_growth);
            }
        }
        // The rewrites this build made, made now, one after another: they lie in a row in
        // memory, so that the next builds, which read them in history order, read them as
        // they read the history.
        for new in made {
            let Some(m) = ctx.history.get(new.at) else {
                continue;
            };
            let stored_text = Arc::clone(m.content_arc());
            let Some(rewritten) = m.rewritten(Arc::clone(&new.text)) else {
                // Not a stored message as stored (its pass found it so): the text alone.
                if new.taken {
                    ctx.history.set_content(new.at, new.text);
                    record = None;
                }
                continue;
            };
            let mut kept_at = None;
            let shared = keeper.and_then(|k| k.share(&rewritten, &mut kept_at));
            let outcome = RuleOutcome {
                changed: new.changed,
                too_long: new.too_long,
                text: Some(rewritten),
                kept_at,
            };
            memo.set(new.stored, &stored_text, new.role, new.depth, outcome);
            if new.taken {
                match shared.map(|r| ctx.history.set_rewritten(new.at, r)) {
                    Some(Ok(())) => note(&mut record, &ctx.history, new.at, kept_at),
                    Some(Err(r)) => {
                        ctx.history.set_content(new.at, Arc::clone(r.content_arc()));
                        record = None;
                    }
                    None => {
                        ctx.history.set_content(new.at, new.text);
                        record = None;
                    }
                }
            }
        }
        if from == 0 {
            memo.replay = record.filter(|r| r.closed).map(Replay::sorted);
        }
        memo.truncate(session.messages.len());
        ctx.cache.keep(&session.id, key, memo);
        for ((rule, count), long) in history_rules.iter().zip(changed).zip(too_long) {
            if count > 0 {
                ctx.info(
                    ID,
                    texts::RULE_CHANGED
                        .with("rule", &rule.id)
                        .with("count", count),
                );
            }
            if long > 0 {
                ctx.warn(
                    ID,
                    too_long_warning(texts::RULE_TOO_LONG_HISTORY, &rule.id, long),
                );
            }
        }
        if left_over_cap > 0 {
            ctx.warn(
                ID,
                texts::GROWTH_SPENT_HISTORY
                    .with("mib", REGEX_BUILD_GROWTH >> 20)
                    .with("count", left_over_cap),
            );
        }
        Ok(())
    }
}

/// A history message's new text: as parts kept between builds, as parts made after the pass
/// (by their place in its list of [`NewRewrite`]s), or a text of this build's alone.
enum Change<'s> {
    /// With its stored position and the rules that changed it or were left out, to make it
    /// again when the kept parts do not fit the message.
    Kept(KeptRewrite<'s>, Option<KeptAt>, (usize, u64, u64)),
    Made(usize, Arc<str>),
    Text(Arc<str>),
}

impl Change<'_> {
    fn text(&self) -> &str {
        match self {
            Change::Kept(r, _, _) => r.content_arc(),
            Change::Made(_, t) | Change::Text(t) => t,
        }
    }
}

/// A stored message the history rules rewrote in this build, not kept from an earlier one: its
/// parts are made after the pass, and kept for the next builds.
struct NewRewrite {
    /// Its position in the history, and in the session.
    at: usize,
    stored: usize,
    text: Arc<str>,
    role: Role,
    depth: u32,
    changed: u64,
    too_long: u64,
    /// Whether this build takes it (not left out by the cap on growth).
    taken: bool,
}

/// The warning for a rule left out of `count` texts (history messages or templates, as `text`
/// says) because it would have made them too long.
pub(crate) fn too_long_warning(text: Text, rule: &str, count: u32) -> Said {
    text.with("rule", rule)
        .with("count", count)
        .with("mib", REGEX_RULE_GROWTH >> 20)
}

/// Identifies a list of history rules by everything that decides what they do to a message.
fn rules_key(rules: &[CompiledRule]) -> u64 {
    let mut key = String::new();
    for r in rules {
        let fields = [
            r.pattern.as_str().to_string(),
            r.flags.clone(),
            r.replacement.clone(),
            format!("{:?} {:?} {:?}", r.roles, r.min_depth, r.max_depth),
        ];
        for field in fields {
            // Each field after its length: no two lists of rules write the same key.
            key.push_str(&format!("{}:{field}", field.len()));
        }
    }
    xxhash_rust::xxh3::xxh3_64(key.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_rules_strip_the_seed_markers() {
        let rules = default_rules();
        let strip = |rule: &RegexRule, text: &str| {
            let rule = CompiledRule::new(rule, &mut Default::default()).expect("compiles");
            rewrite([(0, &rule)], text).text.expect("matched")
        };
        let text = format!("{DOCUMENT_START}\nold note\n{DOCUMENT_END}\n\nwhat is this?");
        assert_eq!(strip(&rules[0], &text), "what is this?");
        let text = format!("a {QUOTE_START}x{QUOTE_END} b");
        assert_eq!(strip(&rules[1], &text), "a b");
    }
}
