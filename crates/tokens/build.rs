//! The engine embeds the tokenizer vocabularies that `scripts/vocabularies` fetches into
//! `vocab/` (vocab/SOURCES.md); without them it cannot build, and says what to run.

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("vocab");
    let names = [
        "o200k_base",
        "cl100k_base",
        "llama3",
        "qwen",
        "gemma3",
        "deepseek_v3",
        "tekken",
    ];
    let missing: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !dir.join(format!("{n}.json.gz")).is_file())
        .collect();
    if !missing.is_empty() {
        panic!(
            "the tokenizer vocabularies {} are missing from {}: run scripts/vocabularies \
             (./dev run and ./dev test do)",
            missing.join(", "),
            dir.display()
        );
    }
    for n in names {
        println!("cargo:rerun-if-changed=vocab/{n}.json.gz");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
