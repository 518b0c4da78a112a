//! `promptloom lorebook test` (RULES 6.6, 8.7): every entry with `fired`, a `reason` code and the
//! key and place that decided it; one test per reason the tester names.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "promptloom-cli-lorebook-test-{name}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }

    fn write(&self, file: &str, value: &Value) -> String {
        let path = self.0.join(file);
        std::fs::write(&path, value.to_string()).expect("write");
        path.to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A preset with `book` as its lorebook and `extra` over its top level.
fn preset(book: Value, extra: Value) -> Value {
    let mut v = json!({
        "formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [
            { "id": "main", "role": "system", "content": "Main" },
            { "id": "worldInfoBefore", "role": "system", "type": "placeholder" },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ],
        "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
            { "messageId": "main", "enabled": true },
            { "messageId": "worldInfoBefore", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ]}],
        "lorebook": book,
    });
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    v
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_promptloom"))
        .args(args)
        .output()
        .expect("runs")
}

/// `lorebook test --format json` of `preset` over `--text text` (or the extra arguments).
fn test(name: &str, preset: Value, more: &[&str]) -> Vec<Value> {
    let dir = Scratch::new(name);
    let path = dir.write("preset.json", &preset);
    let mut args = vec!["lorebook", "test", "--preset", &path, "--format", "json"];
    args.extend_from_slice(more);
    let out = run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v["entries"].as_array().expect("entries").clone()
}

fn entry<'v>(entries: &'v [Value], id: &str) -> &'v Value {
    entries
        .iter()
        .find(|e| e["entryId"] == id)
        .unwrap_or_else(|| panic!("no entry {id} in {entries:#?}"))
}

#[test]
fn a_key_in_the_text_fires_its_entry_and_names_the_key_and_where() {
    let book = json!({ "entries": [
        { "id": "harbour", "keys": ["quay", "harbour"], "content": "Six boats." },
        { "id": "moon", "keys": ["moon"], "content": "A moon." },
    ]});
    let e = test(
        "keys",
        preset(book, json!({})),
        &["--text", "Rain over the harbour."],
    );
    let h = entry(&e, "harbour");
    assert_eq!(
        (h["fired"].clone(), h["reason"].clone()),
        (json!(true), json!("key"))
    );
    assert_eq!(h["key"], "harbour");
    assert_eq!(h["place"], json!({ "kind": "input", "offset": 14 }));
    assert!(h["tokens"].as_u64().unwrap() > 0);
    let m = entry(&e, "moon");
    assert_eq!(
        (m["fired"].clone(), m["reason"].clone()),
        (json!(false), json!("noMatch"))
    );
}

#[test]
fn secondary_keys_that_do_not_agree_are_the_reason() {
    let book = json!({ "entries": [
        { "id": "sword", "keys": ["sword"], "secondaryKeys": ["fire", "ice"],
          "selectiveLogic": "andAll", "content": "A sword." },
    ]});
    let e = test(
        "secondary",
        preset(book, json!({})),
        &["--text", "a sword of fire"],
    );
    let s = entry(&e, "sword");
    assert_eq!(
        (s["fired"].clone(), s["reason"].clone()),
        (json!(false), json!("secondaryKeys"))
    );
    assert_eq!(s["key"], "sword");
    assert_eq!(s["place"]["offset"], 2);
    assert!(s["why"].as_str().unwrap().contains("andAll: 1 of 2"), "{s}");
}

#[test]
fn a_key_inside_a_longer_word_is_the_nearest_under_whole_words() {
    let book = json!({ "matchWholeWords": true, "entries": [
        { "id": "cat", "keys": ["cat"], "content": "A cat." },
    ]});
    let e = test(
        "whole",
        preset(book, json!({})),
        &["--text", "the concatenation"],
    );
    let c = entry(&e, "cat");
    assert_eq!(
        (c["fired"].clone(), c["reason"].clone()),
        (json!(false), json!("wholeWord"))
    );
    assert_eq!(c["place"]["offset"], 7);
}

#[test]
fn a_key_in_another_case_is_the_nearest_when_the_book_is_case_sensitive() {
    let book = json!({ "caseSensitive": true, "entries": [
        { "id": "ada", "keys": ["Ada"], "content": "Ada." },
    ]});
    let e = test("case", preset(book, json!({})), &["--text", "ask ada"]);
    let a = entry(&e, "ada");
    assert_eq!(
        (a["fired"].clone(), a["reason"].clone()),
        (json!(false), json!("case"))
    );
    assert_eq!(
        (a["key"].clone(), a["place"]["offset"].clone()),
        (json!("Ada"), json!(4))
    );
}

#[test]
fn a_key_older_than_the_scan_depth_is_named_with_its_message() {
    let dir = Scratch::new("depth");
    let session = json!({ "formatVersion": 1, "id": "s", "messages": [
        { "role": "user", "content": "Tell me about the lighthouse." },
        { "role": "assistant", "content": "It stands on the cliff." },
        { "role": "user", "content": "And the weather?" },
    ]});
    let session = dir.write("session.json", &session);
    let book = json!({ "scanDepth": 1, "entries": [
        { "id": "light", "keys": ["lighthouse"], "content": "The lighthouse." },
    ]});
    let e = test(
        "depth",
        preset(book, json!({})),
        &["--session", &session, "--input", "Rain?"],
    );
    let l = entry(&e, "light");
    assert_eq!(
        (l["fired"].clone(), l["reason"].clone()),
        (json!(false), json!("scanDepth"))
    );
    assert_eq!(
        l["place"],
        json!({ "kind": "history", "historyIndex": 0, "offset": 18 })
    );
}

#[test]
fn an_entry_whose_chance_fails_says_so_with_the_key_it_matched() {
    let book = json!({ "entries": [
        { "id": "rare", "keys": ["comet"], "probability": 0, "content": "A comet." },
    ]});
    let e = test("chance", preset(book, json!({})), &["--text", "a comet"]);
    let r = entry(&e, "rare");
    assert_eq!(
        (r["fired"].clone(), r["reason"].clone()),
        (json!(false), json!("probability"))
    );
    assert_eq!(r["key"], "comet");
}

#[test]
fn the_loser_of_an_inclusion_group_names_the_winner() {
    let book = json!({ "entries": [
        { "id": "sun", "keys": ["weather"], "group": "sky", "order": 10, "content": "Sun." },
        { "id": "rain", "keys": ["weather"], "group": "sky", "order": 20,
          "groupOverride": true, "content": "Rain." },
    ]});
    let extra = json!({ "compatibility": "sillytavern" });
    let e = test("group", preset(book, extra), &["--text", "what weather"]);
    let rain = entry(&e, "rain");
    assert_eq!(
        (rain["fired"].clone(), rain["reason"].clone()),
        (json!(true), json!("key"))
    );
    let sun = entry(&e, "sun");
    assert_eq!(
        (sun["fired"].clone(), sun["reason"].clone()),
        (json!(false), json!("group"))
    );
    assert!(sun["why"].as_str().unwrap().contains("\"rain\""), "{sun}");
    assert_eq!(sun["key"], "weather");
}

#[test]
fn recursion_names_its_step_and_the_entry_it_read() {
    let book = json!({ "recursive": true, "entries": [
        { "id": "a", "keys": ["harbour"], "content": "boats and a lantern" },
        { "id": "b", "keys": ["lantern"], "content": "a keeper" },
        { "id": "c", "keys": ["keeper"], "content": "an old man" },
    ]});
    let e = test(
        "recursion",
        preset(book, json!({})),
        &["--text", "the harbour"],
    );
    let b = entry(&e, "b");
    assert_eq!(
        (b["reason"].clone(), b["step"].clone()),
        (json!("recursion"), json!(1))
    );
    assert_eq!(
        b["place"],
        json!({ "kind": "entry", "entry": "a", "offset": 12 })
    );
    assert_eq!(entry(&e, "c")["step"], 2);
    let book = json!({ "recursive": false, "entries": [
        { "id": "a", "keys": ["harbour"], "content": "boats and a lantern" },
        { "id": "b", "keys": ["lantern"], "content": "a keeper" },
    ]});
    let e = test(
        "no-recursion",
        preset(book, json!({})),
        &["--text", "the harbour"],
    );
    let b = entry(&e, "b");
    assert_eq!(
        (b["fired"].clone(), b["reason"].clone()),
        (json!(false), json!("recursionLimit"))
    );
    assert!(b["why"].as_str().unwrap().contains("not recursive"), "{b}");
}

#[test]
fn an_entry_the_budget_has_no_room_for_is_cut_with_its_tokens() {
    // 1 % of gpt-4o's budget is about 1,250 tokens.
    let long = "word ".repeat(3_000);
    let book = json!({ "tokenBudget": 1, "entries": [
        { "id": "small", "keys": ["tide"], "order": 200, "content": "Tide." },
        { "id": "big", "keys": ["tide"], "order": 100, "content": long },
    ]});
    let e = test(
        "budget",
        preset(book, json!({})),
        &[
            "--text",
            "the tide",
            "--model",
            "gpt-4o",
            "--now",
            "2026-11-22T10:00:00+01:00",
        ],
    );
    assert_eq!(entry(&e, "small")["fired"], true);
    let big = entry(&e, "big");
    assert_eq!(
        (big["fired"].clone(), big["reason"].clone()),
        (json!(false), json!("budget"))
    );
    assert!(big["tokens"].as_u64().unwrap() >= 3_000);
    assert_eq!(big["key"], "tide");
}

#[test]
fn a_disabled_entry_and_the_text_listing() {
    let book = json!({ "entries": [
        { "id": "off", "keys": ["tide"], "enabled": false, "content": "x" },
    ]});
    let dir = Scratch::new("listing");
    let path = dir.write("preset.json", &preset(book, json!({})));
    let out = run(&["lorebook", "test", "--preset", &path, "--text", "the tide"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("0 of 1 entries fired"), "{text}");
    assert!(
        text.contains("off: not fired") && text.contains("[disabled]"),
        "{text}"
    );
}

#[test]
fn bad_input_names_the_thing_and_exits_2() {
    let out = run(&[
        "lorebook",
        "test",
        "--preset",
        "no-such.json",
        "--text",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such.json: no such file"));
    // Neither a text nor a session.
    let out = run(&["lorebook", "test", "--preset", "no-such.json"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_text_over_the_cap_is_refused() {
    use promptloom_engine::limits::LOREBOOK_TEST_TEXT_BYTES;
    let dir = Scratch::new("cap");
    let path = dir.write("preset.json", &preset(json!({ "entries": [] }), json!({})));
    let mut child = Command::new(env!("CARGO_BIN_EXE_promptloom"))
        .args(["lorebook", "test", "--preset", &path, "--text", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..=(LOREBOOK_TEST_TEXT_BYTES >> 20) {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let out = child.wait_with_output().expect("ends");
    let _ = writer.join();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--text -: the text is over 50 MB"));
}

#[test]
fn preview_trace_macros_adds_each_expansion_and_the_variables() {
    let dir = Scratch::new("trace");
    let p = json!({
        "formatVersion": 1, "id": "p", "name": "P",
        "character": { "name": "Ada" },
        "variables": { "mood": "calm" },
        "messageTemplates": [{ "id": "main", "role": "system", "content":
            "{{setvar::who::{{char}}}}{{#if getvar::mood}}{{getvar::mood}}{{/if}} {{random::x::y}}" }],
        "contextRecipes": [{ "id": "r", "modelFilter": ["*"],
            "steps": [{ "messageId": "main", "enabled": true }] }],
    });
    let path = dir.write("preset.json", &p);
    let args = [
        "preview", "--preset", &path, "--model", "gpt-4o", "--trace", "macros",
    ];
    let out = run(&[&args[..], &["--format", "json"]].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let names: Vec<&str> = v["macros"]
        .as_array()
        .expect("macros")
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    // Blocks are resolved before the other macros: the condition comes first, then the scan
    // left to right, an inner macro before the one holding it.
    assert_eq!(names, ["getvar", "char", "setvar", "getvar", "random"]);
    assert_eq!(v["macros"][0]["block"], "if");
    assert_eq!(v["macros"][2]["variable"]["after"], "Ada");
    assert_eq!(v["variables"]["before"]["local"], json!({ "mood": "calm" }));
    assert_eq!(v["variables"]["after"]["local"]["who"], "Ada");
    let text = run(&args);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Macros") && text.contains("local who: (unset) → \"Ada\""),
        "{text}"
    );
    // Without --trace the JSON keeps its keys.
    let plain = run(&[
        "preview", "--preset", &path, "--model", "gpt-4o", "--format", "json",
    ]);
    let v: Value = serde_json::from_slice(&plain.stdout).expect("JSON");
    assert!(v.get("macros").is_none() && v.get("variables").is_none());
    // A request body has no room for it.
    let body = run(&[&args[..], &["--format", "openai"]].concat());
    assert_eq!(body.status.code(), Some(2));
}
