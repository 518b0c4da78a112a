//! The assembler's SillyTavern behaviours (RULES 5.11.3): settings that are off by default and
//! that SillyTavern compatibility switches on. Each reads only the assembler's settings; with
//! the defaults every function here leaves the native rules of RULES 3 as they are.

use std::borrow::Cow;

use super::*;

/// Setting keys.
pub(super) const DEPTH_GROUPING: &str = "depthGrouping";
pub(super) const SYSTEM_PROMPT_TEMPLATE: &str = "systemPromptTemplate";
pub(super) const POST_HISTORY_TEMPLATE: &str = "postHistoryTemplate";
pub(super) const PERSONALITY_FORMAT: &str = "personalityFormat";
pub(super) const SCENARIO_FORMAT: &str = "scenarioFormat";
pub(super) const CLEAN_CARD_FIELDS: &str = "cleanCardFields";
pub(super) const NEW_CHAT_PROMPT: &str = "newChatPrompt";
pub(super) const EXAMPLE_MESSAGES: &str = "exampleMessages";
pub(super) const NEW_EXAMPLE_CHAT_PROMPT: &str = "newExampleChatPrompt";
pub(super) const CONTINUE_NUDGE_PROMPT: &str = "continueNudgePrompt";

/// The values of `depthGrouping`: native order (RULES 3.4), or joined by role (RULES 5.11.3).
pub(super) const GROUPING_ORDER: &str = "order";
pub(super) const GROUPING_ROLE: &str = "role";

/// The template ids SillyTavern's card-field markers and example marker carry.
pub(super) const PERSONALITY_TEMPLATE: &str = "charPersonality";
pub(super) const SCENARIO_TEMPLATE: &str = "scenario";
pub(super) const EXAMPLES_ANCHOR: &str = "dialogueExamples";

/// SillyTavern 1.12's defaults for its openers and formats.
pub(super) const ST_PERSONALITY_FORMAT: &str = "[{{char}}'s personality: {{personality}}]";
pub(super) const ST_SCENARIO_FORMAT: &str =
    "[Circumstances and context of the dialogue: {{scenario}}]";
pub(super) const ST_NEW_CHAT_PROMPT: &str = "[Start a new Chat]";
pub(super) const ST_NEW_EXAMPLE_CHAT_PROMPT: &str = "[Example Chat]";
pub(super) const ST_CONTINUE_NUDGE_PROMPT: &str = "[Continue the following message. Do not include ANY parts of the original message. Use capitalization and punctuation as if your reply is a part of the original message: {{lastChatMessage}}]";

/// The names example messages carry (RULES 5.11.3).
pub(super) const EXAMPLE_USER: &str = "example_user";
pub(super) const EXAMPLE_ASSISTANT: &str = "example_assistant";

/// The block separator of a character's example dialogue.
const START: &str = "<start>";

/// `cleanCardFields` (RULES 5.11.3): the card's fields and the persona as SillyTavern reads them,
/// trimmed, then without carriage returns. A field is copied only when it has one: the live
/// preview builds this on every keystroke.
pub(super) struct CardFields<'a> {
    description: Cow<'a, str>,
    personality: Cow<'a, str>,
    scenario: Cow<'a, str>,
    mes_examples: Cow<'a, str>,
    persona: Cow<'a, str>,
}

impl<'a> CardFields<'a> {
    pub(super) fn of(env: &MacroEnv<'a>) -> Self {
        let clean = |text: &'a str| {
            let text = text.trim();
            if text.contains('\r') {
                Cow::Owned(text.replace('\r', ""))
            } else {
                Cow::Borrowed(text)
            }
        };
        CardFields {
            description: clean(env.description),
            personality: clean(env.personality),
            scenario: clean(env.scenario),
            mes_examples: clean(env.mes_examples),
            persona: clean(env.persona),
        }
    }

    /// `env` reading these fields.
    pub(super) fn apply<'x>(&'x self, env: MacroEnv<'x>) -> MacroEnv<'x> {
        MacroEnv {
            description: &self.description,
            personality: &self.personality,
            scenario: &self.scenario,
            mes_examples: &self.mes_examples,
            persona: &self.persona,
            ..env
        }
    }
}

/// The assembler's SillyTavern settings of one build, borrowed from its resolved config.
pub(super) struct StSettings<'c> {
    pub(super) join_by_role: bool,
    pub(super) system_prompt_template: &'c str,
    pub(super) post_history_template: &'c str,
    pub(super) personality_format: &'c str,
    pub(super) scenario_format: &'c str,
    pub(super) new_chat_prompt: &'c str,
    pub(super) example_messages: bool,
    pub(super) new_example_chat_prompt: &'c str,
    /// `templateAnchors`: each list-order message template is an anchor (RULES 3.5, 5.11.2).
    pub(super) template_anchors: bool,
}

impl<'c> StSettings<'c> {
    pub(super) fn of(config: &'c ResolvedConfig) -> Self {
        StSettings {
            join_by_role: config.str(DEPTH_GROUPING) == GROUPING_ROLE,
            template_anchors: config.bool("templateAnchors"),
            system_prompt_template: config.str(SYSTEM_PROMPT_TEMPLATE),
            post_history_template: config.str(POST_HISTORY_TEMPLATE),
            personality_format: config.str(PERSONALITY_FORMAT),
            scenario_format: config.str(SCENARIO_FORMAT),
            new_chat_prompt: config.str(NEW_CHAT_PROMPT),
            example_messages: config.bool(EXAMPLE_MESSAGES),
            new_example_chat_prompt: config.str(NEW_EXAMPLE_CHAT_PROMPT),
        }
    }

    /// The raw text of a step of `template_id`: the character's system prompt or post-history
    /// instructions, trimmed, in place of the template named by the override settings, its first
    /// `{{original}}` the template's own text (later ones nothing); a card field's template
    /// through its format, and nothing when the character's field is empty.
    pub(super) fn step_text<'t>(
        &self,
        template_id: &str,
        character: Option<&'t Character>,
        raw: &'t str,
    ) -> Cow<'t, str> {
        let field = |f: fn(&'t Character) -> &'t Option<String>| {
            character
                .and_then(|c| f(c).as_deref())
                .filter(|t| !t.trim().is_empty())
        };
        let overriding = |setting: &str, f| {
            if setting.is_empty() || setting != template_id {
                return None;
            }
            field(f).map(|card: &str| Cow::Owned(with_original(card.trim(), raw)))
        };
        if let Some(text) = overriding(self.system_prompt_template, |c| &c.system_prompt) {
            return text;
        }
        if let Some(text) = overriding(self.post_history_template, |c| &c.post_history_instructions)
        {
            return text;
        }
        let format = |format: &str, f| match field(f) {
            Some(_) => Cow::Owned(format.to_string()),
            None => Cow::Borrowed(""),
        };
        match template_id {
            PERSONALITY_TEMPLATE if !self.personality_format.is_empty() => {
                format(self.personality_format, |c| &c.personality)
            }
            SCENARIO_TEMPLATE if !self.scenario_format.is_empty() => {
                format(self.scenario_format, |c| &c.scenario)
            }
            _ => Cow::Borrowed(raw),
        }
    }
}

/// `card` with its first `{{original}}` (in any case) replaced by `original` and any later one
/// by nothing.
fn with_original(card: &str, original: &str) -> String {
    const MACRO: &str = "{{original}}";
    let mut out = String::with_capacity(card.len() + original.len());
    let mut rest = card;
    let mut first = true;
    while let Some(at) = find_ignoring_case(rest, MACRO) {
        out.push_str(&rest[..at]);
        if std::mem::take(&mut first) {
            out.push_str(original);
        }
        rest = &rest[at + MACRO.len()..];
    }
    out.push_str(rest);
    out
}

/// Where `needle` (ASCII) starts in `haystack`, ignoring ASCII case.
fn find_ignoring_case(haystack: &str, needle: &str) -> Option<usize> {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    (0..=h.len().checked_sub(n.len())?).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

/// The order SillyTavern gives the roles joined at one depth, oldest first (RULES 5.11.3).
const ROLE_ORDER: [Role; 3] = [Role::Assistant, Role::User, Role::System];

/// One place's depth injections, already in native order, regrouped as RULES 5.11.3 says: by
/// depth (the deeper first), then one message per role in [`ROLE_ORDER`], each joining its
/// role's texts as [`joined_text`] says. A message of another role (a tool message) stays as it
/// is, before them.
pub(super) fn join_by_role(group: Vec<Injection>) -> Vec<Injection> {
    let depth = |i: &Injection| match i.class {
        Class::Depth(d) => d,
        _ => 0,
    };
    let mut group = group;
    group.sort_by_key(|i| std::cmp::Reverse(depth(i)));
    let mut out: Vec<Injection> = Vec::with_capacity(group.len());
    let mut rest = group.into_iter().peekable();
    while let Some(first) = rest.next() {
        let d = depth(&first);
        let mut same = vec![first];
        while let Some(next) = rest.next_if(|i| depth(i) == d) {
            same.push(next);
        }
        let (others, mut joinable): (Vec<_>, Vec<_>) = same
            .into_iter()
            .partition(|i| !ROLE_ORDER.contains(&i.message.role));
        out.extend(others);
        for role in ROLE_ORDER {
            let (mut of_role, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut joinable)
                .into_iter()
                .partition(|i| i.message.role == role);
            joinable = kept;
            if of_role.is_empty() {
                continue;
            }
            // The preset's own prompts first, then the others (lorebook entries, notes), each
            // kind in its order.
            of_role.sort_by_key(|i| i.message.source().kind != SourceKind::Template);
            let text = joined_text(&of_role);
            let mut parts = of_role.into_iter();
            let Some(mut head) = parts.next() else {
                continue;
            };
            let mut joined = false;
            for other in parts {
                head.message.absorb(other.message, "\n", ID);
                joined = true;
            }
            if joined || text != head.message.content() {
                head.message.set_content(text);
            }
            out.push(head);
        }
    }
    out
}

/// The text of one role's injections at one depth (SillyTavern's `populationInjectionPrompts`):
/// the preset's prompts joined with a newline as they are, and the other texts (the lorebook's,
/// the notes) each trimmed and joined with a newline; each of the two trimmed, and the two joined
/// with a newline when both have text.
fn joined_text(of_role: &[Injection]) -> String {
    let is_template = |i: &&Injection| i.message.source().kind == SourceKind::Template;
    let templates: Vec<&str> = of_role
        .iter()
        .filter(is_template)
        .map(|i| i.message.content())
        .collect();
    let others: Vec<&str> = of_role
        .iter()
        .filter(|i| !is_template(i))
        .map(|i| i.message.content().trim())
        .collect();
    let (templates, others) = (templates.join("\n"), others.join("\n"));
    [templates.trim(), others.trim()]
        .into_iter()
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The blocks of an example dialogue (RULES 5.11.3): the text split at each `<START>` (in any
/// case), each block trimmed; a text that does not open with `<START>` is one more block; an
/// empty text, or one that is only `<START>`, has none.
pub(super) fn example_blocks(text: &str) -> Vec<&str> {
    if text.is_empty() || text == "<START>" {
        return Vec::new();
    }
    let mut blocks = Vec::new();
    let mut rest = text;
    let opens = find_ignoring_case(text, START) == Some(0);
    if !opens {
        // The part before the first `<START>` is a block of its own.
        let end = find_ignoring_case(rest, START).unwrap_or(rest.len());
        blocks.push(rest[..end].trim());
        rest = &rest[end..];
    }
    while let Some(at) = find_ignoring_case(rest, START) {
        let after = &rest[at + START.len()..];
        let end = find_ignoring_case(after, START).unwrap_or(after.len());
        blocks.push(after[..end].trim());
        rest = &after[end..];
    }
    blocks
}

/// One example block's messages (RULES 5.11.3): a line opening with `{user}:` starts a user
/// message, one opening with `{char}:` a character message; the lines that follow belong to it;
/// lines before the first such line go into the first message, and a speaker's lines in a row
/// make one message; a block without either speaker has no messages. Each message is sent with the role system,
/// named `example_user` or `example_assistant`, its speaker's `name:` removed once and the text
/// trimmed.
pub(super) fn example_messages<'t>(
    block: &'t str,
    user: &str,
    char_name: &str,
) -> Vec<(bool, String)> {
    let user_tag = format!("{user}:");
    let char_tag = format!("{char_name}:");
    let mut out: Vec<(bool, String)> = Vec::new();
    // Whose message the lines go into: Some(true) for the user, Some(false) for the character.
    let mut current: Option<bool> = None;
    let mut lines: Vec<&'t str> = Vec::new();
    let flush = |who: Option<bool>, lines: &mut Vec<&str>, out: &mut Vec<(bool, String)>| {
        if let Some(is_user) = who {
            let joined = lines.join("\n");
            let tag = if is_user { &user_tag } else { &char_tag };
            out.push((
                is_user,
                joined.replacen(tag.as_str(), "", 1).trim().to_string(),
            ));
        }
        lines.clear();
    };
    for line in block.lines() {
        let speaker = if line.starts_with(&user_tag) {
            Some(true)
        } else if line.starts_with(&char_tag) {
            Some(false)
        } else {
            None
        };
        if let Some(is_user) = speaker {
            // The lines before the first speaker go into the first message.
            if current.is_some_and(|c| c != is_user) {
                flush(current, &mut lines, &mut out);
            }
            current = Some(is_user);
        }
        lines.push(line);
    }
    if current.is_some() {
        flush(current, &mut lines, &mut out);
    }
    out
}
