//! Files built to take the process down, run through the real `promptloom` binary in a child
//! process whose address space is capped (`setrlimit`), with a deadline: each ends with exit
//! status 0 and a warning, or 2 and a one-line error, within the cap (docs/ARCHITECTURE.md,
//! "Limits"). Before the caps, each of these asked for gigabytes or for minutes.

#![cfg(unix)]

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The address space each run may use: a few times what a normal preview takes (about 80 MB
/// resident), far below the gigabytes these files asked for.
const MEMORY_CAP: u64 = 512 << 20;
/// Long enough for a debug build on a busy CI machine; the files here took minutes or forever.
const DEADLINE: Duration = Duration::from_secs(60);

struct Run {
    status: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `promptloom` with `args` under [`MEMORY_CAP`] and [`DEADLINE`].
fn run_capped(args: &[&str]) -> Run {
    run_limited(args, None)
}

/// [`run_capped`], with files it writes limited to `file_size` bytes when given: a write past
/// it fails as on a full disk.
fn run_limited(args: &[&str], file_size: Option<u64>) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_promptloom"));
    command
        .args(args)
        .env_remove("COLUMNS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: MEMORY_CAP,
                rlim_max: MEMORY_CAP,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(size) = file_size {
                let limit = libc::rlimit {
                    rlim_cur: size,
                    rlim_max: size,
                };
                // The write then fails with EFBIG instead of the signal ending the process.
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = command.spawn().expect("the promptloom binary starts");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits") {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("promptloom {args:?} ran past {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = String::from_utf8_lossy(&reader.join().expect("stdout")).into_owned();
    let stderr = String::from_utf8_lossy(&err_reader.join().expect("stderr")).into_owned();
    assert!(
        !stderr.contains("memory allocation") && !stderr.contains("panicked"),
        "promptloom {args:?} ran out of memory or panicked: {stderr}"
    );
    Run {
        status: status.code(),
        stdout,
        stderr,
    }
}

/// A fresh folder for one test's files.
fn folder(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("promptloom-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) -> String {
    std::fs::write(path, bytes).expect("write");
    path.to_str().expect("utf-8 path").to_string()
}

fn repo_file(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(name)
        .to_str()
        .expect("utf-8")
        .to_string()
}

fn preview_json(preset: &str, session: Option<&str>) -> (Run, Value) {
    let mut args = vec![
        "preview", "--preset", preset, "--model", "gpt-4o", "--format", "json",
    ];
    if let Some(s) = session {
        args.extend(["--session", s]);
    }
    let run = run_capped(&args);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).expect("JSON output");
    (run, json)
}

fn warnings(json: &Value) -> Vec<String> {
    json["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| w["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn assert_warned(json: &Value, needle: &str) {
    let w = warnings(json);
    assert!(
        w.iter().any(|w| w.contains(needle)),
        "no {needle:?} in {w:#?}"
    );
}

// ---- PNG cards ------------------------------------------------------------------------------

/// Deflate bits, first bit first; Huffman codes go in from their top bit.
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, value: u64, count: u32) {
        self.acc |= value << self.n;
        self.n += count;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    fn code(&mut self, code: u64, count: u32) {
        for i in (0..count).rev() {
            self.put((code >> i) & 1, 1);
        }
    }
}

/// A zlib stream of `1 + 258 * pairs` zero bytes, about 160 times smaller than what it inflates
/// to: one fixed-Huffman block of a literal 0 and then (length 258, distance 1) pairs.
fn zlib_zeros(pairs: usize) -> Vec<u8> {
    let mut bits = Bits {
        out: vec![0x78, 0x01],
        acc: 0,
        n: 0,
    };
    bits.put(1, 1); // the last block
    bits.put(1, 2); // fixed Huffman codes
    bits.code(0x30, 8); // literal 0
    for _ in 0..pairs {
        bits.code(0xC5, 8); // length 258
        bits.code(0, 5); // distance 1
    }
    bits.code(0, 7); // end of block
    if bits.n > 0 {
        bits.out.push(bits.acc as u8);
    }
    let total = (1 + 258 * pairs as u64) % 65_521;
    bits.out
        .extend_from_slice(&(((total as u32) << 16) | 1).to_be_bytes());
    bits.out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    let mut body = kind.to_vec();
    body.extend_from_slice(data);
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32(&body).to_be_bytes());
    out
}

/// A 1×1 grey PNG with `extra` chunks before its image data.
fn png(extra: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend(chunk(b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]));
    for c in extra {
        out.extend_from_slice(c);
    }
    // One stored deflate block holding the row: filter 0, pixel 0x80.
    let row = [0u8, 0x80];
    let mut idat = vec![0x78, 0x01, 0x01, 2, 0, !2, !0];
    idat.extend_from_slice(&row);
    let (a, b) = row.iter().fold((1u32, 0u32), |(a, b), &x| {
        let a = (a + u32::from(x)) % 65_521;
        (a, (b + a) % 65_521)
    });
    idat.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out.extend(chunk(b"IDAT", &idat));
    out.extend(chunk(b"IEND", &[]));
    out
}

fn card_text_chunk() -> Vec<u8> {
    use base64::Engine as _;
    let card = json!({ "spec": "chara_card_v2", "spec_version": "2.0",
        "data": { "name": "Mara", "description": "A cartographer.", "first_mes": "Hello." } });
    let mut data = b"chara\0".to_vec();
    data.extend(
        base64::engine::general_purpose::STANDARD
            .encode(card.to_string())
            .bytes(),
    );
    chunk(b"tEXt", &data)
}

/// About 4 MB of compressed text that inflates to about 650 MB.
const BOMB_PAIRS: usize = 2_500_000;

#[test]
fn a_card_whose_comment_inflates_to_gigabytes_imports_as_the_card() {
    let dir = folder("png-comment");
    let mut ztxt = b"Comment\0\0".to_vec();
    ztxt.extend(zlib_zeros(BOMB_PAIRS));
    let mut itxt = b"Description\0\x01\0\0\0".to_vec();
    itxt.extend(zlib_zeros(BOMB_PAIRS));
    let file = write(
        &dir.join("card.png"),
        png(&[
            card_text_chunk(),
            chunk(b"zTXt", &ztxt),
            chunk(b"iTXt", &itxt),
        ]),
    );
    let (_, json) = preview_json(&file, None);
    assert!(json.to_string().contains("A cartographer."), "{json}");
    let db = dir.join("db.sqlite");
    let run = run_capped(&["import", &file, "--db", db.to_str().expect("utf-8")]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("Mara"), "{}", run.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_card_chunk_that_inflates_past_the_limit_is_reported_as_damage() {
    let dir = folder("png-chara");
    let mut itxt = b"chara\0\x01\0\0\0".to_vec();
    itxt.extend(zlib_zeros(BOMB_PAIRS));
    let file = write(&dir.join("bomb.png"), png(&[chunk(b"iTXt", &itxt)]));
    let db = dir.join("db.sqlite");
    for args in [
        vec!["preview", "--preset", &file, "--model", "gpt-4o"],
        vec!["import", &file, "--db", db.to_str().expect("utf-8")],
    ] {
        let run = run_capped(&args);
        assert_eq!(run.status, Some(2), "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(
            run.stderr.contains("bomb.png")
                && run
                    .stderr
                    .contains("`chara` chunk does not inflate within 50 MB"),
            "{}",
            run.stderr
        );
    }
    assert!(!db.exists(), "nothing was written");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- presets that grow ----------------------------------------------------------------------

fn preset_file(dir: &Path, content: &str, extra: Value) -> String {
    let mut v = json!({
        "formatVersion": 1, "id": "hostile", "name": "Hostile",
        "messageTemplates": [
            { "id": "main", "role": "system", "content": content },
            { "id": "worldInfoBefore", "role": "system", "type": "placeholder" },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ],
        "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
            { "messageId": "main", "enabled": true },
            { "messageId": "worldInfoBefore", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ]}],
    });
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    write(&dir.join("preset.json"), v.to_string())
}

fn session_file(dir: &Path, messages: Value) -> String {
    write(
        &dir.join("session.json"),
        json!({ "formatVersion": 1, "id": "s", "messages": messages }).to_string(),
    )
}

#[test]
fn macros_that_double_a_variable_stop_with_a_warning() {
    let dir = folder("macros");
    let bomb = format!(
        "{{{{setvar::x::ABCDEFGH}}}}{}{{{{getvar::x}}}}",
        "{{addvar::x::{{getvar::x}}}}".repeat(34)
    );
    let fan = "{{description}}".repeat(5_000);
    let preset = preset_file(
        &dir,
        &format!("{bomb}{fan}"),
        json!({ "character": { "name": "C", "description": "d".repeat(400_000) } }),
    );
    let (_, json) = preview_json(&preset, None);
    assert_warned(&json, "MiB");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rules_that_multiply_text_stop_with_a_warning_naming_the_rule() {
    let dir = folder("regex");
    let rules: Vec<Value> = (0..5)
        .map(|i| {
            json!({ "id": format!("grow-{i}"), "pattern": "", "replacement": "r".repeat(200),
                         "flags": "", "scope": "both", "enabled": true })
        })
        .collect();
    let preset = preset_file(&dir, &"t".repeat(1_000), json!({ "regexRules": rules }));
    let session = session_file(
        &dir,
        json!([{ "role": "user", "content": "u".repeat(1_000) }]),
    );
    let (_, json) = preview_json(&preset, Some(&session));
    assert_warned(&json, "rule \"grow-1\" was not applied");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_imported_sillytavern_script_with_an_empty_global_pattern_is_capped_the_same() {
    let dir = folder("st-regex");
    let db = dir.join("db.sqlite");
    let db = db.to_str().expect("utf-8");
    let base = preset_file(&dir, &"t".repeat(1_000), json!({}));
    let run = run_capped(&["import", &base, "--db", db]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let scripts: Vec<Value> = (0..5)
        .map(|i| {
            json!({ "id": format!("st-{i}"), "scriptName": format!("Grow {i}"),
                         "findRegex": "/(?:)/g", "replaceString": "r".repeat(200),
                         "placement": [1, 2], "disabled": false, "promptOnly": true })
        })
        .collect();
    let script = write(&dir.join("scripts.json"), Value::Array(scripts).to_string());
    let run = run_capped(&["import", &script, "--db", db, "--into", "hostile"]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let exported = dir.join("exported.json");
    let out = exported.to_str().expect("utf-8");
    let run = run_capped(&["export", "hostile", "--db", db, "--out", out]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let session = session_file(
        &dir,
        json!([{ "role": "user", "content": "u".repeat(1_000) }]),
    );
    let (_, json) = preview_json(out, Some(&session));
    assert_warned(&json, "rule \"st-1\" was not applied");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn thousands_of_huge_regex_keys_are_skipped_and_the_book_still_works() {
    let dir = folder("keys");
    let mut entries: Vec<Value> = (0..3_000)
        .map(|i| json!({ "id": format!("k{i}"), "keys": [format!("/\\w{{12}}{i}/")], "content": format!("entry {i}") }))
        .collect();
    entries.push(json!({ "id": "dragon", "keys": ["dragon"], "content": "Dragons nest here." }));
    let preset = preset_file(&dir, "main", json!({ "lorebook": { "entries": entries } }));
    let session = session_file(&dir, json!([{ "role": "user", "content": "a dragon!" }]));
    let (_, json) = preview_json(&preset, Some(&session));
    assert_warned(&json, "regex keys skipped");
    assert!(
        json.to_string().contains("Dragons nest here."),
        "the plain key still fires"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_book_of_8000_entries_with_recursion_activates_its_whole_chain() {
    let dir = folder("book");
    let mut entries: Vec<Value> = (0..4_000)
        .map(|i| json!({ "id": format!("c{i}"), "constant": true, "content": format!("Constant {i} mentions place{}.", i * 3) }))
        .collect();
    entries.extend((0..4_000).map(|i| {
        json!({ "id": format!("k{i}"), "keys": [format!("place{i}")],
                "content": format!("Place {i} is next to place{}.", i + 1) })
    }));
    let preset = preset_file(
        &dir,
        "main",
        json!({ "lorebook": { "tokenBudget": 100, "entries": entries } }),
    );
    let (_, json) = preview_json(&preset, None);
    assert!(
        json.to_string().contains("Place 3999 is next to"),
        "the chain reached the end"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- attachments ----------------------------------------------------------------------------

#[test]
fn attachment_paths_outside_the_session_folder_become_notes_never_contents() {
    let dir = folder("attachments");
    let chat = dir.join("chat");
    std::fs::create_dir_all(chat.join("pictures")).expect("folders");
    let secret = write(&dir.join("secret.txt"), "TOP-SECRET-CONTENTS");
    write(&chat.join("mine.txt"), "my own notes");
    std::os::unix::fs::symlink(&secret, chat.join("innocent.txt")).expect("link");
    let attachment = |id: &str, kind: &str, mime: &str, path: &str| json!({ "id": id, "kind": kind, "mime": mime, "name": id, "path": path });
    let session = session_file(
        &chat,
        json!([{ "role": "user", "content": "look", "attachments": [
            attachment("att-climb", "text", "text/plain", "../secret.txt"),
            attachment("att-absolute", "text", "text/plain", &secret),
            attachment("att-link", "text", "text/plain", "innocent.txt"),
            attachment("att-folder", "image", "image/png", "pictures"),
            attachment("att-climb-image", "image", "image/png", "../secret.txt"),
            attachment("mine", "text", "text/plain", "mine.txt"),
        ] }]),
    );
    let preset = repo_file("presets/multi-model.json");
    for (format, model) in [
        ("openai", "gpt-4o"),
        ("anthropic", "claude-3-5-sonnet"),
        ("gemini", "gemini-2.0-flash"),
        ("text", "gpt-4o"),
        ("json", "gpt-4o"),
    ] {
        let run = run_capped(&[
            "preview",
            "--preset",
            &preset,
            "--session",
            &session,
            "--model",
            model,
            "--format",
            format,
        ]);
        assert_eq!(run.status, Some(0), "{format}: {}", run.stderr);
        let everything = format!("{}{}", run.stdout, run.stderr);
        assert!(
            !everything.contains("TOP-SECRET"),
            "{format} leaked the file: {everything}"
        );
        assert!(
            run.stdout.contains("my own notes"),
            "{format}: {}",
            run.stdout
        );
        for (id, why) in [
            ("att-climb", "leaves the session's folder"),
            ("att-absolute", "absolute path"),
            ("att-link", "leads outside the session's folder"),
            ("att-folder", "not a regular file"),
            ("att-climb-image", "leaves the session's folder"),
        ] {
            assert!(
                everything.contains(id) && everything.contains(why),
                "{format}: {id} ({why}) not reported: {everything}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- no lost files --------------------------------------------------------------------------

#[test]
fn an_export_that_fails_half_way_leaves_the_old_file() {
    let dir = folder("export");
    let db = dir.join("db.sqlite");
    let db = db.to_str().expect("utf-8");
    let preset = preset_file(&dir, &"long ".repeat(40_000), json!({}));
    let run = run_capped(&["import", &preset, "--db", db]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let out = dir.join("export.json");
    write(&out, "the export from last week");
    // 100 KB of room: the database's side files fit, the 200 KB export does not.
    let run = run_limited(
        &[
            "export",
            "hostile",
            "--db",
            db,
            "--out",
            out.to_str().expect("utf-8"),
        ],
        Some(100_000),
    );
    assert_eq!(run.status, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("export.json") && run.stderr.contains("cannot write"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&out).expect("reads"),
        "the export from last week"
    );
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("lists")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // With room, it goes through whole.
    let run = run_capped(&[
        "export",
        "hostile",
        "--db",
        db,
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    assert!(std::fs::read_to_string(&out)
        .expect("reads")
        .contains("long long"));
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- terminal output ------------------------------------------------------------------------

#[test]
fn control_characters_from_files_are_escaped_in_text_output_and_reports() {
    let dir = folder("terminal");
    let title = "\u{1b}]0;pwned\u{7}";
    let clear = "\u{1b}[2J\u{1b}[H";
    let mut v: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_file("presets/multi-model.json")).expect("preset"),
    )
    .expect("json");
    v["name"] = json!(format!("Evil{title}"));
    v["id"] = json!("evil");
    let preset = write(&dir.join("evil.json"), v.to_string());
    let session = session_file(
        &dir,
        json!([{ "role": "user", "content": format!("hi{clear}there\u{202e}dlrow \u{9b}31m") }]),
    );
    let run = run_capped(&[
        "preview",
        "--preset",
        &preset,
        "--session",
        &session,
        "--model",
        "gpt-4o",
    ]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    for c in ['\u{1b}', '\u{7}', '\u{202e}', '\u{9b}'] {
        assert!(!run.stdout.contains(c), "{c:?} printed raw");
    }
    assert!(
        run.stdout.contains("Evil\\e]0;pwned\\x07"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("hi\\e[2J\\e[Hthere\\u{202e}"),
        "{}",
        run.stdout
    );
    // An import report names what it could not map, keys from the file included.
    let st = write(
        &dir.join("st.json"),
        json!({ "prompts": [], "prompt_order": [], format!("temp{title}"): 1 }).to_string(),
    );
    let db = dir.join("db.sqlite");
    let run = run_capped(&["import", &st, "--db", db.to_str().expect("utf-8")]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    assert!(
        !run.stdout.contains('\u{1b}') && run.stdout.contains("\\e]0;pwned"),
        "{}",
        run.stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
}
