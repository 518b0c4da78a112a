//! Placement (RULES 3.3-3.7): the earlier processors' candidates and the steps' injections sorted
//! into their places, and the output emitted in one pass.

use super::*;

/// The injection candidates of earlier processors (the lorebook's entries) join the injections,
/// placed by the same rules after every step in tie order (`tie_base` is the number of steps);
/// their macros are expanded, a blank one is not sent, and one without a place goes after the
/// `worldInfoBefore` anchor, or, in a recipe without it, directly before the chat history
/// (RULES 6.4).
pub(super) fn place_candidates(
    candidates: Vec<InjectionCandidate>,
    tie_base: usize,
    layout: &mut Layout,
    macros: &mut Macros<'_>,
    log: &mut Vec<LogLine>,
) {
    for (i, candidate) in candidates.into_iter().enumerate() {
        let position = candidate
            .source
            .entry_id
            .as_deref()
            .or(candidate.source.template_id.as_deref())
            .unwrap_or("injection")
            .to_string();
        let content = macros.expand(
            &candidate.content,
            &format!("{}:{position}", candidate.source.kind.as_str()),
            log,
        );
        if content.trim().is_empty() {
            log.push(LogLine::Info(
                texts::CANDIDATE_EMPTY
                    .part("kind", candidate.source.kind.said())
                    .with("position", &position),
            ));
            continue;
        }
        let message = PipelineMessage::new(candidate.role, content, candidate.source);
        let class = match classify(&candidate.strategy) {
            Class::List => {
                let anchors = &layout.anchors;
                if anchors.contains_key(WORLD_INFO) || !anchors.contains_key(CHAT_HISTORY) {
                    Class::Anchor(WORLD_INFO.into(), AnchorPosition::After)
                } else {
                    Class::Anchor(CHAT_HISTORY.into(), AnchorPosition::Before)
                }
            }
            class => class,
        };
        layout.injections.push(Injection {
            class,
            order: candidate.strategy.order(),
            tie: tie_base + i,
            message,
        });
    }
}

/// Where the injections go: depth injections by the history index they stand before, anchor
/// injections by their slot and side, each place ordered by `order`, highest first, then by
/// step order; and what could not be placed.
pub(super) struct Places {
    at_depth: BTreeMap<usize, Vec<Injection>>,
    at_anchor: HashMap<(usize, AnchorPosition), Vec<Injection>>,
    /// Injections with no place, each with the reason.
    pub(super) dropped: Vec<(PipelineMessage<'static>, Said)>,
    pub(super) depth_count: usize,
    pub(super) anchor_count: usize,
}

/// Sorts the injections into their places over a history of `n` messages. A depth-d injection
/// goes before history index max(0, n − d), and is dropped without an enabled `chat_history`
/// slot (RULES 3.4); an anchor injection goes before or after its anchor's block, and is dropped
/// when the recipe has no such anchor (RULES 3.5). Without a `chat_history` slot the history is
/// not sent, which one warning says (RULES 3.4 item 5).
pub(super) fn sort_into_places(
    injections: Vec<Injection>,
    layout: &Layout,
    n: usize,
    log: &mut Vec<LogLine>,
) -> Places {
    let mut places = Places {
        at_depth: BTreeMap::new(),
        at_anchor: HashMap::new(),
        dropped: Vec::new(),
        depth_count: 0,
        anchor_count: 0,
    };
    for mut injection in injections {
        match injection.class.clone() {
            Class::Depth(d) => {
                if !layout.has_history_slot {
                    let reason = texts::DEPTH_WITHOUT_HISTORY.with("depth", d);
                    log.push(LogLine::Warning(
                        texts::INJECTION_DROPPED
                            .part("what", describe(&injection.message))
                            .part("reason", reason.clone()),
                    ));
                    places.dropped.push((injection.message, reason));
                    continue;
                }
                injection.message.source_mut().placement = Placement::Depth { depth: d };
                places
                    .at_depth
                    .entry(n.saturating_sub(d as usize))
                    .or_default()
                    .push(injection);
                places.depth_count += 1;
            }
            Class::Anchor(target, position) => {
                let Some(&slot) = layout.anchors.get(&target) else {
                    let reason = texts::ANCHOR_MISSING.with("anchor", &target);
                    log.push(LogLine::Warning(
                        texts::INJECTION_DROPPED_ANCHOR
                            .part("what", describe(&injection.message))
                            .part("reason", reason.clone()),
                    ));
                    places.dropped.push((injection.message, reason));
                    continue;
                };
                injection.message.source_mut().placement = Placement::Anchor { target, position };
                places
                    .at_anchor
                    .entry((slot, position))
                    .or_default()
                    .push(injection);
                places.anchor_count += 1;
            }
            Class::List => unreachable!("list-order messages are skeleton"),
        }
    }
    // Order descending; ties by step order (stable sort over step order).
    let sort =
        |v: &mut Vec<Injection>| v.sort_by(|a, b| b.order.cmp(&a.order).then(a.tie.cmp(&b.tie)));
    places.at_depth.values_mut().for_each(sort);
    places.at_anchor.values_mut().for_each(sort);

    if !layout.has_history_slot && n > 0 {
        log.push(LogLine::Warning(texts::NO_HISTORY_SLOT.with("count", n)));
    }
    places
}

/// The output in one pass over the skeleton (RULES 3.5, 3.6): each part with its "before" and
/// "after" anchor injections around it; the `chat_history` slot as the history, oldest first,
/// with the depth injections among it; the `user_profile` slot as the profile's content with
/// macros expanded, when there is any; a placeholder as nothing.
pub(super) fn emit<'s>(
    skeleton: Vec<Part>,
    places: &mut Places,
    history: Vec<PipelineMessage<'s>>,
    profile_content: &str,
    macros: &mut Macros<'_>,
    log: &mut Vec<LogLine>,
) -> Vec<PipelineMessage<'s>> {
    let mut out: Vec<PipelineMessage<'s>> = Vec::with_capacity(
        skeleton.len() + history.len() + places.at_depth.len() + places.at_anchor.len(),
    );
    let mut history = Some(history);
    for (index, part) in skeleton.into_iter().enumerate() {
        let mut before = places
            .at_anchor
            .remove(&(index, AnchorPosition::Before))
            .unwrap_or_default();
        out.extend(before.drain(..).map(|i| i.message));
        match part {
            Part::Message(m) => out.push(*m),
            Part::Slot {
                kind: TemplateType::ChatHistory,
                ..
            } => {
                let history = history.take().unwrap_or_default();
                let mut history = history.into_iter();
                let mut next = 0;
                for (at, group) in std::mem::take(&mut places.at_depth) {
                    out.extend(history.by_ref().take(at - next));
                    next = at;
                    out.extend(group.into_iter().map(|i| i.message));
                }
                out.extend(history);
            }
            Part::Slot {
                kind: TemplateType::UserProfile,
                template_id,
                step_index,
                role,
            } => {
                let content = macros.expand(profile_content, "profile", log);
                if content.trim().is_empty() {
                    log.push(LogLine::Info(texts::PROFILE_EMPTY.into()));
                } else {
                    let mut source = Source::new(SourceKind::Profile, Placement::List);
                    source.template_id = Some(template_id);
                    source.step_index = Some(step_index as u32);
                    out.push(PipelineMessage::new(role, content, source));
                }
            }
            Part::Slot { .. } => {} // a placeholder is only an anchor
        }
        let mut after = places
            .at_anchor
            .remove(&(index, AnchorPosition::After))
            .unwrap_or_default();
        out.extend(after.drain(..).map(|i| i.message));
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Class {
    List,
    Depth(u32),
    Anchor(String, AnchorPosition),
}

/// RULES 3.3: depth wins over anchor; neither means list order.
pub(super) fn classify(strategy: &InjectionStrategy) -> Class {
    if let Some(d) = strategy.depth {
        Class::Depth(d)
    } else if let Some(target) = &strategy.anchor_target {
        Class::Anchor(target.clone(), strategy.position())
    } else {
        Class::List
    }
}

pub(super) enum Part {
    Message(Box<PipelineMessage<'static>>),
    Slot {
        kind: TemplateType,
        template_id: String,
        step_index: usize,
        role: Role,
    },
}

pub(super) struct Injection {
    pub(super) class: Class,
    pub(super) order: i32,
    /// Step order, for ties.
    pub(super) tie: usize,
    pub(super) message: PipelineMessage<'static>,
}

pub(super) fn describe(m: &PipelineMessage<'_>) -> Said {
    let source = m.source();
    match (&source.template_id, source.step_index, &source.entry_id) {
        (Some(id), Some(step), _) => texts::STEP.with("step", step).with("template", id),
        (_, _, Some(entry)) => texts::LOREBOOK_ENTRY.with("entry", entry),
        _ => source.kind.said(),
    }
}
