//! The lorebook, all of it (RULES 6 and 5.11.1): which entries a text activates, SillyTavern's
//! activation, the `lorebook` processor that runs either over a build and places what they
//! took, and the report of what activated and why.
//!
//! Its files, each using only those listed before it: `report.rs` the report (a build result
//! carries it, so the pipeline framework reads this file and no other of the folder); `scan.rs`
//! the native key matching for books of thousands of entries; `sillytavern/` SillyTavern's scan
//! (`keys.rs` what it reads and how a key matches, `mod.rs` its rounds, groups, timed effects and
//! budget); `tester.rs` every entry explained, fired or not, for the lorebook tester;
//! `processor.rs` the processor over the pipeline's context.

pub mod report;
pub mod scan;
pub mod sillytavern;
pub mod tester;
mod tester_search;

mod processor;

pub use processor::{Lorebook, MAX_RECURSION};
