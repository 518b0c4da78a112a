//! Crash safety (issue 4): a child process saves edits in a loop and is killed with SIGKILL at
//! random moments; the database then opens, passes SQLite's integrity check, and holds every
//! save the child reported as committed.
//!
//! The child is this same test binary, run again with `PROMPTLOOM_CRASH_CHILD` set to the
//! database path: the `child_writer` test then becomes the writer loop.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use promptloom_engine::model::parse_preset;
use promptloom_store::Store;

const CHILD: &str = "PROMPTLOOM_CRASH_CHILD";

fn preset_with_counter(n: u64) -> promptloom_engine::model::AgentPreset {
    let mut preset = parse_preset(
        r#"{ "formatVersion": 1, "id": "edited", "name": "Edited",
             "messageTemplates": [ { "id": "sys", "role": "system", "content": "v" } ],
             "contextRecipes": [ { "id": "r", "modelFilter": ["*"],
                                   "steps": [ { "messageId": "sys", "enabled": true } ] } ] }"#,
    )
    .expect("valid");
    preset.variables = Some([("counter".to_string(), n.to_string())].into());
    // Some bulk, so that a save spans several pages.
    preset.message_templates[0].content = Some(format!("version {n} {}", "text ".repeat(800)));
    preset
}

fn stored_counter(store: &Store) -> u64 {
    store
        .get_preset("edited")
        .ok()
        .and_then(|p| p.variables)
        .and_then(|v| v.get("counter").and_then(|c| c.parse().ok()))
        .unwrap_or(0)
}

/// The writer: saves edit after edit, printing each counter once its save has returned.
#[test]
fn child_writer() {
    let Ok(db) = std::env::var(CHILD) else {
        return; // an ordinary test run: nothing to do here
    };
    let store = Store::open(Path::new(&db)).expect("the child opens the database");
    let mut n = stored_counter(&store);
    let stdout = std::io::stdout();
    loop {
        n += 1;
        store.save_preset(&preset_with_counter(n)).expect("saves");
        store
            .set_setting("last", &n.to_string())
            .expect("saves a setting");
        use std::io::Write;
        let mut out = stdout.lock();
        let _ = writeln!(out, "committed {n}");
        let _ = out.flush();
    }
}

/// A small deterministic generator for the kill delays (no `rand` needed).
fn delays(seed: u64) -> impl Iterator<Item = u64> {
    let mut x = seed | 1;
    std::iter::from_fn(move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        Some(20 + x % 180)
    })
}

#[test]
fn killed_writers_never_lose_a_committed_save() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("promptloom-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let db = dir.join("crash.db");
    drop(Store::open(&db).expect("creates"));
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(7);
    println!("kill delays seeded with {seed}");
    let started = Instant::now();
    let mut rounds_with_saves = 0;
    for (round, delay) in delays(seed).take(10).enumerate() {
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "child_writer",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD, &db)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the child starts");
        let mut stdout = child.stdout.take().expect("piped");
        // Wait until the child has committed at least once, then kill it a moment later.
        let mut reader = BufReader::new(&mut stdout);
        let mut first = String::new();
        while !first.starts_with("committed") {
            first.clear();
            if reader.read_line(&mut first).unwrap_or(0) == 0 {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(delay));
        child.kill().expect("SIGKILL");
        let _ = child.wait();
        let mut rest = String::new();
        let _ = reader.read_to_string(&mut rest);
        let last_reported = first
            .lines()
            .chain(rest.lines())
            .filter_map(|l| l.strip_prefix("committed "))
            .filter_map(|n| n.trim().parse::<u64>().ok())
            .max()
            .unwrap_or(0);

        let store =
            Store::open(&db).unwrap_or_else(|e| panic!("round {round}: reopen failed: {e}"));
        let check = store.integrity_check().expect("integrity check runs");
        assert_eq!(check, "ok", "round {round}");
        let stored = stored_counter(&store);
        assert!(
            stored >= last_reported,
            "round {round}: the child reported save {last_reported} committed, the database holds {stored}"
        );
        if last_reported > 0 {
            rounds_with_saves += 1;
        }
        println!(
            "round {round}: killed after {delay} ms; reported {last_reported}, stored {stored}"
        );
    }
    assert!(rounds_with_saves >= 5, "the child saved in too few rounds");
    println!("{} rounds in {:?}", 10, started.elapsed());
    let _ = std::fs::remove_dir_all(&dir);
}
