//! Plain-text rendering of typed and wire trees for the terminal: text-format-like lines with
//! the type and byte span of each node as a trailing comment.

use crate::codec::tree::TypedNode;
use std::io::Write;

/// `typed`: nodes come from a schema, so a field it does not know is marked unknown.
pub fn print_tree(
    nodes: &[TypedNode],
    depth: usize,
    typed: bool,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let indent = "  ".repeat(depth);
    for n in nodes {
        let span = n.whole();
        let label = n.label.strip_prefix('#').unwrap_or(&n.label);
        let ty = if typed && !n.known { format!("unknown {}", n.type_name) } else { n.type_name.clone() };
        match &n.value {
            Some(v) => {
                let line = format!("{indent}{label}: {v}");
                writeln!(out, "{line:<56} # {} @{}..{}", ty, span.start, span.end)?;
            }
            None => {
                let line = format!("{indent}{label} {{");
                writeln!(out, "{line:<56} # {} @{}..{}", ty, span.start, span.end)?;
                print_tree(&n.children, depth + 1, typed, out)?;
                writeln!(out, "{indent}}}")?;
            }
        }
    }
    Ok(())
}
