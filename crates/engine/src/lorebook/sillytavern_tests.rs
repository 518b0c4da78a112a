//! The lorebook under SillyTavern activation (RULES 5.11.1), each behaviour on a book built in the
//! test. Each test names the SillyTavern 1.12 function it follows.

use super::*;
use crate::model::{AgentPreset, Compatibility};
use crate::pipeline::{LogLevel, Pipeline};
use crate::processors::testing::{empty_session, options, with_context};
use serde_json::{json, Value};

struct Run {
    report: LorebookReport,
    injections: Vec<InjectionCandidate>,
    logs: Vec<String>,
}

fn book(entries: Value, extra: Value) -> crate::model::Lorebook {
    let mut v = json!({ "entries": entries });
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    serde_json::from_value(v).expect("lorebook")
}

/// SillyTavern's defaults of the processor, with `over` applied over them.
fn st_settings(over: &[(&str, Value)]) -> Vec<(String, Value)> {
    let mut settings: Vec<(String, Value)> = Lorebook
        .sillytavern()
        .expect("a SillyTavern behaviour")
        .settings
        .into_iter()
        .collect();
    for (k, v) in over {
        settings.retain(|(key, _)| key != k);
        settings.push((k.to_string(), v.clone()));
    }
    settings
}

/// Runs the lorebook with `settings` over `history` (oldest first; each with its role and, when
/// given, its speaker's name).
fn run_with(
    book: crate::model::Lorebook,
    settings: &[(String, Value)],
    history: &[(Role, Option<&str>, &str)],
) -> Run {
    let settings: Vec<(&str, Value)> = settings
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    with_context(
        &Lorebook,
        &settings,
        &empty_session(),
        &options(),
        |mut ctx, config| {
            let mut preset: AgentPreset = ctx.preset.clone();
            preset.lorebook = Some(book);
            let preset: &AgentPreset = Box::leak(Box::new(preset));
            ctx.preset = preset;
            for (i, (role, name, text)) in history.iter().enumerate() {
                let mut m = PipelineMessage::new(*role, *text, Source::history(i));
                m.set_name(name.map(str::to_string));
                ctx.history.push(m);
            }
            Lorebook.execute(&mut ctx, config).expect("runs");
            Run {
                report: ctx.blackboard.lorebook.clone().unwrap_or_default(),
                injections: ctx.blackboard.injections.clone(),
                logs: ctx
                    .logs
                    .iter()
                    .filter(|l| l.level != LogLevel::Error)
                    .map(|l| l.message.clone())
                    .collect(),
            }
        },
    )
}

/// Under SillyTavern's defaults, over user messages.
fn st(book: crate::model::Lorebook, history: &[&str]) -> Run {
    st_with(book, &[], history)
}

fn st_with(book: crate::model::Lorebook, over: &[(&str, Value)], history: &[&str]) -> Run {
    let history: Vec<(Role, Option<&str>, &str)> =
        history.iter().map(|t| (Role::User, None, *t)).collect();
    run_with(book, &st_settings(over), &history)
}

fn ids(run: &Run) -> Vec<&str> {
    run.report
        .activated
        .iter()
        .map(|a| a.entry_id.as_str())
        .collect()
}

fn e(id: &str, keys: &[&str]) -> Value {
    json!({ "id": id, "keys": keys, "content": format!("about {id}") })
}

fn with(mut entry: Value, extra: Value) -> Value {
    if let (Some(o), Some(x)) = (entry.as_object_mut(), extra.as_object()) {
        o.extend(x.clone());
    }
    entry
}

#[test]
fn sillytavern_compatibility_switches_the_lorebook_to_sillytavern_activation() {
    let mut preset = crate::processors::testing::empty_preset();
    preset.compatibility = Compatibility::Sillytavern;
    let pipeline = Pipeline::builtin();
    let profile = crate::profiles::profile_for_model("gpt-4o", &[]);
    let resolved = pipeline.resolve(&preset, &profile);
    let config = resolved.iter().find(|c| c.id == ID).expect("lorebook");
    assert_eq!(config.str("activation"), "sillytavern");
    assert!(config.bool("includeNames") && config.bool("budgetStops"));
    assert!(config.bool("joinPositions"));
    assert_eq!(config.str("wiFormat"), "{0}");
    preset.compatibility = Compatibility::Native;
    let resolved = pipeline.resolve(&preset, &profile);
    let config = resolved.iter().find(|c| c.id == ID).expect("lorebook");
    assert_eq!(config.str("activation"), "native");
    assert!(!config.bool("includeNames") && !config.bool("joinPositions"));
}

// script.js, Generate(): the chat given to the world info scan reads `name: message` when names
// are included.
#[test]
fn world_info_scans_messages_as_name_colon_text() {
    let b = || book(json!([e("alice", &["Alice"])]), json!({}));
    let history = [(Role::Assistant, Some("Alice"), "Hello there.")];
    let run = run_with(b(), &st_settings(&[]), &history);
    assert_eq!(ids(&run), ["alice"]);
    let run = run_with(
        b(),
        &st_settings(&[("includeNames", json!(false))]),
        &history,
    );
    assert!(run.report.activated.is_empty());
    // A message without a name of its own speaks with the user's or the character's name.
    let b = book(json!([e("user", &["User:"])]), json!({}));
    let run = run_with(b, &st_settings(&[]), &[(Role::User, None, "hi")]);
    assert_eq!(ids(&run), ["user"]);
}

// world-info.js, WorldInfoBuffer.get(): the scanned messages are one text, so an entry's
// secondary key may occur in another message than its primary key.
#[test]
fn world_info_reads_the_scanned_messages_as_one_text() {
    let b = || {
        book(
            json!([{ "id": "s", "keys": ["sword"], "secondaryKeys": ["fire"],
                 "content": "c" }]),
            json!({ "scanDepth": 2 }),
        )
    };
    let history = ["the fire burns", "a sword"];
    assert_eq!(ids(&st(b(), &history)), ["s"]);
    // The native rules want both in one message.
    let native = run_with(
        b(),
        &[],
        &[
            (Role::User, None, history[0]),
            (Role::User, None, history[1]),
        ],
    );
    assert!(native.report.activated.is_empty());
}

// world-info.js, WorldInfoBuffer.matchKeys(): with whole words, a key of several words matches
// as a substring; a single word must stand alone.
#[test]
fn world_info_key_of_several_words_matches_as_a_substring() {
    let b = || {
        book(
            json!([e("big", &["big cat"]), e("cat", &["cat"])]),
            json!({}),
        )
    };
    assert_eq!(ids(&st(b(), &["the big catalog"])), ["big"]);
    assert_eq!(ids(&st(b(), &["the big cat."])), ["big", "cat"]);
}

// world-info.js, WorldInfoBuffer.get() and matchKeys(): an entry's own scan depth, case and
// whole-word settings replace the book's.
#[test]
fn world_info_entry_scan_settings_override_the_books() {
    let deep = with(e("deep", &["ancient"]), json!({ "scanDepth": 3 }));
    let shallow = e("shallow", &["ancient"]);
    let run = st(
        book(json!([deep, shallow]), json!({ "scanDepth": 1 })),
        &["ancient", "x", "y"],
    );
    assert_eq!(ids(&run), ["deep"]);
    let cased = with(e("cased", &["Rome"]), json!({ "caseSensitive": true }));
    let loose = with(e("loose", &["cat"]), json!({ "matchWholeWords": false }));
    let run = st(
        book(json!([cased, loose]), json!({})),
        &["rome and concatenation"],
    );
    assert_eq!(ids(&run), ["loose"]);
    let run = st(
        book(
            json!([with(e("any", &["rome"]), json!({ "caseSensitive": false }))]),
            json!({ "caseSensitive": true }),
        ),
        &["ROME"],
    );
    assert_eq!(ids(&run), ["any"]);
}

// world-info.js, checkWorldInfo(): an entry excluded from recursion is not activated by other
// entries' content; the content of an entry that prevents recursion is not scanned.
#[test]
fn world_info_exclude_and_prevent_recursion() {
    let entries = |a: Value, b: Value| {
        json!([
            with(
                json!({ "id": "a", "keys": ["castle"], "content": "The castle has a moat." }),
                a
            ),
            with(
                json!({ "id": "b", "keys": ["moat"], "content": "An eel." }),
                b
            ),
        ])
    };
    let run = st(book(entries(json!({}), json!({})), json!({})), &["castle"]);
    assert_eq!(ids(&run), ["a", "b"]);
    assert_eq!(
        run.report.activated[1].reason,
        Activation::Recursion {
            key: "moat".into(),
            from_entry: "a".into()
        }
    );
    let run = st(
        book(
            entries(json!({}), json!({ "excludeRecursion": true })),
            json!({}),
        ),
        &["castle"],
    );
    assert_eq!(ids(&run), ["a"]);
    let run = st(
        book(
            entries(json!({ "preventRecursion": true }), json!({})),
            json!({}),
        ),
        &["castle"],
    );
    assert_eq!(ids(&run), ["a"]);
    // Excluded from recursion, it still activates on the chat.
    let run = st(
        book(
            entries(json!({}), json!({ "excludeRecursion": true })),
            json!({}),
        ),
        &["castle moat"],
    );
    assert_eq!(ids(&run), ["a", "b"]);
}

// world-info.js, checkWorldInfo(): an entry delayed until recursion is not activated by the chat,
// only by recursion, and a higher level waits until the lower levels are done.
#[test]
fn world_info_delay_until_recursion_by_level() {
    let entries = json!([
        { "id": "a", "keys": ["castle"], "content": "moat and keep" },
        { "id": "b", "keys": ["moat"], "content": "the eel", "delayUntilRecursion": 1 },
        { "id": "c", "keys": ["keep"], "content": "a tower", "delayUntilRecursion": 2 },
        { "id": "d", "keys": ["castle"], "content": "x", "delayUntilRecursion": 1 },
    ]);
    let run = st(book(entries.clone(), json!({})), &["castle"]);
    // d has its key in the chat: it waits for the first recursion round (which still reads the
    // chat); c, of level 2, for the round after level 1 settled.
    assert_eq!(ids(&run), ["a", "b", "d", "c"]);
    let run = st(
        book(entries.clone(), json!({ "maxRecursionSteps": 1 })),
        &["castle"],
    );
    assert_eq!(ids(&run), ["a"]);
    // Without recursion the levels still run once the scan settles, as SillyTavern's loop does:
    // the first level was opened at the start, so the round after it opens level 2, where
    // entries of levels 1 and 2 activate together, in the book's order.
    let run = st(book(entries, json!({ "recursive": false })), &["castle"]);
    assert_eq!(ids(&run), ["a", "b", "c", "d"]);
}

// world-info.js, checkWorldInfo(): max recursion steps bounds the rounds, the first scan
// included; 0 goes on until nothing new activates.
#[test]
fn world_info_max_recursion_steps_bounds_the_rounds() {
    let chain = json!([
        { "id": "a", "keys": ["one"], "content": "two" },
        { "id": "b", "keys": ["two"], "content": "three" },
        { "id": "c", "keys": ["three"], "content": "four" },
        { "id": "d", "keys": ["four"], "content": "five" },
        { "id": "e", "keys": ["five"], "content": "six" },
    ]);
    let run = st(book(chain.clone(), json!({})), &["one"]);
    assert_eq!(ids(&run), ["a", "b", "c", "d", "e"]);
    let run = st(book(chain, json!({ "maxRecursionSteps": 2 })), &["one"]);
    assert_eq!(ids(&run), ["a", "b"]);
}

// world-info.js, checkWorldInfo(): min activations scans one message deeper at a time until
// enough entries activated or the max depth is reached.
#[test]
fn world_info_min_activations_scan_deeper() {
    let entries = json!([e("old", &["ancient"]), e("older", &["primeval"])]);
    let history = ["primeval", "ancient", "x", "y"];
    let run = st(book(entries.clone(), json!({ "scanDepth": 1 })), &history);
    assert!(run.report.activated.is_empty());
    let run = st(
        book(
            entries.clone(),
            json!({ "scanDepth": 1, "minActivations": 1 }),
        ),
        &history,
    );
    assert_eq!(ids(&run), ["old"]);
    let run = st(
        book(
            entries.clone(),
            json!({ "scanDepth": 1, "minActivations": 2 }),
        ),
        &history,
    );
    assert_eq!(ids(&run), ["old", "older"]);
    let run = st(
        book(
            entries,
            json!({ "scanDepth": 1, "minActivations": 2, "minActivationsDepthMax": 2 }),
        ),
        &history,
    );
    // The depth is checked before the scan goes one deeper, so it reads one message past the
    // max (depth 3 here) and no further.
    assert_eq!(ids(&run), ["old"]);
}

// world-info.js, WorldInfoTimedEffects (delay): an entry with a delay needs that many messages in
// the chat.
#[test]
fn world_info_delay_needs_that_many_messages() {
    let b = || {
        book(
            json!([with(e("late", &["door"]), json!({ "delay": 3 }))]),
            json!({}),
        )
    };
    let run = st(b(), &["x", "door"]);
    assert!(run.report.activated.is_empty());
    assert_eq!(run.report.skipped[0].entry_id, "late");
    assert!(run.report.skipped[0].reason.contains("3 messages"));
    assert_eq!(ids(&st(b(), &["x", "y", "door"])), ["late"]);
}

// world-info.js, filterByInclusionGroups(): of a group that activates together one entry is
// kept; an entry with groupOverride wins, the highest order first.
#[test]
fn world_info_inclusion_group_priority_wins() {
    let entries = json!([
        with(
            e("a", &["rain"]),
            json!({ "group": "weather", "order": 10 })
        ),
        with(
            e("b", &["rain"]),
            json!({ "group": "weather", "order": 20, "groupOverride": true })
        ),
        with(
            e("c", &["rain"]),
            json!({ "group": "weather, mood", "order": 30, "groupOverride": true })
        ),
        e("free", &["rain"]),
    ]);
    let run = st(book(entries, json!({})), &["rain"]);
    // Taken in the book's order: highest `order` first.
    assert_eq!(ids(&run), ["free", "c"]);
    let lost: Vec<&str> = run
        .report
        .skipped
        .iter()
        .map(|s| s.entry_id.as_str())
        .collect();
    // Met in the book's order (b before a), each reported once.
    assert_eq!(lost, ["b", "a"]);
    assert!(run.report.skipped[0].reason.contains("to \"c\""));
    assert!(run
        .logs
        .iter()
        .any(|l| l.contains("won inclusion group \"weather\"")));
}

// world-info.js, filterByInclusionGroups(): without a priority the winner is rolled, weighted by
// groupWeight; our roll is seeded, so a build is repeatable.
#[test]
fn world_info_inclusion_group_roll_is_weighted_and_repeatable() {
    let b = |wa: u32, wb: u32| {
        book(
            json!([
                with(
                    e("a", &["rain"]),
                    json!({ "group": "g", "groupWeight": wa })
                ),
                with(
                    e("b", &["rain"]),
                    json!({ "group": "g", "groupWeight": wb })
                ),
            ]),
            json!({}),
        )
    };
    assert_eq!(ids(&st(b(0, 100), &["rain"])), ["b"]);
    assert_eq!(ids(&st(b(100, 0), &["rain"])), ["a"]);
    let first = ids(&st(b(50, 50), &["rain"])).join(",");
    assert!(first == "a" || first == "b");
    for _ in 0..3 {
        assert_eq!(ids(&st(b(50, 50), &["rain"])).join(","), first);
    }
}

// world-info.js, filterGroupsByScoring(): with group scoring, the entries whose keys scored
// below the group's best are left out before the roll.
#[test]
fn world_info_group_scoring_keeps_the_best_scored() {
    let entries = json!([
        with(e("one", &["rain"]), json!({ "group": "g" })),
        with(e("two", &["rain", "wind"]), json!({ "group": "g" })),
    ]);
    let run = st(
        book(entries.clone(), json!({ "useGroupScoring": true })),
        &["rain and wind"],
    );
    assert_eq!(ids(&run), ["two"]);
    assert!(run.report.skipped[0]
        .reason
        .contains("scored 1, the best 2"));
    // Switched on by one entry of the group only, it applies to that entry only.
    let entries = json!([
        with(
            e("one", &["rain"]),
            json!({ "group": "g", "useGroupScoring": true })
        ),
        with(e("two", &["rain", "wind"]), json!({ "group": "g" })),
    ]);
    assert_eq!(
        ids(&st(book(entries, json!({})), &["rain and wind"])),
        ["two"]
    );
}

// world-info.js, checkWorldInfo() (the budget part): entries are taken in the book's order and
// the scan stops at the first one that does not fit; the cap bounds the budget in tokens.
#[test]
fn world_info_budget_stops_at_the_first_entry_that_does_not_fit() {
    let long = "word ".repeat(500);
    let entries = json!([
        { "id": "high", "constant": true, "order": 300, "content": long },
        { "id": "big", "constant": true, "order": 200, "content": "word ".repeat(2000) },
        { "id": "small", "constant": true, "order": 100, "content": "tiny" },
    ]);
    let run = st(book(entries.clone(), json!({ "tokenBudget": 1 })), &[]);
    assert_eq!(run.report.budget, 1239);
    assert_eq!(ids(&run), ["high"]);
    let cut: Vec<&str> = run.report.cut.iter().map(|c| c.entry_id.as_str()).collect();
    assert_eq!(cut, ["big", "small"]);
    assert!(run.report.cut[0].reason.contains("stopped"));
    // The native rule tries the later entries.
    let native = run_with(book(entries.clone(), json!({ "tokenBudget": 1 })), &[], &[]);
    assert!(native
        .report
        .activated
        .iter()
        .any(|a| a.entry_id == "small"));
    // The cap.
    let run = st(
        book(entries, json!({ "tokenBudget": 1, "budgetCap": 100 })),
        &[],
    );
    assert_eq!(run.report.budget, 100);
    assert!(run.report.activated.is_empty());
}

// The native budget with `budgetStops` on stops at the first miss too.
#[test]
fn native_budget_stops_when_asked() {
    let long = "word ".repeat(500);
    let entries = json!([
        { "id": "high", "constant": true, "order": 300, "content": long },
        { "id": "big", "constant": true, "order": 200, "content": "word ".repeat(2000) },
        { "id": "small", "constant": true, "order": 100, "content": "tiny" },
    ]);
    let settings = vec![("budgetStops".to_string(), json!(true))];
    let run = run_with(book(entries, json!({ "tokenBudget": 1 })), &settings, &[]);
    assert_eq!(ids(&run), ["high"]);
    assert_eq!(run.report.cut.len(), 2);
}

// world-info.js, checkWorldInfo() (building the prompt): the entries of one position are one
// text, one a line, the lowest order first; openai.js, formatWorldInfo(): wi_format wraps the
// before/after blocks.
#[test]
fn world_info_entries_of_one_position_are_joined_and_formatted() {
    let before = |id: &str, order: i32| {
        json!({ "id": id, "constant": true, "order": order, "content": format!("{id} text"),
                "strategy": { "anchorTarget": "worldInfoBefore", "anchorPosition": "after" } })
    };
    let depth = |id: &str, role: &str| {
        json!({ "id": id, "constant": true, "content": format!("{id} text"), "role": role,
                "strategy": { "depth": 2 } })
    };
    let entries = json!([
        before("b1", 50),
        before("b2", 150),
        depth("d1", "system"),
        depth("d2", "system"),
        depth("d3", "user"),
    ]);
    let run = st_with(
        book(entries.clone(), json!({})),
        &[("wiFormat", json!("[Lore: {0}]"))],
        &[],
    );
    let contents: Vec<&str> = run.injections.iter().map(|c| c.content.as_str()).collect();
    // Equal orders come out the later-taken first, as SillyTavern's prepending gives them.
    assert_eq!(
        contents,
        ["[Lore: b1 text\nb2 text]", "d2 text\nd1 text", "d3 text"]
    );
    assert_eq!(run.injections[2].role, Role::User);
    assert_eq!(run.injections[1].strategy.depth, Some(2));
    // One candidate per entry without joining.
    let run = st_with(
        book(entries, json!({})),
        &[("joinPositions", json!(false))],
        &[],
    );
    assert_eq!(run.injections.len(), 5);
}

// world-info.js, WorldInfoTimedEffects (sticky, cooldown), approximated from the chat: an entry
// that activated on the chat as it was k messages ago is still sticky while k < sticky, then
// cools down while k < sticky + cooldown.
#[test]
fn world_info_sticky_and_cooldown_are_read_from_the_chat() {
    let b = |sticky: u32, cooldown: u32| {
        let mut extra = json!({});
        if sticky > 0 {
            extra["sticky"] = json!(sticky);
        }
        if cooldown > 0 {
            extra["cooldown"] = json!(cooldown);
        }
        book(
            json!([with(e("s", &["dragon"]), extra)]),
            json!({ "scanDepth": 1 }),
        )
    };
    // "dragon" was the newest message 1 message ago.
    let history = ["dragon", "nothing"];
    let run = st(b(3, 0), &history);
    assert_eq!(ids(&run), ["s"]);
    assert_eq!(
        run.report.activated[0].reason,
        Activation::Sticky { messages_ago: 1 }
    );
    assert!(st(b(1, 0), &history).report.activated.is_empty());
    // Cooling down: the keys occur now, but it activated one message ago.
    let run = st(b(0, 2), &["dragon", "dragon"]);
    assert!(run.report.activated.is_empty());
    assert!(run.report.skipped[0].reason.contains("cooling down"));
    // After the sticky time comes the cooldown.
    let run = st(b(1, 2), &["dragon", "x", "dragon"]);
    assert!(run.report.activated.is_empty());
    assert_eq!(ids(&st(b(1, 1), &["dragon", "x", "dragon"])), ["s"]);
}

// world-info.js, checkWorldInfo(): a regex key keeps its own flags; a plain key follows the
// case setting.
#[test]
fn world_info_regex_keys_follow_their_own_flags() {
    let b = book(
        json!([e("a", &["/Dragon/"]), e("b", &["/Dragon/i"])]),
        json!({}),
    );
    assert_eq!(ids(&st(b, &["a dragon"])), ["b"]);
}

// docs/ARCHITECTURE.md, "Limits": a chain that activates one entry per round, each round reading
// every entry's keys over a growing text, stops at a cap with a warning and keeps what it took.
#[test]
fn world_info_sillytavern_scan_stops_at_its_caps() {
    let n = 1500;
    let entries: Vec<Value> = (0..n)
        .map(|i| {
            json!({ "id": format!("e{i}"), "keys": [format!("link{i}")],
                         "content": format!("link{} {}", i + 1, "padding ".repeat(40)) })
        })
        .collect();
    let run = st(
        book(json!(entries), json!({ "tokenBudget": 100 })),
        &["link0"],
    );
    let taken = run.report.activated.len();
    assert!(taken > 10 && taken < n, "{taken}");
    assert!(
        run.logs.iter().any(|l| l.contains("MiB of text")),
        "{:?}",
        &run.logs[run.logs.len().saturating_sub(3)..]
    );
}
