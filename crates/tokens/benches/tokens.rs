//! Token counting throughput (RULES 5.8), on the same corpora in the same run, for o200k_base and
//! cl100k_base:
//!
//! - `engine`: `TokenizerKind::count`, bpe-openai with the engine's whole-token shortcut;
//! - `bpe-openai`: bpe-openai's own `Tokenizer::count`;
//! - `tiktoken-rs`: `CoreBPE::encode_ordinary(text).len()`, the baseline.
//!
//! And for each other family the engine ships (Llama 3, Qwen, Gemma 3, DeepSeek V3, Tekken), on
//! the same corpora in the same run, group `count_<family>`:
//!
//! - `engine`: `TokenizerKind::count`, the `tokenizers` crate's pipeline over the engine's
//!   compact byte-pair model;
//! - `hf-tokenizers`: the `tokenizers` crate's own model over the same file,
//!   `encode_fast(text).len()`;
//! - `bpe-openai-o200k`: o200k_base through bpe-openai, the baseline.
//!
//! Group `load` times reading each family's shipped vocabulary afresh: what the first count of
//! a family costs.
//!
//! The corpora are about 64 KiB each: English prose, Chinese prose, Rust code (this crate's own
//! sources) and text mixed with emoji. Neither counter caches, so repeating a passage to reach
//! the size costs what fresh text of the same kind would.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use promptloom_tokens::TokenizerKind;
use tiktoken_rs::CoreBPE;

const CORPUS_BYTES: usize = 64 * 1024;

const ENGLISH: &str =
    "The lighthouse keeper had not spoken to another person in eleven days when the \
boat came. It was a small thing, painted a green that had faded to the colour of pond water, and \
the man at the oars rowed like someone who had learned late in life. She watched him from the \
gallery, one hand on the rail, the other holding a mug of tea that had long gone cold. \"You're \
the new inspector,\" she said when he finally tied up at the jetty, and it was not a question. He \
laughed, a little out of breath, and admitted that he was, though he'd hoped to make a better \
first impression. They walked up the two hundred and twelve steps together. He asked about the \
lamp, the clockwork, the fog signal that had failed in March; she answered everything precisely \
and volunteered nothing. At the top he stood for a long minute looking at the sea, which was \
flat and silver under a white sky, and said that he understood now why people took the job. \
She doubted that, but she didn't say so. Instead she showed him the log book, where every \
entry since 1962 was written in the same blue ink, and the crack in the third pane from the \
left that let the wind whistle on stormy nights.\n\n";

const CHINESE: &str = "灯塔看守人已经十一天没有和任何人说过话了，直到那条船出现。那是一条小船，\
漆成的绿色早已褪成池水的颜色，划桨的男人动作生疏，像是年纪很大才学会划船。她站在回廊上看着他，\
一只手扶着栏杆，另一只手端着一杯早已凉透的茶。“你是新来的检查员吧，”他终于在码头系好缆绳时她说，\
语气里没有疑问。他有点喘，笑着承认了，说本来希望给人留下更好的第一印象。两人一起走上二百一十二级\
台阶。他问起灯、钟表机构，还有三月份出过故障的雾号；她一一准确作答，却从不多说一句。到了顶上，\
他望着大海站了很久——海面平静，在白色的天空下泛着银光——然后说，他现在明白为什么有人愿意做这份\
工作了。她心里并不这么认为，但没有说出口。她给他看了值班日志：自一九六二年以来的每一条记录都用\
同一种蓝墨水写成；又指给他看左边第三块玻璃上的裂缝，暴风雨的夜里风会从那里呼啸而过。\n\n";

const EMOJI: &str =
    "Good morning everyone! ☀️ Coffee is ready ☕☕ and the standup starts in 5 min 🏃‍♀️💨\n\
Shipped the new preview panel 🎉🚀 — thanks @mira for the review 🙏🏽 and @ash for the test plan ✅\n\
Weekend plans: hiking 🥾⛰️ with the family 👨‍👩‍👧‍👦, then pizza 🍕🍕🍕 if the weather holds 🌦️🤞\n\
Flags for the i18n demo: 🇨🇳 🇺🇸 🇩🇪 🇯🇵 🇧🇷 — café, naïve, jalapeño, Zürich, São Paulo 😅\n\
Reminder: the build is red 🔴 again… who touched the tokenizer?? 🤔😂 (it was me 🙈)\n\n";

/// This crate's own sources: real code, indentation, punctuation, long identifiers.
const CODE: &[&str] = &[
    include_str!("../src/compact_bpe/mod.rs"),
    include_str!("../src/compact_bpe/read.rs"),
    include_str!("../src/lib.rs"),
    include_str!("../src/pieces.rs"),
    include_str!("../src/hf.rs"),
    include_str!("../src/families.rs"),
];

/// Repeats `parts` until the text is at least `CORPUS_BYTES` long.
fn corpus(parts: &[&str]) -> String {
    let mut text = String::with_capacity(CORPUS_BYTES + 16 * 1024);
    while text.len() < CORPUS_BYTES {
        for part in parts {
            text.push_str(part);
        }
    }
    text
}

fn counting(c: &mut Criterion) {
    let corpora = [
        ("english", corpus(&[ENGLISH])),
        ("chinese", corpus(&[CHINESE])),
        ("code", corpus(CODE)),
        ("emoji_mixed", corpus(&[EMOJI])),
    ];
    let vocabularies: [(&str, TokenizerKind, &bpe_openai::Tokenizer, &CoreBPE); 2] = [
        (
            "o200k",
            TokenizerKind::O200kBase,
            bpe_openai::o200k_base(),
            tiktoken_rs::o200k_base_singleton(),
        ),
        (
            "cl100k",
            TokenizerKind::Cl100kBase,
            bpe_openai::cl100k_base(),
            tiktoken_rs::cl100k_base_singleton(),
        ),
    ];
    for (vocabulary, kind, bpe, tiktoken) in vocabularies {
        let mut group = c.benchmark_group(format!("count_{vocabulary}"));
        for (name, text) in &corpora {
            // All sides must agree, or the comparison means nothing.
            let reference = tiktoken.encode_ordinary(text).len();
            assert_eq!(kind.count(text), reference, "{vocabulary} engine on {name}");
            assert_eq!(
                bpe.count(text.as_str()),
                reference,
                "{vocabulary} bpe-openai on {name}"
            );
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::new("engine", name), text, |b, text| {
                b.iter(|| kind.count(black_box(text)));
            });
            group.bench_with_input(BenchmarkId::new("bpe-openai", name), text, |b, text| {
                b.iter(|| bpe.count(black_box(text.as_str())));
            });
            group.bench_with_input(BenchmarkId::new("tiktoken-rs", name), text, |b, text| {
                b.iter(|| tiktoken.encode_ordinary(black_box(text)).len());
            });
        }
        group.finish();
    }
}

fn families(c: &mut Criterion) {
    let corpora = [
        ("english", corpus(&[ENGLISH])),
        ("chinese", corpus(&[CHINESE])),
        ("code", corpus(CODE)),
        ("emoji_mixed", corpus(&[EMOJI])),
    ];
    let o200k = bpe_openai::o200k_base();
    for kind in FAMILY_KINDS {
        let json = kind.shipped_json().unwrap();
        let hf = tokenizers::Tokenizer::from_bytes(&json).unwrap();
        drop(json);
        let mut group = c.benchmark_group(format!("count_{}", kind.as_str()));
        for (name, text) in &corpora {
            let reference = hf.encode_fast(text.as_str(), false).unwrap().len();
            assert_eq!(kind.count(text), reference, "{kind:?} on {name}");
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::new("engine", name), text, |b, text| {
                b.iter(|| kind.count(black_box(text)));
            });
            group.bench_with_input(BenchmarkId::new("hf-tokenizers", name), text, |b, text| {
                b.iter(|| {
                    hf.encode_fast(black_box(text.as_str()), false)
                        .unwrap()
                        .len()
                });
            });
            group.bench_with_input(
                BenchmarkId::new("bpe-openai-o200k", name),
                text,
                |b, text| {
                    b.iter(|| o200k.count(black_box(text.as_str())));
                },
            );
        }
        group.finish();
    }
    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    for kind in FAMILY_KINDS {
        group.bench_function(kind.as_str(), |b| {
            b.iter(|| black_box(kind.read_afresh().unwrap()));
        });
    }
    group.finish();
}

const FAMILY_KINDS: [TokenizerKind; 5] = [
    TokenizerKind::Llama3,
    TokenizerKind::Qwen,
    TokenizerKind::Gemma3,
    TokenizerKind::DeepseekV3,
    TokenizerKind::Tekken,
];

criterion_group!(benches, counting, families);
criterion_main!(benches);
