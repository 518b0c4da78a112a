//! New chats, the same in both front doors: empty, or opening with the character's greeting, as
//! SillyTavern starts one.

use promptloom_engine::model::{AgentPreset, ChatMessage, Role, Session};
use promptloom_store::Store;

use crate::{slug, LibraryError};

/// A new chat `id` for `preset`: its character's greeting as the first message when it has one.
pub fn new_chat(id: &str, title: Option<String>, preset: Option<&AgentPreset>) -> Session {
    let mut session = Session::empty(id);
    session.title = title;
    if let Some(greeting) = preset
        .and_then(|p| p.character.as_ref())
        .and_then(|c| c.greeting.as_deref())
        .filter(|g| !g.trim().is_empty())
    {
        session.messages.push(ChatMessage {
            id: Some("greeting".into()),
            role: Role::Assistant,
            name: None,
            content: greeting.into(),
            attachments: Vec::new(),
            created_at: None,
            reply: None,
            swipes: Vec::new(),
            swipe_at: None,
        });
    }
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
