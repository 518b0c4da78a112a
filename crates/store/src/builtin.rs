//! The built-in presets of `presets/`, installed on first start and restorable (RULES 9.1).

use promptloom_engine::model::{parse_preset, parse_session};

use crate::{error, Store, StoreError};

/// The presets shipped in the repository's `presets/` folder: (file name, JSON).
pub fn builtin_presets() -> &'static [(&'static str, &'static str)] {
    &[
        (
            "general-assistant.json",
            include_str!("../../../presets/general-assistant.json"),
        ),
        (
            "multi-model.json",
            include_str!("../../../presets/multi-model.json"),
        ),
    ]
}

/// The example sessions shipped in `presets/sessions/`, installed with the presets so that a new
/// user's first preview has a conversation to show.
pub fn builtin_sessions() -> &'static [(&'static str, &'static str)] {
    &[(
        "example.json",
        include_str!("../../../presets/sessions/example.json"),
    )]
}

const INSTALLED: &str = "builtin_presets_installed";
const SESSIONS_INSTALLED: &str = "builtin_sessions_installed";

impl Store {
    /// Installs `presets` once: on a later start nothing is reinstalled, so a preset the user
    /// deleted stays deleted. Returns the ids installed now.
    pub fn install_builtin_presets(
        &self,
        presets: &[(&str, &str)],
    ) -> Result<Vec<String>, StoreError> {
        self.install_once(INSTALLED, presets, |file, json| {
            self.install_one(file, json)
        })
    }

    /// Installs `sessions` once, like the presets: a deleted example stays deleted.
    pub fn install_builtin_sessions(
        &self,
        sessions: &[(&str, &str)],
    ) -> Result<Vec<String>, StoreError> {
        self.install_once(SESSIONS_INSTALLED, sessions, |file, json| {
            let session =
                parse_session(json).map_err(|e| error::invalid("built-in session", file, e))?;
            self.save_session(&session)?;
            Ok(session.id)
        })
    }

    /// Runs `install` over `documents` unless the app setting `flag` says it ran before.
    fn install_once(
        &self,
        flag: &str,
        documents: &[(&str, &str)],
        install: impl Fn(&str, &str) -> Result<String, StoreError>,
    ) -> Result<Vec<String>, StoreError> {
        if self.setting(flag)?.is_some() {
            return Ok(Vec::new());
        }
        let installed = documents
            .iter()
            .map(|(file, json)| install(file, json))
            .collect::<Result<Vec<_>, _>>()?;
        self.set_setting(flag, "1")?;
        Ok(installed)
    }

    /// Puts every built-in preset back as shipped (deleted ones too), replacing any edits;
    /// returns their ids.
    pub fn restore_builtin_presets(&self) -> Result<Vec<String>, StoreError> {
        builtin_presets()
            .iter()
            .map(|(file, json)| self.install_one(file, json))
            .collect()
    }

    /// Puts built-in preset `id` back as shipped, replacing any edits.
    pub fn restore_builtin_preset(
        &self,
        presets: &[(&str, &str)],
        id: &str,
    ) -> Result<(), StoreError> {
        for (file, json) in presets {
            let preset =
                parse_preset(json).map_err(|e| error::invalid("built-in preset", file, e))?;
            if preset.id == id {
                self.install_one(file, json)?;
                return Ok(());
            }
        }
        Err(StoreError::NotFound {
            kind: "built-in preset",
            id: id.to_string(),
        })
    }

    fn install_one(&self, file: &str, json: &str) -> Result<String, StoreError> {
        let preset = parse_preset(json).map_err(|e| error::invalid("built-in preset", file, e))?;
        self.save_preset(&preset)?;
        Ok(preset.id)
    }
}
