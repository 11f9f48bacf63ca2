//! `walscope decode` and `walscope encode`.

use super::edit::Target;
use super::render::print_tree;
use super::wal_view;
use super::{Format, InputEncoding, SchemaArgs, TextInput, read_input};
use crate::codec::{self, tree};
use crate::datasync::ProgressFileKind;
use crate::dump::framing::locate;
use crate::wire;
use anyhow::{Context, Result, bail};
use base64::Engine;
use std::io::Write;
use std::path::Path;

fn decode_input(raw: Vec<u8>, input: InputEncoding, file: &str) -> Result<Vec<u8>> {
    match input {
        InputEncoding::Raw => Ok(raw),
        InputEncoding::Hex => {
            let text = String::from_utf8_lossy(&raw);
            codec::value::decode_hex(&text).map_err(|e| anyhow::anyhow!("{file}: not hex: {e}"))
        }
        InputEncoding::Base64 => {
            let text: String = String::from_utf8_lossy(&raw).chars().filter(|c| !c.is_whitespace()).collect();
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .with_context(|| format!("{file}: not base64"))
        }
    }
}

pub fn decode(
    schema: &SchemaArgs,
    target: &Target,
    format: Format,
    input: InputEncoding,
    lenient: bool,
    file: &str,
) -> Result<()> {
    let mut bytes = decode_input(read_input(file)?, input, file)?;
    let progress = ProgressFileKind::from_path(Path::new(file)).is_some();
    let mut target_type = target.type_name.clone();
    if target.framing.is_some() || progress {
        let set = schema.load()?;
        let (desc, framing) = target.resolve(&set, file)?;
        target_type = Some(desc.full_name().to_string());
        if let Some(f) = framing {
            let (_, _, range) =
                locate(&bytes, f, target.frame).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
            bytes = bytes[range].to_vec();
        }
    }
    let type_name = target_type.as_deref();
    let mut out = std::io::stdout().lock();
    let Some(type_name) = type_name else {
        if matches!(format, Format::Json | Format::Text) {
            bail!(
                "--format {format:?} needs --type T (see `walscope schema list`); without a type use --format wire"
            );
        }
        return print_wire(&bytes, file, &mut out);
    };
    if format == Format::Wire {
        return print_wire(&bytes, file, &mut out);
    }
    let set = schema.load()?;
    let desc = set.message(type_name)?;
    // Only the tree shows the wire spans; JSON and text need the message alone.
    let decoded = match format {
        Format::Tree => codec::decode(&desc, &bytes).map(|d| (d.message, Some(d.wire))),
        _ => codec::decode_message(&desc, &bytes).map(|m| (m, None)),
    };
    let (message, wire_tree) = match decoded {
        Ok(d) => d,
        Err(e) => {
            if format == Format::Tree {
                // Show what could be read before the bad byte; the error still fails the run.
                let opts = wire::DecodeOptions { schema: Some(desc.clone()), ..Default::default() };
                let partial = wire::decode_with(&bytes, &opts);
                let nodes = tree::build(Some(&desc), &bytes, &partial.root);
                writeln!(out, "{} ({} bytes, partial)", desc.full_name(), bytes.len())?;
                print_tree(&nodes, 1, true, &mut out)?;
            }
            bail!(
                "{file}: {e}\n  (is --type right? `walscope decode --format wire {file}` shows the raw fields)"
            );
        }
    };
    let (numbers, first_key) = top_level_fields(&bytes, &desc, wire_tree.as_ref());
    if !lenient && !numbers.is_empty() && numbers.iter().all(|n| desc.get_field(*n).is_none()) {
        bail!(
            "{file}: at byte {first_key}: field {} is not a field of {}, and neither is any other top-level field: wrong --type? (use --lenient to decode anyway, or --format wire to see the raw fields)",
            numbers[0],
            desc.full_name()
        );
    }
    let unknown = codec::count_unknown(&message);
    // A WAL message is also read the way Milvus reads it: properties, header, body.
    let wal = wal_view::reading(set.pool(), &message);
    match format {
        Format::Tree => {
            writeln!(out, "{} ({} bytes)", desc.full_name(), bytes.len())?;
            let Some(w) = &wire_tree else { bail!("{file}: internal: the tree format lost its wire tree") };
            let nodes = tree::build(Some(&desc), &bytes, &w.root);
            print_tree(&nodes, 1, true, &mut out)?;
            if let (Some(w), Some(imm)) = (&wal, crate::wal::reading::immutable_of(&message)) {
                wal_view::print_tree_reading(w, &imm, &mut out)?;
            }
        }
        Format::Json | Format::Text => {
            // Written as it is printed, through a buffer: stdout is line-buffered, and a big
            // message's JSON or text is millions of lines.
            let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut out);
            let (written, what) = match (format, &wal) {
                (Format::Json, Some(r)) => {
                    let j = wal_view::json_with_reading(&message, r);
                    (serde_json::to_writer_pretty(&mut w, &j).map_err(std::io::Error::other), "JSON")
                }
                (Format::Json, None) => (codec::write_json(&message, true, &mut w), "JSON"),
                _ => (codec::write_text(&message, &mut w), "text format"),
            };
            written.with_context(|| format!("{file}: cannot print {} as {what}", desc.full_name()))?;
            writeln!(w)?;
            if let (Format::Text, Some(r)) = (format, &wal) {
                wal_view::print_text_reading(r, &mut w)?;
            }
            w.flush()?;
        }
        Format::Wire => {} // printed above, before the schema was needed
    }
    if unknown > 0 && format != Format::Tree {
        note!("note: {unknown} unknown field(s) are not shown in {format:?}; --format tree shows them");
    }
    Ok(())
}

/// The numbers of the top-level fields of bytes that decoded, and where the first one's key
/// starts: from the wire tree when there is one, else read straight from the bytes (the first
/// key at byte 0), and from a tree made now only for a group, which `fields` does not step over.
fn top_level_fields(
    bytes: &[u8],
    desc: &prost_reflect::MessageDescriptor,
    tree: Option<&wire::WireDecoding>,
) -> (Vec<u32>, usize) {
    let from_tree = |w: &wire::WireDecoding| {
        (w.root.fields.iter().map(|f| f.number).collect(), w.root.fields.first().map_or(0, |f| f.key.start))
    };
    if let Some(w) = tree {
        return from_tree(w);
    }
    match wire::scan::fields(bytes).map(|f| f.map(|(n, _)| n)).collect::<Result<Vec<u32>, ()>>() {
        Ok(numbers) => (numbers, 0),
        Err(()) => {
            let opts = wire::DecodeOptions { schema: Some(desc.clone()), ..Default::default() };
            from_tree(&wire::decode_with(bytes, &opts))
        }
    }
}

fn print_wire(bytes: &[u8], file: &str, out: &mut impl Write) -> Result<()> {
    let d = wire::decode(bytes);
    writeln!(out, "wire view ({} bytes)", bytes.len())?;
    let nodes = tree::build(None, bytes, &d.root);
    print_tree(&nodes, 1, false, out)?;
    if let Some(e) = d.first_error() {
        bail!("{file}: malformed protobuf {e}");
    }
    Ok(())
}

pub fn encode(
    schema: &SchemaArgs,
    type_name: &str,
    from: TextInput,
    out: Option<&Path>,
    force: bool,
    file: &str,
) -> Result<()> {
    if let Some(path) = out.filter(|p| !crate::atomic::is_stdio(p)) {
        crate::atomic::check_output(path, &[Path::new(file)], force)?;
    }
    let set = schema.load()?;
    let desc = set.message(type_name)?;
    let text = String::from_utf8(read_input(file)?).with_context(|| format!("{file} is not UTF-8 text"))?;
    // `decode --format json` adds the WAL reading under `wal`: it is checked, not encoded.
    let (text, reading) = match from {
        TextInput::Json => wal_view::split_reading(&desc, &text),
        TextInput::Text => (text, None),
    };
    let msg = match from {
        TextInput::Json => codec::from_json(&desc, &text),
        TextInput::Text => codec::from_text(&desc, &text),
    }
    .with_context(|| format!("in {file}"))?;
    if let Some(r) = &reading {
        wal_view::check_reading(set.pool(), &msg, r).with_context(|| format!("in {file}"))?;
    }
    let bytes = codec::encode(&msg);
    match out.filter(|p| !crate::atomic::is_stdio(p)) {
        Some(path) => {
            let saved = crate::atomic::atomic_write(path, &bytes, true)
                .with_context(|| format!("cannot write {}", path.display()))?;
            let kept = saved.backup().map(|b| format!(" (its previous contents in {})", b.display()));
            match saved.is_unchanged() {
                true => note!("{} already holds these bytes: nothing written", path.display()),
                false => note!(
                    "wrote {} bytes of {} to {}{}",
                    bytes.len(),
                    desc.full_name(),
                    path.display(),
                    kept.unwrap_or_default()
                ),
            }
        }
        None => super::write_binary_stdout(&bytes)?,
    }
    Ok(())
}
