//! What both front doors do the same way through the application layer: a new preset, a new
//! chat, the built-ins restored, exports and the file names they propose.

use promptloom_engine::model::{parse_preset, AgentPreset};
use promptloom_library::export::{self, ExportFormat};
use promptloom_library::{presets, sessions, slug};
use promptloom_store::Store;
use serde_json::json;

fn with_greeting(greeting: &str) -> AgentPreset {
    let mut preset = presets::starter("card".into(), "Card".into());
    preset.character = Some(
        serde_json::from_value(json!({ "name": "Mira", "greeting": greeting }))
            .expect("a character"),
    );
    preset
}

#[test]
fn a_new_chat_opens_with_the_character_greeting_in_both_front_doors() {
    let chat = sessions::new_chat("c", None, Some(&with_greeting("Hello, traveller.")));
    assert_eq!(chat.messages.len(), 1);
    assert_eq!(&*chat.messages[0].content, "Hello, traveller.");
    assert_eq!(
        chat.messages[0].role,
        promptloom_engine::model::Role::Assistant
    );
    // No character, no preset, or a blank greeting: an empty chat.
    let starter = presets::starter("p".into(), "P".into());
    assert!(sessions::new_chat("c", None, Some(&starter))
        .messages
        .is_empty());
    assert!(sessions::new_chat("c", None, None).messages.is_empty());
    assert!(sessions::new_chat("c", None, Some(&with_greeting("  \n")))
        .messages
        .is_empty());
}

/// SillyTavern stores a new chat's first message with its macros replaced and offers the card's
/// alternate greetings as its swipes (script.js, `getFirstMessage`: `substituteParams` over
/// `first_mes` and each of `alternate_greetings`, which become `swipes`).
#[test]
fn a_new_chat_greeting_goes_through_macros_and_the_alternates_are_its_swipes() {
    let mut preset = with_greeting("Welcome, {{user}}. I am {{char}}.");
    if let Some(c) = preset.character.as_mut() {
        c.alternate_greetings = vec!["{{char}} waves.".into(), "  ".into(), "Hi.".into()];
    }
    let chat = sessions::new_chat("c", None, Some(&preset));
    let first = &chat.messages[0];
    assert_eq!(&*first.content, "Welcome, User. I am Mira.");
    let swipes: Vec<&str> = first.swipes.iter().map(|s| s.content.as_str()).collect();
    assert_eq!(swipes, ["Mira waves.", "Hi."], "blank ones are left out");
    assert_eq!(
        first.swipe_at,
        Some(0),
        "the greeting comes first among them"
    );
    // Without a greeting, the first alternate opens the chat.
    if let Some(c) = preset.character.as_mut() {
        c.greeting = None;
    }
    let chat = sessions::new_chat("c", None, Some(&preset));
    assert_eq!(&*chat.messages[0].content, "Mira waves.");
    assert_eq!(chat.messages[0].swipes.len(), 1);
}

#[test]
fn a_created_chat_is_saved_under_a_free_id_from_its_title() {
    let store = Store::open_in_memory().expect("opens");
    let preset = with_greeting("Hi.");
    let first = sessions::create(&store, "Night Watch", Some(&preset)).expect("creates");
    let second = sessions::create(&store, "Night Watch", None).expect("creates");
    assert_eq!(first.id, "night-watch");
    assert_ne!(second.id, first.id);
    assert_eq!(first.title.as_deref(), Some("Night Watch"));
    let stored = store.get_session(&first.id).expect("stored");
    assert_eq!(stored.messages.len(), 1);
    assert!(store
        .get_session(&second.id)
        .expect("stored")
        .messages
        .is_empty());
}

#[test]
fn a_new_preset_is_valid_and_a_copy_gets_its_own_id() {
    let store = Store::open_in_memory().expect("opens");
    let preset = presets::create(&store, "My Agent #2").expect("creates");
    assert_eq!(preset.id, "my-agent-2");
    let json = serde_json::to_string(&preset).expect("serializes");
    parse_preset(&json).expect("the starter passes validation");
    let copy = presets::duplicate(&store, &preset.id, "My Agent #2").expect("copies");
    assert_ne!(copy.id, preset.id);
    assert_eq!(copy.message_templates, preset.message_templates);
}

#[test]
fn restoring_the_builtins_puts_back_what_was_changed() {
    let store = Store::open_in_memory().expect("opens");
    let ids = presets::restore_builtins(&store).expect("restores");
    assert!(!ids.is_empty());
    let mut changed = store.get_preset(&ids[0]).expect("installed");
    let original = changed.name.clone();
    changed.name = "Renamed".into();
    store.save_preset(&changed).expect("saves");
    presets::restore_builtins(&store).expect("restores");
    assert_eq!(store.get_preset(&ids[0]).expect("there").name, original);
}

#[test]
fn an_id_exports_its_preset_or_else_its_session() {
    let store = Store::open_in_memory().expect("opens");
    let preset = presets::create(&store, "Solo").expect("creates");
    let chat = sessions::create(&store, "Talk", None).expect("creates");
    let out = export::stored(&store, &preset.id, ExportFormat::Native).expect("exports");
    assert!(out.text.contains("\"messageTemplates\""));
    let out = export::stored(&store, &chat.id, ExportFormat::Native).expect("exports");
    assert!(out.text.contains("\"messages\""));
    // A session has only the native format; an unknown id is not found.
    let e = export::stored(&store, &chat.id, ExportFormat::SillyTavernPreset).expect_err("no");
    assert_eq!(e.code(), "not_found");
    let e = export::stored(&store, "nothing", ExportFormat::Native).expect_err("no");
    assert_eq!(e.code(), "not_found");
    // A card of a preset without a character: nothing to export, said by its code.
    let e = export::stored(&store, &preset.id, ExportFormat::SillyTavernCard).expect_err("no");
    assert_eq!(e.code(), "nothing_to_export");
}

#[test]
fn file_names_from_ids_are_safe_everywhere() {
    assert_eq!(
        export::file_name("my preset", ExportFormat::Native),
        "my-preset.json"
    );
    assert_eq!(
        export::file_name("../../etc/passwd", ExportFormat::SillyTavernCard),
        "..-..-etc-passwd.card.json"
    );
    assert_eq!(export::file_name("..", ExportFormat::Native), "export.json");
    assert_eq!(
        export::file_name("角色", ExportFormat::SillyTavernWorldInfo),
        "角色.world-info.json"
    );
}

#[test]
fn slugs_keep_letters_and_digits() {
    assert_eq!(slug("My Agent #2", "preset"), "my-agent-2");
    assert_eq!(slug("  ", "preset"), "preset");
    assert_eq!(slug("角色 卡", "preset"), "角色-卡");
}
