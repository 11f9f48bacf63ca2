//! The boolean expressions the demo Milvus understands in Delete and Query: a primary key
//! against literal keys or a template placeholder, as `walscope replay` and the SDKs write them:
//! `pk in [1, 2, 3]`, `pk in ["a", 'b']`, `pk == 5`, `pk == "a"`, `pk in {keys}` (values from
//! `expr_template_values`). `in`/`IN` as in Milvus's grammar.
//!
//! Must never: accept anything else silently (every other form is an error naming the text), or
//! panic on any input.

/// A literal or placeholder on the right-hand side.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Ints(Vec<i64>),
    Strs(Vec<String>),
    /// `{name}`: the value is in the request's `expr_template_values[name]`.
    Template(String),
}

/// `field in [...]` or `field == v` (a one-element list).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyExpr {
    pub field: String,
    pub operand: Operand,
}

/// Parses an expression; the error says what is wrong (the caller adds the text).
pub fn parse(expr: &str) -> Result<KeyExpr, String> {
    let mut p = Parser { s: expr.as_bytes(), i: 0 };
    p.ws();
    let field = p.ident().ok_or("expected a field name")?;
    p.ws();
    let list = if p.eat("==") {
        false
    } else if p.eat_word("in") || p.eat_word("IN") {
        true
    } else {
        return Err(format!("only `{field} in [...]` and `{field} == value` are supported"));
    };
    p.ws();
    let operand = if p.peek() == Some(b'{') {
        p.i += 1;
        p.ws();
        let name = p.ident().ok_or("expected a template name in {}")?;
        p.ws();
        if !p.eat("}") {
            return Err("expected `}`".into());
        }
        Operand::Template(name)
    } else if list {
        if !p.eat("[") {
            return Err("expected `[` after `in`".into());
        }
        p.list()?
    } else {
        match p.literal()? {
            Lit::Int(v) => Operand::Ints(vec![v]),
            Lit::Str(v) => Operand::Strs(vec![v]),
        }
    };
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected text at offset {}", p.i));
    }
    Ok(KeyExpr { field, operand })
}

enum Lit {
    Int(i64),
    Str(String),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, t: &str) -> bool {
        let ok = self.s[self.i..].starts_with(t.as_bytes());
        if ok {
            self.i += t.len();
        }
        ok
    }

    /// A keyword not followed by an identifier character.
    fn eat_word(&mut self, w: &str) -> bool {
        let rest = &self.s[self.i..];
        let ok = rest.starts_with(w.as_bytes())
            && !rest.get(w.len()).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
        if ok {
            self.i += w.len();
        }
        ok
    }

    fn ident(&mut self) -> Option<String> {
        let start = self.i;
        match self.peek() {
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => self.i += 1,
            _ => return None,
        }
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
            self.i += 1;
        }
        Some(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    fn list(&mut self) -> Result<Operand, String> {
        let (mut ints, mut strs) = (Vec::new(), Vec::new());
        self.ws();
        if self.eat("]") {
            return Ok(Operand::Ints(ints));
        }
        loop {
            self.ws();
            match self.literal()? {
                Lit::Int(v) => ints.push(v),
                Lit::Str(v) => strs.push(v),
            }
            if !ints.is_empty() && !strs.is_empty() {
                return Err("a list mixes numbers and strings".into());
            }
            self.ws();
            if self.eat("]") {
                break;
            }
            if !self.eat(",") {
                return Err("expected `,` or `]` in the list".into());
            }
        }
        Ok(if strs.is_empty() { Operand::Ints(ints) } else { Operand::Strs(strs) })
    }

    fn literal(&mut self) -> Result<Lit, String> {
        match self.peek() {
            Some(q @ (b'"' | b'\'')) => {
                self.i += 1;
                let mut out = Vec::new();
                loop {
                    match self.peek() {
                        None => return Err("unterminated string".into()),
                        Some(b'\\') => {
                            let c = self.s.get(self.i + 1).copied().ok_or("unterminated string")?;
                            out.push(match c {
                                b'n' => b'\n',
                                b't' => b'\t',
                                other => other,
                            });
                            self.i += 2;
                        }
                        Some(c) if c == q => {
                            self.i += 1;
                            break;
                        }
                        Some(c) => {
                            out.push(c);
                            self.i += 1;
                        }
                    }
                }
                String::from_utf8(out).map(Lit::Str).map_err(|_| "a string is not UTF-8".into())
            }
            Some(c) if c.is_ascii_digit() || c == b'-' || c == b'+' => {
                let start = self.i;
                self.i += 1;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
                let text = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                text.parse::<i64>().map(Lit::Int).map_err(|_| format!("`{text}` is not an int64"))
            }
            _ => Err(format!("expected a number or a quoted string at offset {}", self.i)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(field: &str, v: &[i64]) -> KeyExpr {
        KeyExpr { field: field.into(), operand: Operand::Ints(v.to_vec()) }
    }

    #[test]
    fn key_lists_equality_and_templates() {
        assert_eq!(parse("id in [1, 2, 3]"), Ok(ints("id", &[1, 2, 3])));
        assert_eq!(parse("  id IN [ -4 ,+5]  "), Ok(ints("id", &[-4, 5])));
        assert_eq!(parse("id in []"), Ok(ints("id", &[])));
        assert_eq!(parse("pk == 7"), Ok(ints("pk", &[7])));
        assert_eq!(parse("pk==7"), Ok(ints("pk", &[7])));
        assert_eq!(
            parse(r#"name in ["a", 'b', "c\"d", 'e\'f']"#),
            Ok(KeyExpr {
                field: "name".into(),
                operand: Operand::Strs(vec!["a".into(), "b".into(), "c\"d".into(), "e'f".into()])
            })
        );
        assert_eq!(parse("name == 'x y'").map(|e| e.operand), Ok(Operand::Strs(vec!["x y".into()])));
        assert_eq!(
            parse("id in {keys}"),
            Ok(KeyExpr { field: "id".into(), operand: Operand::Template("keys".into()) })
        );
        assert_eq!(parse("id == { k }").map(|e| e.operand), Ok(Operand::Template("k".into())));
    }

    #[test]
    fn everything_else_is_refused() {
        for bad in [
            "",
            "id",
            "id > 5",
            "id in [1, 2",
            "id in [1,, 2]",
            "id in [1, 'a']",
            "id in 1",
            "id == 5 and id == 6",
            "id == 99999999999999999999",
            "id in ['open",
            "index [1]",
            "id not in [1]",
            "id in {}",
            "1 == id",
            "id == 1.5",
            "id in {keys",
            "id == \u{e9}",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} was accepted: {:?}", parse(bad));
        }
    }
}
