//! RULES 5.7: every request body the engine makes is one the provider takes. Each attachment kind
//! on each role goes through a real build and into the body of each provider format, which is
//! then checked against excerpts of the providers' request schemas (tests/data/schemas): the part
//! or block types each role takes and the media types each block takes. What a body cannot carry
//! must not vanish: it is in the body, inlined as text, or named in a note. Anthropic bodies carry
//! cache marks on the system part and the last turns, checked against the documented shape.

mod common;

use common::*;
use promptloom_engine::assets::InlineAssets;
use promptloom_engine::model::{AgentPreset, ProcessorConfig, Session};
use promptloom_engine::profiles::{profile_for_model, ModelProfile, ProviderFormat};
use promptloom_engine::providers::request_body;
use promptloom_engine::{build, BuildRequest, BuildResult};
use serde_json::{json, Value};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const JPEG: &str = "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAP////8=";
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";
const MP3: &str = "SUQzBAAAAAAAAP/7kGQAAAAAAA==";
const MP4: &str = "AAAAGGZ0eXBtcDQyAAAAAG1wNDJpc29t";
const PDF: &str = "JVBERi0xLjQKJcOkw7zDtsOfCjEgMCBvYmoKPDwvVHlwZS9DYXRhbG9nPj4KZW5kb2JqCnRyYWlsZXIKPDwvUm9vdCAxIDAgUj4+CiUlRU9G";
const TXT: &str = "bGluZSBvbmUKbGluZSB0d28K"; // "line one\nline two\n"
const TXT_TEXT: &str = "line one\nline two\n";

const FORMATS: [ProviderFormat; 3] = [
    ProviderFormat::OpenaiChat,
    ProviderFormat::AnthropicMessages,
    ProviderFormat::Gemini,
];

/// (kind, mime, name, base64) of every attachment tried.
const ATTACHMENTS: [(&str, &str, &str, &str); 7] = [
    ("image", "image/png", "dot.png", PNG),
    ("image", "image/jpeg", "photo.jpg", JPEG),
    ("audio", "audio/wav", "hi.wav", WAV),
    ("audio", "audio/mpeg", "memo.mp3", MP3),
    ("video", "video/mp4", "clip.mp4", MP4),
    ("document", "application/pdf", "doc.pdf", PDF),
    ("text", "text/plain", "notes.txt", TXT),
];

/// Where in the session the attachment sits.
#[derive(Debug, Clone, Copy)]
enum Place {
    User,
    Assistant,
    /// The session's first message: one of the system messages that open the request.
    LeadingSystem,
    /// A system message between turns.
    LaterSystem,
}

const PLACES: [Place; 4] = [
    Place::User,
    Place::Assistant,
    Place::LeadingSystem,
    Place::LaterSystem,
];

fn schema(format: ProviderFormat) -> Value {
    let name = match format {
        ProviderFormat::OpenaiChat => "openai",
        ProviderFormat::AnthropicMessages => "anthropic",
        ProviderFormat::Gemini => "gemini",
    };
    let path = format!(
        "{}/tests/data/schemas/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn strings(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|v| v.as_str().expect("a string"))
        .collect()
}

/// A model of `format` with every capability, so that no attachment is refused for the model's
/// sake; the format's own processors (formatters) stay as the built-in profile has them.
fn capable_profile(format: ProviderFormat) -> (&'static str, ModelProfile) {
    let model = match format {
        ProviderFormat::OpenaiChat => "gpt-4o",
        ProviderFormat::AnthropicMessages => "claude-3-5-sonnet",
        ProviderFormat::Gemini => "gemini-2.5-pro",
    };
    let mut p = profile_for_model(model, &[]);
    assert_eq!(p.provider_format, format);
    p.id = format!("every-capability-{}", format.as_str());
    p.patterns = vec![model.into()];
    p.capabilities.vision = true;
    p.capabilities.audio = true;
    p.capabilities.documents = true;
    p.capabilities.video = true;
    (model, p)
}

fn session_with(place: Place, attachment: Value) -> Session {
    let with = |role: &str, content: &str| json!({ "role": role, "content": content, "attachments": [attachment.clone()] });
    let plain = |role: &str, content: &str| json!({ "role": role, "content": content });
    let messages = match place {
        Place::User => vec![
            plain("user", "hello"),
            plain("assistant", "hi, what can I look at?"),
            with("user", "What is in this?"),
        ],
        Place::Assistant => vec![
            plain("user", "show me something"),
            with("assistant", "Here it is."),
            plain("user", "What is in it?"),
        ],
        Place::LeadingSystem => vec![
            with("system", "Reference material."),
            plain("user", "What is in the reference?"),
        ],
        Place::LaterSystem => vec![
            plain("user", "hello"),
            plain("assistant", "hi"),
            with("system", "Reference material."),
            plain("user", "What is in the reference?"),
        ],
    };
    let messages: Vec<Value> = messages
        .into_iter()
        .enumerate()
        .map(|(i, mut m)| {
            m["id"] = json!(format!("m{i}"));
            m
        })
        .collect();
    session_from(json!({ "formatVersion": 1, "id": "s", "messages": messages }))
}

fn chat_preset(inline_text: bool) -> AgentPreset {
    let mut p = preset(
        json!([
            { "id": "main", "role": "system", "content": "You describe media." },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ]),
        one_recipe(json!([
            { "messageId": "main", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ])),
    );
    let mut settings = serde_json::Map::new();
    settings.insert("inlineText".into(), json!(inline_text));
    p.processors = Some(vec![ProcessorConfig {
        id: "transcription-processor".into(),
        enabled: Some(true),
        priority: None,
        settings,
    }]);
    // Cache marks on the system part and the last three turns (RULES 5.13): every kind of
    // block on every role carries one in some case.
    p.generation = Some(
        serde_json::from_value(
            json!({ "cacheBreakpoints": { "system": true, "depths": [0, 1, 2] } }),
        )
        .expect("settings"),
    );
    p
}

fn run<'s>(
    preset: &AgentPreset,
    session: &'s Session,
    model: &str,
    profile: &ModelProfile,
) -> BuildResult<'s> {
    let options = options();
    let cache = promptloom_engine::cache::BuildCache::new();
    build(&BuildRequest {
        preset,
        session,
        kept_rewrites: None,
        model,
        options: &options,
        cache: &cache,
        profiles: std::slice::from_ref(profile),
        assets: &InlineAssets,
    })
    .expect("builds")
}

// ---- the schema checks: each returns what the body breaks, in words -------------------------

fn check_openai(body: &Value, s: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    for (i, m) in body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .enumerate()
    {
        let role = m["role"].as_str().unwrap_or("?");
        let Some(allowed) = s["roles"].get(role) else {
            errors.push(format!(
                "messages[{i}]: role {role} is not one of the API's"
            ));
            continue;
        };
        let allowed = strings(allowed);
        let Some(parts) = m["content"].as_array() else {
            if !m["content"].is_string() {
                errors.push(format!("messages[{i}]: content is neither text nor parts"));
            }
            continue;
        };
        for (j, p) in parts.iter().enumerate() {
            let kind = p["type"].as_str().unwrap_or("?");
            let at = format!("messages[{i}] ({role}) part {j}");
            if !allowed.contains(&kind) {
                errors.push(format!(
                    "{at}: a {role} message takes {allowed:?}, not {kind}"
                ));
                continue;
            }
            let data_uri_type = |uri: &Value, types: &Value| {
                let uri = uri.as_str().unwrap_or("");
                let ok = strings(types)
                    .iter()
                    .any(|t| uri.starts_with(&format!("data:{t};base64,")));
                (!ok).then(|| format!("{at}: {kind} data URI of a type not taken"))
            };
            let error = match kind {
                "image_url" => data_uri_type(
                    &p["image_url"]["url"],
                    &s["image_url"]["data_uri_media_types"],
                ),
                "file" => {
                    data_uri_type(&p["file"]["file_data"], &s["file"]["data_uri_media_types"])
                }
                "input_audio" => {
                    let format = p["input_audio"]["format"].as_str().unwrap_or("?");
                    (!strings(&s["input_audio"]["formats"]).contains(&format))
                        .then(|| format!("{at}: input_audio format {format} is not taken"))
                }
                _ => None,
            };
            errors.extend(error);
        }
    }
    errors
}

fn check_anthropic(body: &Value, s: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let cache = &s["cache_control"];
    let mut marks = 0;
    let mut mark = |at: &str, block: &Value, errors: &mut Vec<String>| {
        let Some(c) = block.get("cache_control") else {
            return;
        };
        marks += 1;
        let known = c.as_object().is_some_and(|o| {
            o.iter().all(|(k, v)| {
                v.as_str()
                    .is_some_and(|v| strings(&cache["shape"][k]).contains(&v))
            })
        });
        if !known || c["type"].is_null() {
            errors.push(format!(
                "{at}: cache_control {c} is not of the documented shape"
            ));
        }
    };
    match &body["system"] {
        Value::Null | Value::String(_) => {}
        Value::Array(blocks) => {
            for (j, b) in blocks.iter().enumerate() {
                if b["type"] != "text" || !b["text"].is_string() {
                    errors.push(format!("system block {j} is not a text block"));
                }
                mark(&format!("system block {j}"), b, &mut errors);
            }
        }
        _ => errors.push("system is not text".into()),
    }
    for (i, m) in body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .enumerate()
    {
        let role = m["role"].as_str().unwrap_or("?");
        let Some(allowed) = s["roles"].get(role) else {
            errors.push(format!(
                "messages[{i}]: role {role} is not user or assistant"
            ));
            continue;
        };
        let allowed = strings(allowed);
        let Some(blocks) = m["content"].as_array() else {
            continue;
        };
        for (j, b) in blocks.iter().enumerate() {
            let kind = b["type"].as_str().unwrap_or("?");
            let at = format!("messages[{i}] ({role}) block {j}");
            mark(&at, b, &mut errors);
            if !allowed.contains(&kind) {
                errors.push(format!("{at}: a {role} turn takes {allowed:?}, not {kind}"));
                continue;
            }
            let Some(sources) = s["sources"].get(kind) else {
                continue;
            };
            let source_type = b["source"]["type"].as_str().unwrap_or("?");
            let media = b["source"]["media_type"].as_str().unwrap_or("?");
            let ok = sources.as_array().expect("sources").iter().any(|src| {
                src["type"] == source_type && strings(&src["media_types"]).contains(&media)
            });
            if !ok {
                errors.push(format!(
                    "{at}: a {kind} block takes no {source_type} source of {media}"
                ));
            }
        }
    }
    let most = cache["at_most"].as_u64().expect("at_most");
    if marks > most {
        errors.push(format!(
            "{marks} cache_control marks; a request takes at most {most}"
        ));
    }
    errors
}

fn check_gemini(body: &Value, s: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let name = |key: &str| -> String {
        s["aliases"]
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or(key)
            .to_string()
    };
    let system_parts = strings(&s["system_instruction_parts"]);
    if let Some(parts) = body["systemInstruction"]["parts"].as_array() {
        for p in parts {
            for key in p.as_object().expect("part").keys() {
                if !system_parts.contains(&name(key).as_str()) {
                    errors.push(format!(
                        "systemInstruction takes {system_parts:?}, not {key}"
                    ));
                }
            }
        }
    }
    let roles = strings(&s["roles"]);
    let part_kinds = strings(&s["parts"]);
    let mimes = strings(&s["inline_data"]["mime_types"]);
    for (i, c) in body["contents"]
        .as_array()
        .expect("contents")
        .iter()
        .enumerate()
    {
        let role = c["role"].as_str().unwrap_or("?");
        if !roles.contains(&role) {
            errors.push(format!("contents[{i}]: role {role} is not user or model"));
        }
        let parts = c["parts"].as_array().expect("parts");
        if parts.is_empty() {
            errors.push(format!("contents[{i}]: no parts"));
        }
        for (j, p) in parts.iter().enumerate() {
            let p = p.as_object().expect("part");
            if p.len() != 1 {
                errors.push(format!("contents[{i}] part {j}: one kind of data per part"));
            }
            for (key, value) in p {
                let kind = name(key);
                if !part_kinds.contains(&kind.as_str()) {
                    errors.push(format!("contents[{i}] part {j}: {key} is not a part"));
                } else if kind == "inlineData" {
                    let mime = value
                        .get("mime_type")
                        .or_else(|| value.get("mimeType"))
                        .and_then(Value::as_str)
                        .unwrap_or("?");
                    if !mimes.contains(&mime) {
                        errors.push(format!("contents[{i}] part {j}: {mime} is not taken"));
                    }
                }
            }
        }
    }
    errors
}

fn check(format: ProviderFormat, body: &Value) -> Vec<String> {
    let s = schema(format);
    match format {
        ProviderFormat::OpenaiChat => check_openai(body, &s),
        ProviderFormat::AnthropicMessages => check_anthropic(body, &s),
        ProviderFormat::Gemini => check_gemini(body, &s),
    }
}

/// Every text in `value`, for telling whether an attachment is named or inlined somewhere.
fn texts(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|v| texts(v, out)),
        Value::Object(o) => o.values().for_each(|v| texts(v, out)),
        _ => {}
    }
}

/// Whether the body carries the attachment (its data, or its text), inlined or as a note.
fn accounted_for(body: &Value, name: &str, data: &str) -> bool {
    let mut all = Vec::new();
    texts(body, &mut all);
    all.iter().any(|t| {
        t.contains(data)
            || t == TXT_TEXT
            || t.contains(&format!("[Attachment: {name}]"))
            || t.contains(&format!("[Attachment \"{name}\""))
    })
}

/// Every kind on every role, built for each format's model and sent in each format: the body
/// the profile's format makes (where the asset resolver has decided) and the bodies a connection
/// of another format would make of the same build.
fn every_case(inline_text: bool) -> Vec<String> {
    let preset = chat_preset(inline_text);
    let mut failures = Vec::new();
    for build_format in FORMATS {
        let (model, profile) = capable_profile(build_format);
        for place in PLACES {
            for (kind, mime, name, data) in ATTACHMENTS {
                let attachment = json!({ "id": "x", "kind": kind, "mime": mime, "name": name,
                                         "dataBase64": data });
                let session = session_with(place, attachment);
                let result = run(&preset, &session, model, &profile);
                for body_format in FORMATS {
                    let case = format!(
                        "{name} ({mime}) on {place:?}, built for {}, sent as {}",
                        build_format.as_str(),
                        body_format.as_str()
                    );
                    let body =
                        request_body(body_format, &result, &session, &InlineAssets).expect("body");
                    for e in check(body_format, &body) {
                        failures.push(format!("{case}: {e}"));
                    }
                    let marked = body.to_string().contains("cache_control");
                    if marked != (body_format == ProviderFormat::AnthropicMessages) {
                        failures.push(format!(
                            "{case}: cache marks only and always in Anthropic's"
                        ));
                    }
                    if !accounted_for(&body, name, data) {
                        failures.push(format!("{case}: the attachment vanished without a note"));
                    }
                    // In the profile's own format the asset resolver made the note, with a warning.
                    let noted = body
                        .to_string()
                        .contains(&format!("[Attachment \\\"{name}\\\""));
                    if body_format == build_format && noted && !any_warning(&result, name) {
                        failures.push(format!("{case}: a note without a warning naming it"));
                    }
                }
            }
        }
    }
    failures
}

#[test]
fn every_attachment_on_every_role_makes_a_body_the_provider_takes() {
    let failures = every_case(true);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn text_attachments_not_inlined_make_a_body_the_provider_takes() {
    let failures = every_case(false);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_image_on_an_assistant_message_becomes_a_note_for_openai_naming_why() {
    let (model, profile) = capable_profile(ProviderFormat::OpenaiChat);
    let session = session_with(
        Place::Assistant,
        json!({ "id": "i", "kind": "image", "mime": "image/png", "name": "dot.png", "dataBase64": PNG }),
    );
    let result = run(&chat_preset(true), &session, model, &profile);
    assert!(
        result.warnings.iter().any(|w| w.message.contains("dot.png")
            && w.message
                .contains("assistant messages take only text in the openai-chat format")),
        "{:?}",
        warnings(&result)
    );
    let body =
        request_body(ProviderFormat::OpenaiChat, &result, &session, &InlineAssets).expect("body");
    assert!(!body.to_string().contains("image_url"), "{body}");
}

#[test]
fn plain_text_goes_to_anthropic_as_a_text_source_and_audio_as_a_note() {
    let (model, profile) = capable_profile(ProviderFormat::AnthropicMessages);
    let session = session_with(
        Place::User,
        json!({ "id": "t", "kind": "text", "mime": "text/plain", "name": "notes.txt", "dataBase64": TXT }),
    );
    let result = run(&chat_preset(false), &session, model, &profile);
    let body = request_body(
        ProviderFormat::AnthropicMessages,
        &result,
        &session,
        &InlineAssets,
    )
    .expect("body");
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .expect("last");
    assert_eq!(
        last["content"][0],
        json!({ "type": "document", "source": { "type": "text", "media_type": "text/plain", "data": TXT_TEXT } })
    );
    // A build for gpt-4o keeps the WAV; a body for Anthropic of that build names it instead.
    let (model, profile) = capable_profile(ProviderFormat::OpenaiChat);
    let session = session_with(
        Place::User,
        json!({ "id": "a", "kind": "audio", "mime": "audio/wav", "name": "hi.wav", "dataBase64": WAV }),
    );
    let result = run(&chat_preset(true), &session, model, &profile);
    let body = request_body(
        ProviderFormat::AnthropicMessages,
        &result,
        &session,
        &InlineAssets,
    )
    .expect("body");
    let text = body.to_string();
    assert!(!text.contains(WAV), "{text}");
    assert!(
        text.contains(
            "[Attachment \\\"hi.wav\\\" (audio/wav) not sent: the API does not take audio]"
        ),
        "{text}"
    );
}
