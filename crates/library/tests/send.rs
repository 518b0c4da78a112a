//! The turn a send adds to a session, regenerating the last reply and flipping between replies:
//! what both front doors do with a reply.

use promptloom_engine::model::{ChatMessage, ReplyInfo, Role, Session};
use promptloom_library::send;

fn info(model: &str) -> ReplyInfo {
    ReplyInfo {
        connection: "local".into(),
        model: model.into(),
        total_ms: 10,
        ..ReplyInfo::default()
    }
}

fn chat() -> Session {
    let mut s = Session::empty("s");
    s.messages.push(ChatMessage::new(Role::User, "Hi"));
    s
}

#[test]
fn a_turn_appends_the_input_once_then_the_reply_with_what_came_back() {
    let mut s = chat();
    send::append_turn(&mut s, Some(" Hi "), "Hello.", info("a"));
    assert_eq!(
        s.messages.len(),
        2,
        "the input was already the last message, as a build sees it"
    );
    let mut blank = s.clone();
    send::append_turn(&mut blank, Some("  "), "Again.", info("a"));
    assert_eq!(
        blank.messages.len(),
        3,
        "a blank input is no turn of its own"
    );
    send::append_turn(&mut s, Some("More?"), "Sure.", info("a"));
    let contents: Vec<&str> = s.messages.iter().map(|m| &*m.content).collect();
    assert_eq!(contents, ["Hi", "Hello.", "More?", "Sure."]);
    assert_eq!(s.messages[3].role, Role::Assistant);
    assert_eq!(
        s.messages[3].reply.as_ref().map(|r| r.model.as_str()),
        Some("a")
    );
}

#[test]
fn regenerating_keeps_the_earlier_replies_in_order_to_flip_between() {
    let mut s = chat();
    send::append_turn(&mut s, None, "First.", info("a"));
    let earlier = send::before_last_reply(&s).expect("a reply to regenerate");
    assert_eq!(earlier.messages.len(), 1);
    send::replace_last_reply(&mut s, "Second.", info("b")).expect("replaced");
    send::replace_last_reply(&mut s, "Third.", info("c")).expect("replaced");
    let order = |s: &Session| -> (Vec<String>, Option<u32>, String) {
        let m = &s.messages[1];
        (
            m.swipes.iter().map(|w| w.content.clone()).collect(),
            m.swipe_at,
            m.content.to_string(),
        )
    };
    assert_eq!(
        order(&s),
        (
            vec!["First.".into(), "Second.".into()],
            None,
            "Third.".into()
        )
    );

    // Flip to the first: the others keep their order, and the position is stored.
    send::choose_swipe(&mut s, 1, 0).expect("flipped");
    assert_eq!(
        order(&s),
        (
            vec!["Second.".into(), "Third.".into()],
            Some(0),
            "First.".into()
        )
    );
    assert_eq!(
        s.messages[1].reply.as_ref().map(|r| r.model.as_str()),
        Some("a"),
        "its reply info comes along"
    );
    send::choose_swipe(&mut s, 1, 1).expect("flipped");
    assert_eq!(
        order(&s),
        (
            vec!["First.".into(), "Third.".into()],
            Some(1),
            "Second.".into()
        )
    );
    // Regenerating from the middle adds the newest at the end and shows it.
    send::replace_last_reply(&mut s, "Fourth.", info("d")).expect("replaced");
    assert_eq!(
        order(&s),
        (
            vec!["First.".into(), "Second.".into(), "Third.".into()],
            None,
            "Fourth.".into()
        )
    );
    send::choose_swipe(&mut s, 1, 3).expect("the newest again");
    assert_eq!(order(&s).1, None);
}

#[test]
fn nothing_to_regenerate_or_flip_is_an_error_that_changes_nothing() {
    let mut s = chat();
    let e = send::before_last_reply(&s).unwrap_err();
    assert_eq!(e.code(), "not_found");
    assert!(e.to_string().contains("has no reply to regenerate"), "{e}");
    assert!(send::replace_last_reply(&mut s, "x", info("a")).is_err());
    assert!(send::choose_swipe(&mut s, 0, 0).is_err());
    assert!(send::choose_swipe(&mut s, 5, 0).is_err());
    assert_eq!(s, chat());
}

#[test]
fn each_kind_of_reply_is_kept_where_its_kind_says() {
    use promptloom_engine::GenerationType as Kind;
    use send::Kept;

    // An ordinary reply, its prefill first: the next turn, the input before it.
    let mut s = chat();
    let kept = send::keep_reply(
        &mut s,
        Kind::Normal,
        false,
        Some("Go"),
        "Sure: yes.",
        info("a"),
    );
    assert_eq!(kept.expect("kept"), Kept::Appended);
    let contents =
        |s: &Session| -> Vec<String> { s.messages.iter().map(|m| m.content.to_string()).collect() };
    assert_eq!(contents(&s), ["Hi", "Go", "Sure: yes."]);

    // A continuation grows the reply the message shows, its other swipes untouched, and takes
    // the continuation's reply information; no input goes in.
    send::replace_last_reply(&mut s, "Second", info("b")).expect("regenerated");
    let kept = send::keep_reply(
        &mut s,
        Kind::Continue,
        false,
        Some("ignored"),
        " and more.",
        info("c"),
    );
    assert_eq!(kept.expect("kept"), Kept::Continued);
    assert_eq!(contents(&s), ["Hi", "Go", "Second and more."]);
    let last = s.messages.last().expect("a reply");
    assert_eq!(last.swipes.len(), 1);
    assert_eq!(last.swipes[0].content, "Sure: yes.");
    assert_eq!(last.reply.as_ref().map(|r| r.model.as_str()), Some("c"));

    // Regenerate: in place of the last reply.
    let kept = send::keep_reply(&mut s, Kind::Normal, true, None, "Third.", info("d"));
    assert_eq!(kept.expect("kept"), Kept::Replaced);
    assert_eq!(contents(&s), ["Hi", "Go", "Third."]);
    assert_eq!(s.messages[2].swipes.len(), 2);

    // The user's next message and a quiet answer are not stored.
    let before = s.clone();
    for kind in [Kind::Impersonate, Kind::Quiet] {
        let kept = send::keep_reply(&mut s, kind, false, Some("x"), "Me: hi", info("e"));
        assert_eq!(kept.expect("answered"), Kept::NotStored);
        assert_eq!(s, before, "{kind:?} changes nothing");
    }
}

#[test]
fn a_continuation_without_a_reply_to_continue_is_refused_before_sending_and_when_kept() {
    use promptloom_engine::GenerationType as Kind;

    let mut s = chat();
    let e = send::check_sendable(&s, Kind::Continue).unwrap_err();
    assert_eq!(e.code(), "not_found");
    assert!(e.to_string().contains("nothing to continue"), "{e}");
    for kind in [Kind::Normal, Kind::Impersonate, Kind::Quiet] {
        assert!(
            send::check_sendable(&s, kind).is_ok(),
            "{kind:?} needs no reply"
        );
    }
    // The reply was deleted while the continuation arrived: an error, and nothing changed.
    let e = send::keep_reply(&mut s, Kind::Continue, false, None, " more", info("a")).unwrap_err();
    assert!(e.to_string().contains("nothing to continue"), "{e}");
    assert_eq!(s, chat());
    send::append_turn(&mut s, None, "Hello.", info("a"));
    assert!(send::check_sendable(&s, Kind::Continue).is_ok());
}

#[test]
fn the_request_is_in_the_connections_dialect_and_warns_of_what_it_does_not_take() {
    use promptloom_engine::assets::InlineAssets;
    use promptloom_engine::cache::BuildCache;
    use promptloom_engine::model::GenerationSettings;
    use promptloom_engine::{build, BuildOptions, BuildRequest};
    use promptloom_send::{Connection, Dialect};

    let mut preset = promptloom_library::presets::starter("p".into(), "P".into());
    preset.generation = Some(GenerationSettings {
        top_k: Some(40),
        temperature: Some(0.5),
        ..GenerationSettings::default()
    });
    let session = chat();
    let options = BuildOptions::at(chrono_now());
    let cache = BuildCache::new();
    // gpt-4o's profile speaks OpenAI's format, which has no top_k: the build warned already.
    let result = build(&BuildRequest {
        preset: &preset,
        session: &session,
        kept_rewrites: None,
        model: "gpt-4o",
        options: &options,
        cache: &cache,
        profiles: &[],
        assets: &InlineAssets,
    })
    .expect("builds");
    let openai = Connection::new("o", Dialect::OpenaiCompatible, "http://127.0.0.1:1/v1");
    let r = send::request(
        &openai,
        &result,
        &session,
        &InlineAssets,
        "gpt-4o",
        true,
        false,
    )
    .expect("request");
    assert!(
        r.warnings.is_empty(),
        "the build's own warnings cover its format"
    );
    assert!(r.body.ends_with("}\n"));
    let body: serde_json::Value = serde_json::from_str(&r.body).expect("JSON");
    assert_eq!(body["model"], "gpt-4o");
    assert_eq!(body["stream"], true);
    assert!(body.get("top_k").is_none());
    assert_eq!(r.url, "http://127.0.0.1:1/v1/chat/completions");

    // Through an Anthropic connection the same build takes top_k, and says nothing.
    let claude = Connection::new("c", Dialect::Anthropic, "https://api.anthropic.com");
    let r = send::request(
        &claude,
        &result,
        &session,
        &InlineAssets,
        "gpt-4o",
        true,
        true,
    )
    .expect("request");
    let body: serde_json::Value = serde_json::from_str(&r.body).expect("JSON");
    assert_eq!(body["top_k"], 40);
    assert!(r.warnings.is_empty());
    assert!(r
        .headers
        .iter()
        .any(|(n, v)| n == "x-api-key" && !v.contains("sk-")));

    // A Claude build sent through an OpenAI-style connection: top_k is left out, and said.
    let result = build(&BuildRequest {
        preset: &preset,
        session: &session,
        kept_rewrites: None,
        model: "claude-3-5-sonnet",
        options: &options,
        cache: &cache,
        profiles: &[],
        assets: &InlineAssets,
    })
    .expect("builds");
    let r = send::request(
        &openai,
        &result,
        &session,
        &InlineAssets,
        "claude-3-5-sonnet",
        true,
        false,
    )
    .expect("request");
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].to_string().contains("topK"),
        "{}",
        r.warnings[0]
    );
}

fn chrono_now() -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339("2026-11-24T10:00:00+01:00").expect("a time")
}

/// A continuation is sent only when the finished build continues the session's last reply as
/// stored (RULES 5.14); a build that continues nothing, or another message, is refused.
#[test]
fn a_continuation_is_sent_only_when_the_build_continues_the_last_reply() {
    use promptloom_engine::{GenerationType, ReplyStart};
    let mut session = chat();
    session
        .messages
        .push(ChatMessage::new(Role::Assistant, "Hello"));
    let last = (session.messages.len() - 1) as u32;
    let built = |continued: Option<u32>| ReplyStart {
        generation_type: GenerationType::Continue,
        continued,
        ..ReplyStart::default()
    };
    assert!(send::check_built(&session, &built(Some(last))).is_ok());
    for wrong in [None, Some(0)] {
        let error = send::check_built(&session, &built(wrong)).expect_err("refused");
        assert!(error.to_string().contains("nothing is sent"), "{error}");
    }
    assert!(send::check_built(&session, &ReplyStart::default()).is_ok());
}

/// A continuation is stored only onto the reply it continued: a session whose last reply was
/// edited, or which got another turn during the send, refuses it (RULES 5.14).
#[test]
fn a_continuation_goes_only_onto_the_reply_it_continued() {
    let mut session = chat();
    session
        .messages
        .push(ChatMessage::new(Role::Assistant, "Hello"));
    assert!(send::check_still_last(&session, "Hello").is_ok());
    let mut edited = session.clone();
    edited.messages[1].content = "Hello there".into();
    assert!(send::check_still_last(&edited, "Hello").is_err());
    let mut another = session.clone();
    another.messages.push(ChatMessage::new(Role::User, "More?"));
    assert!(send::check_still_last(&another, "Hello").is_err());
}
