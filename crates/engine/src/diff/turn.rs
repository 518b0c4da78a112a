//! The previous turn of a session (RULES 9.8): the session without its newest exchange, built
//! at the time that exchange began.

use chrono::{DateTime, FixedOffset};

use crate::model::{Role, Session};
use crate::EngineError;

/// A session as it was one turn earlier.
#[derive(Debug, Clone)]
pub struct PreviousTurn {
    /// The session without its newest user message and everything after it.
    pub session: Session,
    /// When that user message was written (its `createdAt`), for the previous build's time
    /// macros; absent when it has no readable time.
    pub timestamp: Option<DateTime<FixedOffset>>,
}

/// `session` one turn back: without its newest exchange (its newest user message and the
/// replies after it). A session without a user message has no earlier turn: an error that says
/// so.
pub fn previous_turn(
    session: &Session,
    now: &DateTime<FixedOffset>,
) -> Result<PreviousTurn, EngineError> {
    let Some(at) = session.messages.iter().rposition(|m| m.role == Role::User) else {
        return Err(EngineError::invalid(
            format!("session \"{}\"", session.id),
            "it has no user message, so there is no earlier turn to compare with",
        ));
    };
    let timestamp = session.messages[at]
        .created_at
        .as_deref()
        .and_then(|t| crate::macros::stored_time(t, now));
    let mut earlier = session.clone();
    earlier.messages.truncate(at);
    Ok(PreviousTurn {
        session: earlier,
        timestamp,
    })
}
