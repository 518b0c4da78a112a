//! New chats, the same in both front doors: empty, or opening with the character's greeting, as
//! SillyTavern starts one.

use promptloom_engine::model::{AgentPreset, ChatMessage, Role, Session, Swipe};
use promptloom_engine::processors::expand_for_session;
use promptloom_store::Store;

use crate::{slug, LibraryError};

/// A new chat `id` for `preset`: its character's greeting as the first message when it has one,
/// its macros expanded as SillyTavern stores it, and the alternate greetings as that message's
/// swipes to flip to.
pub fn new_chat(id: &str, title: Option<String>, preset: Option<&AgentPreset>) -> Session {
    let mut session = Session::empty(id);
    session.title = title;
    let Some((preset, character)) = preset.and_then(|p| p.character.as_ref().map(|c| (p, c)))
    else {
        return session;
    };
    let now = chrono::Local::now().fixed_offset();
    let expand = |text: &str| expand_for_session(preset, &session, text, now);
    let mut greetings = character
        .greeting
        .iter()
        .chain(&character.alternate_greetings)
        .filter(|g| !g.trim().is_empty())
        .map(|g| expand(g));
    let Some(greeting) = greetings.next() else {
        return session;
    };
    let swipes: Vec<Swipe> = greetings
        .map(|content| Swipe {
            content,
            reply: None,
        })
        .collect();
    let mut message = ChatMessage::new(Role::Assistant, &greeting);
    message.id = Some("greeting".into());
    // The greeting comes first among them, as SillyTavern lists them.
    message.swipe_at = (!swipes.is_empty()).then_some(0);
    message.swipes = swipes;
    session.messages.push(message);
    session
}

/// A [`new_chat`] titled `title` for `preset`, saved under a free id made from the title.
pub fn create(
    store: &Store,
    title: &str,
    preset: Option<&AgentPreset>,
) -> Result<Session, LibraryError> {
    let id = store.free_session_id(&slug(title, "session"))?;
    let session = new_chat(&id, Some(title.to_string()), preset);
    store.save_session(&session)?;
    Ok(session)
}
