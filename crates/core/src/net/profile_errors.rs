//! A profiles file that cannot be read, in words that never quote it: serde's messages repeat
//! the offending value ("invalid type: string \"hunter2\", expected ..."), and the value that
//! does not fit is, more often than not, a password pasted where a reference to it belongs. The
//! words say where (line, column, which profile, which field) and what was expected, never
//! what was found.
//!
//! Must never: put a byte of the file's values into the message (field names are shown only
//! when they are names of the profile format).

use super::profile::ConnectionProfile;

/// Every key the profile format has; any other key is shown as "(an unknown field)".
const FORMAT_KEYS: &[&str] = &[
    "name",
    "transport",
    "endpoint",
    "tls",
    "mode",
    "ca_file",
    "client_cert",
    "auth",
    "kind",
    "user",
    "password",
    "token",
    "from",
    "var",
    "service",
    "account",
    "db_name",
    "headers",
    "timeout_secs",
    "confirm_methods",
];

/// The reason for `e`, an error of parsing `text` as the profiles file.
pub(super) fn describe(text: &str, e: &serde_json::Error) -> String {
    // A text that is not JSON at all: serde_json's syntax messages name what it expected,
    // never the text it found.
    let all = match serde_json::from_str::<serde_json::Value>(text) {
        Err(syntax) => {
            return format!(
                "not a profiles file: line {}, column {}: {}",
                syntax.line(),
                syntax.column(),
                bare(&syntax)
            );
        }
        Ok(serde_json::Value::Array(all)) => all,
        Ok(_) => {
            return "not a profiles file: expected a list of profiles ([{...}, ...]) at its top".to_string();
        }
    };
    // The profile that does not fit, then the field: each alone beside a valid minimum.
    let Some((index, first)) = all
        .iter()
        .enumerate()
        .find_map(|(i, p)| serde_json::from_value::<ConnectionProfile>(p.clone()).err().map(|e| (i, e)))
    else {
        return format!("not a profiles file: line {}, column {}: {}", e.line(), e.column(), what(e));
    };
    let profile = &all[index];
    let field = profile.as_object().and_then(|o| {
        o.iter().find_map(|(k, v)| {
            let mut alone = serde_json::json!({"name": "x", "transport": "grpc", "endpoint": "h:1"});
            alone[k] = v.clone();
            serde_json::from_value::<ConnectionProfile>(alone).err().map(|e| (k.clone(), e))
        })
    });
    let line = field.as_ref().and_then(|(k, _)| key_line(text, index, k)).unwrap_or(e.line());
    let mut out = format!("not a profiles file: line {line}, profile {}", index + 1);
    if let Some(name) = profile.get("name").and_then(|n| n.as_str())
        && name.chars().count() <= 64
        && !name.chars().any(char::is_control)
    {
        out.push_str(&format!(" (\"{name}\")"));
    }
    let (reason, is_auth) = match &field {
        Some((k, e)) => {
            let shown = if FORMAT_KEYS.contains(&k.as_str()) { k.as_str() } else { "(an unknown field)" };
            out.push_str(&format!(", field {shown}"));
            (what(e), k == "auth")
        }
        None => (what(&first), false),
    };
    out.push_str(&format!(": {reason} (the value is not shown)"));
    if is_auth {
        out.push_str(
            ". A secret is never written in this file, only where it comes from: \
             {\"from\": \"env\", \"var\": \"NAME\"} or {\"from\": \"keyring\", \"service\": \"...\", \
             \"account\": \"...\"}",
        );
    }
    out
}

/// serde's message without its position.
fn bare(e: &serde_json::Error) -> String {
    let m = e.to_string();
    m.rsplit_once(" at line ").map_or(m.clone(), |(m, _)| m.to_string())
}

/// What a data error expected, without what it found (which may be the secret).
fn what(e: &serde_json::Error) -> String {
    let m = bare(e);
    match m.split_once(", expected ") {
        Some((_, expected)) => format!("expected {}", friendly(expected)),
        None if m.starts_with("missing field") || m.starts_with("duplicate field") => m,
        None => "the value is not one this field takes".to_string(),
    }
}

/// serde's names of the format's types, for people.
fn friendly(expected: &str) -> String {
    match expected {
        "internally tagged enum SecretRef" => {
            "a reference to a secret ({\"from\": \"env\", ...} or {\"from\": \"keyring\", ...})".into()
        }
        "internally tagged enum AuthSettings" => {
            "credentials ({\"kind\": \"user_password\", \"user\": ..., \"password\": {\"from\": ...}} or \
             {\"kind\": \"token\", \"token\": {\"from\": ...}})"
                .into()
        }
        "internally tagged enum TlsSettings" => {
            "a TLS mode ({\"mode\": \"plaintext\"}, \"system\", \"ca_file\" with \"ca_file\", or \"insecure\")"
                .into()
        }
        other => other.to_string(),
    }
}

/// The line of key `key` in profile `index` (a member of the top-level array's element).
fn key_line(text: &str, index: usize, key: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    // Depth 1: inside the list; depth 2: inside a profile, where its keys are.
    let (mut depth, mut element, mut expecting_key) = (0usize, 0usize, false);
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'[' => {
                depth += 1;
                expecting_key = bytes[i] == b'{';
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => element += 1,
            b',' if depth == 2 => expecting_key = true,
            b':' => expecting_key = false,
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                let found = bytes.get(start..i.min(bytes.len()));
                if depth == 2 && expecting_key && element == index && found == Some(key.as_bytes()) {
                    return Some(bytes[..start].iter().filter(|b| **b == b'\n').count() + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(text: &str) -> String {
        let e = serde_json::from_str::<Vec<ConnectionProfile>>(text).expect_err("not a profiles file");
        describe(text, &e)
    }

    #[test]
    fn a_pasted_password_is_located_never_quoted() {
        let text = r#"[
  {
    "name": "prod",
    "transport": "grpc",
    "endpoint": "10.0.0.5:19530",
    "auth": {"kind": "user_password", "user": "root", "password": "hunter2"}
  }
]"#;
        let r = reason(text);
        assert!(!r.contains("hunter2"), "{r}");
        assert!(r.contains("line 6, profile 1 (\"prod\"), field auth"), "{r}");
        assert!(r.contains("{\"from\": \"env\""), "{r}");
        // A secret pasted beside the reference, or as a key, or as a header value.
        for text in [
            r#"[{"name": "a", "transport": "grpc", "endpoint": "h:1", "auth": {"kind": "token", "token": {"from": "env", "var": "V", "value": "hunter2"}}}]"#,
            r#"[{"name": "a", "transport": "grpc", "endpoint": "h:1", "hunter2": 1}]"#,
            r#"[{"name": "a", "transport": "grpc", "endpoint": "h:1", "headers": [["authorization", "hunter2", 3]]}]"#,
            r#"[{"name": "a", "transport": "hunter2", "endpoint": "h:1"}]"#,
            r#"[{"name": "a", "transport": "grpc", "endpoint": "h:1", "timeout_secs": "hunter2"}]"#,
        ] {
            let r = reason(text);
            assert!(!r.contains("hunter2") && r.contains("not a profiles file: line 1, profile 1"), "{r}");
        }
        let r = reason(r#"[{"name": "a", "transport": "grpc"}]"#);
        assert!(r.contains("missing field `endpoint`"), "{r}");
        let r = reason("[{\"name\": \"a\",");
        assert!(r.contains("EOF"), "{r}");
    }
}
