//! Processor descriptors, config fields, and the settings merge of RULES 5.9: the pipeline's
//! defaults, then the model profile's config, then the preset's; for one processor id the
//! preset's config replaces the model's whole.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::model::{AgentPreset, Compatibility, ProcessorConfig};
use crate::profiles::ModelProfile;
use crate::said::Said;
use crate::texts;

/// What a processor is, for the registry and for the UI's generated settings form.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ProcessorDescriptor {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    /// Lower runs first.
    pub priority: i32,
    /// Core processors cannot be disabled or removed.
    pub is_core: bool,
    pub default_enabled: bool,
    pub config_fields: Vec<ConfigField>,
}

impl ProcessorDescriptor {
    /// The descriptor's texts for people, each with its code: the name
    /// (`processor.<id>.name`), the description (`processor.<id>.description`), and each
    /// setting's label and help (`processor.<id>.<key>.label`, `processor.<id>.<key>.help`)
    /// and each choice of a select (`processor.<id>.<key>.option.<value>`, whose English is the
    /// value itself, as the settings hold it). The app finds a processor's texts in its language by these codes (`ui/src/i18n/said.ts`).
    pub fn texts(&self) -> Vec<(String, &'static str)> {
        let id = self.id;
        let mut texts = vec![
            (format!("processor.{id}.name"), self.name),
            (format!("processor.{id}.description"), self.description),
        ];
        for field in &self.config_fields {
            let key = field.key;
            texts.push((format!("processor.{id}.{key}.label"), field.label));
            if !field.description.is_empty() {
                texts.push((format!("processor.{id}.{key}.help"), field.description));
            }
            for &option in &field.options {
                texts.push((option_code(id, key, option), option));
            }
        }
        texts
    }
}

fn option_code(processor: &str, key: &str, option: &str) -> String {
    format!("processor.{processor}.{key}.option.{option}")
}

/// A choice of a select setting as people read it (its code among the processor's texts), for
/// a log line that names it; a value that is not one of `options` is said as it is.
pub fn option_said(processor: &str, key: &str, options: &[&'static str], value: &str) -> Said {
    match options.iter().find(|&&o| o == value) {
        Some(&option) => Said::made(option_code(processor, key, option), option),
        None => Said::plain(value),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    Text,
    Number,
    Boolean,
    Select,
}

impl FieldType {
    /// The type's name, as said inside a text.
    pub fn said(self) -> crate::said::Said {
        match self {
            FieldType::Text => crate::texts::FIELD_TEXT,
            FieldType::Number => crate::texts::FIELD_NUMBER,
            FieldType::Boolean => crate::texts::FIELD_BOOLEAN,
            FieldType::Select => crate::texts::FIELD_SELECT,
        }
        .into()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ConfigField {
    pub key: &'static str,
    pub label: &'static str,
    #[serde(rename = "type")]
    pub field_type: FieldType,
    pub default: Value,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<&'static str>,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub description: &'static str,
}

impl ConfigField {
    pub fn boolean(key: &'static str, label: &'static str, default: bool) -> Self {
        Self::new(key, label, FieldType::Boolean, Value::Bool(default))
    }
    pub fn number(key: &'static str, label: &'static str, default: f64) -> Self {
        Self::new(key, label, FieldType::Number, Value::from(default))
    }
    pub fn text(key: &'static str, label: &'static str, default: &str) -> Self {
        Self::new(key, label, FieldType::Text, Value::from(default))
    }
    pub fn select(
        key: &'static str,
        label: &'static str,
        options: &[&'static str],
        default: &'static str,
    ) -> Self {
        ConfigField {
            options: options.to_vec(),
            ..Self::new(key, label, FieldType::Select, Value::from(default))
        }
    }
    fn new(key: &'static str, label: &'static str, field_type: FieldType, default: Value) -> Self {
        ConfigField {
            key,
            label,
            field_type,
            default,
            options: Vec::new(),
            description: "",
        }
    }
    pub fn describe(mut self, description: &'static str) -> Self {
        self.description = description;
        self
    }
}

/// Where a resolved setting came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum SettingOrigin {
    Default,
    /// The processor's SillyTavern behaviour, under SillyTavern compatibility (RULES 5.11).
    Compatibility,
    Model,
    Preset,
}

/// How a processor starts under SillyTavern compatibility (RULES 5.11): switched on or off, and
/// settings in place of its defaults, with a sentence saying what that changes. The model
/// profile's or the preset's config still applies over it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CompatDefaults {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    pub settings: Map<String, Value>,
    /// What the processor does differently, for the app's compatibility switch.
    pub changes: Said,
}

impl CompatDefaults {
    /// Compatibility that changes what `changes` says.
    pub fn new(changes: impl Into<Said>) -> Self {
        CompatDefaults {
            enabled: None,
            settings: Map::new(),
            changes: changes.into(),
        }
    }
    /// ...and switches the processor on (or off).
    pub fn enabled(mut self, on: bool) -> Self {
        self.enabled = Some(on);
        self
    }
    /// ...and starts the setting `key` at `value`.
    pub fn set(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.settings.insert(key.to_string(), value.into());
        self
    }
}

/// The settings one processor runs with in one build.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ResolvedConfig {
    pub id: String,
    pub enabled: bool,
    pub priority: i32,
    /// Where `enabled` and `priority` came from.
    pub origin: SettingOrigin,
    pub values: Map<String, Value>,
    /// Where each value came from.
    pub origins: BTreeMap<String, SettingOrigin>,
    /// Settings that were refused (wrong type, unknown key, disabling a core processor), in
    /// English.
    pub notes: Vec<String>,
    /// The same notes as codes with parameters, for the app to say in its language.
    pub notes_said: Vec<Said>,
}

impl ResolvedConfig {
    /// The settings of the processor `d` for `preset` and `profile`: its defaults, then its
    /// SillyTavern behaviour `compat` when the preset is in SillyTavern compatibility, then the
    /// preset's config for it, else the profile's (RULES 5.9, 5.11).
    pub fn merge(
        d: &ProcessorDescriptor,
        compat: Option<&CompatDefaults>,
        profile: &ModelProfile,
        preset: &AgentPreset,
    ) -> Self {
        let find = |configs: &[ProcessorConfig]| -> Option<ProcessorConfig> {
            configs.iter().find(|c| c.id == d.id).cloned()
        };
        let (chosen, origin) = match preset.processors.as_deref().and_then(find) {
            Some(c) => (Some(c), SettingOrigin::Preset),
            None => match find(&profile.processors) {
                Some(c) => (Some(c), SettingOrigin::Model),
                None => (None, SettingOrigin::Default),
            },
        };
        let mut resolved = ResolvedConfig {
            id: d.id.to_string(),
            enabled: d.default_enabled,
            priority: d.priority,
            origin: SettingOrigin::Default,
            values: Map::new(),
            origins: BTreeMap::new(),
            notes: Vec::new(),
            notes_said: Vec::new(),
        };
        for field in &d.config_fields {
            resolved
                .values
                .insert(field.key.to_string(), field.default.clone());
            resolved
                .origins
                .insert(field.key.to_string(), SettingOrigin::Default);
        }
        if let Some(compat) = compat.filter(|_| preset.compatibility == Compatibility::Sillytavern)
        {
            if compat.enabled.is_some() {
                resolved.origin = SettingOrigin::Compatibility;
            }
            resolved.apply(
                compat.enabled,
                None,
                &compat.settings,
                SettingOrigin::Compatibility,
                d,
            );
        }
        let Some(chosen) = chosen else {
            return resolved;
        };
        // The chosen config decides `enabled` and `priority` (leaving them out, it leaves the
        // defaults, having replaced the profile's whole), unless compatibility set them.
        if chosen.enabled.is_some()
            || chosen.priority.is_some()
            || resolved.origin != SettingOrigin::Compatibility
        {
            resolved.origin = origin;
        }
        resolved.apply(chosen.enabled, chosen.priority, &chosen.settings, origin, d);
        resolved
    }

    /// One layer of the merge: what it sets of `enabled`, `priority` and the settings, from
    /// `origin`; what it cannot set is a note.
    fn apply(
        &mut self,
        enabled: Option<bool>,
        priority: Option<i32>,
        settings: &Map<String, Value>,
        origin: SettingOrigin,
        d: &ProcessorDescriptor,
    ) {
        if let Some(enabled) = enabled {
            if d.is_core && !enabled {
                self.note(texts::CORE_STAYS_ON.into());
            } else {
                self.enabled = enabled;
            }
        }
        if let Some(priority) = priority {
            self.priority = priority;
        }
        for (key, value) in settings {
            match d.config_fields.iter().find(|f| f.key == key) {
                None => self.note(texts::UNKNOWN_SETTING.with("key", key)),
                Some(field) if !fits(field, value) => self.note(
                    texts::INVALID_SETTING
                        .with("key", key)
                        .with("value", value)
                        .part("type", field.field_type.said()),
                ),
                Some(_) => {
                    self.origins.insert(key.clone(), origin);
                    self.values.insert(key.clone(), value.clone());
                }
            }
        }
    }

    fn note(&mut self, said: Said) {
        self.notes.push(said.to_string());
        self.notes_said.push(said);
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.values.get(key)
    }

    pub fn bool(&self, key: &str) -> bool {
        self.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    pub fn number(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(Value::as_f64)
    }

    pub fn str(&self, key: &str) -> &str {
        self.get(key).and_then(Value::as_str).unwrap_or("")
    }
}

fn fits(field: &ConfigField, value: &Value) -> bool {
    match field.field_type {
        FieldType::Boolean => value.is_boolean(),
        FieldType::Number => value.is_number(),
        FieldType::Text => value.is_string(),
        FieldType::Select => value.as_str().is_some_and(|s| field.options.contains(&s)),
    }
}
