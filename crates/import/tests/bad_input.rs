//! RULES 7.3: bad input is a typed error that names the file and the problem, never a panic.

mod common;

use std::fs;
use std::path::PathBuf;

use common::{b64, card_v2, png_with_text, zip_with};
use promptloom_import::{
    import_bytes, import_card_charx, import_card_png, import_chat, import_file, ImportError,
    Problem, MAX_FILE_SIZE,
};
use serde_json::json;

fn err(file: &str, bytes: &[u8]) -> ImportError {
    match import_bytes(file, bytes) {
        Ok(r) => panic!("{file} imported as {}", r.value.kind()),
        Err(e) => e,
    }
}

fn assert_names(e: &ImportError, file: &str, needle: &str) {
    let text = e.to_string();
    assert!(text.starts_with(&format!("{file}: ")), "{text}");
    assert!(text.contains(needle), "{text}");
}

/// A scratch folder of this test binary's own; removed by the test that made it.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("promptloom-import-{}-{name}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn text_that_is_not_json_is_refused() {
    let e = err("notes.json", b"hello {");
    assert!(matches!(e.problem, Problem::NotJson(_)));
    assert_names(&e, "notes.json", "not valid JSON");
}

#[test]
fn bytes_that_are_not_text_are_refused() {
    let e = err("blob.bin", &[0xff, 0xfe, 0x00, 0x81]);
    assert_eq!(e.code(), "not_json");
    assert_names(&e, "blob.bin", "UTF-8");
}

#[test]
fn json_of_no_known_shape_is_refused() {
    let e = err("odd.json", br#"{"hello": 1}"#);
    assert_eq!(e.code(), "unknown_format");
    assert_names(&e, "odd.json", "hello");
    let e = err("list.json", b"[1, 2]");
    assert_eq!(e.code(), "unknown_format");
}

#[test]
fn lines_of_json_that_are_not_a_chat_are_refused() {
    let e = err("log.jsonl", b"{\"a\": 1}\n{\"b\": 2}\n");
    assert_eq!(e.code(), "not_json");
    assert_names(&e, "log.jsonl", "not valid JSON");
}

#[test]
fn json_of_the_wrong_shape_is_refused() {
    let e = err("p.json", br#"{"prompts": 5}"#);
    assert_eq!(e.code(), "bad_shape");
    assert_names(&e, "p.json", "`prompts` is a number");
    let e = err("wi.json", br#"{"entries": "x"}"#);
    assert_names(&e, "wi.json", "`entries` is a string");
    let e = err(
        "card.json",
        br#"{"spec": "chara_card_v2", "data": {"name": 3}}"#,
    );
    assert_names(&e, "card.json", "no name");
    let e = err(
        "order.json",
        br#"{"prompts": [], "prompt_order": [{"character_id": 100001}]}"#,
    );
    assert_names(&e, "order.json", "no `order` list");
}

#[test]
fn png_without_a_card_is_refused() {
    let png = png_with_text(&[("Comment", "just a picture")], false);
    let e = err("photo.png", &png);
    assert!(matches!(e.problem, Problem::PngWithoutCard));
    assert_names(&e, "photo.png", "without a character card");
}

#[test]
fn card_base64_that_does_not_decode_is_refused() {
    let png = png_with_text(&[("chara", "this is not base64!")], false);
    let e = err("bad64.png", &png);
    assert_eq!(e.code(), "bad_base64");
    assert_names(&e, "bad64.png", "`chara` chunk's base64 does not decode");
}

#[test]
fn card_base64_of_something_not_json_is_refused() {
    let png = png_with_text(&[("chara", &b64("not json"))], false);
    let e = err("text.png", &png);
    assert_eq!(e.code(), "not_json");
    assert_names(&e, "text.png", "`chara` chunk");
}

#[test]
fn truncated_png_is_refused() {
    let png = png_with_text(&[("chara", &b64(&card_v2("Cut").to_string()))], true);
    for cut in [png.len() - 5, png.len() / 2, 20, 9] {
        let e = import_card_png("cut.png", &png[..cut]).expect_err("a cut PNG is refused");
        assert_eq!(e.code(), "bad_png", "cut at {cut}: {e}");
        assert_names(&e, "cut.png", "damaged or truncated");
    }
}

#[test]
fn png_with_a_damaged_chunk_is_refused() {
    let mut png = png_with_text(&[("chara", &b64(&card_v2("Bent").to_string()))], false);
    let at = png.len() / 2;
    png[at] ^= 0x55;
    let e = err("bent.png", &png);
    assert_eq!(e.code(), "bad_png", "{e}");
}

#[test]
fn png_with_a_card_chunk_that_does_not_inflate_is_refused() {
    // A zTXt `chara` chunk whose compressed text is not a zlib stream (its CRC is right).
    let mut png = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut png, 1, 1);
        encoder.set_color(png::ColorType::Grayscale);
        let mut writer = encoder.write_header().unwrap();
        writer
            .write_chunk(
                png::chunk::ChunkType(*b"zTXt"),
                b"chara\0\0not a zlib stream",
            )
            .unwrap();
        writer.write_image_data(&[0x80]).unwrap();
        writer.finish().unwrap();
    }
    let e = err("flat.png", &png);
    assert_eq!(e.code(), "bad_png", "{e}");
    assert_names(&e, "flat.png", "the `chara` chunk does not inflate (");
    // Damage, not the size limit.
    assert!(!e.to_string().contains("within"), "{e}");
}

#[test]
fn file_over_50_mb_is_refused_before_it_is_read() {
    let dir = scratch("large");
    let path = dir.join("huge.json");
    let file = fs::File::create(&path).unwrap();
    // A sparse file: its size is over the limit, its content is never read.
    file.set_len(MAX_FILE_SIZE + 1).unwrap();
    drop(file);
    let e = import_file(&path).expect_err("a large file is refused");
    fs::remove_dir_all(&dir).unwrap();
    assert!(matches!(e.problem, Problem::TooLarge { .. }));
    assert_names(&e, "huge.json", "50 MB");
    // The file name only, never the folder it was in.
    assert!(!e.to_string().contains(&*dir.to_string_lossy()));
}

#[test]
fn bytes_over_50_mb_are_refused() {
    let bytes = vec![b' '; usize::try_from(MAX_FILE_SIZE).unwrap() + 1];
    let e = err("big.json", &bytes);
    assert_eq!(e.code(), "too_large");
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let e = import_file(std::path::Path::new("no-such-file.json")).unwrap_err();
    assert_eq!(e.code(), "io");
    assert_names(&e, "no-such-file.json", "cannot read");
}

#[test]
fn charx_without_card_json_is_refused() {
    let zip = zip_with(&[("readme.txt", b"hi")]);
    let e = err("empty.charx", &zip);
    assert!(matches!(e.problem, Problem::CharxWithoutCard));
    assert_names(&e, "empty.charx", "without card.json");
}

#[test]
fn damaged_zip_is_refused() {
    let zip = zip_with(&[("card.json", card_v2("Z").to_string().as_bytes())]);
    let e = import_card_charx("cut.charx", &zip[..zip.len() / 2]).unwrap_err();
    assert_eq!(e.code(), "bad_zip", "{e}");
    assert_names(&e, "cut.charx", "zip");
}

#[test]
fn zip_bomb_card_json_is_refused() {
    // 60 MB of spaces deflate to a few dozen KB.
    let padding = vec![b' '; 60 << 20];
    let zip = zip_with(&[("card.json", &padding)]);
    assert!(zip.len() < 1 << 20);
    let e = err("bomb.charx", &zip);
    assert_eq!(e.code(), "zip_bomb", "{e}");
    assert_names(&e, "bomb.charx", "card.json");
}

#[test]
fn zip_with_too_many_entries_is_refused() {
    let names: Vec<String> = (0..5000).map(|i| format!("f{i}")).collect();
    let files: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
    let zip = zip_with(&files);
    let e = err("many.charx", &zip);
    assert_eq!(e.code(), "zip_bomb", "{e}");
    assert_names(&e, "many.charx", "5000 files");
}

#[test]
fn chat_with_a_broken_line_is_refused_naming_the_line() {
    let text = format!(
        "{}\n{{\"mes\": \"a\", \"is_user\": true}}\nnot json\n",
        json!({"user_name": "A"})
    );
    let e = import_chat("chat.jsonl", text.as_bytes()).unwrap_err();
    assert_eq!(e.code(), "not_json");
    assert_names(&e, "chat.jsonl", "line 3");
}

#[test]
fn invalid_native_preset_names_the_field() {
    let preset = json!({
        "formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [ { "id": "a", "role": "system" }, { "id": "a", "role": "user" } ],
        "contextRecipes": []
    });
    let e = err("dup.json", preset.to_string().as_bytes());
    assert_names(&e, "dup.json", "messageTemplates[1].id");
}
