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
    send::append_turn(&mut s, Some("Hi"), "Hello.", info("a"));
    assert_eq!(
        s.messages.len(),
        2,
        "the input was already the last message"
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
fn regenerating_keeps_the_earlier_replies_as_swipes_to_flip_to() {
    let mut s = chat();
    send::append_turn(&mut s, None, "First.", info("a"));
    let earlier = send::before_last_reply(&s).expect("a reply to regenerate");
    assert_eq!(earlier.messages.len(), 1);
    send::replace_last_reply(&mut s, "Second.", info("b")).expect("replaced");
    send::replace_last_reply(&mut s, "Third.", info("c")).expect("replaced");
    let last = &s.messages[1];
    assert_eq!(&*last.content, "Third.");
    let swipes: Vec<&str> = last.swipes.iter().map(|w| w.content.as_str()).collect();
    assert_eq!(swipes, ["First.", "Second."]);

    send::choose_swipe(&mut s, 1, 0).expect("flipped");
    let last = &s.messages[1];
    assert_eq!(&*last.content, "First.");
    assert_eq!(
        last.reply.as_ref().map(|r| r.model.as_str()),
        Some("a"),
        "its reply info comes along"
    );
    let swipes: Vec<&str> = last.swipes.iter().map(|w| w.content.as_str()).collect();
    assert_eq!(swipes, ["Third.", "Second."]);
    assert_eq!(
        last.swipes[0].reply.as_ref().map(|r| r.model.as_str()),
        Some("c")
    );
}

#[test]
fn nothing_to_regenerate_or_flip_is_an_error_that_changes_nothing() {
    let mut s = chat();
    let e = send::before_last_reply(&s).unwrap_err();
    assert_eq!(e.code(), "not_found");
    assert!(e.to_string().contains("a reply to regenerate"), "{e}");
    assert!(send::replace_last_reply(&mut s, "x", info("a")).is_err());
    assert!(send::choose_swipe(&mut s, 0, 0).is_err());
    assert!(send::choose_swipe(&mut s, 5, 0).is_err());
    assert_eq!(s, chat());
}
