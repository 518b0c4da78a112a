//! Replies built to cost far more memory than their bytes, each decoded under a counting
//! allocator: a reply just under the 16 MiB cap made of tiny objects, nested a hundred deep, or
//! a stream event of the same at 1 MiB. What is not read is skipped as it is read, and what is
//! kept is capped; the peak stays a small multiple of the bytes (docs/ARCHITECTURE.md, "Limits").

#[path = "../../engine/tests/counting/mod.rs"]
mod counting;

use counting::peak_of;
use promptloom_send::{decode_full, provider_error_text, Decoder, Dialect, SseEvent};

const MIB: usize = 1 << 20;

/// A 16 MiB-less-a-little body: an OpenAI reply with `junk` (unknown to every decoder) or
/// `content` (read by them) holding `{}` after `{}`, or nested lists a hundred deep.
fn bodies() -> Vec<(&'static str, Vec<u8>)> {
    let n = (16 * MIB - 200) / 3;
    let tiny = |key: &str| {
        let mut b = format!("{{\"choices\":[{{\"message\":{{\"content\":\"hi\"}}}}],\"{key}\":[");
        b.push_str(&"{},".repeat(n));
        b.push_str("{}]}");
        b.into_bytes()
    };
    let nested = {
        let unit = format!("{}{}", "[".repeat(100), "]".repeat(100));
        let mut b = String::from("{\"choices\":[{\"message\":{\"content\":\"hi\"}}],\"junk\":[");
        let times = (16 * MIB - 200) / (unit.len() + 1);
        for _ in 0..times {
            b.push_str(&unit);
            b.push(',');
        }
        b.push_str("0]}");
        b.into_bytes()
    };
    vec![
        ("tiny unknown", tiny("junk")),
        ("tiny read", tiny("content")),
        ("nested", nested),
    ]
}

#[test]
fn a_reply_under_the_byte_cap_costs_a_small_multiple_of_its_bytes() {
    for (name, body) in bodies() {
        assert!(body.len() < 16 * MIB, "{name}");
        let (result, peak) = peak_of(|| decode_full(Dialect::Openai, &body).map(|e| e.len()));
        // Unknown members are skipped; a reply that would keep too many values is refused.
        match name {
            "tiny read" => assert!(result.is_err(), "{name}: {result:?}"),
            _ => assert!(result.is_ok(), "{name}: {result:?}"),
        }
        assert!(peak < 64 * MIB, "{name}: peak {} MiB", peak / MIB);
        let (_, peak) = peak_of(|| provider_error_text(&body));
        assert!(
            peak < 64 * MIB,
            "{name} as an error body: peak {} MiB",
            peak / MIB
        );
    }
}

#[test]
fn a_stream_event_of_tiny_objects_costs_a_small_multiple_of_its_bytes() {
    let n = (MIB - 100) / 3;
    let data = format!(
        "{{\"choices\":[{{\"delta\":{{\"content\":\"hi\"}}}}],\"junk\":[{}{{}}]}}",
        "{},".repeat(n)
    );
    let event = SseEvent {
        event: None,
        data,
        id: None,
    };
    let mut decoder = Decoder::new(Dialect::Openai);
    let (events, peak) = peak_of(|| decoder.event(&event).expect("decodes"));
    assert_eq!(events.len(), 1);
    assert!(peak < 8 * MIB, "peak {} MiB", peak / MIB);
}
