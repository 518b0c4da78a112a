//! Placement (RULES 3.3-3.7): the earlier processors' candidates and the steps' injections sorted
//! into their places, and the output emitted in one pass.

use super::*;

/// The injection candidates of earlier processors (the lorebook's entries) join the injections,
/// placed by the same rules after every step in tie order (`tie_base` is the number of steps);
/// their macros are expanded, a blank one is not sent, and one without a place goes after the
/// `worldInfoBefore` anchor, or, in a recipe without it, directly before the chat history
/// (RULES 6.4).
///
/// With `fold_examples` and a `dialogueExamples` anchor in the recipe, a candidate aimed before
/// or after that anchor is not placed but returned, to be folded into the example dialogue
/// (RULES 5.11.3).
pub(super) fn place_candidates(
    candidates: Vec<InjectionCandidate>,
    tie_base: usize,
    layout: &mut Layout,
    fold_examples: bool,
    macros: &mut Macros<'_>,
    log: &mut Vec<LogLine>,
) -> Folded {
    let mut folded = Folded::default();
    let fold_examples = fold_examples && layout.anchors.contains_key(EXAMPLES_ANCHOR);
    for (i, candidate) in candidates.into_iter().enumerate() {
        let position = candidate.source.expansion_id().to_string();
        // A recalled message is stored history: as history, its macros stay as written.
        let content = if candidate.source.kind == SourceKind::Memory {
            candidate.content
        } else {
            macros.expand_at(
                &candidate.content,
                || candidate.source.expansion_position(),
                log,
            )
        };
        if content.trim().is_empty() {
            log.push(LogLine::Info(
                texts::CANDIDATE_EMPTY
                    .part("kind", candidate.source.kind.said())
                    .with("position", &position),
            ));
            continue;
        }
        if fold_examples
            && candidate.strategy.depth.is_none()
            && candidate.strategy.anchor_target.as_deref() == Some(EXAMPLES_ANCHOR)
        {
            match candidate.strategy.position() {
                AnchorPosition::Before => folded.before.push(content),
                AnchorPosition::After => folded.after.push(content),
            }
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
    folded
}

/// Candidates' texts folded into the example dialogue, in candidate order (RULES 5.11.3).
#[derive(Default)]
pub(super) struct Folded {
    pub(super) before: Vec<String>,
    pub(super) after: Vec<String>,
}

/// The `dialogueExamples` placeholder's slot with the example dialogue in it (RULES 5.11.3):
/// the character's example dialogue split into blocks, the texts folded in before it
/// (each one's blocks put first, so the last folded text opens) and after it; each block its
/// opener and its messages. A block without messages is not sent.
pub(super) fn add_examples(
    layout: &mut Layout,
    st: &StSettings<'_>,
    preset: &AgentPreset,
    folded: Folded,
    macros: &mut Macros<'_>,
    log: &mut Vec<LogLine>,
) {
    let Some(&index) = layout.anchors.get(EXAMPLES_ANCHOR) else {
        return;
    };
    let Part::Slot {
        kind: TemplateType::Placeholder,
        step_index,
        ..
    } = layout.skeleton[index]
    else {
        return;
    };
    let raw = preset
        .character
        .as_ref()
        .and_then(|c| c.example_dialogue.as_deref())
        .unwrap_or("");
    let own = macros.expand(raw, "examples", log);
    let mut texts: Vec<&str> = Vec::new();
    for text in folded.before.iter() {
        let blocks = example_blocks(text);
        texts.splice(0..0, blocks);
    }
    texts.extend(example_blocks(&own));
    for text in folded.after.iter() {
        texts.extend(example_blocks(text));
    }
    if texts.is_empty() {
        return;
    }
    let opener = macros.expand(st.new_example_chat_prompt, "examples:opener", log);
    let (user, char_name) = (macros.env.user, macros.env.char_name);
    let source = || {
        let mut source = Source::new(SourceKind::Template, Placement::List);
        source.template_id = Some(EXAMPLES_ANCHOR.to_string());
        source.step_index = Some(step_index as u32);
        source
    };
    let mut blocks = Vec::with_capacity(texts.len());
    for block in texts {
        let messages = example_messages(block, user, char_name);
        if messages.is_empty() {
            continue;
        }
        let mut out = Vec::with_capacity(messages.len() + 1);
        let has_opener = !opener.trim().is_empty();
        if has_opener {
            out.push(PipelineMessage::new(
                Role::System,
                opener.as_str(),
                source(),
            ));
        }
        for (is_user, text) in messages {
            let mut m = PipelineMessage::new(Role::System, text, source());
            let name = if is_user {
                EXAMPLE_USER
            } else {
                EXAMPLE_ASSISTANT
            };
            m.set_name(Some(name.to_string()));
            out.push(m);
        }
        blocks.push(ExampleBlock {
            messages: out,
            has_opener,
        });
    }
    layout.skeleton[index] = Part::Examples(blocks);
}

/// One example block: its opener (when there is one) and its messages.
pub(super) struct ExampleBlock {
    pub(super) messages: Vec<PipelineMessage<'static>>,
    pub(super) has_opener: bool,
}

/// Where the example blocks landed in the output: the first index and each block's length and
/// whether it opens with the opener.
pub(super) struct ExampleRange {
    start: usize,
    blocks: Vec<(usize, bool)>,
}

/// The example blocks cut to the budget as SillyTavern fills them after the history
/// (RULES 5.11.3): what the rest of the output leaves of the budget goes to the blocks in
/// order; in each block the opener, then its messages while each fits; a block left without
/// messages loses its opener too, and a later, smaller block may still fit.
pub(super) fn fit_examples(
    ctx: &mut PipelineContext<'_, '_>,
    out: &mut Vec<PipelineMessage<'_>>,
    examples: ExampleRange,
    log: &mut Vec<LogLine>,
) {
    let total: usize = examples.blocks.iter().map(|(len, _)| len).sum();
    let range = examples.start..examples.start + total;
    let mut others: u64 = 0;
    for (i, m) in out.iter_mut().enumerate() {
        if !range.contains(&i) {
            others += u64::from(ctx.count_message(m));
        }
    }
    let budget = u64::from(ctx.budget());
    let mut left = budget.saturating_sub(others);
    let mut keep = vec![true; total];
    let mut cut_blocks = 0;
    let mut at = examples.start;
    for (len, has_opener) in examples.blocks {
        let base = at - examples.start;
        let mut added = 0;
        let mut opener_kept = false;
        for k in 0..len {
            let tokens = u64::from(ctx.count_message(&mut out[at + k]));
            let fits = tokens <= left;
            if fits {
                left -= tokens;
            }
            if has_opener && k == 0 {
                opener_kept = fits;
                keep[base] = fits;
            } else if fits {
                added += 1;
            } else {
                // Once one message does not fit, the rest of the block is not sent.
                keep[base + k..base + len].fill(false);
                break;
            }
        }
        if added == 0 && opener_kept {
            keep[base] = false;
            left += u64::from(out[at].tokens().unwrap_or(0));
        }
        if keep[base..base + len].iter().any(|k| !k) {
            cut_blocks += 1;
        }
        at += len;
    }
    if cut_blocks == 0 {
        return;
    }
    let reason: Said = texts::EXAMPLES_OVER_BUDGET
        .with("count", cut_blocks)
        .with("budget", budget);
    log.push(LogLine::Info(reason.clone()));
    let tail = out.split_off(range.end);
    let examples_out = out.split_off(range.start);
    for (m, kept) in examples_out.into_iter().zip(keep) {
        if kept {
            out.push(m);
        } else {
            let tokens = m.tokens();
            ctx.dropped.push(DroppedItem::one(
                ID,
                DropAction::Dropped,
                m.source().into_owned(),
                tokens,
                reason.clone(),
            ));
        }
    }
    out.extend(tail);
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
    join_role: bool,
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
    if join_role {
        for group in places.at_depth.values_mut() {
            *group = join_by_role(std::mem::take(group));
        }
    }

    if !layout.has_history_slot && n > 0 {
        log.push(LogLine::Warning(texts::NO_HISTORY_SLOT.with("count", n)));
    }
    places
}

/// The output in one pass over the skeleton (RULES 3.5, 3.6): each part with its "before" and
/// "after" anchor injections around it; the `chat_history` slot as the history, oldest first,
/// with the depth injections among it; the `user_profile` slot as the profile's content with
/// macros expanded, when there is any; a placeholder as nothing. With a new chat opener
/// (RULES 5.11.3) the history block opens with it. The example blocks' place in the output is
/// returned with it.
/// What opens the `chat_history` block (the new chat opener's text, RULES 5.11.3) and what
/// closes it (a continuation's nudge, RULES 5.14).
pub(super) struct HistoryEnds<'c, 's> {
    pub(super) opener: &'c str,
    pub(super) closing: Option<PipelineMessage<'s>>,
}

pub(super) fn emit<'s>(
    skeleton: Vec<Part>,
    places: &mut Places,
    history: Vec<PipelineMessage<'s>>,
    profile_content: &str,
    mut ends: HistoryEnds<'_, 's>,
    macros: &mut Macros<'_>,
    log: &mut Vec<LogLine>,
) -> (Vec<PipelineMessage<'s>>, Option<ExampleRange>) {
    let mut examples = None;
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
            Part::Examples(blocks) => {
                let mut range = ExampleRange {
                    start: out.len(),
                    blocks: Vec::with_capacity(blocks.len()),
                };
                for block in blocks {
                    range.blocks.push((block.messages.len(), block.has_opener));
                    out.extend(block.messages);
                }
                examples = Some(range);
            }
            Part::Slot {
                kind: TemplateType::ChatHistory,
                ..
            } => {
                if !ends.opener.is_empty() {
                    let opener = macros.expand(ends.opener, "history:opener", log);
                    if !opener.trim().is_empty() {
                        out.push(PipelineMessage::new(
                            Role::System,
                            opener,
                            Source::processor(ID),
                        ));
                    }
                }
                let history = history.take().unwrap_or_default();
                let mut history = history.into_iter();
                let mut next = 0;
                for (at, group) in std::mem::take(&mut places.at_depth) {
                    out.extend(history.by_ref().take(at - next));
                    next = at;
                    out.extend(group.into_iter().map(|i| i.message));
                }
                out.extend(history);
                // A continuation's nudge closes the block (RULES 5.14).
                out.extend(ends.closing.take());
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
    (out, examples)
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
    /// The `dialogueExamples` placeholder with the example dialogue in it (RULES 5.11.3).
    Examples(Vec<ExampleBlock>),
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
