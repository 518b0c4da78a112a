//! The user's own model profiles: read from a JSON file, kept in the store, listed and removed.
//! A build looks them up before the built-in ones (RULES 5.9), so a profile can also change how a
//! known model is counted and formatted.

use promptloom_engine::profiles::ModelProfile;
use promptloom_store::Store;

use crate::LibraryError;

/// A model profile from the JSON text of file `file`, checked: an id, at least one model pattern,
/// a context window larger than the reply it reserves, generation settings within their ranges.
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
    if let Some(generation) = &profile.generation {
        promptloom_engine::model::validate_generation("generation", generation)
            .map_err(|e| bad(e.to_string()))?;
    }
    // Only the engine's own profiles are built in.
    profile.builtin = false;
    Ok(profile)
}

/// Checks the tokenizer file a profile read from `folder` names (RULES 5.8): a relative path is
/// taken from `folder`, and the file must be inside it (a profile from elsewhere cannot make
/// the app read any file it likes) and must be a tokenizer.json that reads. The profile then
/// names it by its full path, which is what the store keeps.
pub fn settle_tokenizer_file(
    file: &str,
    profile: &mut ModelProfile,
    folder: &std::path::Path,
) -> Result<(), LibraryError> {
    let Some(named) = profile.tokenizer_file.clone() else {
        return Ok(());
    };
    let bad = |problem: String| LibraryError::BadProfile {
        file: file.to_string(),
        problem,
    };
    let folder = folder
        .canonicalize()
        .map_err(|e| bad(format!("its folder cannot be read: {e}")))?;
    let path = folder
        .join(&named)
        .canonicalize()
        .map_err(|e| bad(format!("`tokenizerFile` \"{named}\" cannot be read: {e}")))?;
    if !path.starts_with(&folder) {
        return Err(bad(format!(
            "`tokenizerFile` \"{named}\" is outside the profile's folder; put the tokenizer \
             beside the profile"
        )));
    }
    promptloom_engine::tokens::own_tokenizer(&path).map_err(|e| bad(e.to_string()))?;
    profile.tokenizer_file = Some(path.display().to_string());
    Ok(())
}

/// Keeps `profile` in the store, over one of the same id; says whether it replaced one.
pub fn add(store: &Store, profile: &ModelProfile) -> Result<bool, LibraryError> {
    let replaced = store.model_profiles()?.iter().any(|p| p.id == profile.id);
    store.save_model_profile(profile)?;
    Ok(replaced)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = r#"{"id": "mine", "patterns": ["my-*"], "providerFormat": "openai-chat",
        "contextWindow": 8000, "reservedReply": 1000,
        "capabilities": {"vision": false, "audio": false, "documents": false, "systemRole": true}"#;

    #[test]
    fn a_profile_carries_generation_settings_checked_like_a_presets() {
        let good = format!(r#"{PROFILE}, "generation": {{"temperature": 0.4, "topK": 20}}}}"#);
        let profile = parse("mine.json", &good).expect("a valid profile");
        let g = profile.generation.expect("generation settings");
        assert_eq!((g.temperature, g.top_k), (Some(0.4), Some(20)));

        let bad = format!(r#"{PROFILE}, "generation": {{"topP": 3}}}}"#);
        let err = parse("mine.json", &bad).expect_err("topP 3 is refused");
        assert!(err.to_string().contains("generation.topP"), "{err}");

        let plain = parse("mine.json", &format!("{PROFILE}}}")).expect("no generation");
        assert!(plain.generation.is_none());
    }
}
