//! A character card given where a preset is expected (RULES 8.1): the card becomes a preset with a
//! built-in recipe laid out the way SillyTavern builds a chat-completion prompt, and a card given
//! beside a preset (`--character`) lays its character and lorebook over that preset.

use promptloom_engine::model::{
    AgentPreset, Compatibility, ContextRecipe, MessageTemplate, RecipeStep, Role, TemplateType,
    FORMAT_VERSION,
};

use super::card::CharacterCard;

/// Template ids of the built-in recipe, in order. The world info and example anchors carry the
/// ids SillyTavern's markers have, so imported lorebooks land where they would there.
const LAYOUT: &[(&str, TemplateType, Option<&str>)] = &[
    ("main", TemplateType::Message, Some(MAIN_PROMPT)),
    ("worldInfoBefore", TemplateType::Placeholder, None),
    ("personaDescription", TemplateType::UserProfile, None),
    (
        "charDescription",
        TemplateType::Message,
        Some("{{description}}"),
    ),
    (
        "charPersonality",
        TemplateType::Message,
        Some("{{char}}'s personality: {{personality}}"),
    ),
    (
        "scenario",
        TemplateType::Message,
        Some("Scenario: {{scenario}}"),
    ),
    ("worldInfoAfter", TemplateType::Placeholder, None),
    ("dialogueExamples", TemplateType::Placeholder, None),
    ("chatHistory", TemplateType::ChatHistory, None),
    ("jailbreak", TemplateType::Message, Some("")),
];

/// The main prompt when the card brings no system prompt of its own.
const MAIN_PROMPT: &str =
    "You are {{char}} in a conversation with {{user}}. Stay in character and write {{char}}'s next reply.";

/// A preset built around `card`, under SillyTavern compatibility. The card's own system prompt
/// and post-history instructions are not written into it: the assembler puts them in place of
/// `main` and of the (empty) closing `jailbreak` at build time (RULES 5.11.3), so that a card
/// laid over another preset behaves the same, and `{{original}}` in them is the main prompt
/// here. The example dialogue is sent at the `dialogueExamples` anchor as example messages.
/// Templates whose macros have nothing to show (no personality, say) drop out at build time as
/// empty messages.
pub fn card_preset(card: &CharacterCard) -> AgentPreset {
    let character = &card.character;
    let mut templates = Vec::with_capacity(LAYOUT.len());
    let mut steps = Vec::with_capacity(LAYOUT.len());
    for (id, kind, content) in LAYOUT {
        let content = match *id {
            // A field the card does not have would leave only its label: no template.
            "charPersonality" if character.personality.is_none() => None,
            "scenario" if character.scenario.is_none() => None,
            "jailbreak" if character.post_history_instructions.is_none() => None,
            _ => content.map(str::to_string),
        };
        if *kind == TemplateType::Message && content.is_none() {
            continue;
        }
        if *id == "dialogueExamples" && character.example_dialogue.is_none() {
            continue;
        }
        templates.push(MessageTemplate {
            id: (*id).to_string(),
            name: None,
            role: Role::System,
            kind: *kind,
            content,
            default_injection_strategy: None,
            unwrapped: false,
        });
        steps.push(RecipeStep {
            message_id: (*id).to_string(),
            enabled: true,
            injection_strategy: None,
            overrides: None,
        });
    }
    AgentPreset {
        format_version: FORMAT_VERSION,
        id: slug(&character.name),
        name: character.name.clone(),
        description: Some(format!(
            "Built from the character card of {}",
            character.name
        )),
        message_templates: templates,
        context_recipes: vec![ContextRecipe {
            id: "default".into(),
            name: Some("SillyTavern layout".into()),
            model_filter: vec!["*".into()],
            steps,
        }],
        preset_messages: None,
        character: Some(character.clone()),
        lorebook: card.lorebook.clone(),
        regex_rules: None,
        processors: None,
        variables: None,
        generation: None,
        compatibility: Compatibility::Sillytavern,
        instruct: None,
    }
}

/// `preset` with the card's character and lorebook in place of its own, for one build.
pub fn overlay_character(mut preset: AgentPreset, card: &CharacterCard) -> AgentPreset {
    preset.character = Some(card.character.clone());
    if card.lorebook.is_some() {
        preset.lorebook = card.lorebook.clone();
    }
    preset
}

fn slug(name: &str) -> String {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    if slug.is_empty() {
        "character".into()
    } else {
        slug
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use promptloom_engine::model::{validate_preset, Character};

    fn card(system_prompt: Option<&str>, personality: Option<&str>) -> CharacterCard {
        CharacterCard {
            character: Character {
                name: "Mira Vell".into(),
                description: Some("A cartographer.".into()),
                personality: personality.map(Into::into),
                scenario: None,
                greeting: Some("Hello!".into()),
                alternate_greetings: Vec::new(),
                example_dialogue: None,
                system_prompt: system_prompt.map(Into::into),
                post_history_instructions: Some("Keep replies short.".into()),
                creator_notes: None,
                tags: None,
                depth_prompt: None,
            },
            lorebook: None,
        }
    }

    #[test]
    fn a_card_becomes_a_valid_preset_in_sillytavern_order() {
        let preset = card_preset(&card(None, Some("curious")));
        validate_preset(&preset).expect("valid");
        assert_eq!(preset.id, "mira-vell");
        let ids: Vec<&str> = preset.context_recipes[0]
            .steps
            .iter()
            .map(|s| s.message_id.as_str())
            .collect();
        assert_eq!(
            ids,
            [
                "main",
                "worldInfoBefore",
                "personaDescription",
                "charDescription",
                "charPersonality",
                "worldInfoAfter",
                "chatHistory",
                "jailbreak"
            ]
        );
        assert_eq!(
            preset.message_templates[0].content.as_deref(),
            Some(MAIN_PROMPT)
        );
    }

    // openai.js, preparePromptsForChatCompletion(): the card's system prompt and post-history
    // instructions take the place of main and jailbreak, {{original}} being main's own text.
    #[test]
    fn the_card_system_prompt_replaces_the_main_prompt() {
        let mut c = card(Some("You are Mira. {{original}}"), None);
        c.character.example_dialogue = Some("<START>\n{{char}}: Maps!".into());
        let preset = card_preset(&c);
        assert!(preset.template("charPersonality").is_none());
        let session = promptloom_engine::model::parse_session(
            r#"{"formatVersion": 1, "id": "s", "messages": []}"#,
        )
        .expect("session");
        let options = promptloom_engine::BuildOptions::at(
            chrono::DateTime::parse_from_rfc3339("2026-11-24T10:00:00+00:00").expect("time"),
        );
        let cache = promptloom_engine::cache::BuildCache::new();
        let result = promptloom_engine::build(&promptloom_engine::BuildRequest {
            preset: &preset,
            session: &session,
            kept_rewrites: None,
            model: "gpt-4o",
            options: &options,
            cache: &cache,
            profiles: &[],
            assets: &promptloom_engine::assets::InlineAssets,
        })
        .expect("builds");
        let texts: Vec<&str> = result.messages.iter().map(|m| m.content()).collect();
        let main = MAIN_PROMPT
            .replace("{{char}}", "Mira Vell")
            .replace("{{user}}", "User");
        assert_eq!(
            texts,
            [
                format!("You are Mira. {main}").as_str(),
                "A cartographer.",
                "[Example Chat]",
                "Maps!",
                "[Start a new Chat]",
                "Keep replies short.",
            ]
        );
    }

    #[test]
    fn overlay_replaces_character_and_keeps_the_recipe() {
        let base = card_preset(&card(None, None));
        let mut other = card(None, None);
        other.character.name = "Ost".into();
        let laid = overlay_character(base.clone(), &other);
        assert_eq!(
            laid.character.as_ref().map(|c| c.name.as_str()),
            Some("Ost")
        );
        assert_eq!(laid.context_recipes, base.context_recipes);
    }
}
