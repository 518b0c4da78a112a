//! Conditional blocks (RULES 4.2): `{{#if NAME}}…{{else}}…{{/if}}` and
//! `{{#unless NAME}}…{{/unless}}`, with `{{else if NAME}}` and `{{else unless NAME}}` chains, as
//! SillyTavern's story strings write them.
//!
//! A text's blocks are resolved before its other macros (SillyTavern renders the blocks of its
//! story string before it replaces its macros): the text is read into a tree of blocks, each
//! condition of a branch that is taken is evaluated as the macro it names, and the text of the
//! branches taken is what the scan then expands. A condition of a branch not taken is never
//! evaluated, so a `{{setvar}}` there does nothing.
//!
//! Only tags outside any other macro are blocks; a tag inside a macro's arguments or a block whose
//! tags are not well formed stays as written with a warning that says where (line and column),
//! and the scan leaves such tags alone (no second warning). Blocks nest at most [`MAX_BLOCK_DEPTH`]
//! deep; past it the text's blocks all stay as written, with a warning.

use std::fmt;

use super::expander::{Expander, Output};
use super::text::shorten;
use crate::said::Said;
use crate::texts;

/// How deep blocks may nest in one text (docs/ARCHITECTURE.md, "Limits"). SillyTavern's own story
/// strings nest one deep.
pub const MAX_BLOCK_DEPTH: usize = 32;

/// `#if` or `#unless`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    If,
    Unless,
}

impl Kind {
    fn of(word: &str) -> Option<Kind> {
        match word {
            "if" => Some(Kind::If),
            "unless" => Some(Kind::Unless),
            _ => None,
        }
    }
}

/// One tag of a block, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag<'t> {
    Open(Kind, &'t str),
    /// `{{else}}`, or `{{else if NAME}}` / `{{else unless NAME}}`.
    Else(Option<(Kind, &'t str)>),
    Close(Kind),
}

/// What is wrong with a block, with where its tag starts in the text (a byte offset).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockProblem {
    /// The tag as written (cut when long).
    pub tag: String,
    /// Byte offset of the tag's `{{` in the text.
    pub offset: usize,
    pub line: usize,
    /// In characters, from 1.
    pub column: usize,
    pub kind: BlockProblemKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockProblemKind {
    /// An opening tag without its closing tag.
    Unclosed,
    /// A closing tag or `{{else}}` that belongs to no open block (or a second `{{else}}`).
    Stray,
    /// A block other than `#if` and `#unless` (`{{#each}}`, `{{/with}}`).
    Unknown,
    /// A condition that is empty or holds braces: a condition is one macro, like
    /// `{{#if description}}`.
    BadCondition,
    /// A block tag inside another macro's arguments, where blocks are not read.
    InArguments,
    /// Blocks nested deeper than [`MAX_BLOCK_DEPTH`]: the text's blocks are left as written.
    TooDeep,
}

impl BlockProblem {
    /// The problem as a text of the engine (`crate::texts`), said with its tag and place.
    pub fn said(&self) -> Said {
        let text = match self.kind {
            BlockProblemKind::Unclosed => texts::BLOCK_UNCLOSED,
            BlockProblemKind::Stray => texts::BLOCK_STRAY,
            BlockProblemKind::Unknown => texts::BLOCK_UNKNOWN,
            BlockProblemKind::BadCondition => texts::BLOCK_BAD_CONDITION,
            BlockProblemKind::InArguments => texts::BLOCK_IN_ARGUMENTS,
            BlockProblemKind::TooDeep => {
                return texts::BLOCK_TOO_DEEP
                    .with("depth", MAX_BLOCK_DEPTH)
                    .with("line", self.line)
                    .with("column", self.column)
            }
        };
        text.with("tag", &self.tag)
            .with("line", self.line)
            .with("column", self.column)
    }
}

impl fmt::Display for BlockProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.said().fmt(f)
    }
}

/// The problems of `text`'s blocks, in the order of the text, as an expansion would warn of them
/// (every condition counted as taken). Empty when every block is well formed.
pub fn block_problems(text: &str) -> Vec<BlockProblem> {
    let parsed = parse(text);
    let mut problems = parsed.problems;
    problems.sort_by_key(|p| p.offset);
    problems
}

/// A piece of a text read for its blocks.
#[derive(Debug)]
enum Node<'t> {
    /// Text copied as it is (macros in it are the scan's).
    Text(&'t str),
    Block {
        kind: Kind,
        condition: &'t str,
        then: Vec<Node<'t>>,
        otherwise: Vec<Node<'t>>,
    },
}

/// A block being read: its tag and the branches so far.
struct Open<'t> {
    kind: Kind,
    condition: &'t str,
    /// Where its opening tag is, for the warning if it is never closed.
    tag: (usize, usize),
    then: Vec<Node<'t>>,
    otherwise: Vec<Node<'t>>,
    /// Where its `{{else}}` is, once met: what follows goes to `otherwise`.
    else_tag: Option<(usize, usize)>,
    /// Opened by `{{else if}}`: closed by its parent's closing tag, together with it.
    chained: bool,
}

impl<'t> Open<'t> {
    fn push(&mut self, node: Node<'t>) {
        if self.else_tag.is_some() {
            self.otherwise.push(node);
        } else {
            self.then.push(node);
        }
    }

    fn into_node(self) -> Node<'t> {
        Node::Block {
            kind: self.kind,
            condition: self.condition,
            then: self.then,
            otherwise: self.otherwise,
        }
    }
}

struct Parsed<'t> {
    nodes: Vec<Node<'t>>,
    problems: Vec<BlockProblem>,
    /// True when some tag was read as a block (the text changes when resolved).
    has_blocks: bool,
}

/// A tag found at the top level of the text: its range and what it is.
enum Found<'t> {
    Tag(Tag<'t>),
    /// A tag that looks like a block but is not one this reads, with why.
    Bad(BlockProblemKind),
}

/// Reads `text` into nodes: the tags outside any macro are read as blocks; everything else is
/// text.
fn parse(text: &str) -> Parsed<'_> {
    let bytes = text.as_bytes();
    let mut problems = Vec::new();
    let mut has_blocks = false;
    let mut stack: Vec<Open<'_>> = Vec::new();
    let mut top: Vec<Node<'_>> = Vec::new();
    // Open macros around the current position (the scan's frames): whether each is a comment.
    let mut macros: Vec<bool> = Vec::new();
    let mut literal = 0;
    let mut i = 0;
    let problem = |problems: &mut Vec<BlockProblem>, start: usize, end: usize, kind| {
        problems.push(located(text, start, end, kind));
    };
    macro_rules! push {
        ($node:expr) => {
            match stack.last_mut() {
                Some(open) => open.push($node),
                None => top.push($node),
            }
        };
    }
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                let run = bytes[i..].iter().take_while(|&&b| b == b'{').count();
                if run < 2 {
                    i += 1;
                    continue;
                }
                // As the scan reads them: in `{{{x}}}` the last two braces open the macro.
                let open = i + run - 2;
                let inside_comment = macros.last().copied().unwrap_or(false);
                match tag_at(text, open) {
                    Some((end, found)) if macros.is_empty() => {
                        if literal < open {
                            push!(Node::Text(&text[literal..open]));
                        }
                        literal = end;
                        i = end;
                        match found {
                            Found::Bad(kind) => {
                                problem(&mut problems, open, end, kind);
                                push!(Node::Text(&text[open..end]));
                            }
                            Found::Tag(tag) => {
                                has_blocks = true;
                                if stack.len() >= MAX_BLOCK_DEPTH
                                    && matches!(tag, Tag::Open(..) | Tag::Else(Some(_)))
                                {
                                    // Past the cap nothing of this text is read as a block.
                                    return Parsed {
                                        nodes: vec![Node::Text(text)],
                                        problems: vec![located(
                                            text,
                                            open,
                                            end,
                                            BlockProblemKind::TooDeep,
                                        )],
                                        has_blocks: false,
                                    };
                                }
                                let kept = apply(tag, (open, end), &mut stack, &mut top);
                                if let Err(kind) = kept {
                                    problem(&mut problems, open, end, kind);
                                    push!(Node::Text(&text[open..end]));
                                }
                            }
                        }
                        continue;
                    }
                    Some((end, _)) if !inside_comment => {
                        // A block tag inside a macro's arguments: the scan keeps it as written.
                        problem(&mut problems, open, end, BlockProblemKind::InArguments);
                        i = end;
                        continue;
                    }
                    _ => {}
                }
                let comment = inside_comment || text[open + 2..].trim_start().starts_with("//");
                macros.push(comment);
                i = open + 2;
            }
            b'}' if !macros.is_empty() && bytes.get(i + 1) == Some(&b'}') => {
                macros.pop();
                i += 2;
            }
            _ => i += 1,
        }
    }
    if literal < text.len() {
        push!(Node::Text(&text[literal..]));
    }
    // Blocks never closed: their tags stay as written, their text is kept.
    while let Some(open) = stack.pop() {
        let (start, end) = open.tag;
        // A block opened by `{{else if}}` has its tag written by its parent, as its `{{else}}`.
        let mut nodes = Vec::new();
        if !open.chained {
            problems.push(located(text, start, end, BlockProblemKind::Unclosed));
            nodes.push(Node::Text(&text[start..end]));
        }
        nodes.extend(open.then);
        if let Some((s, e)) = open.else_tag {
            nodes.push(Node::Text(&text[s..e]));
        }
        nodes.extend(open.otherwise);
        let target = match stack.last_mut() {
            Some(parent) => {
                if parent.else_tag.is_some() {
                    &mut parent.otherwise
                } else {
                    &mut parent.then
                }
            }
            None => &mut top,
        };
        target.extend(nodes);
    }
    Parsed {
        nodes: top,
        problems,
        has_blocks,
    }
}

/// Applies one block tag to the open blocks; the problem when it fits none.
fn apply<'t>(
    tag: Tag<'t>,
    range: (usize, usize),
    stack: &mut Vec<Open<'t>>,
    top: &mut Vec<Node<'t>>,
) -> Result<(), BlockProblemKind> {
    let open = |kind, condition, chained| Open {
        kind,
        condition,
        tag: range,
        then: Vec::new(),
        otherwise: Vec::new(),
        else_tag: None,
        chained,
    };
    match tag {
        Tag::Open(kind, condition) => {
            stack.push(open(kind, condition, false));
            Ok(())
        }
        Tag::Else(chain) => {
            let Some(current) = stack.last_mut() else {
                return Err(BlockProblemKind::Stray);
            };
            if current.else_tag.is_some() {
                return Err(BlockProblemKind::Stray);
            }
            current.else_tag = Some(range);
            if let Some((kind, condition)) = chain {
                stack.push(open(kind, condition, true));
            }
            Ok(())
        }
        Tag::Close(kind) => {
            // The block it closes: the innermost one not opened by `{{else if}}`.
            let Some(at) = stack.iter().rposition(|o| !o.chained) else {
                return Err(BlockProblemKind::Stray);
            };
            if stack[at].kind != kind {
                return Err(BlockProblemKind::Stray);
            }
            while stack.len() > at {
                let Some(done) = stack.pop() else { break };
                let node = done.into_node();
                match stack.last_mut() {
                    Some(parent) => parent.push(node),
                    None => top.push(node),
                }
            }
            Ok(())
        }
    }
}

/// The block tag whose `{{` is at `open`, if the text there is one: the end of the tag and what
/// it is. `None` for anything that is not a block tag (an ordinary macro).
fn tag_at(text: &str, open: usize) -> Option<(usize, Found<'_>)> {
    let rest = &text[open + 2..];
    let body_start = rest.len() - rest.trim_start().len();
    let first = rest[body_start..].chars().next()?;
    let is_else = rest[body_start..].starts_with("else")
        && rest[body_start + 4..]
            .chars()
            .next()
            .is_some_and(|c| c == '}' || c.is_whitespace());
    if first != '#' && first != '/' && !is_else {
        return None;
    }
    // `{{/ comment}}` and `{{// comment}}` are comments, not closing tags.
    if rest[body_start..].starts_with("//") {
        return None;
    }
    let close = rest.find("}}")?;
    let end = open + 2 + close + 2;
    let body = rest[..close].trim();
    if body.contains('{') {
        // A condition made of macros: not a block this reads.
        return match rest[..close].find("{{") {
            Some(_) if first == '#' => Some((end, Found::Bad(BlockProblemKind::BadCondition))),
            _ => None,
        };
    }
    let (word, argument) = match body.find(char::is_whitespace) {
        Some(at) => (&body[..at], body[at..].trim()),
        None => (body, ""),
    };
    let found = if let Some(name) = word.strip_prefix('#') {
        match Kind::of(name) {
            Some(kind) if is_condition(argument) => Found::Tag(Tag::Open(kind, argument)),
            Some(_) => Found::Bad(BlockProblemKind::BadCondition),
            None => Found::Bad(BlockProblemKind::Unknown),
        }
    } else if let Some(name) = word.strip_prefix('/') {
        match Kind::of(name) {
            Some(kind) if argument.is_empty() => Found::Tag(Tag::Close(kind)),
            _ => Found::Bad(BlockProblemKind::Unknown),
        }
    } else if argument.is_empty() {
        Found::Tag(Tag::Else(None))
    } else {
        let (word, condition) = match argument.find(char::is_whitespace) {
            Some(at) => (&argument[..at], argument[at..].trim()),
            None => (argument, ""),
        };
        match Kind::of(word) {
            Some(kind) if is_condition(condition) => Found::Tag(Tag::Else(Some((kind, condition)))),
            Some(_) => Found::Bad(BlockProblemKind::BadCondition),
            None => Found::Bad(BlockProblemKind::Unknown),
        }
    };
    Some((end, found))
}

/// A condition is one macro without braces: a name, and arguments after `::` or `:`.
fn is_condition(text: &str) -> bool {
    !text.is_empty() && !text.contains(['{', '}'])
}

/// A problem with the tag at `start..end`, its line and column counted in `text`.
fn located(text: &str, start: usize, end: usize, kind: BlockProblemKind) -> BlockProblem {
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    BlockProblem {
        tag: shorten(&text[start..end]),
        offset: start,
        line,
        column: text[line_start..start].chars().count() + 1,
        kind,
    }
}

/// True when `body` (a macro between its braces) is a block tag, which the scan leaves as
/// written: blocks were resolved (or warned about) before the scan.
pub(super) fn is_block_tag(body: &str) -> bool {
    let body = body.trim_start();
    body.starts_with('#')
        || (body.starts_with('/') && !body.starts_with("//"))
        || body
            .strip_prefix("else")
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
}

impl Expander<'_, '_> {
    /// `text` with its blocks resolved (RULES 4.2); each problem is a warning.
    pub(super) fn resolve_blocks<'t>(
        &mut self,
        text: &'t str,
        depth: usize,
    ) -> std::borrow::Cow<'t, str> {
        if !text.contains("{{") {
            return text.into();
        }
        let parsed = parse(text);
        for problem in &parsed.problems {
            let said = problem.said();
            self.warn(|| said);
        }
        if !parsed.has_blocks {
            return text.into();
        }
        let mut out = String::with_capacity(text.len());
        self.write_nodes(&parsed.nodes, &mut out, depth, text);
        out.into()
    }

    /// Writes the branches taken; `source` is the text the nodes were read from. When the macro
    /// tracer runs, each run of text kept is noted with where it stood in `source`.
    fn write_nodes(&mut self, nodes: &[Node<'_>], out: &mut String, depth: usize, source: &str) {
        for node in nodes {
            match node {
                Node::Text(text) => {
                    if let Some(segments) = &mut self.segments {
                        segments.push((out.len(), offset_in(source, text)));
                    }
                    out.push_str(text)
                }
                Node::Block {
                    kind,
                    condition,
                    then,
                    otherwise,
                } => {
                    let at = if self.segments.is_some() {
                        let at = offset_in(source, condition);
                        source[..at].rfind("{{").unwrap_or(at)
                    } else {
                        0
                    };
                    let holds = self.condition(*kind, condition, at, depth);
                    let taken = match kind {
                        Kind::If => holds,
                        Kind::Unless => !holds,
                    };
                    self.write_nodes(if taken { then } else { otherwise }, out, depth, source);
                }
            }
        }
    }

    /// Whether the macro `condition` names expands to something other than white space. A macro
    /// that stays as written (unknown, or past a cap) is false.
    fn condition(&mut self, kind: Kind, condition: &str, at: usize, depth: usize) -> bool {
        let raw = format!("{{{{{condition}}}}}");
        self.block = Some(match kind {
            Kind::If => "if",
            Kind::Unless => "unless",
        });
        let output = self.evaluate(condition, &raw, at, depth);
        self.block = None;
        match output {
            Output::Text(text) => !text.trim().is_empty(),
            Output::Kept | Output::Trim => false,
        }
    }
}

/// Where `part`, a slice of `source`, starts in it; 0 when it is not one.
fn offset_in(source: &str, part: &str) -> usize {
    let at = (part.as_ptr() as usize).wrapping_sub(source.as_ptr() as usize);
    if at <= source.len() && source.is_char_boundary(at) {
        at
    } else {
        0
    }
}
