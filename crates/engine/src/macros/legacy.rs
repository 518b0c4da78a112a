//! The legacy names (RULES 4.2): `<USER>`, `<BOT>`, `<CHAR>`, `<GROUP>` and `<CHARIFNOTGROUP>`,
//! any case, replaced by the user's and the character's names before the scan, when the
//! environment says so. Each replacement counts against the caps like a macro's output
//! (RULES 4.4); past a cap the rest stays as written.

use super::expander::Expander;

/// The tags after their `<`, in lower case, with whether each is the user's name.
const TAGS: [(&str, bool); 5] = [
    ("user>", true),
    ("bot>", false),
    ("char>", false),
    ("charifnotgroup>", false),
    ("group>", false),
];

/// The tag starting just after a `<` at the start of `rest`: its length and whether it names
/// the user.
fn tag_at(rest: &[u8]) -> Option<(usize, bool)> {
    TAGS.iter().find_map(|&(tag, user)| {
        let head = rest.get(..tag.len())?;
        head.eq_ignore_ascii_case(tag.as_bytes())
            .then_some((tag.len(), user))
    })
}

pub(super) fn has_legacy_names(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr_iter(bytes).any(|at| tag_at(&bytes[at + 1..]).is_some())
}

fn memchr_iter(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'<')
        .map(|(i, _)| i)
}

impl Expander<'_, '_> {
    /// `text` with its legacy names replaced, within the caps.
    pub(super) fn legacy_names(&mut self, text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'<' {
                i += 1;
                continue;
            }
            let Some((len, user)) = tag_at(&bytes[i + 1..]) else {
                i += 1;
                continue;
            };
            let name = if user {
                self.env.user
            } else {
                self.env.char_name
            };
            if self.stopped || self.state.exhausted || !self.charge(name.len()) {
                break;
            }
            out.push_str(&text[copied..i]);
            out.push_str(name);
            i += 1 + len;
            copied = i;
        }
        out.push_str(&text[copied..]);
        out
    }
}
