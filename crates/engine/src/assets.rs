//! Where attachment bytes come from. The engine never opens files itself: a front end hands it an
//! [`AssetSource`] (the command line reads paths relative to the session file; the app reads its
//! own store). Bytes are read only when a processor needs them: a text attachment being inlined,
//! or the final provider request being encoded (RULES 5.7).

use base64::Engine as _;

use crate::model::Attachment;
use crate::said::Said;
use crate::texts;

/// Hands out the bytes of an attachment.
pub trait AssetSource: Send + Sync {
    fn load(&self, attachment: &Attachment) -> Result<Vec<u8>, Said>;

    /// Whether `load` would give the attachment's bytes, or why not, without reading them where
    /// that can be told without (a file's path and kind). The asset resolver asks before an
    /// attachment goes into a request: one that cannot be read becomes a note and a warning.
    fn check(&self, attachment: &Attachment) -> Result<(), Said> {
        self.load(attachment).map(|_| ())
    }
}

/// Attachments carried inline as `dataBase64`; a `path` cannot be read without a location, so it
/// is an error that says so.
#[derive(Debug, Default, Clone, Copy)]
pub struct InlineAssets;

impl AssetSource for InlineAssets {
    fn load(&self, attachment: &Attachment) -> Result<Vec<u8>, Said> {
        inline_bytes(attachment).unwrap_or_else(|| {
            Err(match &attachment.path {
                Some(path) => texts::ASSET_NO_FILE_ACCESS.with("path", path),
                None => texts::ASSET_NO_DATA.into(),
            })
        })
    }
}

/// The decoded `dataBase64` of an attachment, if it has one.
pub fn inline_bytes(attachment: &Attachment) -> Option<Result<Vec<u8>, Said>> {
    attachment.data_base64.as_deref().map(|data| {
        base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|_| texts::ASSET_BAD_BASE64.into())
    })
}

/// Standard base64, for the provider requests.
pub fn encode(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AttachmentKind;

    fn attachment(data: Option<&str>, path: Option<&str>) -> Attachment {
        Attachment {
            id: "a".into(),
            kind: AttachmentKind::Text,
            mime: "text/plain".into(),
            name: "a.txt".into(),
            path: path.map(Into::into),
            data_base64: data.map(Into::into),
            transcript: None,
        }
    }

    #[test]
    fn inline_data_decodes_and_bad_data_is_an_error() {
        assert_eq!(
            InlineAssets.load(&attachment(Some("aGVsbG8="), None)),
            Ok(b"hello".to_vec())
        );
        let err = InlineAssets
            .load(&attachment(Some("!!!"), None))
            .unwrap_err();
        assert_eq!(err.code, texts::ASSET_BAD_BASE64.code);
        let err = InlineAssets
            .load(&attachment(None, Some("x.txt")))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"x.txt\" cannot be read here (no file access)"
        );
        assert_eq!(encode(b"hello"), "aGVsbG8=");
    }
}
