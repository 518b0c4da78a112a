//! RULES 5.8: the shipped vocabularies count as their reference implementations do, a prompt's
//! independent pieces add up to the whole in every family, and a user's own tokenizer.json
//! counts exactly or, when it cannot be read, gives a clear error while the estimate stays.

use std::path::Path;

use promptloom_tokens::{
    independent_pieces, own_tokenizer, TokenizerKind, Vocabulary, MAX_TOKENIZER_BYTES,
};

/// Every shipped vocabulary.
const FAMILIES: [TokenizerKind; 7] = TokenizerKind::ALL;

fn data(name: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tokenizers")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn corpus() -> Vec<(String, String)> {
    data("corpus.json")["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

// The reference counts were made by Hugging Face's `tokenizers` (Python) over the same files,
// and for Tekken also by Mistral's own mistral-common (scripts/reference-token-counts).
#[test]
fn every_family_counts_the_multilingual_corpus_as_its_reference_does() {
    let reference = data("reference_counts.json");
    let corpus = corpus();
    for kind in &FAMILIES[2..] {
        let kind = *kind;
        let counts = &reference["counts"][kind.as_str()];
        for (name, text) in &corpus {
            let expected = counts[name]
                .as_u64()
                .unwrap_or_else(|| panic!("{kind:?} {name}"));
            assert_eq!(
                kind.count(text) as u64,
                expected,
                "{} on {name}",
                kind.as_str()
            );
        }
    }
    let mistral = reference["counts"]["tekken_mistral_common"]
        .as_object()
        .unwrap();
    assert!(mistral.len() >= 10);
    for (name, expected) in mistral {
        let text = &corpus.iter().find(|(n, _)| n == name).unwrap().1;
        assert_eq!(
            TokenizerKind::Tekken.count(text) as u64,
            expected.as_u64().unwrap(),
            "tekken against mistral-common on {name}"
        );
    }
}

// OpenAI's, against tiktoken itself.
#[test]
fn openai_vocabularies_count_the_corpus_as_tiktoken_does() {
    let o200k = tiktoken_rs::o200k_base_singleton();
    let cl100k = tiktoken_rs::cl100k_base_singleton();
    for (name, text) in corpus() {
        assert_eq!(
            TokenizerKind::O200kBase.count(&text),
            o200k.encode_ordinary(&text).len(),
            "o200k on {name}"
        );
        assert_eq!(
            TokenizerKind::Cl100kBase.count(&text),
            cl100k.encode_ordinary(&text).len(),
            "cl100k on {name}"
        );
    }
}

#[test]
fn special_token_strings_count_as_one_token_in_their_family() {
    assert_eq!(TokenizerKind::Qwen.count("<|im_start|>"), 1);
    assert_eq!(TokenizerKind::Llama3.count("<|start_header_id|>"), 1);
    assert_eq!(TokenizerKind::Gemma3.count("<start_of_turn>"), 1);
    assert_eq!(TokenizerKind::Tekken.count("[INST]"), 1);
    assert_eq!(TokenizerKind::DeepseekV3.count("<｜User｜>"), 1);
    // In OpenAI's vocabularies they are text.
    assert!(TokenizerKind::O200kBase.count("<|im_start|>") > 1);
}

#[test]
fn cuts_fall_on_token_boundaries_and_fit_in_every_family() {
    for kind in FAMILIES {
        for (name, text) in corpus() {
            for max in [1usize, 5, 17] {
                let head = kind.keep_first_tokens(&text, max);
                assert!(text.starts_with(&head), "{kind:?} {name}");
                assert!(kind.count(&head) <= max, "{kind:?} {name} head {max}");
                let tail = kind.keep_last_tokens(&text, max);
                assert!(text.ends_with(&tail), "{kind:?} {name}");
                assert!(kind.count(&tail) <= max, "{kind:?} {name} tail {max}");
            }
            assert_eq!(kind.keep_first_tokens(&text, 100_000), text);
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(60))]
    // What lets a text-completion prompt be counted line by line through the cache holds for
    // every shipped family: no token and no pre-tokenizer piece runs past a line break into a
    // character that is neither white space nor `/`.
    #[test]
    fn counting_independent_pieces_is_counting_the_whole_in_every_family(
        parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "\n", "\r\n", "\r", " ", "  ", "\t", "/", "//", "\u{3000}", "\u{a0}",
                "<|im_start|>", "<|im_end|>", "[INST]", "<start_of_turn>", "user", "Hello",
                "'s", "it's", "42", "1234", "灯塔", "。", "!", "...", "é", "😀", "\n\n", "\n/",
                "\n ", "▁", "Ċ",
            ]),
            0..30,
        )
    ) {
        let text: String = parts.concat();
        for kind in FAMILIES {
            let pieces: usize = independent_pieces(&text).map(|p| kind.count(p)).sum();
            proptest::prop_assert_eq!(pieces, kind.count(&text), "{:?} in {:?}", kind, text);
        }
    }
}

/// A small byte-pair tokenizer.json of the user's own: letters, two merges, a special token.
const TINY: &str = r#"{
  "version": "1.0",
  "added_tokens": [{"id": 6, "content": "<eot>", "special": true, "normalized": false}],
  "normalizer": null,
  "pre_tokenizer": {"type": "Whitespace"},
  "model": {
    "type": "BPE",
    "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "<unk>": 5, "<eot>": 6},
    "merges": ["a b", ["ab", "c"]],
    "unk_token": "<unk>"
  }
}"#;

#[test]
fn a_tokenizer_file_of_the_users_own_counts_exactly() {
    let dir = tempdir();
    let file = dir.join("tokenizer.json");
    std::fs::write(&file, TINY).unwrap();
    let choice = own_tokenizer(&file).unwrap();
    assert!(choice.exact);
    assert_eq!(choice.label(), "tokenizer.json");
    let v = choice.vocabulary;
    assert!(matches!(v, Vocabulary::Own(_)));
    // "abc" is one token by two merges, "abab" two, "cab" two ("c", "ab"), an unknown letter
    // the unknown token, the special token one.
    assert_eq!(v.count("abc"), 1);
    assert_eq!(v.count("abab"), 2);
    assert_eq!(v.count("cab"), 2);
    assert_eq!(v.count("abc x abc<eot>"), 4);
    // Asked again, the same file is not read again: the same vocabulary comes back.
    assert_eq!(own_tokenizer(&file).unwrap().vocabulary, v);
}

#[test]
fn a_tokenizer_file_that_cannot_be_used_is_an_error_naming_it() {
    let dir = tempdir();
    let cases: [(&str, &[u8], &str); 6] = [
        ("garbage.json", b"\x00\x01 not json", "not a tokenizer.json"),
        ("object.json", br#"{"hello": "world"}"#, "no \"model\""),
        (
            "unigram.json",
            br#"{"model": {"type": "Unigram", "vocab": [["a", 0.0]]}}"#,
            "Unigram",
        ),
        (
            "dangling.json",
            br#"{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}"#,
            "not in the vocabulary",
        ),
        (
            "huge-id.json",
            br#"{"model": {"type": "BPE", "vocab": {"a": 4294967295}, "merges": []}}"#,
            "past the 4000000",
        ),
        (
            "wordpiece.json",
            br###"{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "continuing_subword_prefix": "##"}}"###,
            "not supported",
        ),
    ];
    for (name, bytes, problem) in cases {
        let file = dir.join(name);
        std::fs::write(&file, bytes).unwrap();
        let err = own_tokenizer(&file).unwrap_err().to_string();
        assert!(err.contains(name), "{err}");
        assert!(err.contains(problem), "{name}: {err}");
    }
    // Not a file at all: refused before anything is read (a device could be read forever).
    for special in [Path::new("/dev/zero"), dir.as_path()] {
        if special.exists() {
            let err = own_tokenizer(special).unwrap_err().to_string();
            assert!(err.contains("not a regular file"), "{err}");
        }
    }
    // A bad file asked for again is not read again: the same error comes back, and once it is
    // mended it is read.
    let mended = dir.join("mended.json");
    std::fs::write(&mended, "[]").unwrap();
    let first = own_tokenizer(&mended).unwrap_err();
    assert_eq!(own_tokenizer(&mended).unwrap_err(), first);
    std::fs::write(&mended, TINY).unwrap();
    assert!(own_tokenizer(&mended).unwrap().exact);
    let missing = dir.join("missing.json");
    let err = own_tokenizer(&missing).unwrap_err().to_string();
    assert!(
        err.contains("missing.json") && err.contains("cannot be read"),
        "{err}"
    );
}

// A file past the cap is refused from its size, before a byte of it is read.
#[test]
fn a_tokenizer_file_past_the_size_cap_is_refused_unread() {
    let dir = tempdir();
    let file = dir.join("too-big.json");
    let f = std::fs::File::create(&file).unwrap();
    f.set_len(MAX_TOKENIZER_BYTES as u64 + 1).unwrap();
    let err = own_tokenizer(&file).unwrap_err().to_string();
    assert!(
        err.contains("too-big.json") && err.contains("more than"),
        "{err}"
    );
}

fn tempdir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "promptloom-tokenizers-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
