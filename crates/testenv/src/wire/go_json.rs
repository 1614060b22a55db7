//! The wording of Go's `encoding/json` errors, which kube-apiserver puts into its messages:
//! syntax errors (`invalid character 'b' looking for beginning of object key string`,
//! `unexpected end of JSON input`) and type errors (`json: cannot unmarshal array into Go value
//! of type ...`).

use serde_json::Value;

/// A character as Go's JSON scanner quotes it in an error (`'b'`, `'\''`, `'\x01'`, `'\u0081'`).
pub(crate) fn quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".to_owned(),
        b'"' => "'\"'".to_owned(),
        _ => format!("'{}'", quote_rune(char::from(c))),
    }
}

/// One rune as `strconv.Quote` writes it, without the quotes.
fn quote_rune(c: char) -> String {
    match c {
        '\u{7}' => "\\a".into(),
        '\u{8}' => "\\b".into(),
        '\u{c}' => "\\f".into(),
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        '\u{b}' => "\\v".into(),
        '\\' => "\\\\".into(),
        c if (c as u32) < 0x20 || c == '\u{7f}' => format!("\\x{:02x}", c as u32),
        // Go's `unicode.IsPrint` rejects the C1 controls, the no-break space and the soft hyphen.
        c if (0x80..=0xa0).contains(&(c as u32)) || c == '\u{ad}' => {
            format!("\\u{:04x}", c as u32)
        }
        c => c.to_string(),
    }
}

/// The Go name of a JSON value's type in `cannot unmarshal X into ...`.
pub(crate) fn value_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The first syntax error of `data` as Go's `json.Unmarshal` reports it, `None` when it is valid
/// JSON.
pub(crate) fn syntax_error(data: &[u8]) -> Option<String> {
    let mut s = Scanner { data, pos: 0 };
    let result = s.value().and_then(|()| {
        s.skip_space();
        match s.peek() {
            None => Ok(()),
            Some(c) => Err(invalid(c, "after top-level value")),
        }
    });
    result.err()
}

const EOF: &str = "unexpected end of JSON input";

fn invalid(c: u8, context: &str) -> String {
    format!("invalid character {} {context}", quote_char(c))
}

struct Scanner<'a> {
    data: &'a [u8],
    pos: usize,
}

/// Nesting deeper than this is refused (Go's scanner allows 10,000 levels).
const MAX_DEPTH: usize = 10_000;

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    fn next(&mut self) -> Result<u8, String> {
        let c = self.peek().ok_or_else(|| EOF.to_owned())?;
        self.pos += 1;
        Ok(c)
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn value(&mut self) -> Result<(), String> {
        // Containers are scanned with an explicit stack, so deep input cannot overflow ours.
        let mut stack: Vec<u8> = Vec::new();
        loop {
            // A value.
            self.skip_space();
            let c = self.next()?;
            match c {
                b'{' => {
                    self.skip_space();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                    } else {
                        self.key()?;
                        stack.push(b'{');
                        if stack.len() > MAX_DEPTH {
                            return Err(invalid(c, "exceeded max depth"));
                        }
                        continue;
                    }
                }
                b'[' => {
                    self.skip_space();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                    } else {
                        stack.push(b'[');
                        if stack.len() > MAX_DEPTH {
                            return Err(invalid(c, "exceeded max depth"));
                        }
                        continue;
                    }
                }
                b'"' => self.string()?,
                b'-' | b'0'..=b'9' => self.number(c)?,
                b't' => self.literal(b"rue", "true")?,
                b'f' => self.literal(b"alse", "false")?,
                b'n' => self.literal(b"ull", "null")?,
                c => return Err(invalid(c, "looking for beginning of value")),
            }
            // After a value: close containers or go on to the next element.
            loop {
                let Some(&top) = stack.last() else {
                    return Ok(());
                };
                self.skip_space();
                let c = self.next()?;
                match (top, c) {
                    (b'{', b',') => {
                        self.skip_space();
                        self.key()?;
                        break;
                    }
                    (b'{', b'}') | (b'[', b']') => {
                        stack.pop();
                    }
                    (b'[', b',') => break,
                    (b'{', c) => return Err(invalid(c, "after object key:value pair")),
                    (_, c) => return Err(invalid(c, "after array element")),
                }
            }
        }
    }

    /// An object key and its colon.
    fn key(&mut self) -> Result<(), String> {
        match self.next()? {
            b'"' => self.string()?,
            c => return Err(invalid(c, "looking for beginning of object key string")),
        }
        self.skip_space();
        match self.next()? {
            b':' => Ok(()),
            c => Err(invalid(c, "after object key")),
        }
    }

    /// The rest of a string after its opening quote.
    fn string(&mut self) -> Result<(), String> {
        loop {
            match self.next()? {
                b'"' => return Ok(()),
                b'\\' => match self.next()? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    b'u' => {
                        for _ in 0..4 {
                            let h = self.next()?;
                            if !h.is_ascii_hexdigit() {
                                return Err(invalid(h, "in \\u hexadecimal character escape"));
                            }
                        }
                    }
                    c => return Err(invalid(c, "in string escape code")),
                },
                c if c < 0x20 => return Err(invalid(c, "in string literal")),
                _ => {}
            }
        }
    }

    /// The rest of a number after its first character.
    fn number(&mut self, first: u8) -> Result<(), String> {
        let mut c = first;
        if c == b'-' {
            c = self.next()?;
            if !c.is_ascii_digit() {
                return Err(invalid(c, "in numeric literal"));
            }
        }
        if c != b'0' {
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
            }
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            let c = self.next()?;
            if !c.is_ascii_digit() {
                return Err(invalid(c, "after decimal point in numeric literal"));
            }
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            let mut c = self.next()?;
            if c == b'+' || c == b'-' {
                c = self.next()?;
            }
            if !c.is_ascii_digit() {
                return Err(invalid(c, "in exponent of numeric literal"));
            }
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
            }
        }
        Ok(())
    }

    fn literal(&mut self, rest: &[u8], word: &str) -> Result<(), String> {
        for &want in rest {
            let c = self.next()?;
            if c != want {
                return Err(invalid(
                    c,
                    &format!("in literal {word} (expecting {})", quote_char(want)),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_should_read_as_go_reports_them() {
        let cases: &[(&[u8], &str)] = &[
            (
                b"{bad",
                "invalid character 'b' looking for beginning of object key string",
            ),
            (b"", "unexpected end of JSON input"),
            (b"{\"a\" 1}", "invalid character '1' after object key"),
            (
                b"{\"a\":1 \"b\"}",
                "invalid character '\"' after object key:value pair",
            ),
            (b"[1 2]", "invalid character '2' after array element"),
            (
                b"[1,]",
                "invalid character ']' looking for beginning of value",
            ),
            (b"{} x", "invalid character 'x' after top-level value"),
            (b"tru", "unexpected end of JSON input"),
            (
                b"trUe",
                "invalid character 'U' in literal true (expecting 'u')",
            ),
            (b"-x", "invalid character 'x' in numeric literal"),
            (
                b"1.e",
                "invalid character 'e' after decimal point in numeric literal",
            ),
            (b"1e+", "unexpected end of JSON input"),
            (b"\"\\q\"", "invalid character 'q' in string escape code"),
            (b"\"\x01\"", "invalid character '\\x01' in string literal"),
            (
                b"\x81",
                "invalid character '\\u0081' looking for beginning of value",
            ),
            (
                b"'",
                "invalid character '\\'' looking for beginning of value",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                syntax_error(input).as_deref(),
                Some(*want),
                "{}",
                String::from_utf8_lossy(input)
            );
        }
        for valid in [
            &b"{\"a\":[1,-2.5e+3,true,false,null,\"\\u00e9\"]}"[..],
            b" 0 ",
            b"[]",
            b"{}",
        ] {
            assert_eq!(syntax_error(valid), None);
        }
    }

    #[test]
    fn deep_nesting_should_be_refused_without_overflowing_the_stack() {
        let deep = vec![b'['; 100_000];
        assert_eq!(
            syntax_error(&deep).as_deref(),
            Some("invalid character '[' exceeded max depth")
        );
    }
}
