use super::*;
use crate::model::parse_session;

#[test]
fn source_kinds_are_listed_in_declaration_order() {
    for (i, kind) in SourceKind::ALL.iter().enumerate() {
        assert_eq!(*kind as usize, i, "{kind:?}");
    }
    // A new kind fails to compile here: add it to `ALL` too.
    let listed = |kind: SourceKind| match kind {
        SourceKind::Template
        | SourceKind::History
        | SourceKind::Input
        | SourceKind::Profile
        | SourceKind::Ephemeral
        | SourceKind::Lorebook
        | SourceKind::Processor
        | SourceKind::Memory => SourceKind::ALL.contains(&kind),
    };
    assert!(SourceKind::ALL.iter().all(|k| listed(*k)));
}

#[test]
fn a_stored_message_reads_as_stored_until_something_changes_it() {
    let session = parse_session(
        r#"{"formatVersion": 1, "id": "s", "messages": [
            {"id": "m0", "role": "user", "name": "Ann", "content": "hello",
             "attachments": [{"id": "a", "kind": "image", "mime": "image/png", "name": "p.png",
                              "dataBase64": "AA=="}]}]}"#,
    )
    .expect("valid");
    assert!(
        PipelineMessage::stored(&session, 1).is_none(),
        "past the end"
    );
    let mut m = PipelineMessage::stored(&session, 0).expect("message 0");
    assert_eq!(m.as_stored().map(|(i, _)| i), Some(0));
    assert_eq!(
        (m.content(), m.name(), m.kind(), m.history_index()),
        ("hello", Some("Ann"), SourceKind::History, Some(0))
    );
    assert_eq!(*m.source(), Source::history(0));
    assert_eq!(
        *m.attachments(),
        [AttachmentRef {
            message: 0,
            attachment: 0
        }]
    );

    // What it already is changes nothing.
    m.set_tokens(7);
    m.set_name(Some("Ann".into()));
    m.set_attachments(m.attachments().into_owned());
    assert!(m.as_stored().is_some());
    assert_eq!(m.tokens(), Some(7));

    // Another role: still the stored text, but no longer as stored.
    let mut other_role = m.clone();
    other_role.role = Role::System;
    assert!(other_role.as_stored().is_none());
    assert_eq!(other_role.content(), "hello");

    // Another name: its own parts, recounted.
    let mut renamed = m.clone();
    renamed.set_name(Some("Bea".into()));
    assert!(renamed.as_stored().is_none());
    assert_eq!(renamed.tokens(), None);
    assert_eq!((renamed.content(), renamed.name()), ("hello", Some("Bea")));
    assert_eq!(renamed.attachments(), m.attachments());

    // A processor's mark: its own provenance, the rest as before.
    let mut marked = m.clone();
    marked.source_mut().processor = Some("p".into());
    assert!(marked.as_stored().is_none());
    assert_eq!(marked.tokens(), Some(7), "the text is the same");
    assert_eq!(marked.history_index(), Some(0));
    assert_ne!(marked, m);
    assert_eq!(
        m.clone().into_owned(),
        m,
        "the same message, standing alone"
    );
}
