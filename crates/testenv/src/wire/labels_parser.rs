//! The label selector grammar as apimachinery's `labels.Parse` lexes and parses it, with its
//! error messages (`unable to parse requirement: found '=', expected: identifier`).

/// A requirement's operator as apimachinery spells it (`selection.Operator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operator {
    /// `=` and `==`.
    Equals,
    /// `!=`.
    NotEquals,
    /// `in`.
    In,
    /// `notin`.
    NotIn,
    /// A bare key.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `>`.
    GreaterThan,
    /// `<`.
    LessThan,
}

/// One parsed requirement (not yet validated: keys and values are checked by the caller).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Requirement {
    pub(crate) key: String,
    pub(crate) op: Operator,
    pub(crate) values: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn special(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '>' | '<')
}

fn symbol(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

/// Splits a selector into tokens (the end of the string is a token too).
fn lex(input: &str) -> Vec<(Token, String)> {
    let chars: Vec<char> = input.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        while i < chars.len() && matches!(chars[i], ' ' | '\t' | '\r' | '\n') {
            i += 1;
        }
        // Go's lexer reads a NUL byte as the end of the input.
        if i >= chars.len() || chars[i] == '\0' {
            out.push((Token::EndOfString, String::new()));
            return out;
        }
        if special(chars[i]) {
            // The longest run of symbols that is still a token.
            let mut buffer = String::new();
            let mut last: Option<(Token, String)> = None;
            while i < chars.len() && special(chars[i]) {
                buffer.push(chars[i]);
                if let Some(t) = symbol(&buffer) {
                    last = Some((t, buffer.clone()));
                } else if last.is_some() {
                    break;
                }
                i += 1;
            }
            match last {
                Some(t) => out.push(t),
                None => {
                    out.push((
                        Token::Error,
                        format!("error expected: keyword found '{buffer}'"),
                    ));
                    return out;
                }
            }
            continue;
        }
        let start = i;
        while i < chars.len()
            && !special(chars[i])
            && !matches!(chars[i], ' ' | '\t' | '\r' | '\n' | '\0')
        {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        let token = match word.as_str() {
            "in" => Token::In,
            "notin" => Token::NotIn,
            _ => Token::Identifier,
        };
        out.push((token, word));
    }
}

/// Whether `in` and `notin` are keywords (after a key) or values.
#[derive(Clone, Copy, PartialEq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    tokens: Vec<(Token, String)>,
    pos: usize,
}

impl Parser {
    fn peek(&self, ctx: Context) -> (Token, String) {
        let (t, l) = self
            .tokens
            .get(self.pos)
            .cloned()
            .unwrap_or((Token::EndOfString, String::new()));
        match (ctx, t) {
            (Context::Values, Token::In | Token::NotIn) => (Token::Identifier, l),
            _ => (t, l),
        }
    }

    fn consume(&mut self, ctx: Context) -> (Token, String) {
        let t = self.peek(ctx);
        self.pos = (self.pos + 1).min(self.tokens.len());
        t
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (mut tok, mut lit) = self.consume(Context::Values);
        let mut op = None;
        if tok == Token::DoesNotExist {
            op = Some(Operator::DoesNotExist);
            (tok, lit) = self.consume(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        let key = lit;
        let (next, _) = self.peek(Context::Values);
        if op.is_none() && matches!(next, Token::EndOfString | Token::Comma) {
            op = Some(Operator::Exists);
        }
        if let Some(op) = op {
            return Ok(Requirement {
                key,
                op,
                values: Vec::new(),
            });
        }
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        let op = match tok {
            Token::In => Operator::In,
            Token::NotIn => Operator::NotIn,
            Token::Equals | Token::DoubleEquals => Operator::Equals,
            Token::NotEquals => Operator::NotEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        };
        let values = match op {
            Operator::In | Operator::NotIn => self.values()?,
            _ => self.exact_value()?,
        };
        Ok(Requirement { key, op, values })
    }

    fn values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.peek(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let values = self.identifiers()?;
                if self.consume(Context::Values).0 != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(values)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut values: Vec<String> = Vec::new();
        let insert = |values: &mut Vec<String>, v: String| {
            if !values.contains(&v) {
                values.push(v);
            }
        };
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Token::Identifier => {
                    insert(&mut values, lit);
                    let (next, next_lit) = self.peek(Context::Values);
                    match next {
                        Token::Comma => {}
                        Token::ClosedPar => return Ok(values),
                        _ => return Err(format!("found '{next_lit}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if values.is_empty() {
                        insert(&mut values, String::new());
                    }
                    match self.peek(Context::Values).0 {
                        Token::ClosedPar => {
                            insert(&mut values, String::new());
                            return Ok(values);
                        }
                        Token::Comma => {
                            self.consume(Context::Values);
                            insert(&mut values, String::new());
                        }
                        _ => {}
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn exact_value(&mut self) -> Result<Vec<String>, String> {
        if matches!(
            self.peek(Context::Values).0,
            Token::EndOfString | Token::Comma
        ) {
            return Ok(vec![String::new()]);
        }
        match self.consume(Context::Values) {
            (Token::Identifier, lit) => Ok(vec![lit]),
            (_, lit) => Err(format!("found '{lit}', expected: identifier")),
        }
    }
}

/// Parses a label selector into its requirements; `check` validates each requirement as it is
/// parsed (its error is reported as a requirement's).
pub(crate) fn parse(
    input: &str,
    mut check: impl FnMut(&Requirement) -> Result<(), String>,
) -> Result<Vec<Requirement>, String> {
    let mut p = Parser {
        tokens: lex(input),
        pos: 0,
    };
    let mut out = Vec::new();
    loop {
        let (tok, lit) = p.peek(Context::Values);
        match tok {
            Token::Identifier | Token::DoesNotExist => {
                let r = p
                    .requirement()
                    .and_then(|r| check(&r).map(|()| r))
                    .map_err(|e| format!("unable to parse requirement: {e}"))?;
                out.push(r);
                let (t, l) = p.consume(Context::Values);
                match t {
                    Token::EndOfString => return Ok(out),
                    Token::Comma => {
                        let (t2, l2) = p.peek(Context::Values);
                        if !matches!(t2, Token::Identifier | Token::DoesNotExist) {
                            return Err(format!("found '{l2}', expected: identifier after ','"));
                        }
                    }
                    _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                }
            }
            Token::EndOfString => return Ok(out),
            _ => {
                return Err(format!(
                    "found '{lit}', expected: !, identifier, or 'end of string'"
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(s: &str) -> String {
        parse(s, |_| Ok(())).unwrap_err()
    }

    #[test]
    fn errors_should_read_as_apimachinery_writes_them() {
        assert_eq!(
            error("a in ("),
            "unable to parse requirement: found '', expected: ',', ')' or identifier"
        );
        assert_eq!(
            error("a===b"),
            "unable to parse requirement: found '=', expected: identifier"
        );
        assert_eq!(
            error("a in b"),
            "unable to parse requirement: found 'b' expected: '('"
        );
        assert_eq!(
            error("a b"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(error("a=b,"), "found '', expected: identifier after ','");
        assert_eq!(
            error("a=b c"),
            "found 'c', expected: ',' or 'end of string'"
        );
        assert_eq!(
            error("=a"),
            "found '=', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            error("a in (b c)"),
            "unable to parse requirement: found 'c', expected: ',' or ')'"
        );
    }

    #[test]
    fn every_form_should_parse() {
        let r = parse("a=b,c==d,e!=f,g in (h, in),i notin (),!j,k,l>1,m<2", |_| {
            Ok(())
        })
        .unwrap();
        let ops: Vec<Operator> = r.iter().map(|r| r.op).collect();
        use Operator::*;
        assert_eq!(
            ops,
            [
                Equals,
                Equals,
                NotEquals,
                In,
                NotIn,
                DoesNotExist,
                Exists,
                GreaterThan,
                LessThan
            ]
        );
        assert_eq!(r[3].values, ["h", "in"]);
        assert_eq!(r[4].values, [""]);
        assert_eq!(r[0].values, ["b"]);
        assert_eq!(parse("a=", |_| Ok(())).unwrap()[0].values, [""]);
    }
}
