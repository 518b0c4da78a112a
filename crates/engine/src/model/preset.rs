//! The agent preset (RULES 2): templates, recipes, character, and the settings that ride along.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{GenerationSettings, Lorebook, RegexRule, Role, FORMAT_VERSION};

/// Everything that defines one agent. The canonical form is templates + recipes; a preset that
/// arrives with only `presetMessages` is converted on load (RULES 2.1, [`super::simple`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct AgentPreset {
    #[serde(default = "default_format_version")]
    pub format_version: u32,
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub message_templates: Vec<MessageTemplate>,
    #[serde(default)]
    pub context_recipes: Vec<ContextRecipe>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset_messages: Option<Vec<PresetMessage>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub character: Option<Character>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lorebook: Option<Lorebook>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex_rules: Option<Vec<RegexRule>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processors: Option<Vec<ProcessorConfig>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<BTreeMap<String, String>>,
    /// Sampler and length settings for the request (RULES 5.10); per field they win over the
    /// model profile's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<GenerationSettings>,
    /// Whose rules the build follows where SillyTavern's and the native ones differ
    /// (RULES 5.11); absent is native.
    #[serde(default, skip_serializing_if = "Compatibility::is_native")]
    pub compatibility: Compatibility,
    /// The preset's own instruct template (RULES 5.12), imported with it from SillyTavern or
    /// chosen for it: its builds are text completion, whatever the model profile says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruct: Option<super::instruct::InstructTemplate>,
}

/// Whose rules a preset's builds follow where SillyTavern and the native rules differ
/// (RULES 5.11). Under `sillytavern`, processors that have a SillyTavern behaviour start from it
/// (their [`crate::pipeline::Processor::sillytavern`] defaults); the preset's own processor
/// settings still win over them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Compatibility {
    #[default]
    Native,
    Sillytavern,
}

impl Compatibility {
    pub fn is_native(&self) -> bool {
        *self == Compatibility::Native
    }
}

pub(crate) fn default_format_version() -> u32 {
    FORMAT_VERSION
}

/// What a template is: an ordinary message, or a slot (RULES 1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum TemplateType {
    #[default]
    Message,
    ChatHistory,
    UserProfile,
    Placeholder,
}

impl TemplateType {
    /// The type's name, as said inside a text (its English is [`TemplateType::as_str`]).
    pub fn said(self) -> crate::said::Said {
        match self {
            TemplateType::Message => crate::texts::TEMPLATE_MESSAGE,
            TemplateType::ChatHistory => crate::texts::TEMPLATE_CHAT_HISTORY,
            TemplateType::UserProfile => crate::texts::TEMPLATE_USER_PROFILE,
            TemplateType::Placeholder => crate::texts::TEMPLATE_PLACEHOLDER,
        }
        .into()
    }
}

impl TemplateType {
    pub fn is_slot(self) -> bool {
        !matches!(self, TemplateType::Message)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            TemplateType::Message => "message",
            TemplateType::ChatHistory => "chat_history",
            TemplateType::UserProfile => "user_profile",
            TemplateType::Placeholder => "placeholder",
        }
    }
}

/// One reusable message or slot ("积木").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct MessageTemplate {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub role: Role,
    #[serde(default, rename = "type", skip_serializing_if = "is_default_type")]
    pub kind: TemplateType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_injection_strategy: Option<InjectionStrategy>,
    /// In text completion (RULES 5.12) the message is written into the prompt string as it is:
    /// no role prefix or suffix, no name, never folded into another turn. For texts that carry
    /// the model's format themselves, like a SillyTavern story string. In chat completion it is
    /// an ordinary message of its role.
    #[serde(default, skip_serializing_if = "is_false")]
    pub unwrapped: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_default_type(t: &TemplateType) -> bool {
    *t == TemplateType::Message
}

/// An ordered list of steps, chosen per model by `modelFilter` (RULES 3.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ContextRecipe {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub model_filter: Vec<String>,
    pub steps: Vec<RecipeStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RecipeStep {
    pub message_id: String,
    pub enabled: bool,
    /// Absent = inherit the template's default; `{}` = list order (RULES 3.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injection_strategy: Option<InjectionStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overrides: Option<StepOverrides>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct StepOverrides {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum AnchorPosition {
    Before,
    #[default]
    After,
}

impl AnchorPosition {
    pub fn as_str(self) -> &'static str {
        match self {
            AnchorPosition::Before => "before",
            AnchorPosition::After => "after",
        }
    }
}

/// Where a message goes (RULES 2, 3.3). All fields absent = list order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct InjectionStrategy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor_target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor_position: Option<AnchorPosition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<i32>,
}

pub const DEFAULT_ORDER: i32 = 100;

impl InjectionStrategy {
    pub fn order(&self) -> i32 {
        self.order.unwrap_or(DEFAULT_ORDER)
    }
    pub fn position(&self) -> AnchorPosition {
        self.anchor_position.unwrap_or_default()
    }
    /// True when the strategy places nothing anywhere but in list order.
    pub fn is_list(&self) -> bool {
        self.depth.is_none() && self.anchor_target.is_none()
    }
}

/// Values for `{{char}}`, `{{description}}` and friends (RULES 4).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Character {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub personality: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub greeting: Option<String>,
    /// Other first messages a new chat can open with; they become the greeting's swipes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternate_greetings: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example_dialogue: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_history_instructions: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creator_notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// The character's note: a text placed in the chat at a depth with a role, which the
    /// `character-note` processor sends (RULES 5.11.4; a SillyTavern card's depth prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth_prompt: Option<CharacterNote>,
}

/// A text the character places in the chat history at a depth, with a role (RULES 5.11.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CharacterNote {
    pub prompt: String,
    /// Messages from the end of the history it goes before (0 = after the newest).
    #[serde(default = "default_note_depth")]
    pub depth: u32,
    #[serde(default = "default_note_role")]
    pub role: Role,
}

/// SillyTavern's depth for a card's note and for a chat's author's note when the file does not
/// say.
pub const DEFAULT_NOTE_DEPTH: u32 = 4;

fn default_note_depth() -> u32 {
    DEFAULT_NOTE_DEPTH
}

fn default_note_role() -> Role {
    Role::System
}

/// One message of the simple linear form (`presetMessages`), accepted on input only (RULES 2.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct PresetMessage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<TemplateType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injection_strategy: Option<InjectionStrategy>,
}

/// Agent-level settings of one processor (RULES 5.9). For one processor id, the preset's config
/// replaces the model profile's whole.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ProcessorConfig {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub settings: serde_json::Map<String, serde_json::Value>,
}

impl AgentPreset {
    pub fn template(&self, id: &str) -> Option<&MessageTemplate> {
        self.message_templates.iter().find(|t| t.id == id)
    }
}
