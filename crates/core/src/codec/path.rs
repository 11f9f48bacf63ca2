//! Field paths as operators type them: `progress.sync_point.offset`, `task[2].status`,
//! `properties["_vc"]`, `task[-1]` (last element).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// `[n]`: element n of a repeated field (negative counts from the end), or key n of a map
    /// with integer keys.
    Index(i64),
    /// `["k"]` or `[k]` where k is not a number: a map key.
    Key(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub field: String,
    pub selector: Option<Selector>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Segment>);

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            f.write_str(&s.field)?;
            match &s.selector {
                Some(Selector::Index(n)) => write!(f, "[{n}]")?,
                Some(Selector::Key(k)) => write!(f, "[{}]", super::tree::json_quote(k))?,
                None => {}
            }
        }
        Ok(())
    }
}

impl FieldPath {
    pub fn parse(text: &str) -> Result<FieldPath, String> {
        let err = |at: usize, what: &str| format!("bad path \"{text}\" at character {at}: {what}");
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        let mut segs = Vec::new();
        loop {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            if i == start {
                return Err(err(i, "expected a field name"));
            }
            let field: String = chars[start..i].iter().collect();
            let mut selector = None;
            if i < chars.len() && chars[i] == '[' {
                i += 1;
                if i < chars.len() && chars[i] == '"' {
                    i += 1;
                    // The key is a JSON string: `\t`, `\"`, `\u0007` mean what JSON says.
                    let start = i;
                    loop {
                        match chars.get(i) {
                            None => return Err(err(i, "unterminated string")),
                            Some('"') => break,
                            Some('\\') => {
                                chars.get(i + 1).ok_or_else(|| err(i, "dangling \\"))?;
                                i += 2;
                            }
                            Some(_) => i += 1,
                        }
                    }
                    let raw: String = chars[start..i].iter().collect();
                    let key = serde_json::from_str::<String>(&format!("\"{raw}\""))
                        .map_err(|e| err(start, &format!("bad escape in key: {e}")))?;
                    i += 1;
                    selector = Some(Selector::Key(key));
                } else {
                    let s = i;
                    while i < chars.len() && chars[i] != ']' {
                        i += 1;
                    }
                    let inner: String = chars[s..i].iter().collect();
                    let inner = inner.trim();
                    if inner.is_empty() {
                        return Err(err(s, "empty brackets"));
                    }
                    selector = Some(match inner.parse::<i64>() {
                        Ok(n) => Selector::Index(n),
                        Err(_) => Selector::Key(inner.to_string()),
                    });
                }
                if chars.get(i) != Some(&']') {
                    return Err(err(i, "expected ]"));
                }
                i += 1;
            }
            segs.push(Segment { field, selector });
            match chars.get(i) {
                None => break,
                Some('.') => i += 1,
                Some(_) => return Err(err(i, "expected . or [ or the end")),
            }
        }
        Ok(FieldPath(segs))
    }
}

/// The field `path` names inside `desc`, and whether it picks one element or entry of it
/// (`task[2]`, `properties["k"]`) rather than the whole field. Map entries are walked into
/// through their value type.
pub fn resolve(
    desc: &prost_reflect::MessageDescriptor,
    path: &FieldPath,
) -> Result<(prost_reflect::FieldDescriptor, bool), String> {
    use prost_reflect::Kind;
    let mut cur = desc.clone();
    let mut found = None;
    for (i, seg) in path.0.iter().enumerate() {
        let fd = cur
            .get_field_by_name(&seg.field)
            .or_else(|| cur.get_field_by_json_name(&seg.field))
            .ok_or_else(|| format!("{} has no field \"{}\"", cur.full_name(), seg.field))?;
        let element = seg.selector.is_some();
        if i + 1 < path.0.len() {
            let kind = if fd.is_map() {
                match fd.kind() {
                    Kind::Message(entry) => entry.map_entry_value_field().kind(),
                    k => k,
                }
            } else {
                fd.kind()
            };
            cur = match kind {
                Kind::Message(m) => m,
                _ => return Err(format!("{} is not a message: nothing is inside it", fd.name())),
            };
        }
        found = Some((fd, element));
    }
    found.ok_or_else(|| "empty path".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_forms() {
        let p = FieldPath::parse("progress.sync_point.offset").unwrap();
        assert_eq!(p.0.len(), 3);
        let p = FieldPath::parse("task[2].status").unwrap();
        assert_eq!(p.0[0].selector, Some(Selector::Index(2)));
        let p = FieldPath::parse("properties[\"_vc\"]").unwrap();
        assert_eq!(p.0[0].selector, Some(Selector::Key("_vc".into())));
        assert_eq!(p.to_string(), "properties[\"_vc\"]");
        assert!(FieldPath::parse("a..b").is_err());
        assert!(FieldPath::parse("a[\"x").is_err());
        assert!(FieldPath::parse("").is_err());
        // Keys are JSON strings, as the tree labels print them.
        let p = FieldPath::parse(r#"properties["a\tb\"c.d"]"#).unwrap();
        assert_eq!(p.0[0].selector, Some(Selector::Key("a\tb\"c.d".into())));
        assert_eq!(FieldPath::parse(&p.to_string()).unwrap(), p);
    }

    #[test]
    fn resolves_fields_elements_and_map_values() {
        let set = crate::schema::SchemaSet::builtin();
        let d = set.message("openmldb.datasync.TaskStatusResponse").unwrap();
        let (fd, element) =
            resolve(&d, &FieldPath::parse("task[1].progress.sync_point.offset").unwrap()).unwrap();
        assert_eq!((fd.name(), element), ("offset", false));
        let (fd, element) = resolve(&d, &FieldPath::parse("task[1]").unwrap()).unwrap();
        assert_eq!((fd.name(), element), ("task", true));
        let m = set.message("milvus.proto.common.ImmutableMessage").unwrap();
        let (fd, element) = resolve(&m, &FieldPath::parse("properties[\"_t\"]").unwrap()).unwrap();
        assert_eq!((fd.name(), element), ("properties", true));
        assert!(resolve(&d, &FieldPath::parse("task[0].nope").unwrap()).unwrap_err().contains("no field"));
    }
}
