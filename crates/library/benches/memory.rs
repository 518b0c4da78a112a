//! Long-term memory benchmarks (RULES 5.15; docs/PERFORMANCE.md, "Memory search"):
//!
//! - `memory_search/N×D`: one search (top 4) over N stored vectors of D numbers, a plain scan of
//!   the index kept in memory.
//! - `memory_load/N×D`: reading those vectors from SQLite into that index (once per session, and
//!   again after indexing changed them).
//! - `build_memory/{without,with_hits,search_and_build/D}`: a build over a 1,000-message session
//!   without memory; with the 4 hits of a search; and the search over 100,000 vectors of D
//!   numbers followed by that build. `search_and_build` less `without` is what memory adds
//!   beyond the embedding request.

use std::hint::black_box;

use chrono::DateTime;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::{parse_preset, ChatMessage, Role, Session};
use promptloom_engine::{build, BuildOptions, BuildRequest};
use promptloom_library::memory::{MemoryIndex, MemorySettings};
use promptloom_store::memory::VectorRow;
use promptloom_store::Store;

const N: usize = 100_000;

/// Deterministic numbers in -1..1 (a linear congruential generator).
fn numbers(seed: u64, n: usize) -> Vec<f32> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn index(n: usize, dim: usize) -> MemoryIndex {
    let vectors: Vec<Vec<f32>> = (0..n).map(|i| numbers(i as u64, dim)).collect();
    MemoryIndex::from_vectors("bench", (0..n as u32).collect(), &vectors)
}

fn searches(c: &mut Criterion) {
    let mut group = c.benchmark_group("memory_search");
    group.sample_size(20);
    for dim in [384, 768] {
        let index = index(N, dim);
        let mut query = numbers(u64::MAX, dim);
        let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        query.iter_mut().for_each(|x| *x /= norm);
        group.bench_function(BenchmarkId::from_parameter(format!("{N}x{dim}")), |b| {
            b.iter(|| black_box(index.search(&query, 4, 0.0, |_| false).unwrap()))
        });
    }
    group.finish();
}

fn loads(c: &mut Criterion) {
    let dim = 384;
    let dir = std::env::temp_dir().join(format!("promptloom-bench-memory-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let store = Store::open(&dir.join("m.db")).unwrap();
    let mut session = Session::empty("s");
    session.messages.push(ChatMessage::new(Role::User, "x"));
    store.save_session(&session).unwrap();
    store
        .memory_begin("s", "bench", dim as u32, "local")
        .unwrap();
    let keys: Vec<String> = (0..N).map(|i| format!("#{i}")).collect();
    let vectors: Vec<Vec<f32>> = (0..N).map(|i| numbers(i as u64, dim)).collect();
    for chunk in (0..N).collect::<Vec<_>>().chunks(5_000) {
        let rows: Vec<VectorRow<'_>> = chunk
            .iter()
            .map(|&i| VectorRow {
                message_key: &keys[i],
                position: i as u32,
                content_hash: i as u64,
                vector: &vectors[i],
            })
            .collect();
        store.memory_write("s", "bench", &rows, &[]).unwrap();
    }
    let mut group = c.benchmark_group("memory_load");
    group.sample_size(10);
    group.bench_function(BenchmarkId::from_parameter(format!("{N}x{dim}")), |b| {
        b.iter(|| black_box(MemoryIndex::load(&store, "s").unwrap()))
    });
    group.finish();
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

fn builds(c: &mut Criterion) {
    let preset = parse_preset(
        r#"{"formatVersion":1,"id":"p","name":"P","messageTemplates":[
            {"id":"main","role":"system","content":"You are a helpful guide. Summary: {{summary}}"},
            {"id":"hist","role":"system","type":"chat_history"}],
            "contextRecipes":[{"id":"r","modelFilter":["*"],"steps":[
            {"messageId":"main","enabled":true},{"messageId":"hist","enabled":true}]}]}"#,
    )
    .unwrap();
    let mut session = Session::empty("s");
    for i in 0..1_000 {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        session.messages.push(ChatMessage::new(
            role,
            &format!("Message {i}: the road north passes the mill, the river and the old lighthouse on the cliff."),
        ));
    }
    let timestamp = DateTime::parse_from_rfc3339("2026-03-01T18:30:00+00:00").unwrap();
    let options = BuildOptions::at(timestamp);
    let settings = MemorySettings {
        threshold: -1.0,
        ..MemorySettings::default()
    };
    let run = |options: &BuildOptions| {
        let cache = BuildCache::new();
        let r = build(&BuildRequest {
            assets: &promptloom_engine::assets::InlineAssets,
            preset: &preset,
            session: &session,
            kept_rewrites: None,
            model: "gpt-4o",
            options,
            cache: &cache,
            profiles: &[],
        })
        .unwrap();
        black_box(r.messages.len())
    };
    let mut group = c.benchmark_group("build_memory");
    group.sample_size(20);
    group.bench_function("without", |b| b.iter(|| run(&options)));
    // The hits are made from the rows found (what `hits_for` does, without its check that a
    // message's text is still the one embedded: the bench's rows stand for other sessions).
    let hits_of =
        |index: &MemoryIndex, found: &[(usize, f32)]| -> Vec<promptloom_engine::MemoryHit> {
            found
                .iter()
                .map(|&(row, score)| {
                    let m = &session.messages[index.positions[row] as usize];
                    promptloom_engine::MemoryHit {
                        role: m.role,
                        text: m.content.to_string(),
                        score,
                        index: Some(index.positions[row]),
                        message_id: None,
                    }
                })
                .collect()
        };
    for dim in [384, 768] {
        // The stored index: 100,000 vectors, the first 1,000 of this session's messages.
        let mut index = index(N, dim);
        index.positions = (0..N as u32).map(|i| i % 1_000).collect();
        let mut query = numbers(u64::MAX, dim);
        let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        query.iter_mut().for_each(|x| *x /= norm);
        // The search, and the build options with its hits.
        let searched = || {
            let found = index
                .search(&query, settings.top_k, settings.threshold, |_| false)
                .unwrap();
            BuildOptions {
                memory: hits_of(&index, &found),
                ..options.clone()
            }
        };
        if dim == 384 {
            let with = searched();
            group.bench_function("with_hits", |b| b.iter(|| run(&with)));
        }
        group.bench_function(BenchmarkId::new("search_and_build", dim), |b| {
            b.iter(|| run(&searched()))
        });
    }
    group.finish();
}

criterion_group!(benches, searches, loads, builds);
criterion_main!(benches);
