//! The importers against real SillyTavern files from the shared fixtures folder beside the
//! repository (never copied into it). Each test skips with a notice when the folder is absent.

mod common;

use std::path::PathBuf;

use common::build_for_gpt4o;

use promptloom_engine::model::{AnchorPosition, TemplateType};
use promptloom_import::{import_file, Imported};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/sillytavern"
);

fn fixture(name: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(FIXTURES);
    if !dir.is_dir() {
        println!("fixtures not found, skipping");
        return None;
    }
    Some(dir.join(name))
}

#[test]
fn default_preset_follows_the_global_order_list() {
    let Some(path) = fixture("Default.json") else {
        return;
    };
    let imported = import_file(&path).expect("Default.json imports");
    let Imported::Preset { preset } = imported.value else {
        panic!("expected a preset, got {}", imported.value.kind());
    };
    assert_eq!(preset.context_recipes.len(), 1);
    let recipe = &preset.context_recipes[0];
    assert_eq!(recipe.model_filter, vec!["*".to_string()]);
    let steps: Vec<(&str, bool)> = recipe
        .steps
        .iter()
        .map(|s| (s.message_id.as_str(), s.enabled))
        .collect();
    // The list of character_id 100001, which (unlike 100000) has personaDescription.
    assert_eq!(
        steps,
        vec![
            ("main", true),
            ("worldInfoBefore", true),
            ("personaDescription", true),
            ("charDescription", true),
            ("charPersonality", true),
            ("scenario", true),
            ("enhanceDefinitions", false),
            ("nsfw", true),
            ("worldInfoAfter", true),
            ("dialogueExamples", true),
            ("chatHistory", true),
            ("jailbreak", true),
        ]
    );
    let kind = |id: &str| preset.template(id).map(|t| t.kind);
    assert_eq!(kind("chatHistory"), Some(TemplateType::ChatHistory));
    assert_eq!(kind("personaDescription"), Some(TemplateType::UserProfile));
    for anchor in ["worldInfoBefore", "worldInfoAfter", "dialogueExamples"] {
        assert_eq!(kind(anchor), Some(TemplateType::Placeholder), "{anchor}");
    }
    let content = |id: &str| preset.template(id).and_then(|t| t.content.clone());
    assert_eq!(
        content("charDescription").as_deref(),
        Some("{{description}}")
    );
    assert_eq!(
        content("charPersonality").as_deref(),
        Some("{{personality}}")
    );
    assert_eq!(content("scenario").as_deref(), Some("{{scenario}}"));
    assert!(content("main")
        .unwrap_or_default()
        .starts_with("Write {{char}}'s next reply"));
    assert!(preset.template("enhanceDefinitions").is_some());
    // Every prompt is relative: no template moves.
    assert!(preset
        .message_templates
        .iter()
        .all(|t| t.default_injection_strategy.is_none()));
    // The samplers every source takes become generation settings; SillyTavern's "off" values
    // (top_k 0, seed -1) read as unset.
    let g = preset.generation.as_ref().expect("generation settings");
    assert_eq!(g.temperature, Some(1.0));
    assert_eq!(g.top_p, Some(1.0));
    assert_eq!(g.frequency_penalty, Some(0.0));
    assert_eq!(g.presence_penalty, Some(0.0));
    assert_eq!(g.max_output_tokens, Some(300));
    assert_eq!((g.top_k, g.seed), (None, None));
    // The rest is reported on one line.
    let settings_lines: Vec<_> = imported
        .report
        .items
        .iter()
        .filter(|i| i.item.contains("openai_max_context"))
        .collect();
    assert_eq!(settings_lines.len(), 1);
    let line = &settings_lines[0].item;
    assert!(
        line.contains("top_a") && line.contains("repetition_penalty"),
        "{line}"
    );
    for mapped in ["temperature", "top_p", "top_k", "openai_max_tokens", "seed"] {
        assert!(!line.split(", ").any(|k| k == mapped), "{mapped} in {line}");
    }
}

#[test]
fn seraphina_png_gives_the_character_and_its_lorebook() {
    let Some(path) = fixture("default_Seraphina.png") else {
        return;
    };
    let imported = import_file(&path).expect("the Seraphina card imports");
    let Imported::Character(card) = imported.value else {
        panic!("expected a character, got {}", imported.value.kind());
    };
    let character = card.character;
    assert_eq!(character.name, "Seraphina");
    assert!(character
        .description
        .as_deref()
        .unwrap_or_default()
        .starts_with("[Seraphina's Personality="));
    assert!(character
        .greeting
        .as_deref()
        .unwrap_or_default()
        .starts_with("*You wake with a start"));
    assert_eq!(
        character.creator_notes.as_deref(),
        Some("ST Default Bot contest winner: roleplay bots category")
    );
    let lorebook = card.lorebook.expect("the card carries a lorebook");
    assert_eq!(lorebook.entries.len(), 4);
    for (i, entry) in lorebook.entries.iter().enumerate() {
        assert_eq!(entry.id, i.to_string());
        assert!(entry.enabled);
        assert!(!entry.constant);
        // insertion_order 100 kept; SillyTavern's position 0 = before the character definitions.
        assert_eq!(entry.order, 100);
        assert_eq!(
            entry.strategy.anchor_target.as_deref(),
            Some("worldInfoBefore")
        );
        assert_eq!(entry.strategy.anchor_position, Some(AnchorPosition::After));
        assert_eq!(entry.strategy.order, Some(100));
        assert_eq!(entry.strategy.depth, None);
    }
    assert_eq!(
        lorebook.entries[0].keys,
        vec!["eldoria", "wood", "forest", "magical forest"]
    );
    assert!(lorebook.entries[1].content.contains("Shadowfangs"));
    assert!(imported.report.format.contains("V2"));
    assert!(imported.report.format.contains("chara"));
}

#[test]
fn eldoria_gives_a_lorebook() {
    let Some(path) = fixture("Eldoria.json") else {
        return;
    };
    let imported = import_file(&path).expect("Eldoria.json imports");
    let Imported::Lorebook { lorebook } = imported.value else {
        panic!("expected a lorebook, got {}", imported.value.kind());
    };
    assert_eq!(lorebook.entries.len(), 4);
    assert_eq!(
        lorebook.entries[2].keys,
        vec!["glade", "safe haven", "refuge"]
    );
    assert!(lorebook
        .entries
        .iter()
        .all(|e| e.order == 100 && e.strategy.anchor_target.as_deref() == Some("worldInfoBefore")));
    // SillyTavern's defaults are this model's.
    assert_eq!(lorebook.scan_depth, 2);
    assert_eq!(lorebook.token_budget, 25);
    assert!(lorebook.recursive);
    assert!(lorebook.match_whole_words);
    assert!(imported.report.is_empty(), "{:?}", imported.report);
}

// world-info.js, getWorldInfoSettings(): of a whole settings.json only the world info settings
// are read; this one holds SillyTavern's defaults, which are the model's defaults too.
#[test]
fn settings_json_imports_as_its_world_info_settings() {
    let Some(path) = fixture("settings.json") else {
        return;
    };
    let imported = import_file(&path).expect("imports");
    let Imported::WorldInfoSettings { settings } = imported.value else {
        panic!("world info settings, not {}", imported.value.kind());
    };
    let defaults = promptloom_engine::model::Lorebook::default();
    assert_eq!(settings.lorebook, defaults);
    assert_eq!(settings.include_names, Some(true));
    // `world_info_character_strategy` is set (1); the empty global selection is not reported.
    let items: Vec<&str> = imported
        .report
        .items
        .iter()
        .map(|i| i.item.as_str())
        .collect();
    assert_eq!(items, ["world_info_settings.world_info_character_strategy"]);
}

/// The real preset, card and world info together come nowhere near the caps on what a file can
/// make grow (docs/ARCHITECTURE.md, "Limits"): no warning of a build names one.
#[test]
fn real_files_build_without_reaching_any_cap() {
    let (Some(preset), Some(card), Some(book)) = (
        fixture("Default.json"),
        fixture("default_Seraphina.png"),
        fixture("Eldoria.json"),
    ) else {
        return;
    };
    let Imported::Preset { preset } = import_file(&preset).expect("imports").value else {
        panic!("a preset");
    };
    let Imported::Character(mut card) = import_file(&card).expect("imports").value else {
        panic!("a card");
    };
    let Imported::Lorebook { lorebook } = import_file(&book).expect("imports").value else {
        panic!("world info");
    };
    let mut entries = card.lorebook.take().map(|b| b.entries).unwrap_or_default();
    entries.extend(lorebook.entries);
    card.lorebook = Some(promptloom_engine::model::Lorebook {
        entries,
        ..Default::default()
    });
    let preset = promptloom_import::overlay_character(*preset, &card);
    let session = promptloom_engine::model::parse_session(
        r#"{ "formatVersion": 1, "id": "s", "messages": [
            { "role": "user", "content": "Where is the forest of Eldoria? Tell me of the glade." },
            { "role": "assistant", "content": "Seraphina smiles." } ] }"#,
    )
    .expect("session");
    let result = build_for_gpt4o(&preset, &session, None);
    for w in &result.warnings {
        for cap in [
            "MiB",
            "MB",
            "stopped there",
            "not applied",
            "skipped",
            "left as written",
        ] {
            assert!(!w.message.contains(cap), "a cap was reached: {}", w.message);
        }
    }
    assert!(result
        .messages
        .iter()
        .any(|m| m.content().contains("Seraphina")));
}

/// The Default preset with the Seraphina card (whose book is Eldoria) under SillyTavern
/// compatibility gives the message list SillyTavern 1.12 sends for a chat that opens with the
/// greeting and a first user message, for a model whose window takes it all (the preset's
/// `openai_max_context` is not mapped: the model profile's window applies). Written from
/// reading SillyTavern's code:
/// - openai.js, preparePromptsForChatCompletion() / populateChatCompletion(): the prompt order of
///   character 100001. `main` is sent with its macros ({{char}} Seraphina, {{user}} "User", the
///   default persona name); `worldInfoBefore` carries the joined world info; `personaDescription`
///   is empty (no persona) and sends nothing; `charDescription` is the card's description;
///   `charPersonality` and `scenario` go through their formats only when the card has them (it
///   has neither); `enhanceDefinitions` is disabled; `nsfw`, `worldInfoAfter` and `jailbreak` are
///   empty and the card has no examples: nothing. The history block opens with
///   `new_chat_prompt` ("[Start a new Chat]") as a system message, then the greeting (assistant)
///   and the user's message.
/// - world-info.js, checkWorldInfo(): scan depth 2 over "Name: text" lines. "forest" and "magic"
///   are in the greeting, "beasts" in the user's message: entries 0, 3 and 1 activate in book
///   order in the first round (0, 1, 3); the content of entry 0 names the "glade", so recursion
///   activates entry 2. All have order 100 and position 0 (before); sorted by order (stable) and
///   put in front one by one, the block reads 2, 3, 1, 0, joined by newlines, in `wi_format`
///   `{0}`: one system message.
#[test]
fn sillytavern_default_preset_with_seraphina_gives_sillytavern_messages() {
    let (Some(preset), Some(card)) = (fixture("Default.json"), fixture("default_Seraphina.png"))
    else {
        return;
    };
    let Imported::Preset { preset } = import_file(&preset).expect("imports").value else {
        panic!("a preset");
    };
    let Imported::Character(card) = import_file(&card).expect("imports").value else {
        panic!("a card");
    };
    assert_eq!(
        preset.compatibility,
        promptloom_engine::model::Compatibility::Sillytavern
    );
    let preset = promptloom_import::overlay_character(*preset, &card);
    let greeting = card.character.greeting.clone().expect("greeting");
    let mut session = promptloom_engine::model::Session::empty("s");
    session
        .messages
        .push(promptloom_engine::model::ChatMessage::new(
            promptloom_engine::model::Role::Assistant,
            &greeting,
        ));
    let result = build_for_gpt4o(
        &preset,
        &session,
        Some("Thank you. What were those beasts?"),
    );

    let names = |text: &str| {
        text.replace("{{user}}", "User")
            .replace("{{char}}", "Seraphina")
    };
    let book = card.lorebook.as_ref().expect("the card's book");
    let entry = |id: &str| {
        let e = book.entries.iter().find(|e| e.id == id).expect("entry");
        names(&e.content)
    };
    let world_info = ["2", "3", "1", "0"].map(entry).join("\n");
    // SillyTavern reads card fields trimmed and without carriage returns (cleanCardFields).
    let description = names(card.character.description.as_deref().expect("description"))
        .trim()
        .replace('\r', "");
    use promptloom_engine::model::Role::{Assistant, System, User};
    let expected: Vec<(promptloom_engine::model::Role, String)> = vec![
        (
            System,
            "Write Seraphina's next reply in a fictional chat between Seraphina and User.".into(),
        ),
        (System, world_info),
        (System, description),
        (System, "[Start a new Chat]".into()),
        (Assistant, greeting.clone()),
        (User, "Thank you. What were those beasts?".into()),
    ];
    let got: Vec<(promptloom_engine::model::Role, String)> = result
        .messages
        .iter()
        .map(|m| (m.role, m.content().to_string()))
        .collect();
    assert_eq!(got.len(), expected.len(), "{got:#?}");
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "message #{i}");
    }
}
