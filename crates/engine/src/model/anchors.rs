//! RULES 2.2: anchor discovery for the UI's anchor pickers.

use super::{AgentPreset, TemplateType};

/// `chat_history` and `user_profile` always, then the id of every `placeholder` template in
/// template order, without duplicates.
pub fn available_anchors(preset: &AgentPreset) -> Vec<String> {
    let mut anchors = vec!["chat_history".to_string(), "user_profile".to_string()];
    for template in &preset.message_templates {
        if template.kind == TemplateType::Placeholder && !anchors.contains(&template.id) {
            anchors.push(template.id.clone());
        }
    }
    anchors
}
