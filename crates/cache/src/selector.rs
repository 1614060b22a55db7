//! Label selectors in Kubernetes syntax (apimachinery's `labels.Selector`):
//! `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`,
//! `a<1`, comma-joined (all must hold).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// How a [`Requirement`] compares a label with its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `key=value` or `key==value`.
    Equals,
    /// `key!=value` (also matches when the label is absent).
    NotEquals,
    /// `key in (v1,v2)`.
    In,
    /// `key notin (v1,v2)` (also matches when the label is absent).
    NotIn,
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `key>n` (integer comparison).
    GreaterThan,
    /// `key<n` (integer comparison).
    LessThan,
}

/// One comma-separated clause of a [`Selector`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    key: String,
    operator: Operator,
    /// Sorted, deduplicated.
    values: Vec<String>,
}

impl Requirement {
    /// The label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator.
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values (sorted; empty for `Exists` / `DoesNotExist`).
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// Whether `labels` satisfy this requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        let in_set = |v: &String| self.values.binary_search(v).is_ok();
        let compare = |v: &String, f: fn(i64, i64) -> bool| match (
            v.parse::<i64>(),
            self.values.first().map(|s| s.parse::<i64>()),
        ) {
            (Ok(label), Some(Ok(bound))) => f(label, bound),
            _ => false,
        };
        match self.operator {
            Operator::Equals | Operator::In => value.is_some_and(in_set),
            Operator::NotEquals | Operator::NotIn => !value.is_some_and(in_set),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan => value.is_some_and(|v| compare(v, |l, b| l > b)),
            Operator::LessThan => value.is_some_and(|v| compare(v, |l, b| l < b)),
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let first = self.values.first().map(String::as_str).unwrap_or_default();
        match self.operator {
            Operator::Equals => write!(f, "{}={first}", self.key),
            Operator::NotEquals => write!(f, "{}!={first}", self.key),
            Operator::In => write!(f, "{} in ({})", self.key, self.values.join(",")),
            Operator::NotIn => write!(f, "{} notin ({})", self.key, self.values.join(",")),
            Operator::Exists => write!(f, "{}", self.key),
            Operator::DoesNotExist => write!(f, "!{}", self.key),
            Operator::GreaterThan => write!(f, "{}>{first}", self.key),
            Operator::LessThan => write!(f, "{}<{first}", self.key),
        }
    }
}

/// A label selector: every requirement must hold. The empty selector
/// ([`Selector::everything`]) matches everything.
///
/// ```
/// use std::collections::BTreeMap;
/// use kcr_cache::Selector;
///
/// let selector: Selector = "app=web, tier in (front,back), !canary".parse()?;
/// let labels = BTreeMap::from([("app".to_owned(), "web".to_owned()), ("tier".to_owned(), "front".to_owned())]);
/// assert!(selector.matches(&labels));
/// assert!("a in (x".parse::<Selector>().is_err());
/// # Ok::<(), kcr_cache::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Selector {
    requirements: Vec<Requirement>,
}

impl Selector {
    /// The selector that matches everything.
    pub fn everything() -> Self {
        Self::default()
    }

    /// Parses Kubernetes label-selector syntax.
    pub fn parse(input: &str) -> Result<Self> {
        Parser::new(input).parse()
    }

    /// Whether this selector matches everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The requirements.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// [`matches`](Self::matches) for an object's optional labels.
    pub fn matches_labels(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        if self.requirements.is_empty() {
            return true;
        }
        static EMPTY: BTreeMap<String, String> = BTreeMap::new();
        self.matches(labels.unwrap_or(&EMPTY))
    }
}

impl FromStr for Selector {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token<'a> {
    Identifier(&'a str),
    Bang,
    Equals,
    DoubleEquals,
    NotEquals,
    In,
    NotIn,
    OpenParen,
    CloseParen,
    Comma,
    Greater,
    Less,
    End,
}

fn describe(token: &Token<'_>) -> String {
    match token {
        Token::Identifier(s) => format!("{s:?}"),
        Token::Bang => "'!'".into(),
        Token::Equals => "'='".into(),
        Token::DoubleEquals => "'=='".into(),
        Token::NotEquals => "'!='".into(),
        Token::In => "'in'".into(),
        Token::NotIn => "'notin'".into(),
        Token::OpenParen => "'('".into(),
        Token::CloseParen => "')'".into(),
        Token::Comma => "','".into(),
        Token::Greater => "'>'".into(),
        Token::Less => "'<'".into(),
        Token::End => "end of input".into(),
    }
}

struct Parser<'a> {
    input: &'a str,
    pos: usize,
    peeked: Option<(Token<'a>, usize)>,
}

fn is_special(c: char) -> bool {
    matches!(c, '!' | '=' | ',' | '(' | ')' | '<' | '>') || c.is_whitespace()
}

impl<'a> Parser<'a> {
    fn new(input: &'a str) -> Self {
        Self {
            input,
            pos: 0,
            peeked: None,
        }
    }

    fn error(&self, position: usize, reason: impl Into<String>) -> Error {
        Error::InvalidSelector {
            selector: self.input.to_owned(),
            position,
            reason: reason.into(),
        }
    }

    fn lex(&mut self) -> (Token<'a>, usize) {
        let rest = &self.input[self.pos..];
        let trimmed = rest.trim_start();
        let start = self.pos + (rest.len() - trimmed.len());
        let mut chars = trimmed.chars();
        let (token, len) = match chars.next() {
            None => (Token::End, 0),
            Some('!') if trimmed[1..].starts_with('=') => (Token::NotEquals, 2),
            Some('!') => (Token::Bang, 1),
            Some('=') if trimmed[1..].starts_with('=') => (Token::DoubleEquals, 2),
            Some('=') => (Token::Equals, 1),
            Some(',') => (Token::Comma, 1),
            Some('(') => (Token::OpenParen, 1),
            Some(')') => (Token::CloseParen, 1),
            Some('>') => (Token::Greater, 1),
            Some('<') => (Token::Less, 1),
            Some(_) => {
                let len = trimmed.find(is_special).unwrap_or(trimmed.len());
                let word = &trimmed[..len];
                let token = match word {
                    "in" => Token::In,
                    "notin" => Token::NotIn,
                    _ => Token::Identifier(word),
                };
                (token, len)
            }
        };
        self.pos = start + len;
        (token, start)
    }

    fn next(&mut self) -> (Token<'a>, usize) {
        self.peeked.take().unwrap_or_else(|| self.lex())
    }

    fn peek(&mut self) -> &Token<'a> {
        if self.peeked.is_none() {
            let t = self.lex();
            self.peeked = Some(t);
        }
        match &self.peeked {
            Some((t, _)) => t,
            None => &Token::End,
        }
    }

    fn parse(mut self) -> Result<Selector> {
        let mut requirements = Vec::new();
        if matches!(self.peek(), Token::End) {
            return Ok(Selector { requirements });
        }
        loop {
            requirements.push(self.requirement()?);
            match self.next() {
                (Token::End, _) => break,
                (Token::Comma, _) => continue,
                (t, at) => {
                    return Err(self.error(
                        at,
                        format!("expected ',' or end of input, found {}", describe(&t)),
                    ));
                }
            }
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Selector { requirements })
    }

    fn key(&mut self) -> Result<String> {
        match self.next() {
            (Token::Identifier(key), at) => {
                validate_key(key).map_err(|reason| self.error(at, reason))?;
                Ok(key.to_owned())
            }
            (t, at) => Err(self.error(at, format!("expected a label key, found {}", describe(&t)))),
        }
    }

    fn requirement(&mut self) -> Result<Requirement> {
        if matches!(self.peek(), Token::Bang) {
            self.next();
            let key = self.key()?;
            return Ok(Requirement {
                key,
                operator: Operator::DoesNotExist,
                values: Vec::new(),
            });
        }
        let key = self.key()?;
        let (token, at) = self.next();
        let (operator, values) = match token {
            Token::Comma | Token::End => {
                // Give the separator back to `parse`.
                self.peeked = Some((token, at));
                (Operator::Exists, Vec::new())
            }
            Token::Equals | Token::DoubleEquals => (Operator::Equals, vec![self.single_value()?]),
            Token::NotEquals => (Operator::NotEquals, vec![self.single_value()?]),
            Token::In => (Operator::In, self.value_set()?),
            Token::NotIn => (Operator::NotIn, self.value_set()?),
            Token::Greater | Token::Less => {
                let (value, at) = match self.next() {
                    (Token::Identifier(v), at) => (v, at),
                    (t, at) => {
                        return Err(
                            self.error(at, format!("expected an integer, found {}", describe(&t)))
                        );
                    }
                };
                if value.parse::<i64>().is_err() {
                    return Err(self.error(at, format!("{value:?} is not an integer")));
                }
                let op = if token == Token::Greater {
                    Operator::GreaterThan
                } else {
                    Operator::LessThan
                };
                (op, vec![value.to_owned()])
            }
            t => {
                return Err(self.error(
                    at,
                    format!(
                        "expected an operator (=, ==, !=, in, notin, >, <), ',' or end, found {}",
                        describe(&t)
                    ),
                ));
            }
        };
        Ok(Requirement {
            key,
            operator,
            values,
        })
    }

    fn single_value(&mut self) -> Result<String> {
        match self.peek() {
            Token::Comma | Token::End => Ok(String::new()),
            _ => match self.next() {
                (Token::Identifier(v), at) => {
                    validate_value(v).map_err(|reason| self.error(at, reason))?;
                    Ok(v.to_owned())
                }
                (t, at) => Err(self.error(at, format!("expected a value, found {}", describe(&t)))),
            },
        }
    }

    fn value_set(&mut self) -> Result<Vec<String>> {
        match self.next() {
            (Token::OpenParen, _) => {}
            (t, at) => return Err(self.error(at, format!("expected '(', found {}", describe(&t)))),
        }
        let mut values = Vec::new();
        loop {
            let (token, at) = self.next();
            match token {
                Token::Identifier(v) => {
                    validate_value(v).map_err(|reason| self.error(at, reason))?;
                    values.push(v.to_owned());
                    match self.next() {
                        (Token::Comma, _) => continue,
                        (Token::CloseParen, _) => break,
                        (t, at) => {
                            return Err(self.error(
                                at,
                                format!("expected ',' or ')', found {}", describe(&t)),
                            ));
                        }
                    }
                }
                Token::CloseParen if values.is_empty() => {
                    return Err(self.error(at, "'in' and 'notin' need at least one value"));
                }
                t => {
                    return Err(self.error(at, format!("expected a value, found {}", describe(&t))));
                }
            }
        }
        values.sort();
        values.dedup();
        Ok(values)
    }
}

fn is_name_part(s: &str) -> bool {
    let bytes = s.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn validate_key(key: &str) -> std::result::Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        let ok = !prefix.is_empty()
            && prefix.len() <= 253
            && prefix.split('.').all(|label| {
                let b = label.as_bytes();
                !b.is_empty()
                    && b.len() <= 63
                    && b[0].is_ascii_alphanumeric()
                    && b[b.len() - 1].is_ascii_alphanumeric()
                    && b.iter()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
            });
        if !ok {
            return Err(format!(
                "invalid label key {key:?}: the prefix must be a DNS subdomain"
            ));
        }
    }
    if !is_name_part(name) {
        return Err(format!(
            "invalid label key {key:?}: the name must be 1-63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
        ));
    }
    Ok(())
}

fn validate_value(value: &str) -> std::result::Result<(), String> {
    if value.is_empty() || is_name_part(value) {
        Ok(())
    } else {
        Err(format!(
            "invalid label value {value:?}: at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn sel(s: &str) -> Selector {
        s.parse().unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    #[test]
    fn every_operator_should_parse_and_match() {
        let web = labels(&[("app", "web"), ("tier", "front"), ("n", "5")]);
        let cases = [
            ("app=web", true),
            ("app==web", true),
            ("app=db", false),
            ("app!=db", true),
            ("app!=web", false),
            ("missing!=x", true),
            ("tier in (front,back)", true),
            ("tier in (back)", false),
            ("tier notin (back)", true),
            ("tier notin (front)", false),
            ("missing notin (x)", true),
            ("app", true),
            ("missing", false),
            ("!missing", true),
            ("!app", false),
            ("n>4", true),
            ("n<5", false),
            ("app=web,tier in (front),!canary", true),
            (" app = web , tier notin ( back ) ", true),
            ("app=web,tier=back", false),
            ("", true),
            ("example.com/role=x", false),
        ];
        for (s, expected) in cases {
            assert_eq!(sel(s).matches(&web), expected, "{s:?}");
        }
    }

    #[test]
    fn an_empty_value_should_be_allowed_after_equals() {
        let s = sel("a=");
        assert!(s.matches(&labels(&[("a", "")])));
        assert!(!s.matches(&labels(&[("a", "x")])));
    }

    #[test]
    fn bad_syntax_should_give_a_clear_error() {
        for bad in [
            "a in (x",
            "a in ()",
            "a in x",
            "a notin",
            "a b",
            "=b",
            "a=b,",
            ",a",
            "a=(b)",
            "a>x",
            "!a=b",
            "a in (x,)",
            "-bad=x",
            "a=b c",
            "a=bad value!",
            "UPPER.example.com/x=y",
        ] {
            match bad.parse::<Selector>() {
                Err(Error::InvalidSelector {
                    selector, reason, ..
                }) => {
                    assert_eq!(selector, bad);
                    assert!(!reason.is_empty());
                }
                other => panic!("{bad:?} should fail, got {other:?}"),
            }
        }
    }

    #[test]
    fn the_error_should_point_at_the_offending_token() {
        let err = "app=web, tier in (a".parse::<Selector>().unwrap_err();
        assert!(
            matches!(err, Error::InvalidSelector { position: 19, .. }),
            "{err}"
        );
    }

    #[test]
    fn a_selector_should_print_back_in_kubernetes_syntax() {
        let s = sel("b in (y,x), a=1, !c");
        assert_eq!(s.to_string(), "a=1,b in (x,y),!c");
        assert_eq!(sel(&s.to_string()), s);
        assert!(Selector::everything().matches_labels(None));
        assert!(!sel("a").matches_labels(None));
    }
}
