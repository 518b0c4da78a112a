//! What a vocabulary costs in resident memory (docs/PERFORMANCE.md): run once per vocabulary,
//! each in a fresh process, on Linux (it reads /proc/self/status).
//!
//!     cargo run --release -p promptloom-tokens --example vocabulary_memory -- llama3
//!
//! Prints the process's resident memory before the vocabulary is loaded, after it is loaded,
//! and after counting a 64 KiB text with it, and how long the load (the first count) took.

use std::time::Instant;

use promptloom_tokens::TokenizerKind;

fn resident_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("RssAnon:"))
}

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "llama3".into());
    let Some(kind) = TokenizerKind::ALL.into_iter().find(|k| k.as_str() == name) else {
        eprintln!(
            "unknown vocabulary {name}; one of: {}",
            TokenizerKind::ALL.map(|k| k.as_str()).join(", ")
        );
        std::process::exit(2);
    };
    let text =
        "The lighthouse keeper counted the steps. 灯塔看守人数着台阶。 fn main() {}\n".repeat(800);
    let (rss0, anon0) = resident_kib();
    let started = Instant::now();
    let counter = kind.load().expect("the shipped vocabulary reads");
    let load = started.elapsed();
    let (rss1, anon1) = resident_kib();
    let n = counter.count(&text);
    let (rss2, anon2) = resident_kib();
    println!(
        "{name}: load {:.0} ms; resident +{} KiB (anonymous +{} KiB) loaded, +{} KiB (anonymous \
         +{} KiB) after counting {} bytes ({n} tokens)",
        load.as_secs_f64() * 1000.0,
        rss1 - rss0,
        anon1 - anon0,
        rss2 - rss0,
        anon2 - anon0,
        text.len()
    );
}
