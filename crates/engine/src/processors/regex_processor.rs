//! `regex-processor` (priority 200): the preset's regex rules (RULES 5.2) on the prompt only. Rules
//! of scope `history` or `both` rewrite the history here; rules of scope `templates` or `both` are
//! handed to the injection assembler on the blackboard, which applies them to each template
//! message after macros. The stored session is never changed: the engine only reads it.
//!
//! The default rules strip the legacy note and favourite blocks (the markers of RULES 5.5), which
//! older clients saved into the history together with the user's text.

use std::sync::Arc;

use crate::cache::ByStoredText;
use crate::limits::{PATTERN_BUILD_BYTES, REGEX_BUILD_GROWTH, REGEX_RULE_GROWTH};
use crate::model::{RegexRule, RegexScope, Role};
use crate::pipeline::{
    ConfigField, History, KeptAt, KeptRewrite, KeptRewrites, PipelineContext, Processor,
    ProcessorDescriptor, ResolvedConfig, Rewritten,
};
use crate::regex_rule::{rewrite, CompiledRule, PatternError};
use crate::said::{Said, Text};
use crate::texts;
use crate::EngineError;

use super::ephemeral_injection::{DOCUMENT_END, DOCUMENT_START, QUOTE_END, QUOTE_START};

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
        memo.rows.sync(session, ctx.blackboard.stored_texts);
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
            let (stored, content) = match m.as_stored() {
                Some((h, message)) => (Some(h).filter(|_| memo_rules), &message.content),
                None => (None, m.content_arc()),
            };
            // The common case on a warm rebuild: kept, and the rules did nothing to it.
            let kept = stored.and_then(|h| memo.get(h, content, role, depth_key));
            let text = match kept {
                Some(None) => {
                    kept_tally.add(&NOTHING, &mut changed, &mut too_long);
                    None
                }
                Some(Some(outcome)) => {
                    kept_tally.add(outcome, &mut changed, &mut too_long);
                    let RuleOutcome { text, kept_at, .. } = outcome;
                    text.as_ref().map(|text| {
                        // Borrowed from the caller's store, else a text of this build's.
                        match keeper.and_then(|k| k.share(text, kept_at)) {
                            Some(shared) => Change::Kept(shared, *kept_at),
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
                    Change::Kept(r, at) => match ctx.history.set_rewritten(i, r) {
                        Ok(()) if stored_at => note(&mut record, i, at),
                        Ok(()) => {}
                        Err(r) => {
                            ctx.history.set_content(i, Arc::clone(r.content_arc()));
                            record = record.filter(|_| !stored_at);
                        }
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
                    Some(Ok(())) => note(&mut record, new.at, kept_at),
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

/// What the history regex rules made of one stored message (bit k: rule k).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RuleOutcome {
    /// The message with its rewritten text, shared by every build that keeps it; `None` when no
    /// rule changed it.
    pub text: Option<Rewritten>,
    /// The rules that changed it.
    pub changed: u64,
    /// The rules left out because they would have made it too long.
    pub too_long: u64,
    /// Where `text` was put in the caller's [`KeptRewrites`] (the last one it was put in).
    pub kept_at: Option<KeptAt>,
}

/// For which role and depth the history regex rules were run over one stored message, and
/// whether they did anything to it.
#[derive(Debug, Clone)]
struct Rewrite {
    role: Role,
    /// The depth it was at, where a rule's depth limits make depth matter; else `u32::MAX`.
    depth: u32,
    /// Whether its outcome is in [`HistoryRewrites::outcomes`]; else the rules did nothing.
    did_something: bool,
}

const NOTHING: RuleOutcome = RuleOutcome {
    text: None,
    changed: 0,
    too_long: 0,
    kept_at: None,
};

/// What one set of history regex rules (RULES 5.2) made of each of a session's stored messages
/// in its last build with them, by stored position: a small row for every message, and apart,
/// in position order, the outcomes of those the rules did something to. A rebuild reads both
/// in order: the common row (nothing done) stays small, and no outcome is behind a pointer.
#[derive(Debug, Default)]
pub(crate) struct HistoryRewrites {
    rows: ByStoredText<Rewrite>,
    outcomes: Vec<(u32, RuleOutcome)>,
    /// What the last full pass rewrote among the stored messages.
    replay: Option<Replay>,
    /// Where the last outcome asked for was in `outcomes`: a rebuild asks in order.
    next: usize,
}

impl HistoryRewrites {
    /// What the rules made of stored message `index` with its stored text `text`, of this role,
    /// at this depth (`u32::MAX` where depth does not matter): `Some(None)` when they did
    /// nothing to it.
    pub fn get(
        &mut self,
        index: usize,
        text: &Arc<str>,
        role: Role,
        depth: u32,
    ) -> Option<Option<&mut RuleOutcome>> {
        let row = self
            .rows
            .get_stored(index, || text)
            .filter(|r| r.role == role && r.depth == depth)?;
        if !row.did_something {
            return Some(None);
        }
        let at = match self.outcomes.get(self.next) {
            Some((i, _)) if *i as usize == index => self.next,
            _ => self.find(index).ok()?,
        };
        self.next = at + 1;
        Some(Some(&mut self.outcomes[at].1))
    }

    fn find(&self, index: usize) -> Result<usize, usize> {
        self.outcomes
            .binary_search_by_key(&(index as u32), |(i, _)| *i)
    }

    pub fn set(
        &mut self,
        index: usize,
        text: &Arc<str>,
        role: Role,
        depth: u32,
        outcome: RuleOutcome,
    ) {
        let did_something = outcome != NOTHING;
        match (self.find(index), did_something) {
            (Ok(at), true) => self.outcomes[at].1 = outcome,
            (Ok(at), false) => {
                self.outcomes.remove(at);
            }
            (Err(at), true) => self.outcomes.insert(at, (index as u32, outcome)),
            (Err(_), false) => {}
        }
        self.rows.set_stored(
            index,
            text,
            Rewrite {
                role,
                depth,
                did_something,
            },
        );
    }

    /// Forgets positions past the end of a session that got shorter.
    pub fn truncate(&mut self, len: usize) {
        self.rows.truncate(len);
        let keep = self.outcomes.partition_point(|(i, _)| (*i as usize) < len);
        self.outcomes.truncate(keep);
    }
}

/// A history message's new text: as parts kept between builds, as parts made after the pass
/// (by their place in its list of [`NewRewrite`]s), or a text of this build's alone.
enum Change<'s> {
    Kept(KeptRewrite<'s>, Option<KeptAt>),
    Made(usize, Arc<str>),
    Text(Arc<str>),
}

impl Change<'_> {
    fn text(&self) -> &str {
        match self {
            Change::Kept(r, _) => r.content_arc(),
            Change::Made(_, t) | Change::Text(t) => t,
        }
    }
}

/// The kept outcomes' rule bits, counted a run of equal ones at a time (most rewritten
/// messages were changed by the same rules) and added to the per-rule counts when they change.
#[derive(Default)]
struct Tally {
    changed: u64,
    too_long: u64,
    run: u32,
}

impl Tally {
    fn add(&mut self, outcome: &RuleOutcome, changed: &mut [u32], too_long: &mut [u32]) {
        if (outcome.changed, outcome.too_long) != (self.changed, self.too_long) {
            self.flush(changed, too_long);
            (self.changed, self.too_long) = (outcome.changed, outcome.too_long);
        }
        self.run += 1;
    }

    /// Adds the run so far to the per-rule counts (kept only for at most 64 rules: one bit each).
    fn flush(&mut self, changed: &mut [u32], too_long: &mut [u32]) {
        if self.run > 0 && self.changed | self.too_long != 0 {
            for (bits, counts) in [(self.changed, changed), (self.too_long, too_long)] {
                for (k, count) in counts.iter_mut().enumerate() {
                    *count += self.run * u32::from(bits & (1 << k) != 0);
                }
            }
        }
        self.run = 0;
    }
}

/// What a full pass of the history rules over a session's stored messages did, for the next
/// build over the same stored texts (the same generation) to do again without reading each
/// message: which positions it gave which kept rewrite, and the counts and growth it added.
#[derive(Debug)]
struct Replay {
    generation: u64,
    /// The stored messages, each at its own position in the history.
    len: usize,
    rewrites: Vec<(u32, KeptAt)>,
    changed: Vec<u32>,
    too_long: Vec<u32>,
    growth: usize,
    /// Whether the counts and growth are in (the pass got past the last stored message).
    closed: bool,
}

impl Replay {
    fn new(generation: u64, len: usize) -> Self {
        Replay {
            generation,
            len,
            rewrites: Vec::new(),
            changed: Vec::new(),
            too_long: Vec::new(),
            growth: 0,
            closed: false,
        }
    }

    /// The counts and growth once the pass is past the stored messages.
    fn close(&mut self, changed: &[u32], too_long: &[u32], growth: usize) {
        self.changed = changed.to_vec();
        self.too_long = too_long.to_vec();
        self.growth = growth;
        self.closed = true;
    }

    fn sorted(mut self) -> Self {
        self.rewrites.sort_unstable_by_key(|(at, _)| *at);
        self
    }

    /// Gives each position its rewrite from `keeper` and adds the counts; returns the growth.
    /// `None`, changing nothing, when a rewrite is not in `keeper` (a new store).
    fn apply<'s>(
        &self,
        keeper: &'s KeptRewrites,
        history: &mut History<'s>,
        changed: &mut [u32],
        too_long: &mut [u32],
    ) -> Option<usize> {
        // Every rewrite is looked for before any is given, so that a miss changes nothing.
        if !self
            .rewrites
            .iter()
            .all(|(_, at)| keeper.get_at(*at).is_some())
        {
            return None;
        }
        for &(at, kept) in &self.rewrites {
            let Some(r) = keeper.get_at(kept) else {
                continue;
            };
            if let Err(r) = history.set_rewritten(at as usize, r) {
                history.set_content(at as usize, Arc::clone(r.content_arc()));
            }
        }
        for (count, n) in changed.iter_mut().zip(&self.changed) {
            *count += n;
        }
        for (count, n) in too_long.iter_mut().zip(&self.too_long) {
            *count += n;
        }
        Some(self.growth)
    }
}

/// Notes in `record` that position `at` got the rewrite kept at `kept`.
fn note(record: &mut Option<Replay>, at: usize, kept: Option<KeptAt>) {
    match (record.as_mut(), kept) {
        (Some(r), Some(kept)) => r.rewrites.push((at as u32, kept)),
        _ => *record = None,
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
