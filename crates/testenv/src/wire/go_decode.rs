//! Decoding a request body into a built-in kind's Go types as kube-apiserver's JSON decoder does
//! (`sigs.k8s.io/json`, case-sensitive and, under `fieldValidation=Warn` or `Strict`, strict),
//! for its outcome: the error of a value of the wrong type (`json: cannot unmarshal string into
//! Go struct field DeploymentSpec.spec.replicas of type int32`), or the fields the types do not
//! have and the fields given twice (`unknown field "spec.template.spec.containers[0].x"`), in
//! the order the body writes them.
//!
//! The body is walked in its own order, so that the first error and the list of unknown fields
//! are those Go finds. As in Go, a value of the wrong type is skipped and the first such error
//! is kept while decoding goes on; an error from a type that decodes itself (a quantity, a
//! time, an int-or-string) stops decoding and wins; unknown and duplicate fields count only
//! when nothing else failed.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::go_strconv;
use super::go_types::{GoType, GoTypes};
use super::go_unmarshalers;

/// A JSON value with its members in the order of the text, and its numbers and strings as
/// written (Go's messages quote number literals, and a quantity reads a string undecoded).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as written.
    Number(String),
    /// A string: the text between the quotes, and its value.
    String(String, String),
    /// An array.
    Array(Vec<Node>),
    /// An object, members in order (a key may come twice).
    Object(Vec<(String, Node)>),
}

/// Nesting deeper than this is not walked (kube-apiserver refuses such bodies before).
const MAX_DEPTH: usize = 1000;

impl Node {
    /// Parses JSON text; `None` if it is not valid JSON.
    pub(crate) fn parse(text: &[u8]) -> Option<Node> {
        let mut p = Parser { b: text, pos: 0 };
        let node = p.value(0)?;
        p.space();
        (p.pos == text.len()).then_some(node)
    }

    /// A value already decoded (members sorted by key).
    pub(crate) fn from_value(v: &Value) -> Node {
        match v {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(*b),
            Value::Number(n) => Node::Number(n.to_string()),
            Value::String(s) => Node::String(
                serde_json::to_string(s)
                    .ok()
                    .and_then(|q| q.get(1..q.len() - 1).map(str::to_owned))
                    .unwrap_or_default(),
                s.clone(),
            ),
            Value::Array(a) => Node::Array(a.iter().map(Node::from_value).collect()),
            Value::Object(m) => Node::from_object(m),
        }
    }

    /// An object already decoded (members sorted by key).
    pub(crate) fn from_object(m: &Map<String, Value>) -> Node {
        Node::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), Node::from_value(v)))
                .collect(),
        )
    }

    /// How Go's `UnmarshalTypeError` names this kind of value (`number 1.5` when the number
    /// does not fit, see [`Walker::number`]).
    fn kind(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "bool",
            Node::Number(_) => "number",
            Node::String(..) => "string",
            Node::Array(_) => "array",
            Node::Object(_) => "object",
        }
    }
}

struct Parser<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while matches!(self.b.get(self.pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.space();
        let ok = self.b.get(self.pos) == Some(&c);
        if ok {
            self.pos += 1;
        }
        ok
    }

    fn value(&mut self, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.space();
        let c = *self.b.get(self.pos)?;
        match c {
            b'{' => {
                self.pos += 1;
                let mut members = Vec::new();
                if self.eat(b'}') {
                    return Some(Node::Object(members));
                }
                loop {
                    self.space();
                    let Node::String(_, key) = self.string()? else {
                        return None;
                    };
                    if !self.eat(b':') {
                        return None;
                    }
                    members.push((key, self.value(depth + 1)?));
                    if self.eat(b'}') {
                        return Some(Node::Object(members));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            b'[' => {
                self.pos += 1;
                let mut items = Vec::new();
                if self.eat(b']') {
                    return Some(Node::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    if self.eat(b']') {
                        return Some(Node::Array(items));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            b'"' => self.string(),
            b't' | b'f' | b'n' => {
                let (word, node) = match c {
                    b't' => ("true", Node::Bool(true)),
                    b'f' => ("false", Node::Bool(false)),
                    _ => ("null", Node::Null),
                };
                let end = self.pos + word.len();
                (self.b.get(self.pos..end)? == word.as_bytes()).then(|| {
                    self.pos = end;
                    node
                })
            }
            _ => {
                let start = self.pos;
                while matches!(
                    self.b.get(self.pos),
                    Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                ) {
                    self.pos += 1;
                }
                let text = std::str::from_utf8(&self.b[start..self.pos]).ok()?;
                // Checked by serde_json's grammar.
                serde_json::from_str::<Value>(text)
                    .ok()
                    .filter(Value::is_number)?;
                Some(Node::Number(text.to_owned()))
            }
        }
    }

    /// A string token: its raw text and its value, decoded as Go decodes it (a bad surrogate
    /// or bad UTF-8 becomes U+FFFD).
    fn string(&mut self) -> Option<Node> {
        if self.b.get(self.pos) != Some(&b'"') {
            return None;
        }
        let start = self.pos + 1;
        let mut i = start;
        let mut value = Vec::new();
        loop {
            let c = *self.b.get(i)?;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = *self.b.get(i + 1)?;
                    i += 2;
                    let plain = match e {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            let hex = |at: usize| {
                                std::str::from_utf8(self.b.get(at..at + 4)?)
                                    .ok()
                                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                            };
                            let mut unit = hex(i)?;
                            i += 4;
                            if (0xd800..0xdc00).contains(&unit)
                                && self.b.get(i..i + 2) == Some(b"\\u")
                                && let Some(low) =
                                    hex(i + 2).filter(|l| (0xdc00..0xe000).contains(l))
                            {
                                unit = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
                                i += 6;
                            }
                            let ch = char::from_u32(unit).unwrap_or('\u{fffd}');
                            let mut buf = [0u8; 4];
                            value.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                            continue;
                        }
                        _ => return None,
                    };
                    value.push(plain);
                    continue;
                }
                c if c < 0x20 => return None,
                c => value.push(c),
            }
            i += 1;
        }
        self.pos = i + 1;
        let raw = String::from_utf8_lossy(&self.b[start..i]).into_owned();
        Some(Node::String(
            raw,
            String::from_utf8_lossy(&value).into_owned(),
        ))
    }
}

/// A step of a path to a member.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Step {
    /// A field or map key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// A field the strict decoder complains about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct StrictField {
    /// `true`: given twice; `false`: unknown.
    pub(crate) duplicate: bool,
    /// Where it is.
    pub(crate) path: Vec<Step>,
}

impl StrictField {
    /// The path as Go writes it: `spec.template.spec.containers[0].name`.
    pub(crate) fn path_text(&self) -> String {
        let mut out = String::new();
        for step in &self.path {
            match step {
                Step::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Step::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    /// `unknown field "spec.x"` / `duplicate field "spec.x"`.
    pub(crate) fn message(&self) -> String {
        let what = if self.duplicate {
            "duplicate field"
        } else {
            "unknown field"
        };
        format!("{what} {}", go_strconv::go_quote(&self.path_text()))
    }
}

/// What decoding a body finds.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Outcome {
    /// The decode error, as Go words it.
    pub(crate) error: Option<String>,
    /// Unknown and duplicate fields, in the order they come (at most 100, each once).
    pub(crate) strict: Vec<StrictField>,
}

/// Decodes `body` into `types` as kube-apiserver's decoder does.
pub(crate) fn decode(types: &GoTypes, body: &Node) -> Outcome {
    let mut w = Walker {
        types,
        context: None,
        fields: Vec::new(),
        path: Vec::new(),
        saved: None,
        strict: Vec::new(),
        seen: HashSet::new(),
    };
    let error = match w.value(body, &types.root) {
        Err(e) => Some(e),
        Ok(()) => w.saved.take(),
    };
    Outcome {
        strict: if error.is_some() {
            Vec::new()
        } else {
            w.strict
        },
        error,
    }
}

/// Most strict errors Go keeps.
const MAX_STRICT: usize = 100;

struct Walker<'t> {
    types: &'t GoTypes,
    /// The struct whose field is being decoded (Go's `errorContext.Struct`).
    context: Option<usize>,
    /// The struct fields from the root to here (Go's `errorContext.FieldStack`).
    fields: Vec<String>,
    /// The full path, with map keys and indices (the strict decoder's).
    path: Vec<Step>,
    /// The first error of a value of the wrong type.
    saved: Option<String>,
    strict: Vec<StrictField>,
    seen: HashSet<StrictField>,
}

impl Walker<'_> {
    /// `json: cannot unmarshal <what> into Go struct field <Struct>.<fields> of type <T>`.
    fn type_error(&self, what: &str, ty: &GoType) -> String {
        let ty = self.types.name(ty);
        match self.context {
            Some(s) => format!(
                "json: cannot unmarshal {what} into Go struct field {}.{} of type {ty}",
                self.types.structs[s].name,
                self.fields.join(".")
            ),
            None => format!("json: cannot unmarshal {what} into Go value of type {ty}"),
        }
    }

    fn save(&mut self, error: String) {
        if self.saved.is_none() {
            self.saved = Some(error);
        }
    }

    fn save_strict(&mut self, duplicate: bool, key: &str) {
        if self.strict.len() >= MAX_STRICT {
            return;
        }
        let mut path = self.path.clone();
        path.push(Step::Key(key.to_owned()));
        let field = StrictField { duplicate, path };
        if self.seen.insert(field.clone()) {
            self.strict.push(field);
        }
    }

    /// Decodes a value; `Err` stops decoding.
    fn value(&mut self, node: &Node, ty: &GoType) -> Result<(), String> {
        // A named type decodes as what it is made of; its errors name it.
        let named = ty;
        let ty = ty.underlying();
        match ty {
            GoType::Raw(_) => return Ok(()),
            GoType::Quantity => return self.quantity(node),
            GoType::IntOrString => return self.int_or_string(node),
            GoType::Time | GoType::MicroTime => return self.time(node, ty),
            _ => {}
        }
        match (node, ty) {
            (Node::Null, _) => {}
            (Node::Bool(_), GoType::Bool) => {}
            (Node::Number(n), _) => {
                if let Some(e) = self.number(n, ty, named) {
                    self.save(e);
                }
            }
            (Node::String(..), GoType::String) => {}
            (Node::String(_, s), GoType::Bytes) => {
                if let Err(at) = check_base64(s.as_bytes()) {
                    self.save(format!("illegal base64 data at input byte {at}"));
                }
            }
            (Node::Array(items), GoType::Slice(elem)) => {
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Step::Index(i));
                    let r = self.value(item, elem);
                    self.path.pop();
                    r?;
                }
            }
            (Node::Array(items), GoType::Bytes) => {
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Step::Index(i));
                    let r = self.value(item, &GoType::Uint8);
                    self.path.pop();
                    r?;
                }
            }
            (Node::Object(members), GoType::Map(elem)) => {
                let mut keys = HashSet::new();
                for (key, value) in members {
                    if !keys.insert(key.as_str()) {
                        self.save_strict(true, key);
                    }
                    self.path.push(Step::Key(key.clone()));
                    let r = self.value(value, elem);
                    self.path.pop();
                    r?;
                }
            }
            (Node::Object(members), GoType::Struct(s)) => self.object(members, *s)?,
            (node, _) => {
                let e = self.type_error(node.kind(), named);
                self.save(e);
            }
        }
        Ok(())
    }

    fn object(&mut self, members: &[(String, Node)], s: usize) -> Result<(), String> {
        let types = self.types;
        let mut keys = HashSet::new();
        for (key, value) in members {
            let Some(ty) = types.structs[s].fields.get(key) else {
                self.save_strict(false, key);
                continue;
            };
            if !keys.insert(key.as_str()) {
                self.save_strict(true, key);
            }
            let context = self.context.replace(s);
            self.fields.push(key.clone());
            self.path.push(Step::Key(key.clone()));
            let r = self.value(value, ty);
            self.path.pop();
            self.fields.pop();
            self.context = context;
            r?;
        }
        Ok(())
    }

    /// The error of a number literal decoded into `ty` (what the type `named` is made of), if
    /// any.
    fn number(&self, n: &str, ty: &GoType, named: &GoType) -> Option<String> {
        let fits = match ty {
            GoType::Int32 => go_strconv::parse_int(n).is_ok_and(|v| i32::try_from(v).is_ok()),
            GoType::Int64 => go_strconv::parse_int(n).is_ok(),
            GoType::Uint8 => go_strconv::parse_uint(n).is_ok_and(|v| u8::try_from(v).is_ok()),
            GoType::Float64 => n.parse::<f64>().is_ok_and(f64::is_finite),
            _ => return Some(self.type_error("number", named)),
        };
        (!fits).then(|| self.type_error(&format!("number {n}"), named))
    }

    /// `resource.Quantity`'s decoder: the text (a string's undecoded, spaces trimmed) must
    /// parse as a quantity.
    fn quantity(&self, node: &Node) -> Result<(), String> {
        let text = match node {
            Node::Null => return Ok(()),
            Node::String(raw, _) => raw.clone(),
            Node::Number(n) => n.clone(),
            Node::Bool(b) => b.to_string(),
            // Not a quantity, whatever it holds.
            Node::Array(_) | Node::Object(_) => "{".to_owned(),
        };
        go_unmarshalers::parse_quantity(text.trim()).map_err(str::to_owned)
    }

    /// `intstr.IntOrString`'s decoder: a string, or else an `int32`.
    fn int_or_string(&self, node: &Node) -> Result<(), String> {
        match node {
            Node::Null | Node::String(..) => Ok(()),
            Node::Number(n) => match self.number(n, &GoType::Int32, &GoType::Int32) {
                None => Ok(()),
                Some(_) => Err(self.type_error(&format!("number {n}"), &GoType::Int32)),
            },
            other => Err(self.type_error(other.kind(), &GoType::Int32)),
        }
    }

    /// `v1.Time` and `v1.MicroTime`'s decoders: a string in their layout.
    fn time(&self, node: &Node, ty: &GoType) -> Result<(), String> {
        let layout = if *ty == GoType::Time {
            go_unmarshalers::RFC3339
        } else {
            go_unmarshalers::RFC3339_MICRO
        };
        match node {
            Node::Null => Ok(()),
            Node::String(_, s) => go_unmarshalers::parse_time(layout, s),
            other => Err(self.type_error(other.kind(), &GoType::String)),
        }
    }
}

/// `base64.StdEncoding.Decode`'s verdict: `Err` with the offset Go reports
/// (`illegal base64 data at input byte N`). Line breaks are skipped, as Go skips them.
pub(crate) fn check_base64(src: &[u8]) -> Result<(), usize> {
    let is_alphabet = |c: u8| c.is_ascii_alphanumeric() || c == b'+' || c == b'/';
    let newline = |c: u8| c == b'\n' || c == b'\r';
    let mut si = 0;
    loop {
        // One quantum of up to four characters.
        let mut j = 0;
        while j < 4 {
            let Some(&c) = src.get(si) else {
                return match j {
                    0 => Ok(()),
                    _ => Err(si - j),
                };
            };
            si += 1;
            if is_alphabet(c) {
                j += 1;
                continue;
            }
            if newline(c) {
                continue;
            }
            if c != b'=' || j < 2 {
                return Err(si - 1);
            }
            // Padding: `==` after two characters, `=` after three.
            if j == 2 {
                while src.get(si).copied().is_some_and(newline) {
                    si += 1;
                }
                match src.get(si) {
                    None => return Err(src.len()),
                    Some(b'=') => si += 1,
                    Some(_) => return Err(si - 1),
                }
            }
            while src.get(si).copied().is_some_and(newline) {
                si += 1;
            }
            return if si < src.len() { Err(si) } else { Ok(()) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::go_types;
    use k8s_openapi::api;
    use serde_json::json;

    fn outcome<T: serde::de::DeserializeOwned + 'static>(body: &str) -> Outcome {
        let types = go_types::of::<T>().unwrap();
        decode(&types, &Node::parse(body.as_bytes()).unwrap())
    }

    fn error<T: serde::de::DeserializeOwned + 'static>(body: &str) -> String {
        outcome::<T>(body).error.unwrap_or_default()
    }

    fn strict<T: serde::de::DeserializeOwned + 'static>(body: &str) -> Vec<String> {
        outcome::<T>(body)
            .strict
            .iter()
            .map(StrictField::message)
            .collect()
    }

    type Deployment = api::apps::v1::Deployment;
    type ConfigMap = api::core::v1::ConfigMap;
    type Pod = api::core::v1::Pod;

    #[test]
    fn values_of_the_wrong_type_should_be_named_as_go_names_them() {
        // The three kube-apiserver answers of the conformance corpus.
        assert_eq!(
            error::<ConfigMap>(r#"{"data":{"a":1}}"#),
            "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
        );
        assert_eq!(
            error::<ConfigMap>(r#"{"metadata":{"name":"a","labels":"x"}}"#),
            "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string"
        );
        assert_eq!(
            error::<Deployment>(r#"{"spec":{"replicas":"three"}}"#),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        // Nested: the struct is the innermost, the path leaves out indices.
        let port = r#"{"spec":{"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":"80"}]}]}}}}"#;
        assert_eq!(
            error::<Deployment>(port),
            "json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32"
        );
        // A list where an object is expected, an object where a list is.
        assert_eq!(
            error::<Deployment>(r#"{"spec":{"template":[]}}"#),
            "json: cannot unmarshal array into Go struct field DeploymentSpec.spec.template of type v1.PodTemplateSpec"
        );
        assert_eq!(
            error::<Pod>(r#"{"spec":{"containers":{"name":"a"}}}"#),
            "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container"
        );
        // A pointer field is named by the type it points to.
        assert_eq!(
            error::<Deployment>(r#"{"spec":{"selector":"app=web"}}"#),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.selector of type v1.LabelSelector"
        );
        // Numbers that do not fit are quoted; others are just `number`.
        assert_eq!(
            error::<Deployment>(r#"{"spec":{"replicas":1.5}}"#),
            "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        assert_eq!(
            error::<Deployment>(r#"{"spec":{"replicas":3000000000}}"#),
            "json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        assert_eq!(
            error::<Pod>(r#"{"spec":{"activeDeadlineSeconds":1e3}}"#),
            "json: cannot unmarshal number 1e3 into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64"
        );
        assert_eq!(
            error::<Pod>(r#"{"spec":{"hostNetwork":"yes"}}"#),
            "json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool"
        );
        assert_eq!(
            error::<Pod>(r#"{"spec":{"nodeName":7}}"#),
            "json: cannot unmarshal number into Go struct field PodSpec.spec.nodeName of type string"
        );
        assert_eq!(
            error::<Pod>(r#"{"metadata":{"finalizers":[true]}}"#),
            "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.finalizers of type string"
        );
        // `[]byte`: base64, with Go's offset.
        assert_eq!(
            error::<api::core::v1::Secret>(r#"{"data":{"a":"YQ=","b":1}}"#),
            "illegal base64 data at input byte 3"
        );
        assert_eq!(
            error::<api::core::v1::Secret>(r#"{"data":{"a":1}}"#),
            "json: cannot unmarshal number into Go struct field Secret.data of type []uint8"
        );
        // `null` fits everything.
        assert_eq!(
            outcome::<Deployment>(r#"{"spec":{"replicas":null,"template":null}}"#),
            Outcome::default()
        );
    }

    #[test]
    fn a_type_go_declares_with_a_name_should_be_named_so() {
        assert_eq!(
            error::<Pod>(r#"{"spec":{"containers":[{"name":"a","imagePullPolicy":1}]}}"#),
            "json: cannot unmarshal number into Go struct field Container.spec.containers.imagePullPolicy of type v1.PullPolicy"
        );
        assert_eq!(
            error::<Pod>(r#"{"spec":{"containers":[{"name":"a","resources":{"limits":"x"}}]}}"#),
            "json: cannot unmarshal string into Go struct field ResourceRequirements.spec.containers.resources.limits of type v1.ResourceList"
        );
        assert_eq!(
            error::<Pod>(
                r#"{"spec":{"containers":[{"name":"a","securityContext":{"capabilities":{"add":[1]}}}]}}"#
            ),
            "json: cannot unmarshal number into Go struct field Capabilities.spec.containers.securityContext.capabilities.add of type v1.Capability"
        );
        assert_eq!(
            error::<Pod>(r#"{"metadata":{"uid":5}}"#),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of type types.UID"
        );
    }

    #[test]
    fn the_first_type_error_should_win_unless_a_self_decoding_type_fails() {
        assert_eq!(
            error::<Pod>(r#"{"spec":{"nodeName":7,"hostNetwork":"x"}}"#),
            "json: cannot unmarshal number into Go struct field PodSpec.spec.nodeName of type string"
        );
        // A quantity's error stops decoding and is reported even after a type error.
        let body = r#"{"spec":{"nodeName":7,"containers":[{"name":"a","resources":{"limits":{"cpu":"lots"}}}]}}"#;
        assert_eq!(error::<Pod>(body), go_unmarshalers::QUANTITY_FORMAT);
        assert_eq!(
            outcome::<Pod>(
                r#"{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"1.5","memory":128}}}]}}"#
            ),
            Outcome::default()
        );
        // An int-or-string that is neither: Go's int32 error, in the field's context.
        let surge = r#"{"spec":{"strategy":{"rollingUpdate":{"maxSurge":true}}}}"#;
        assert_eq!(
            error::<Deployment>(surge),
            "json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32"
        );
        let port = r#"{"spec":{"ports":[{"port":80,"targetPort":8.5}]}}"#;
        assert_eq!(
            error::<api::core::v1::Service>(port),
            "json: cannot unmarshal number 8.5 into Go struct field ServicePort.spec.ports.targetPort of type int32"
        );
        // A time: a string, in RFC 3339.
        assert_eq!(
            error::<Pod>(r#"{"metadata":{"creationTimestamp":5}}"#),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string"
        );
        assert!(
            error::<Pod>(r#"{"metadata":{"deletionTimestamp":"now"}}"#)
                .starts_with("parsing time \"now\" as \"2006-01-02T15:04:05Z07:00\"")
        );
    }

    #[test]
    fn unknown_and_duplicate_fields_should_be_listed_in_body_order_with_go_paths() {
        let body = r#"{"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"app","imagePullPolicyy":"Always"}]}},"bogus":true},"metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2"}},"zz":null}"#;
        assert_eq!(
            strict::<Deployment>(body),
            vec![
                r#"unknown field "spec.template.spec.containers[0].imagePullPolicyy""#,
                r#"unknown field "spec.bogus""#,
                r#"duplicate field "metadata.name""#,
                r#"duplicate field "metadata.labels.x""#,
                r#"unknown field "zz""#,
            ]
        );
        // Field names are case-sensitive.
        assert_eq!(
            strict::<ConfigMap>(r#"{"Data":{}}"#),
            vec![r#"unknown field "Data""#]
        );
        // A type error hides them.
        assert_eq!(
            outcome::<ConfigMap>(r#"{"bogus":1,"data":[]}"#).strict,
            Vec::new()
        );
    }

    #[test]
    fn bodies_should_parse_in_their_own_order() {
        let node =
            Node::parse(br#" {"b":1.50,"a":["\u00e9\ud83d\ude00",null,true],"b":"\ud800"} "#);
        assert_eq!(
            node,
            Some(Node::Object(vec![
                ("b".into(), Node::Number("1.50".into())),
                (
                    "a".into(),
                    Node::Array(vec![
                        Node::String(r"\u00e9\ud83d\ude00".into(), "é😀".into()),
                        Node::Null,
                        Node::Bool(true),
                    ])
                ),
                (
                    "b".into(),
                    Node::String(r"\ud800".into(), "\u{fffd}".into())
                ),
            ]))
        );
        assert_eq!(Node::parse(b"{\"a\":}"), None);
        assert_eq!(Node::parse(b"[1] x"), None);
        assert_eq!(
            Node::from_value(&json!({"b": 1, "a": "x"})),
            Node::Object(vec![
                ("a".into(), Node::String("x".into(), "x".into())),
                ("b".into(), Node::Number("1".into())),
            ])
        );
    }

    #[test]
    fn base64_should_be_checked_as_go_decodes_it() {
        assert_eq!(check_base64(b""), Ok(()));
        assert_eq!(check_base64(b"YQ=="), Ok(()));
        assert_eq!(check_base64(b"YWI="), Ok(()));
        assert_eq!(check_base64(b"YW\nJj"), Ok(()));
        assert_eq!(check_base64(b"abc!"), Err(3));
        assert_eq!(check_base64(b"YQ="), Err(3));
        assert_eq!(check_base64(b"YQ"), Err(0));
        assert_eq!(check_base64(b"YWJjZ"), Err(4));
        assert_eq!(check_base64(b"Y==="), Err(1));
        assert_eq!(check_base64(b"YQ==YQ=="), Err(4));
        assert_eq!(check_base64(b"YQ=x"), Err(2));
    }
}
