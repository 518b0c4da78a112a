//! The generation settings a build sends (RULES 5.9, 5.10): the pipeline's default is nothing,
//! then the model profile's settings, then the preset's, field by field, each value with its
//! origin; and what the build says about settings the profile's provider format does not take.

use std::collections::BTreeMap;

use serde::Serialize;

use super::SettingOrigin;
use crate::model::{AgentPreset, GenerationField, GenerationSettings};
use crate::profiles::{ModelProfile, ProviderFormat};
use crate::said::Said;
use crate::texts;

/// The generation settings of one build, with where each came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ResolvedGeneration {
    /// What the request carries; an absent field is not sent.
    pub settings: GenerationSettings,
    /// For each set field (by its name, `topP`), whether the model profile or the preset gave it.
    /// A field that is not set has no entry: its origin is the default, which sends nothing.
    pub origins: BTreeMap<&'static str, SettingOrigin>,
    /// The same for each key of `settings.extra`.
    pub extra_origins: BTreeMap<String, SettingOrigin>,
}

impl ResolvedGeneration {
    /// Field by field: the preset's value when it has one, else the profile's, else none. The
    /// keys of `extra` merge the same way, key by key. An empty stop list counts as not set.
    pub fn resolve(profile: &ModelProfile, preset: &AgentPreset) -> Self {
        let mut resolved = ResolvedGeneration::default();
        let layers = [
            (profile.generation.as_ref(), SettingOrigin::Model),
            (preset.generation.as_ref(), SettingOrigin::Preset),
        ];
        for (layer, origin) in layers {
            let Some(layer) = layer else { continue };
            for field in GenerationField::ALL {
                if layer.is_set(field) {
                    resolved.settings.take_field(layer, field);
                    resolved.origins.insert(field.as_str(), origin);
                }
            }
            for (key, value) in &layer.extra {
                resolved.settings.extra.insert(key.clone(), value.clone());
                resolved.extra_origins.insert(key.clone(), origin);
            }
        }
        resolved
    }

    /// True when nothing is set.
    pub fn is_empty(&self) -> bool {
        self.settings.is_empty()
    }

    /// Where `field`'s value came from; `Default` when it is not set.
    pub fn origin(&self, field: GenerationField) -> SettingOrigin {
        self.origins
            .get(field.as_str())
            .copied()
            .unwrap_or(SettingOrigin::Default)
    }

    /// What a build says about these settings for a model of `format` (RULES 5.10): each set
    /// field the format's body has no place for (it is left out of the body), and a temperature
    /// above the format's maximum (sent as it is: the provider will refuse it). `reserve` is the
    /// profile's reply reserve: a reply limit above it may not fit the context window.
    pub fn warnings(&self, format: ProviderFormat, reserve: u32) -> Vec<Said> {
        let mut said = Vec::new();
        for field in GenerationField::ALL {
            if self.settings.is_set(field) && !format.takes(field) {
                said.push(
                    texts::GENERATION_NOT_TAKEN
                        .with("setting", field.as_str())
                        .with("format", format.as_str()),
                );
            }
        }
        if let (Some(t), Some(max)) = (self.settings.temperature, format.max_temperature()) {
            if t > max {
                said.push(
                    texts::GENERATION_OUT_OF_RANGE
                        .with("setting", GenerationField::Temperature.as_str())
                        .with("value", t)
                        .with("format", format.as_str())
                        .with("max", max),
                );
            }
        }
        if let Some(max) = self.settings.max_output_tokens {
            if max > reserve {
                said.push(
                    texts::GENERATION_OVER_RESERVE
                        .with("max", max)
                        .with("reserve", reserve),
                );
            }
        }
        said
    }

    /// What these settings lose in a text-completion body of `format` (RULES 5.12): each set
    /// field the body has no place for.
    pub fn completion_warnings(&self, format: crate::profiles::CompletionFormat) -> Vec<Said> {
        GenerationField::ALL
            .into_iter()
            .filter(|&field| self.settings.is_set(field) && !format.takes(field))
            .map(|field| {
                texts::GENERATION_NOT_TAKEN
                    .with("setting", field.as_str())
                    .with("format", format.as_str())
            })
            .collect()
    }
}
