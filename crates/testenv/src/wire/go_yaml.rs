//! YAML as kube-apiserver reads it: `sigs.k8s.io/yaml` over go-yaml v2 (`go.yaml.in/yaml/v2`).
//!
//! - Only the first document of a stream is read (go-yaml's `Unmarshal` stops there); an empty
//!   stream is `null`.
//! - A syntax error reads as go-yaml's parser words it, `line N: <problem>` (without the
//!   `yaml: ` prefix): N is the line of libyaml's problem mark, counted from 0 for a parser
//!   error and from 1 for a scanner error (go-yaml's quirk), else the 0-based line of the context
//!   mark; neither (an error on the first line) gives no `line N: ` at all. serde_yaml runs
//!   unsafe-libyaml, a line-for-line port of the libyaml go-yaml v2 ports too, so the marks and
//!   problems are the same.
//! - [`duplicate_keys`]: what go-yaml's `UnmarshalStrict` reports of a document's repeated map
//!   keys, `line N: key "a" already set in map`, N the line of the repeated key's value, in
//!   go-yaml's order (what a repeated value itself repeats comes first).

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::go_strconv::{go_float, go_quote};

/// The most repeated keys reported of one document (each costs a parse of the document).
const MAX_DUPLICATES: usize = 100;

/// The first document of `body` as JSON, or go-yaml's error message (see the module's
/// documentation).
pub(crate) fn unmarshal(body: &[u8]) -> Result<Value, String> {
    match serde_yaml::Deserializer::from_slice(body).next() {
        None => Ok(Value::Null),
        Some(doc) => serde::Deserialize::deserialize(doc).map_err(|e| message(&e, body)),
    }
}

/// go-yaml v2's message for an error reading `body`, without its `yaml: ` prefix.
pub(crate) fn message(e: &serde_yaml::Error, body: &[u8]) -> String {
    // serde_yaml shows libyaml's error kind and marks (1-based) only in its Debug form:
    // `Error { kind: SCANNER, problem: "…", problem_mark: Mark { line: 4, column: 1 }, … }`.
    let debug = format!("{e:?}");
    if let Some(problem) = field_str(&debug, "problem: ") {
        let scanner = debug.contains("kind: SCANNER");
        let problem_line = mark_line(&debug, "problem_mark: Mark { line: ");
        let context_line = mark_line(&debug, "context_mark: Mark { line: ");
        let line = if problem_line != 0 {
            problem_line + usize::from(scanner)
        } else {
            context_line
        };
        return if line != 0 {
            format!("line {line}: {problem}")
        } else {
            problem
        };
    }
    // serde_yaml's own errors (after libyaml parsed the document).
    let text = e.to_string();
    let problem = text.split(" at line ").next().unwrap_or_default();
    if problem == "unknown anchor" {
        return format!(
            "unknown anchor '{}' referenced",
            alias_name(e, body).unwrap_or_default()
        );
    }
    problem.to_owned()
}

/// A quoted string field of a Debug form, unescaped.
fn field_str(debug: &str, key: &str) -> Option<String> {
    let start = debug.find(key)? + key.len();
    let mut chars = debug[start..].chars();
    if chars.next() != Some('"') {
        return None;
    }
    let mut out = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// The 0-based line of a mark of a Debug form (0 when the mark is not shown: libyaml's zero
/// mark).
fn mark_line(debug: &str, key: &str) -> usize {
    debug
        .find(key)
        .and_then(|i| {
            debug[i + key.len()..]
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse::<usize>()
                .ok()
        })
        .map_or(0, |l| l.saturating_sub(1))
}

/// The anchor an unknown alias names: the text after `*` at the error's location.
fn alias_name(e: &serde_yaml::Error, body: &[u8]) -> Option<String> {
    let at = e.location()?.index();
    let rest = body.get(at..)?.strip_prefix(b"*")?;
    let end = rest
        .iter()
        .position(|b| b.is_ascii_whitespace() || b",[]{}".contains(b))
        .unwrap_or(rest.len());
    Some(String::from_utf8_lossy(&rest[..end]).into_owned())
}

/// go-yaml `UnmarshalStrict`'s complaints about the first document of `body`: one
/// `line N: key K already set in map` for each repeated key of a map (K as Go's `%#v` writes
/// it). Empty when there are none or the body is no YAML.
pub(crate) fn duplicate_keys(body: &[u8]) -> Vec<String> {
    // A first walk finds the repeated keys (by the position of their value among the
    // document's nodes, in go-yaml's order); then a walk per repeated key stops at its value,
    // whose line the parser's error carries.
    let counter = Cell::new(0);
    let found = std::cell::RefCell::new(Vec::new());
    let walk = Walk {
        counter: &counter,
        stop_at: None,
        found: Some(&found),
    };
    if walk_first_document(body, walk).is_err() {
        return Vec::new();
    }
    found
        .into_inner()
        .into_iter()
        .take(MAX_DUPLICATES)
        .filter_map(|(node, key)| {
            let counter = Cell::new(0);
            let walk = Walk {
                counter: &counter,
                stop_at: Some(node),
                found: None,
            };
            let err = walk_first_document(body, walk).err()?;
            let line = err.location()?.line();
            Some(format!("line {line}: key {key} already set in map"))
        })
        .collect()
}

fn walk_first_document(body: &[u8], walk: Walk<'_>) -> Result<(), serde_yaml::Error> {
    match serde_yaml::Deserializer::from_slice(body).next() {
        Some(doc) => walk.deserialize(doc).map(|_| ()),
        None => Ok(()),
    }
}

/// A map key as go-yaml decodes it into `interface{}`, written as `%#v` writes it; `None` for
/// a key that is no scalar.
type Key = Option<String>;

/// Walks a document's nodes in order, counting them.
#[derive(Clone, Copy)]
struct Walk<'a> {
    counter: &'a Cell<usize>,
    /// The node whose parse fails (to learn its line).
    stop_at: Option<usize>,
    /// The repeated keys found: the index of the value node and the key.
    found: Option<&'a std::cell::RefCell<Vec<(usize, String)>>>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        let n = self.counter.get();
        self.counter.set(n + 1);
        if self.stop_at == Some(n) {
            return d.deserialize_any(Stop);
        }
        d.deserialize_any(self)
    }
}

/// Fails on whatever node it is given.
struct Stop;

impl<'de> Visitor<'de> for Stop {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("nothing")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Key, E> {
        Err(E::custom("stop"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Key, E> {
        Err(E::custom("stop"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Key, E> {
        Err(E::custom("stop"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Key, E> {
        Err(E::custom("stop"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Key, E> {
        Err(E::custom("stop"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Key, E> {
        Err(E::custom("stop"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Key, A::Error> {
        Err(de::Error::custom("stop"))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Key, A::Error> {
        Err(de::Error::custom("stop"))
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Key, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Key, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Key, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Key, E> {
        Ok(Some(go_float(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Key, E> {
        Ok(Some(go_quote(v)))
    }
    fn visit_unit<E>(self) -> Result<Key, E> {
        Ok(Some("<nil>".into()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Key, A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Key, A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key_seed(self)? {
            let value_node = self.counter.get();
            // go-yaml decodes the value first (its own repeated keys come first), then finds
            // the key set already.
            map.next_value_seed(self)?;
            if let (Some(k), Some(found)) = (key, self.found)
                && !seen.insert(k.clone())
            {
                found.borrow_mut().push((value_node, k));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(yaml: &str) -> String {
        unmarshal(yaml.as_bytes()).unwrap_err()
    }

    #[test]
    fn scanner_errors_should_name_their_line_from_one() {
        // Recorded from kube-apiserver v1.36.2: a tab indenting line 4.
        assert_eq!(
            err("apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: c1\n"),
            "line 4: found character that cannot start any token"
        );
        // Derived from go-yaml v2's `parser.fail` over libyaml's marks.
        assert_eq!(err("a: 'abc\n"), "line 2: found unexpected end of stream");
        assert_eq!(
            err("a: b: c\n"),
            "mapping values are not allowed in this context"
        );
        assert_eq!(
            err("key: value\n  bad: indent\n"),
            "line 2: mapping values are not allowed in this context"
        );
        assert_eq!(
            err("a: 1\n\tb: 2\n"),
            "line 2: found a tab character that violates indentation"
        );
        // On the first line: no line at all.
        assert_eq!(
            err("\ta: 1\n"),
            "found character that cannot start any token"
        );
    }

    #[test]
    fn parser_errors_should_name_their_line_from_zero() {
        assert_eq!(
            err("a:\n  b: 1\n c: 2\n"),
            "line 2: did not find expected key"
        );
        assert_eq!(
            err("a: [1, 2\n"),
            "line 1: did not find expected ',' or ']'"
        );
        assert_eq!(
            err("- a\nb: c\n"),
            "line 1: did not find expected '-' indicator"
        );
        assert_eq!(
            err("a:\n  - b\n  c: d\n"),
            "line 2: did not find expected '-' indicator"
        );
    }

    #[test]
    fn only_the_first_document_should_be_read() {
        assert_eq!(
            unmarshal(b"a: 1\n---\nb: 2\n").unwrap(),
            serde_json::json!({"a": 1})
        );
        assert_eq!(unmarshal(b"").unwrap(), Value::Null);
        assert_eq!(
            unmarshal(b"a: 1\na: 2\n").unwrap(),
            serde_json::json!({"a": 2})
        );
    }

    #[test]
    fn repeated_keys_should_be_reported_as_go_yaml_strict_does() {
        // Recorded from kube-apiserver v1.36.2.
        assert_eq!(
            duplicate_keys(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\ndata:\n  a: '1'\n  a: '2'\n"),
            ["line 7: key \"a\" already set in map"]
        );
        // The line of the repeated value; what the repeated value repeats comes first; keys as
        // `%#v` writes them.
        assert_eq!(
            duplicate_keys(b"a: 1\nb: 2\na:\n  x: 1\n  x: 2\n1: a\n1: b\ntrue: 1\ntrue: 2\n"),
            [
                "line 5: key \"x\" already set in map",
                "line 4: key \"a\" already set in map",
                "line 7: key 1 already set in map",
                "line 9: key true already set in map",
            ]
        );
        // A JSON body is YAML too.
        assert_eq!(
            duplicate_keys(b"{\"a\": 1,\n \"a\": 2}"),
            ["line 2: key \"a\" already set in map"]
        );
        assert!(duplicate_keys(b"a: 1\nb: [1, 1]\n").is_empty());
        assert_eq!(err("a: *unknown\n"), "unknown anchor 'unknown' referenced");
        // Only the first document.
        assert!(duplicate_keys(b"a: 1\n---\na: 1\na: 2\n").is_empty());
    }
}
