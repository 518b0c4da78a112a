//! Reading the `model` object of a tokenizer.json as it streams: the vocabulary straight into
//! the text buffer, each merge straight into its table, without the maps of strings a generic
//! reading would build first.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{CompactBpe, MAX_ID};
impl<'de> serde::Deserialize<'de> for CompactBpe {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ModelVisitor)
    }
}

struct ModelVisitor;

impl<'de> Visitor<'de> for ModelVisitor {
    type Value = CompactBpe;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tokenizer model object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CompactBpe, A::Error> {
        let mut model = CompactBpe::default();
        let mut have_vocab = false;
        // Merges listed before the vocabulary (no file does this, but the format allows it)
        // wait here for it.
        let mut early_merges: Vec<(String, String)> = Vec::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "type" => {
                    let named: String = map.next_value()?;
                    if named != "BPE" {
                        return Err(not_bpe(&named));
                    }
                }
                "vocab" => {
                    map.next_value_seed(VocabSeed(&mut model))?;
                    model.index_texts();
                    have_vocab = true;
                }
                "merges" => {
                    if have_vocab {
                        map.next_value_seed(MergesSeed {
                            model: &mut model,
                            early: None,
                        })?;
                    } else {
                        map.next_value_seed(MergesSeed {
                            model: &mut model,
                            early: Some(&mut early_merges),
                        })?;
                    }
                }
                "byte_fallback" => {
                    model.byte_fallback = map.next_value::<Option<bool>>()?.unwrap_or(false)
                }
                "fuse_unk" => model.fuse_unk = map.next_value::<Option<bool>>()?.unwrap_or(false),
                "ignore_merges" => {
                    model.ignore_merges = map.next_value::<Option<bool>>()?.unwrap_or(false)
                }
                "unk_token" => model.unk = map.next_value()?,
                "continuing_subword_prefix" | "end_of_word_suffix" => {
                    if let Some(affix) = map.next_value::<Option<String>>()? {
                        if !affix.is_empty() {
                            return Err(de::Error::custom(format!(
                                "the model's {key} (\"{affix}\") is not supported: Promptloom \
                                 counts byte-pair models without word affixes"
                            )));
                        }
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !have_vocab {
            return Err(de::Error::custom("the model has no vocabulary"));
        }
        // A file that names no type is read as BPE when its vocabulary reads as one.
        for (left, right) in early_merges {
            model
                .resolve_merge(&left, &right)
                .map_err(de::Error::custom)?;
        }
        model.fit_merges();
        Ok(model)
    }
}

fn not_bpe<E: de::Error>(named: &str) -> E {
    E::custom(format!(
        "the model is {named}: Promptloom counts byte-pair (BPE) tokenizers only"
    ))
}

impl CompactBpe {
    fn resolve_merge(&mut self, left: &str, right: &str) -> Result<(), String> {
        let missing = |t: &str| {
            format!("the merge \"{left} {right}\" uses \"{t}\", which is not in the vocabulary")
        };
        let l = self.id_of(left.as_bytes()).ok_or_else(|| missing(left))?;
        let r = self.id_of(right.as_bytes()).ok_or_else(|| missing(right))?;
        let joined = [left.as_bytes(), right.as_bytes()].concat();
        let id = self.id_of(&joined).ok_or_else(|| {
            format!("the merge \"{left} {right}\" makes a token that is not in the vocabulary")
        })?;
        self.add_merge(l, r, id)
    }
}

struct VocabSeed<'m>(&'m mut CompactBpe);

impl<'de> DeserializeSeed<'de> for VocabSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for VocabSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a vocabulary object of token: id")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // The texts in the file's order, then put in id order once all are in.
        let mut read: Vec<u8> = Vec::new();
        let mut tokens: Vec<(u32, u32, u32)> = Vec::new();
        while let Some(token) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let id: u32 = map.next_value()?;
            if id >= MAX_ID {
                return Err(de::Error::custom(format!(
                    "token \"{token}\" has id {id}, past the {MAX_ID} a vocabulary may have"
                )));
            }
            let start = read.len() as u32;
            read.extend_from_slice(token.as_bytes());
            tokens.push((id, start, read.len() as u32));
        }
        self.0.set_tokens(&read, &tokens);
        Ok(())
    }
}

struct MergesSeed<'m> {
    model: &'m mut CompactBpe,
    early: Option<&'m mut Vec<(String, String)>>,
}

impl<'de> DeserializeSeed<'de> for MergesSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

/// One merge: `"a b"` in older files, `["a", "b"]` in newer ones.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum MergeEntry<'a> {
    Joined(#[serde(borrow)] std::borrow::Cow<'a, str>),
    Pair(
        #[serde(borrow)] std::borrow::Cow<'a, str>,
        #[serde(borrow)] std::borrow::Cow<'a, str>,
    ),
}

impl<'de> Visitor<'de> for MergesSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of merges")
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        while let Some(entry) = seq.next_element::<MergeEntry<'de>>()? {
            let (left, right) = match &entry {
                MergeEntry::Joined(s) => s.split_once(' ').ok_or_else(|| {
                    de::Error::custom(format!("the merge \"{s}\" is not two tokens"))
                })?,
                MergeEntry::Pair(a, b) => (a.as_ref(), b.as_ref()),
            };
            match self.early.as_deref_mut() {
                Some(early) => early.push((left.to_string(), right.to_string())),
                None => self
                    .model
                    .resolve_merge(left, right)
                    .map_err(de::Error::custom)?,
            }
        }
        Ok(())
    }
}
