//! The macros' tests: each rule of RULES 4 and its caps, and properties over macro soup.

use std::collections::{BTreeMap, HashSet};

use proptest::prelude::*;

use super::variables::add_values;
use super::*;
use crate::limits::{
    MACRO_BUILD_BYTES, MACRO_EXPANSION_BYTES, MACRO_NAME_BYTES, MACRO_VARIABLE_BYTES,
    MACRO_VARIABLE_NAME_BYTES,
};

fn env() -> MacroEnv<'static> {
    MacroEnv {
        user: "Alice",
        char_name: "Bob",
        description: "{{char}} is a wizard who knows {{user}}.",
        personality: "dry",
        scenario: "a tower",
        persona: "a traveller",
        mes_examples: "<START>",
        wi_before: "",
        wi_after: "",
        summary: "they met",
        model: "gpt-4o",
        last_message: "bye {{user}}",
        last_user_message: "hi",
        last_char_message: "bye {{user}}",
        last_message_id: Some(3),
        first_included_message_id: Some(1),
        idle_since: None,
        legacy_names: false,
        timestamp: DateTime::parse_from_rfc3339("2026-11-22T15:04:05+01:00").unwrap(),
        session_id: "session-1",
        message_count: 4,
    }
}

fn run_in(env: &MacroEnv<'_>, text: &str) -> Expansion {
    let mut state = MacroState::new(env, BTreeMap::new());
    expand(text, env, &mut state, "test")
}

fn run(text: &str) -> Expansion {
    run_in(&env(), text)
}

fn text(text: &str) -> String {
    let out = run(text);
    assert!(out.warnings.is_empty(), "{text}: {:?}", out.warnings);
    out.text
}

#[test]
fn value_macros_read_the_environment() {
    assert_eq!(
        text("{{user}}|{{char}}|{{personality}}|{{scenario}}|{{persona}}|{{mesExamples}}|{{summary}}|{{model}}"),
        "Alice|Bob|dry|a tower|a traveller|<START>|they met|gpt-4o"
    );
    assert_eq!(text("{{lastUserMessage}}"), "hi");
}

#[test]
fn character_fields_expand_their_own_macros() {
    assert_eq!(text("{{description}}"), "Bob is a wizard who knows Alice.");
}

#[test]
fn chat_messages_are_not_expanded_again() {
    assert_eq!(
        text("{{lastMessage}}/{{lastCharMessage}}"),
        "bye {{user}}/bye {{user}}"
    );
}

#[test]
fn a_value_that_names_itself_stops_with_a_warning() {
    let env = MacroEnv {
        description: "x{{description}}{{description}}",
        ..env()
    };
    let out = run_in(&env, "{{description}}");
    assert!(out.text.starts_with("xxxx"));
    assert!(out.text.contains("{{description}}"));
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
}

#[test]
fn time_macros_read_the_build_timestamp() {
    assert_eq!(
        text("{{time}}|{{date}}|{{weekday}}|{{isodate}}|{{isotime}}"),
        "3:04 PM|November 22, 2026|Sunday|2026-11-22|15:04"
    );
    let env = MacroEnv {
        timestamp: DateTime::parse_from_rfc3339("2027-01-04T00:07:00-05:00").unwrap(),
        ..env()
    };
    assert_eq!(
        run_in(
            &env,
            "{{time}}|{{date}}|{{weekday}}|{{isodate}}|{{isotime}}"
        )
        .text,
        "12:07 AM|January 4, 2027|Monday|2027-01-04|00:07"
    );
}

#[test]
fn newline_is_a_line_break() {
    assert_eq!(text("a{{newline}}b{{NEWLINE}}"), "a\nb\n");
}

/// SillyTavern's macros.js replaces `(?:\r?\n)*{{trim}}(?:\r?\n)*` with nothing: the line
/// breaks around it go, spaces stay.
#[test]
fn trim_removes_itself_and_the_line_breaks_around_it_not_spaces() {
    assert_eq!(text("a\n\n{{trim}}\n\nb"), "ab");
    assert_eq!(text("a\r\n{{trim}}\r\nb"), "ab");
    assert_eq!(text("a\n\n  {{trim}}\n\n  b"), "a\n\n    b");
    assert_eq!(text("{{trim}}\n\nstart"), "start");
    assert_eq!(text("end \n{{trim}}"), "end ");
    // Line breaks a macro writes next to it go too.
    assert_eq!(text("a\n{{trim}}{{newline}} {{user}}"), "a Alice");
    // Within an argument it trims the argument only.
    assert_eq!(
        text("{{setvar::x::  a\n{{trim}}\nb}}[{{getvar::x}}]"),
        "[  ab]"
    );
}

/// SillyTavern 1.12.6 replaces `{{trim}}` after dice, instruct, variable macros and
/// `{{newline}}` and before every other macro, comments too: those are still written as macros
/// when it takes its line breaks, so it takes none across them or from their text.
#[test]
fn trim_takes_no_line_break_across_a_macro_sillytavern_replaces_after_it() {
    // A real preset's prompt: a comment, then `{{trim}}`: the line break before the comment stays.
    assert_eq!(text("end.\n{{// note }}{{trim}}\n<x>"), "end.\n<x>");
    assert_eq!(text("a{{trim}}{{// note }}\nb"), "a\nb");
    // Before a value it takes the line breaks between them, not the value's own.
    assert_eq!(text("{{user}}\n{{trim}}!"), "Alice!");
    // Variable macros are replaced before it, as in SillyTavern: their line breaks go.
    assert_eq!(text("a\n{{setvar::x::1}}{{trim}}\nb"), "ab");
}

#[test]
fn comments_are_removed_and_not_evaluated() {
    assert_eq!(text("a{{// note: keep it short, {{user}} }}b"), "ab");
    assert_eq!(text("a{{ // spaced }}b"), "ab");
    let env = env();
    let mut state = MacroState::new(&env, BTreeMap::new());
    let out = expand("{{//{{setvar::x::1}}}}{{getvar::x}}", &env, &mut state, "p");
    assert_eq!(out.text, "");
    assert!(state.variables().is_empty());
    // An unclosed comment stays as written.
    assert_eq!(run("a {{// {{user}}").text, "a {{// {{user}}");
}

#[test]
fn random_chooses_among_its_arguments() {
    for t in [
        "{{random::a::b::c}}",
        "{{random:a,b,c}}",
        "{{random: a , b,c }}",
        "{{RANDOM::a::b::c}}",
    ] {
        let out = text(t);
        assert!(["a", "b", "c"].contains(&out.as_str()), "{t} gave {out:?}");
    }
    assert_eq!(text("{{random::only}}"), "only");
    assert_eq!(text("{{random:a\\,b}}"), "a,b");
    assert_eq!(text("{{random::  kept  }}"), "  kept  ");
    let out = run("{{random}}");
    assert_eq!(out.text, "{{random}}");
    assert_eq!(out.warnings.len(), 1);
}

#[test]
fn random_choices_are_deterministic_per_session() {
    let t = "{{random::a::b::c::d}}{{random::a::b::c::d}}{{roll::d100}}";
    assert_eq!(run(t).text, run(t).text);
    let ids: Vec<String> = (0..64).map(|i| format!("session-{i}")).collect();
    let outcomes: HashSet<String> = ids
        .iter()
        .map(|id| {
            run_in(
                &MacroEnv {
                    session_id: id,
                    ..env()
                },
                t,
            )
            .text
        })
        .collect();
    assert!(outcomes.len() > 8, "{outcomes:?}");
    let counts: HashSet<String> = (0..64)
        .map(|n| {
            run_in(
                &MacroEnv {
                    message_count: n,
                    ..env()
                },
                t,
            )
            .text
        })
        .collect();
    assert!(counts.len() > 8, "{counts:?}");
}

#[test]
fn random_draws_continue_across_calls_in_one_build() {
    let env = env();
    let mut state = MacroState::new(&env, BTreeMap::new());
    let draws: HashSet<String> = (0..32)
        .map(|_| expand("{{roll::1d1000000}}", &env, &mut state, "p").text)
        .collect();
    assert!(draws.len() > 1);
}

#[test]
fn pick_is_stable_per_session_and_position() {
    let base = env();
    let pick = "{{pick::a::b::c::d::e::f}}";
    let picked = |text: &str, position: &str| {
        let mut state = MacroState::new(&base, BTreeMap::new());
        expand(text, &base, &mut state, position).text
    };
    let alone = picked(pick, "template:x#1");
    // Edits around it, even ones that draw random numbers, do not change it.
    let edited = picked(
        &format!("{{{{random::1::2}}}} intro {{{{roll::3d6}}}}{pick}"),
        "template:x#1",
    );
    assert!(edited.ends_with(&alone), "{edited} vs {alone}");
    // The second pick in a position is its own choice, stable too.
    assert_eq!(
        picked(&format!("{pick}{pick}"), "p"),
        picked(&format!("{pick}|{pick}"), "p").replace('|', "")
    );
    let positions: HashSet<String> = (0..32)
        .map(|i| picked(pick, &format!("template:x#{i}")))
        .collect();
    assert!(positions.len() > 1);
    let sessions: HashSet<String> = (0..32)
        .map(|i| {
            let id = format!("s{i}");
            run_in(
                &MacroEnv {
                    session_id: &id,
                    ..env()
                },
                pick,
            )
            .text
        })
        .collect();
    assert!(sessions.len() > 1);
    assert!(["a", "b", "c"].contains(&text("{{pick:a, b, c}}").as_str()));
}

#[test]
fn roll_throws_dice() {
    for i in 0..50 {
        let id = format!("s{i}");
        let env = MacroEnv {
            session_id: &id,
            ..env()
        };
        let two = run_in(&env, "{{roll::2d6}}").text.parse::<i64>().unwrap();
        assert!((2..=12).contains(&two));
        for t in ["{{roll:d20}}", "{{roll:20}}", "{{roll::1D20}}"] {
            let n = run_in(&env, t).text.parse::<i64>().unwrap();
            assert!((1..=20).contains(&n), "{t} gave {n}");
        }
    }
    assert_eq!(text("{{roll::1d1+2}}"), "3");
    assert_eq!(text("{{roll::3d1-5}}"), "-2");
    for bad in [
        "{{roll::0d6}}",
        "{{roll::d0}}",
        "{{roll::2d}}",
        "{{roll::abc}}",
        "{{roll::99999d6}}",
    ] {
        let out = run(bad);
        assert_eq!(out.text, bad);
        assert_eq!(out.warnings.len(), 1, "{bad}");
    }
}

#[test]
fn variables_get_set_and_add() {
    assert_eq!(text("{{setvar::x::hello}}{{getvar::x}}"), "hello");
    assert_eq!(text("[{{getvar::missing}}]"), "[]");
    assert_eq!(text("{{setvar::n::2}}{{addvar::n::3}}{{getvar::n}}"), "5");
    assert_eq!(text("{{addvar::n::-4}}{{getvar::n}}"), "-4");
    assert_eq!(
        text("{{setvar::n::1.5}}{{addvar::n::2}}{{getvar::n}}"),
        "3.5"
    );
    assert_eq!(
        text("{{setvar::s::ab}}{{addvar::s::cd}}{{getvar::s}}"),
        "abcd"
    );
    assert_eq!(text("{{setvar::s::1}}{{addvar::s::x}}{{getvar::s}}"), "1x");
    assert_eq!(
        text("{{setvar::s::inf}}{{addvar::s::1}}{{getvar::s}}"),
        "inf1"
    );
    assert_eq!(text("{{setvar::u::a::b}}{{getvar::u}}"), "a::b");
    assert_eq!(
        add_values(&i64::MAX.to_string(), "1"),
        (i64::MAX as f64 + 1.0).to_string()
    );
}

#[test]
fn variables_carry_across_calls_and_start_from_the_preset() {
    let env = env();
    let initial = BTreeMap::from([
        ("mood".to_string(), "calm".to_string()),
        ("n".to_string(), "1".to_string()),
    ]);
    let mut state = MacroState::new(&env, initial);
    assert_eq!(
        expand("{{getvar::mood}}", &env, &mut state, "a").text,
        "calm"
    );
    assert_eq!(
        expand(
            "{{setvar::mood::{{user}} is tense}}{{addvar::n::1}}",
            &env,
            &mut state,
            "b"
        )
        .text,
        ""
    );
    assert_eq!(
        expand("{{getvar::mood}}/{{getvar::n}}", &env, &mut state, "c").text,
        "Alice is tense/2"
    );
    assert_eq!(state.variables()["mood"], "Alice is tense");
}

#[test]
fn a_variable_holding_macros_expands_them() {
    let env = env();
    let initial = BTreeMap::from([("greeting".to_string(), "hello {{user}}".to_string())]);
    let mut state = MacroState::new(&env, initial);
    assert_eq!(
        expand("{{getvar::greeting}}", &env, &mut state, "a").text,
        "hello Alice"
    );
}

#[test]
fn names_are_case_insensitive_and_arguments_are_not() {
    assert_eq!(
        text("{{USER}} {{Char}} {{MesExamples}} {{IsoDate}}"),
        "Alice Bob <START> 2026-11-22"
    );
    assert_eq!(
        text("{{SetVar::X::Up}}{{GetVar::X}}[{{getvar::x}}]"),
        "Up[]"
    );
    assert_eq!(text("{{Random::Aa}}"), "Aa");
}

#[test]
fn an_unknown_macro_stays_as_written_with_a_warning() {
    let out = run("a {{foo}} b {{Foo::{{user}}}} {{user::x}}");
    // Macros in its arguments are expanded; the warning shows the source.
    assert_eq!(out.text, "a {{foo}} b {{Foo::Alice}} {{user::x}}");
    assert_eq!(out.warnings.len(), 3, "{:?}", out.warnings);
    assert!(out.warnings[0].to_string().contains("{{foo}}"));
    assert!(out.warnings[1].to_string().contains("{{Foo::{{user}}}}"));
    // The same unknown macro twice is reported once.
    assert_eq!(run("{{foo}}{{foo}}").warnings.len(), 1);
}

#[test]
fn macros_in_arguments_expand_first() {
    assert_eq!(text("{{setvar::x::{{user}}}}{{getvar::x}}"), "Alice");
    assert_eq!(text("{{random::{{char}}}}"), "Bob");
    let out = text("{{random::{{char}}::{{char}}}}");
    assert_eq!(out, "Bob");
    assert_eq!(
        text(
            "{{setvar::who::char}}{{setvar::name::{{getvar::{{getvar::who}}x}}}}[{{getvar::name}}]"
        ),
        "[]"
    );
    assert_eq!(
        text("{{setvar::charx::deep}}{{setvar::who::char}}{{getvar::{{getvar::who}}x}}"),
        "deep"
    );
}

#[test]
fn unbalanced_braces_stay_as_written() {
    assert_eq!(text("{{user"), "{{user");
    assert_eq!(text("user}}"), "user}}");
    assert_eq!(text("}}{{"), "}}{{");
    assert_eq!(text("{{ hello {{user}}"), "{{ hello Alice");
    assert_eq!(text("{{{user}}}"), "{Alice}");
    assert_eq!(text("{{{{user}}}}"), "{{Alice}}");
    assert_eq!(text("{user} {{user}"), "{user} {{user}");
    assert_eq!(text("{{user}}}}"), "Alice}}");
}

#[test]
fn text_without_macros_is_returned_as_is() {
    let out = run("plain {text} with } and { but no macro");
    assert_eq!(out.text, "plain {text} with } and { but no macro");
    assert!(out.warnings.is_empty());
}

#[test]
fn many_macros_stop_at_the_limit() {
    let text = "{{user}}".repeat(MAX_EVALUATIONS + 5);
    let out = run(&text);
    assert!(out.text.starts_with("AliceAlice"));
    assert!(out.text.ends_with(&"{{user}}".repeat(5)));
    assert_eq!(out.warnings.len(), 1);
}

#[test]
fn deep_nesting_does_not_overflow() {
    let deep = format!("{}{}", "{{random::".repeat(5_000), "}}".repeat(5_000));
    assert_eq!(text(&deep), "");
    // Past the evaluation limit the outer ones stay as written, in linear time.
    let deeper = format!("{}{}", "{{foo::".repeat(100_000), "}}".repeat(100_000));
    assert_eq!(run(&deeper).text, deeper);
    let open = "{{x".repeat(100_000);
    assert_eq!(run(&open).text, open);
}

#[test]
fn a_variable_doubled_over_and_over_stops_at_its_cap() {
    // 1.3 KB that would double a variable into gigabytes.
    let bomb = format!(
        "{{{{setvar::x::ABCDEFGH}}}}{}{{{{getvar::x}}}}",
        "{{addvar::x::{{getvar::x}}}}".repeat(34)
    );
    let env = env();
    let mut state = MacroState::new(&env, BTreeMap::new());
    let out = expand(&bomb, &env, &mut state, "p");
    assert!(state.variables()["x"].len() <= MACRO_VARIABLE_BYTES);
    assert!(out.text.len() <= bomb.len() + MACRO_EXPANSION_BYTES);
    assert!(state.produced() <= MACRO_EXPANSION_BYTES);
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert!(
        out.warnings[0].to_string().contains("MiB"),
        "{}",
        out.warnings[0]
    );
    // What came before the cap was expanded; the macro that crossed it is left as written.
    assert!(out.text.contains("{{addvar::x::"), "kept as written");
}

#[test]
fn a_large_field_fanned_out_stops_at_the_expansion_cap() {
    let description = "d".repeat(100_000);
    let env = MacroEnv {
        description: &description,
        ..env()
    };
    let text = "{{description}}".repeat(5_000);
    let out = run_in(&env, &text);
    assert!(out.text.len() <= text.len() + MACRO_EXPANSION_BYTES);
    assert!(out.text.starts_with(&description));
    assert!(out.text.ends_with("{{description}}"));
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert!(
        out.warnings[0].to_string().contains("2 MiB"),
        "{}",
        out.warnings[0]
    );
}

#[test]
fn the_macros_of_one_build_stop_at_the_build_cap_and_say_so_once() {
    let description = "d".repeat(1 << 20);
    let env = MacroEnv {
        description: &description,
        ..env()
    };
    let mut state = MacroState::new(&env, BTreeMap::new());
    let mut warnings = Vec::new();
    let mut total = 0;
    for i in 0..40 {
        let out = expand("{{description}}", &env, &mut state, &format!("t{i}"));
        total += out.text.len();
        warnings.extend(out.warnings);
    }
    assert!(state.produced() <= MACRO_BUILD_BYTES);
    assert!(total <= MACRO_BUILD_BYTES + 40 * "{{description}}".len());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].to_string().contains("16 MiB"),
        "{}",
        warnings[0]
    );
    // Later expansions leave their macros as written.
    assert_eq!(
        expand("{{user}}", &env, &mut state, "late").text,
        "{{user}}"
    );
}

#[test]
fn long_names_are_no_macros_and_cost_no_rereading() {
    // Without a colon in its first bytes a body is no macro name; 200,000 nested ones would
    // take minutes if every level read the text inside it again.
    let deep = format!("{}{}", "{{abc".repeat(200_000), "}}".repeat(200_000));
    assert_eq!(run(&deep).text, deep);
    let long = format!("{{{{{}}}}}", "x".repeat(MACRO_NAME_BYTES + 1));
    let out = run(&long);
    assert_eq!(out.text, long);
    assert!(out.warnings[0].to_string().starts_with("unknown macro"));
    // Variable names and dice are looked for in the first bytes only.
    let name = "n".repeat(MACRO_VARIABLE_NAME_BYTES + 1);
    let out = run(&format!("{{{{setvar::{name}::v}}}}"));
    assert!(
        out.warnings[0].to_string().contains("at most 256 bytes"),
        "{:?}",
        out.warnings
    );
    let dice = format!("{{{{roll::{}d6}}}}", "1".repeat(40));
    assert_eq!(run(&dice).warnings.len(), 1);
    let nested_dice = format!("{}{}", "{{roll::".repeat(100_000), "}}".repeat(100_000));
    assert_eq!(run(&nested_dice).text, nested_dice);
}

fn macro_soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("{{"),
        Just("}}"),
        Just("{"),
        Just("}"),
        Just(":"),
        Just("::"),
        Just(","),
        Just("\\"),
        Just(" "),
        Just("\n"),
        Just("//"),
        Just("user"),
        Just("trim"),
        Just("random"),
        Just("pick"),
        Just("roll"),
        Just("2d6"),
        Just("d"),
        Just("+"),
        Just("setvar"),
        Just("getvar"),
        Just("addvar"),
        Just("description"),
        Just("x"),
        Just("1"),
        Just("é"),
        Just("日本"),
        Just("#if "),
        Just("#unless "),
        Just("/if"),
        Just("/unless"),
        Just("else"),
        Just("else if "),
        Just("#each"),
    ];
    proptest::collection::vec(piece, 0..48).prop_map(|pieces| pieces.concat())
}

/// Soup that can grow: variables fed back into themselves and large fields.
fn macro_soup_with_growth() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("{{setvar::x::abcdefgh}}"),
        Just("{{addvar::x::{{getvar::x}}}}"),
        Just("{{addvar::y::{{getvar::x}}{{getvar::x}}}}"),
        Just("{{setvar::x::{{getvar::y}}{{description}}}}"),
        Just("{{getvar::x}}"),
        Just("{{getvar::y}}"),
        Just("{{description}}"),
        Just("{{persona}}"),
        Just("{{random::{{description}}::{{getvar::x}}}}"),
        Just("{{pick::{{getvar::y}}::a}}"),
        Just("{{trim}}"),
        Just("{{#if getvar::x}}"),
        Just("{{else}}"),
        Just("{{/if}}"),
        Just("text "),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

proptest! {
    #[test]
    fn any_text_expands_without_panic(text in any::<String>()) {
        let out = run(&text);
        if !text.contains("{{") {
            prop_assert_eq!(out.text, text);
            prop_assert!(out.warnings.is_empty());
        }
    }

    #[test]
    fn macro_soup_expands_without_panic_and_deterministically(text in macro_soup()) {
        let first = run(&text);
        let second = run(&text);
        prop_assert_eq!(&first.text, &second.text);
        prop_assert_eq!(first.warnings, second.warnings);
        if !text.contains("{{") {
            prop_assert_eq!(first.text, text);
        }
    }
}

proptest! {
    // Each case runs up to 24 expansions over values of 300 KB: a few dozen cases cover the
    // combinations without making the test suite slow.
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn no_macro_soup_exceeds_the_byte_caps(
        text in macro_soup_with_growth(),
        repeat in 1usize..4,
    ) {
        let big = "b".repeat(300_000);
        let env = MacroEnv { description: &big, persona: &big, ..env() };
        let mut state = MacroState::new(&env, BTreeMap::new());
        for i in 0..repeat * 8 {
            let out = expand(&text, &env, &mut state, &format!("p{i}"));
            prop_assert!(out.text.len() <= text.len() + MACRO_EXPANSION_BYTES);
            for value in state.variables().values() {
                prop_assert!(value.len() <= MACRO_VARIABLE_BYTES);
            }
        }
        prop_assert!(state.produced() <= MACRO_BUILD_BYTES);
    }
}

// macros.js, evaluateMacros(): `{{lastMessageId}}` and `{{firstIncludedMessageId}}` say a
// message's index, and nothing when there is none.
#[test]
fn message_id_macros_say_the_index_or_nothing() {
    assert_eq!(
        text("{{lastMessageId}}|{{firstIncludedMessageId}}|{{LASTMESSAGEID}}"),
        "3|1|3"
    );
    let env = MacroEnv {
        last_message_id: None,
        first_included_message_id: None,
        ..env()
    };
    assert_eq!(
        run_in(&env, "[{{lastMessageId}}][{{firstIncludedMessageId}}]").text,
        "[][]"
    );
}

// macros.js, getTimeSinceLastMessage(): the time since the user's message before the newest one,
// in moment's humanized words, "just now" without one; here measured to the build's timestamp.
#[test]
fn idle_duration_says_the_time_since_the_earlier_user_message_in_words() {
    let at = |since: &'static str| {
        let env = MacroEnv {
            idle_since: Some(since),
            ..env()
        };
        run_in(&env, "{{idle_duration}}").text
    };
    // The build's timestamp is 2026-11-22T15:04:05+01:00.
    assert_eq!(at("2026-11-22T15:04:00+01:00"), "a few seconds");
    assert_eq!(at("2026-11-22T15:03:05+01:00"), "a minute");
    assert_eq!(at("2026-11-22T14:54:05+01:00"), "10 minutes");
    assert_eq!(at("2026-11-22T13:04:05Z"), "an hour");
    assert_eq!(at("2026-11-22T10:04:05+01:00"), "5 hours");
    assert_eq!(at("2026-11-21T15:04:05+01:00"), "a day");
    assert_eq!(at("2026-11-19T15:04:05+01:00"), "3 days");
    assert_eq!(at("2026-10-20T15:04:05+01:00"), "a month");
    assert_eq!(at("2026-07-22T15:04:05+01:00"), "4 months");
    assert_eq!(at("2025-11-22T15:04:05+01:00"), "a year");
    assert_eq!(at("2023-11-22T15:04:05+01:00"), "3 years");
    // SillyTavern's own send_date, in the build's offset, and milliseconds since 1970.
    assert_eq!(at("November 22, 2026 2:04pm"), "an hour");
    let ms = DateTime::parse_from_rfc3339("2026-11-22T14:44:05+01:00")
        .unwrap()
        .timestamp_millis()
        .to_string();
    let env = MacroEnv {
        idle_since: Some(&ms),
        ..env()
    };
    assert_eq!(run_in(&env, "{{idle_duration}}").text, "20 minutes");
    assert_eq!(text("{{idle_duration}}"), "just now");
    assert_eq!(at("not a date"), "just now");
}

// macros.js, diceRollReplace(): `{{roll 3d6}}` (a space) is a roll like `{{roll:3d6}}`.
#[test]
fn roll_takes_a_space_before_its_formula() {
    let sums: HashSet<String> = (0..40)
        .map(|n| {
            let env = MacroEnv {
                message_count: n,
                ..env()
            };
            run_in(&env, "{{roll 3d6}}").text
        })
        .collect();
    for sum in &sums {
        let n: u32 = sum
            .parse()
            .unwrap_or_else(|_| panic!("not a number: {sum}"));
        assert!((3..=18).contains(&n), "{n}");
    }
    assert!(sums.len() > 3, "{sums:?}");
    // The same stream as the colon form: one build rolls the same either way.
    assert_eq!(text("{{roll 3d6}}"), text("{{roll:3d6}}"));
    assert_eq!(
        text("{{ROLL 20}}").parse::<u32>().map(|n| n <= 20),
        Ok(true)
    );
    let out = run("{{roll three}}");
    assert_eq!(out.text, "{{roll three}}");
    assert_eq!(out.warnings.len(), 1);
    // `rolls` is no roll.
    assert_eq!(run("{{rolls 2}}").text, "{{rolls 2}}");
}

// macros.js, evaluateMacros(): the legacy `<USER>`, `<BOT>`, `<CHAR>` (any case) are the names,
// only when the environment turns them on.
#[test]
fn legacy_names_are_replaced_only_when_on() {
    let source = "<USER> meets <bot> and <Char>; <GROUP>, <CHARIFNOTGROUP>, <other>, {{user}}";
    assert_eq!(text(source), source.replace("{{user}}", "Alice"));
    let env = MacroEnv {
        legacy_names: true,
        ..env()
    };
    assert_eq!(
        run_in(&env, source).text,
        "Alice meets Bob and Bob; Bob, Bob, <other>, Alice"
    );
    // Without braces too: a text with only legacy names is expanded.
    assert_eq!(run_in(&env, "hi <user>").text, "hi Alice");
    assert!(needs_expansion("hi <user>", &env));
    assert!(!needs_expansion("hi <user>", &super::tests::env()));
}

// RULES 4.4: a legacy name's replacement counts against the caps; past one the rest stays.
#[test]
fn legacy_names_keep_to_the_expansion_cap() {
    let long = "x".repeat(MACRO_EXPANSION_BYTES / 2 + 1);
    let env = MacroEnv {
        legacy_names: true,
        user: &long,
        ..env()
    };
    let out = run_in(&env, "<USER><USER><USER>");
    assert_eq!(out.text.len(), long.len() + "<USER><USER>".len());
    assert!(out.text.ends_with("<USER><USER>"));
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
}

// RULES 4.2, blocks: `{{#if}}`, `{{#unless}}`, `{{else}}` as SillyTavern's story strings write them.

#[test]
fn rule_4_2_if_takes_its_branch_when_the_macro_is_not_empty() {
    assert_eq!(
        text("{{#if personality}}P: {{personality}}\n{{/if}}{{#if summary}}S{{else}}none{{/if}}"),
        "P: dry\nS"
    );
    let env = MacroEnv {
        personality: "",
        scenario: " \n ",
        ..env()
    };
    let out = run_in(
        &env,
        "{{#if personality}}P{{else}}no P{{/if}}|{{#if scenario}}S{{else}}no S{{/if}}",
    );
    // White space only counts as empty, as SillyTavern trims the values it gives its story string.
    assert_eq!(out.text, "no P|no S");
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

#[test]
fn rule_4_2_unless_is_the_opposite_and_else_if_chains() {
    let env = MacroEnv {
        personality: "",
        ..env()
    };
    let out = run_in(
        &env,
        "{{#unless personality}}quiet{{/unless}}|{{#if personality}}a{{else if scenario}}b{{else}}c{{/if}}|{{#if personality}}a{{else unless scenario}}b{{else}}c{{/if}}",
    );
    assert_eq!(out.text, "quiet|b|c");
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

#[test]
fn rule_4_2_blocks_nest_and_the_branch_not_taken_is_not_evaluated() {
    let out = run("{{#if user}}[{{#unless summary}}no{{else}}{{#if model}}{{model}}{{/if}}{{/unless}}]{{/if}}{{#if getvar::x}}{{setvar::y::1}}{{/if}}{{getvar::y}}|{{#if nothing}}{{/if}}");
    // `getvar::x` is empty, so `setvar` never runs; `nothing` is an unknown macro: false, said.
    assert_eq!(out.text, "[gpt-4o]|");
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert!(out.warnings[0].to_string().contains("{{nothing}}"));
}

#[test]
fn rule_4_2_blocks_run_before_the_other_macros_so_trim_reaches_across_them() {
    // ChatML's story string: empty blocks leave nothing, `{{trim}}` takes the line break before it.
    let env = MacroEnv {
        scenario: "",
        ..env()
    };
    let out = run_in(
        &env,
        "<s>\n{{#if personality}}{{personality}}\n{{/if}}{{#if scenario}}{{scenario}}\n{{/if}}{{trim}}</s>",
    );
    assert_eq!(out.text, "<s>\ndry</s>");
}

#[test]
fn rule_4_2_a_block_inside_a_value_is_resolved_there() {
    let env = MacroEnv {
        description: "{{#if scenario}}in {{scenario}}{{/if}}",
        ..env()
    };
    assert_eq!(run_in(&env, "{{description}}").text, "in a tower");
}

#[test]
fn rule_4_2_an_unclosed_or_stray_block_stays_as_written_with_its_place() {
    let out = run("a\n  {{#if user}}x");
    assert_eq!(out.text, "a\n  {{#if user}}x");
    let said: Vec<String> = out.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        said,
        ["{{#if user}} at line 2, column 3 is never closed; left as written"]
    );
    let out = run("{{/if}}{{else}}{{#if user}}a{{else}}b{{else}}c{{/if}}{{/unless}}");
    assert_eq!(out.text, "{{/if}}{{else}}a{{/unless}}");
    let said: Vec<String> = out.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        said,
        [
            "{{/if}} at line 1, column 1 closes or continues no open block; left as written",
            "{{else}} at line 1, column 8 closes or continues no open block; left as written",
            "{{else}} at line 1, column 38 closes or continues no open block; left as written",
            "{{/unless}} at line 1, column 54 closes or continues no open block; left as written",
        ]
    );
}

#[test]
fn rule_4_2_unknown_blocks_and_bad_conditions_are_said_not_evaluated() {
    let out = run("{{#each items}}x{{/each}}|{{#if}}y{{/if}}|{{setvar::a::{{#if user}}}}");
    assert_eq!(out.text, "{{#each items}}x{{/each}}|{{#if}}y{{/if}}|");
    let kinds: Vec<BlockProblemKind> =
        block_problems("{{#each items}}x{{/each}}|{{#if}}y{{/if}}|{{setvar::a::{{#if user}}}}")
            .into_iter()
            .map(|p| p.kind)
            .collect();
    assert_eq!(
        kinds,
        [
            BlockProblemKind::Unknown,
            BlockProblemKind::Unknown,
            BlockProblemKind::BadCondition,
            BlockProblemKind::Stray,
            BlockProblemKind::InArguments,
        ]
    );
    // A comment may hold anything.
    assert_eq!(text("a{{// {{#if x}} }}b"), "ab");
}

#[test]
fn rule_4_2_blocks_nest_at_most_to_their_cap() {
    let deep = |n: usize| "{{#if user}}".repeat(n) + "x" + &"{{/if}}".repeat(n);
    assert_eq!(text(&deep(MAX_BLOCK_DEPTH)), "x");
    let out = run(&deep(MAX_BLOCK_DEPTH + 1));
    assert_eq!(out.text, deep(MAX_BLOCK_DEPTH + 1));
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert!(out.warnings[0]
        .to_string()
        .starts_with("blocks nest more than 32 deep"));
}

#[test]
fn rule_4_2_wi_before_and_after_read_the_environment() {
    let env = MacroEnv {
        wi_before: "castle {{user}}",
        wi_after: "moat",
        ..env()
    };
    assert_eq!(
        run_in(
            &env,
            "{{wiBefore}}|{{loreAfter}}|{{#if loreBefore}}y{{/if}}"
        )
        .text,
        "castle Alice|moat|y"
    );
}

// RULES 4.2: a chat has one character, so the group macros name it, and everyone but the
// character is the user (SillyTavern's `{{group}}`, `{{groupNotMuted}}`, `{{charIfNotGroup}}`,
// `{{notChar}}` in a one-to-one chat).
#[test]
fn group_macros_name_the_one_character() {
    assert_eq!(
        text("{{group}}|{{groupNotMuted}}|{{charIfNotGroup}}|{{notChar}}"),
        "Bob|Bob|Bob|Alice"
    );
}

// RULES 4.2: the variable macros of SillyTavern's newer macro engine, local and global.
#[test]
fn incvar_and_decvar_store_and_say_the_new_value() {
    assert_eq!(
        text("{{incvar::n}}|{{incvar::n}}|{{decvar::n}}|{{getvar::n}}"),
        "1|2|1|1"
    );
    assert_eq!(text("{{setvar::s::a}}{{incvar::s}}"), "a1");
}

#[test]
fn hasvar_and_deletevar_see_and_remove_a_variable() {
    assert_eq!(
        text("{{hasvar::x}}|{{setvar::x::1}}{{varexists::x}}|{{deletevar::x}}{{hasvar::x}}|{{getvar::x}}"),
        "false|true|false|"
    );
    assert_eq!(text("{{setvar::x::1}}{{flushvar::x}}{{getvar::x}}"), "");
}

#[test]
fn global_variables_are_apart_from_the_local_ones() {
    assert_eq!(
        text("{{setglobalvar::mood::calm}}{{setvar::mood::tense}}{{getglobalvar::mood}}|{{getvar::mood}}"),
        "calm|tense"
    );
    assert_eq!(
        text("{{addglobalvar::n::2}}{{incglobalvar::n}}|{{decglobalvar::n}}|{{hasglobalvar::n}}|{{globalvarexists::m}}"),
        "3|2|true|false"
    );
    assert_eq!(
        text(
            "{{setglobalvar::g::x}}{{deleteglobalvar::g}}{{getglobalvar::g}}{{flushglobalvar::g}}"
        ),
        ""
    );
    // A build starts without global variables: the session's variables are the local ones.
    let env = env();
    let mut state = MacroState::new(&env, BTreeMap::from([("v".to_string(), "1".to_string())]));
    let out = expand(
        "{{getglobalvar::v}}|{{getvar::v}}",
        &env,
        &mut state,
        "test",
    );
    assert_eq!(out.text, "|1");
}

#[test]
fn variable_macros_without_a_name_stay_as_written() {
    for macro_text in ["{{incvar}}", "{{hasglobalvar}}", "{{decvar::}}"] {
        let out = run(macro_text);
        assert_eq!(out.text, macro_text);
        assert!(!out.warnings.is_empty(), "{macro_text}");
    }
}

/// A kept expansion charges the build's cap like a fresh one (RULES 4.5): the same texts through
/// the memo stop at the same place, with the same one warning.
#[test]
fn kept_expansions_charge_the_build_cap_like_fresh_ones() {
    let description = "d".repeat(1 << 20);
    let env = MacroEnv {
        description: &description,
        ..env()
    };
    let memo = MacroMemo::default();
    let fingerprint = env.fingerprint();
    let mut outcomes = Vec::new();
    for round in 0..2 {
        let mut state = MacroState::new(&env, BTreeMap::new());
        let mut texts = Vec::new();
        let mut warnings = Vec::new();
        for i in 0..40 {
            let out = expand_kept(
                "{{description}}",
                &env,
                fingerprint,
                &mut state,
                &format!("t{i}"),
                &memo,
            );
            texts.push(out.text);
            warnings.extend(out.warnings);
        }
        assert!(state.produced() <= MACRO_BUILD_BYTES);
        assert_eq!(warnings.len(), 1, "round {round}: {warnings:?}");
        assert!(!memo.is_empty(), "the pure expansion is kept");
        outcomes.push(texts);
    }
    assert_eq!(outcomes[0], outcomes[1]);
}

/// Expansions that read the clock, a variable or the random stream are not kept; ones that read
/// only the environment are, under its fingerprint.
#[test]
fn only_expansions_of_the_environment_alone_are_kept() {
    let base = env;
    let env = base();
    let memo = MacroMemo::default();
    let mut state = MacroState::new(&env, BTreeMap::new());
    for text in [
        "{{time}}",
        "{{date}}",
        "{{isotime}}",
        "{{idle_duration}}",
        "{{random::a::b}}",
        "{{pick::a::b}}",
        "{{roll:d6}}",
        "{{roll 2d6}}",
        "{{getvar::x}}",
        "{{setvar::x::1}}",
        "{{incglobalvar::y}}",
        "{{#if description}}{{time}}{{/if}}",
    ] {
        expand_kept(text, &env, env.fingerprint(), &mut state, "t", &memo);
        assert!(memo.is_empty(), "{text} is not kept");
    }
    expand_kept(
        "{{char}} {{description}} {{// a note}}",
        &env,
        env.fingerprint(),
        &mut state,
        "t",
        &memo,
    );
    assert_eq!(memo.len(), 1);
    let other = MacroEnv {
        user: "Carol",
        ..base()
    };
    assert_ne!(other.fingerprint(), env.fingerprint());
    let timed = MacroEnv {
        timestamp: DateTime::parse_from_rfc3339("2027-01-01T00:00:00Z").unwrap(),
        ..base()
    };
    assert_eq!(
        timed.fingerprint(),
        env.fingerprint(),
        "the clock is not in it"
    );
}

/// The memo never holds more than its bytes, however many large expansions a session of edits
/// makes (docs/ARCHITECTURE.md, "Limits").
#[test]
fn the_kept_expansions_stay_within_their_bytes() {
    let description = "d".repeat(1 << 20);
    let env = MacroEnv {
        description: &description,
        ..env()
    };
    let memo = MacroMemo::default();
    for i in 0..200 {
        // A new text each time, as when typing into a template that writes the description.
        let mut state = MacroState::new(&env, BTreeMap::new());
        let text = format!("{{{{description}}}} {i}");
        let out = expand_kept(&text, &env, env.fingerprint(), &mut state, "t", &memo);
        assert!(out.text.ends_with(&format!(" {i}")));
        assert!(memo.bytes() <= KEPT_BYTES, "{} bytes kept", memo.bytes());
    }
    assert!(!memo.is_empty());
}
