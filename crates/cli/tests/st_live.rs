//! Golden tests against the real SillyTavern (RULES 5.11): each folder of `tests/st-live/cases/`
//! holds a preset, a card, a chat (and maybe a world file) written for these tests, and the
//! request SillyTavern 1.12.6 sent for them (`st_capture.json`, captured as
//! `tests/st-live/README.md` says). The `preview --format openai` of the same files must send the
//! same messages: role, content and `name` of each. Where the preview follows a newer SillyTavern
//! on purpose, the case's `newer.json` lists each such text: what 1.12.6 sent and what the newer
//! one (and the preview) sends, and `docs/IMPORT.md` names the behaviour.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const NOW: &str = "2024-01-01T12:00:00+00:00";
/// The context the capture gave SillyTavern (1,000,000 tokens), so that budgets (the lorebook's
/// share of it) are the same.
const CONTEXT: &str = "1000000";

fn cases() -> Vec<PathBuf> {
    cases_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/st-live/cases"))
}

/// The case folders of `dir` that hold a capture, in name order.
fn cases_in(dir: &Path) -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("st_capture.json").is_file())
        .collect();
    cases.sort();
    cases
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn promptloom(scratch: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_promptloom"))
        .args(args)
        .env("XDG_DATA_HOME", scratch.join("xdg"))
        .env_remove("PROMPTLOOM_DB")
        .output()
        .expect("the promptloom binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{args:?}: {text}");
    if args[0] == "preview" {
        return String::from_utf8_lossy(&output.stdout).into_owned();
    }
    text
}

/// The id in `Imported preset "NAME" (ID) from ...` or `Imported session "ID" from ...`.
fn imported_id(said: &str) -> String {
    let at = said.find("Imported ").expect("an import line");
    let rest = &said[at..];
    let open = rest.find('"').expect("a quoted name") + 1;
    let close = open + rest[open..].find('"').expect("a closing quote");
    let after = &rest[close + 1..];
    match after.strip_prefix(" (") {
        Some(tail) => tail[..tail.find(')').expect("a closing parenthesis")].to_string(),
        None => rest[open..close].to_string(),
    }
}

/// `promptloom export ID --to native` from the database `db` into `out`.
fn export_native(scratch: &Path, db: &str, id: &str, out: &Path) {
    let out = out.to_string_lossy();
    promptloom(
        scratch,
        &["export", id, "--to", "native", "--db", db, "--out", &out],
    );
}

/// The messages the preview sends for one case, brought in as `compare.py` brings them: a world
/// file through the database into the preset, the persona's description into the session.
fn preview(case: &Path) -> Vec<Value> {
    let spec = read_json(&case.join("case.json"));
    let name = case.file_name().unwrap().to_string_lossy().into_owned();
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let scratch = Scratch(std::env::temp_dir().join(format!(
        "promptloom-st-live-{name}-{}-{run}",
        std::process::id()
    )));
    let _ = std::fs::remove_dir_all(&scratch.0);
    std::fs::create_dir_all(&scratch.0).unwrap();
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let db = s(&scratch.0.join("db.sqlite"));
    let field = |k: &str| case.join(spec[k].as_str().expect(k));
    let mut preset = field("preset");
    let mut session = field("chat");
    if spec.get("world").is_some() {
        let said = promptloom(&scratch.0, &["import", &s(&preset), "--db", &db]);
        let id = imported_id(&said);
        let world = field("world");
        promptloom(
            &scratch.0,
            &["import", &s(&world), "--db", &db, "--into", &id],
        );
        preset = scratch.0.join("preset.native.json");
        export_native(&scratch.0, &db, &id, &preset);
    }
    let persona = &spec["persona"];
    if let Some(description) = persona["description"].as_str().filter(|d| !d.is_empty()) {
        let said = promptloom(&scratch.0, &["import", &s(&session), "--db", &db]);
        let id = imported_id(&said);
        let out = scratch.0.join("session.native.json");
        export_native(&scratch.0, &db, &id, &out);
        let mut native = read_json(&out);
        if native.get("userProfile").is_none() {
            native["userProfile"] = serde_json::json!({ "name": persona["name"] });
        }
        native["userProfile"]["content"] = Value::from(description);
        std::fs::write(&out, serde_json::to_string_pretty(&native).unwrap()).unwrap();
        session = out;
    }
    // An ordinary send types the input; a continuation or an impersonation (RULES 5.14) takes
    // none, as SillyTavern's menu items were clicked with the message box empty.
    let kind = spec["type"].as_str().unwrap_or("normal");
    let (option, value) = match kind {
        "normal" => ("--input", spec["input"].as_str().expect("input")),
        other => ("--type", other),
    };
    let body = promptloom(
        &scratch.0,
        &[
            "preview",
            "--preset",
            &s(&preset),
            "--character",
            &s(&field("card")),
            "--session",
            &s(&session),
            "--model",
            "gpt-4o",
            "--context-window",
            CONTEXT,
            option,
            value,
            "--format",
            "openai",
            "--now",
            NOW,
        ],
    );
    let body: Value = serde_json::from_str(&body).expect("a request body");
    body["messages"].as_array().expect("messages").clone()
}

/// What SillyTavern 1.12.6 sent, with the texts `newer.json` names as the newer SillyTavern
/// writes them.
fn captured(case: &Path) -> Vec<Value> {
    let mut messages = read_json(&case.join("st_capture.json"))["messages"]
        .as_array()
        .expect("captured messages")
        .clone();
    let newer = case.join("newer.json");
    if newer.is_file() {
        for change in read_json(&newer).as_array().expect("a list of changes") {
            let i = change["message"].as_u64().expect("message") as usize;
            let (old, new) = (
                change["st"].as_str().unwrap(),
                change["newer"].as_str().unwrap(),
            );
            let content = messages[i]["content"]
                .as_str()
                .expect("text content")
                .to_string();
            assert!(
                content.contains(old),
                "{}: {old:?} is not in message {i}",
                case.display()
            );
            messages[i]["content"] = Value::from(content.replace(old, new));
        }
    }
    messages
}

/// A message's role, name and the part of its text from a little before character `at`: real
/// presets send texts of many thousand characters.
fn shown(m: &Value, at: usize) -> String {
    let text: Vec<char> = m["content"].as_str().unwrap_or("").chars().collect();
    let start = at.saturating_sub(40).min(text.len());
    let end = (start + 160).min(text.len());
    format!(
        "{} {:?} {} chars, from {start}: {:?}",
        m["role"].as_str().unwrap_or("?"),
        m.get("name").and_then(Value::as_str),
        text.len(),
        text[start..end].iter().collect::<String>()
    )
}

/// The first character at which the texts of two messages differ.
fn first_difference(a: Option<&Value>, b: Option<&Value>) -> usize {
    fn text(m: Option<&Value>) -> &str {
        m.and_then(|m| m["content"].as_str()).unwrap_or("")
    }
    let (a, b) = (text(a), text(b));
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

#[test]
fn every_captured_case_sends_what_sillytavern_sent() {
    let cases = cases();
    assert!(cases.len() >= 5, "{} cases", cases.len());
    let differing = differing(&cases);
    assert!(differing.is_empty(), "{}", differing.join("\n"));
}

/// Real community presets, cards and world files are checked the same way, locally: their
/// licences keep most of them out of the repository, so they live beside it in
/// `../shared/st-live/real-cases` (`tests/st-live/README.md`). A clean clone has no such folder
/// and the test says so and passes.
#[test]
fn every_real_case_beside_the_project_sends_what_sillytavern_sent() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/st-live/real-cases");
    if !dir.is_dir() {
        eprintln!(
            "skipped: no real cases at {} (they are kept beside the project, not in it)",
            dir.display()
        );
        return;
    }
    let cases = cases_in(&dir);
    eprintln!("{} real cases in {}", cases.len(), dir.display());
    let differing = differing(&cases);
    assert!(differing.is_empty(), "{}", differing.join("\n"));
}

/// One line for each case whose preview differs from its capture: the first message that does.
fn differing(cases: &[PathBuf]) -> Vec<String> {
    let mut differing = Vec::new();
    for case in cases {
        let (want, got) = (captured(case), preview(case));
        let first = (0..want.len().max(got.len())).find(|&i| {
            let (w, g) = (want.get(i), got.get(i));
            match (w, g) {
                (Some(w), Some(g)) => {
                    w["role"] != g["role"]
                        || w["content"] != g["content"]
                        || w.get("name").and_then(Value::as_str)
                            != g.get("name").and_then(Value::as_str)
                }
                _ => true,
            }
        });
        if let Some(i) = first {
            let at = first_difference(want.get(i), got.get(i));
            differing.push(format!(
                "{} at message {i} of {} (Promptloom sends {}):\n  SillyTavern: {}\n  Promptloom:  {}",
                case.file_name().unwrap().to_string_lossy(),
                want.len(),
                got.len(),
                want.get(i).map(|m| shown(m, at)).unwrap_or_default(),
                got.get(i).map(|m| shown(m, at)).unwrap_or_default(),
            ));
        }
    }
    differing
}

#[test]
fn a_case_that_differs_is_caught() {
    // The comparison itself: a changed capture of the first case no longer agrees.
    let case = &cases()[0];
    let mut want = captured(case);
    let got = preview(case);
    assert_eq!(want.len(), got.len());
    want[0]["content"] = Value::from("something SillyTavern did not send");
    assert_ne!(want[0]["content"], got[0]["content"]);
}
