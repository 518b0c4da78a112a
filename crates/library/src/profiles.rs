//! The user's own model profiles: read from a JSON file, kept in the store, listed and removed.
//! A build looks them up before the built-in ones (RULES 5.9), so a profile can also change how a
//! known model is counted and formatted.

use promptloom_engine::profiles::ModelProfile;
use promptloom_store::Store;

use crate::LibraryError;

/// A model profile from the JSON text of file `file`, checked: an id, at least one model pattern,
/// a context window larger than the reply it reserves.
pub fn parse(file: &str, text: &str) -> Result<ModelProfile, LibraryError> {
    let bad = |problem: String| LibraryError::BadProfile {
        file: file.to_string(),
        problem,
    };
    let mut profile: ModelProfile =
        serde_json::from_str(text).map_err(|e| bad(format!("not a model profile: {e}")))?;
    if profile.id.trim().is_empty() {
        return Err(bad("`id` is empty".into()));
    }
    if profile.patterns.iter().all(|p| p.trim().is_empty()) {
        return Err(bad("`patterns` names no model".into()));
    }
    if profile.context_window <= profile.reserved_reply {
        return Err(bad(format!(
            "`contextWindow` ({}) leaves nothing once `reservedReply` ({}) is kept",
            profile.context_window, profile.reserved_reply
        )));
    }
    // Only the engine's own profiles are built in.
    profile.builtin = false;
    Ok(profile)
}

/// Keeps `profile` in the store, over one of the same id; says whether it replaced one.
pub fn add(store: &Store, profile: &ModelProfile) -> Result<bool, LibraryError> {
    let replaced = store.model_profiles()?.iter().any(|p| p.id == profile.id);
    store.save_model_profile(profile)?;
    Ok(replaced)
}
