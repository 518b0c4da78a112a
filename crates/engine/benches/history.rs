//! The per-role indices of the history (RULES 5.3): `recent_by_role` and `count_by_role` cost the
//! same whatever the history's length, while the scan they replace grows with it. Baseline in the
//! same run: a filter over the whole history.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use promptloom_engine::model::Role;
use promptloom_engine::pipeline::{History, PipelineMessage, Source};
use std::hint::black_box;

fn history(n: usize) -> History<'static> {
    let mut h = History::with_capacity(n);
    for i in 0..n {
        let role = match i % 7 {
            0 => Role::System,
            1 | 3 | 5 => Role::User,
            _ => Role::Assistant,
        };
        h.push(PipelineMessage::new(
            role,
            "message text",
            Source::history(i),
        ));
    }
    h
}

fn recent_by_role(c: &mut Criterion) {
    let mut group = c.benchmark_group("history/recent_by_role(user, 5)");
    for n in [100usize, 1_000, 10_000, 100_000] {
        let h = history(n);
        group.bench_with_input(BenchmarkId::new("indexed", n), &h, |b, h| {
            b.iter(|| {
                let positions = black_box(h).recent_by_role(Role::User, 5);
                black_box(positions.len() + h.count_by_role(Role::User))
            })
        });
        group.bench_with_input(BenchmarkId::new("scan (baseline)", n), &h, |b, h| {
            b.iter(|| {
                let users: Vec<usize> = black_box(h)
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| m.role == Role::User)
                    .map(|(i, _)| i)
                    .collect();
                black_box(users[users.len().saturating_sub(5)..].len() + users.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, recent_by_role);
criterion_main!(benches);
