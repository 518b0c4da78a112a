//! A user's own tokenizer.json, named by a model profile (RULES 5.8): read once per file and
//! kept for the life of the process, like the shipped vocabularies.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::hf::{HfCounter, TokenizerError, MAX_TOKENIZER_BYTES};
use super::{TokenCounter, TokenizerChoice, Vocabulary};

/// How many different own tokenizer files one process keeps; each holds a whole vocabulary.
pub const OWN_TOKENIZERS_KEPT: usize = 8;

/// A user's tokenizer that has been read: an index into the process's list of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OwnId(u32);

struct Own {
    path: PathBuf,
    /// Length and modification time when read: a changed file is read again.
    stamp: Stamp,
    counter: &'static HfCounter,
}

static OWN: Mutex<Vec<Own>> = Mutex::new(Vec::new());

/// The last files that could not be read as tokenizers, with why: a live preview asks again on
/// every build, and must not read a large bad file again each time.
static REFUSED: Mutex<Vec<(PathBuf, Stamp, TokenizerError)>> = Mutex::new(Vec::new());
const REFUSED_KEPT: usize = 8;

type Stamp = (u64, Option<std::time::SystemTime>);

impl OwnId {
    pub(super) fn counter(self) -> &'static dyn TokenCounter {
        let own = OWN.lock().unwrap_or_else(|e| e.into_inner());
        own[self.0 as usize].counter
    }
}

/// The tokenizer in the tokenizer.json at `path`, read on first use and when the file has
/// changed since, as an exact choice. A file that cannot be read, is too large, or is not a
/// byte-pair tokenizer.json is an error naming it.
pub fn own_tokenizer(path: &Path) -> Result<TokenizerChoice, TokenizerError> {
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path)
        .map_err(|e| TokenizerError::invalid(&shown, format!("cannot be read: {e}")))?;
    if !meta.is_file() {
        return Err(TokenizerError::invalid(&shown, "not a regular file"));
    }
    let stamp = (meta.len(), meta.modified().ok());
    let mut own = OWN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = own.iter().position(|o| o.path == path && o.stamp == stamp) {
        return Ok(choice(i));
    }
    let mut refused = REFUSED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, _, e)) = refused.iter().find(|(p, s, _)| p == path && *s == stamp) {
        return Err(e.clone());
    }
    if own.len() >= OWN_TOKENIZERS_KEPT {
        return Err(TokenizerError::invalid(
            &shown,
            format!(
                "{OWN_TOKENIZERS_KEPT} tokenizer files of your own are already loaded; restart \
                 to load others"
            ),
        ));
    }
    match read(path, &shown, meta.len()) {
        Ok(counter) => {
            own.push(Own {
                path: path.to_path_buf(),
                stamp,
                // Kept for the life of the process, like the shipped vocabularies, and at
                // most OWN_TOKENIZERS_KEPT of them.
                counter: Box::leak(Box::new(counter)),
            });
            Ok(choice(own.len() - 1))
        }
        Err(e) => {
            if refused.len() >= REFUSED_KEPT {
                refused.remove(0);
            }
            refused.push((path.to_path_buf(), stamp, e.clone()));
            Err(e)
        }
    }
}

/// The tokenizer in the file at `path` (`shown` in errors), `len` bytes long when looked at: at
/// most [`MAX_TOKENIZER_BYTES`] of it are read, however it grows meanwhile.
fn read(path: &Path, shown: &str, len: u64) -> Result<HfCounter, TokenizerError> {
    let too_long = |n: u64| {
        TokenizerError::invalid(
            shown,
            format!("{n} bytes, more than the {MAX_TOKENIZER_BYTES} a tokenizer file may have"),
        )
    };
    if len > MAX_TOKENIZER_BYTES as u64 {
        return Err(too_long(len));
    }
    let unreadable =
        |e: std::io::Error| TokenizerError::invalid(shown, format!("cannot be read: {e}"));
    let mut bytes = Vec::with_capacity(len as usize);
    std::fs::File::open(path)
        .map_err(unreadable)?
        .take(MAX_TOKENIZER_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() > MAX_TOKENIZER_BYTES {
        return Err(too_long(bytes.len() as u64));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| shown.to_string());
    let counter = HfCounter::from_json("", shown, &bytes);
    drop(bytes);
    super::release_freed_memory();
    // The name lives as long as the counter, which is kept for the life of the process.
    Ok(counter?.named(Box::leak(name.into_boxed_str())))
}

fn choice(index: usize) -> TokenizerChoice {
    TokenizerChoice {
        vocabulary: Vocabulary::Own(OwnId(index as u32)),
        exact: true,
    }
}

/// A gzip stream's contents, at most [`MAX_TOKENIZER_BYTES`] of them (`name` in errors).
pub(super) fn gunzip(packed: &[u8], name: &str) -> Result<Vec<u8>, TokenizerError> {
    // The stream's last four bytes say its size (modulo 2^32): the buffer is made that size at
    // once, not doubled on the way (a doubling leaves a large freed block behind).
    let said = packed
        .len()
        .checked_sub(4)
        .map(|at| u32::from_le_bytes([packed[at], packed[at + 1], packed[at + 2], packed[at + 3]]))
        .map_or(0, |n| n as usize);
    let mut out = Vec::with_capacity(said.min(MAX_TOKENIZER_BYTES) + 1);
    flate2::read::GzDecoder::new(packed)
        .take(MAX_TOKENIZER_BYTES as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| TokenizerError::invalid(name, format!("cannot be decompressed: {e}")))?;
    if out.len() > MAX_TOKENIZER_BYTES {
        return Err(TokenizerError::invalid(
            name,
            format!("more than {MAX_TOKENIZER_BYTES} bytes decompressed"),
        ));
    }
    Ok(out)
}
