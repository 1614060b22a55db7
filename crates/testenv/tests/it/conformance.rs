//! Replays the kube-apiserver v1.36.2 conformance corpora (`tests/conformance/`, recorded from a
//! real server; its README gives the format, the placeholders, the normalisation and the
//! comparison rules this file follows) against kcr-testenv over HTTP, and prints
//! `N of M cases conform`: `kube-apiserver-v1.36.2.jsonl` against a server without controllers,
//! as recorded, and `kube-apiserver-v1.36.2-sharding.jsonl` with the `ShardedListAndWatch`
//! gate on.
//!
//! Two files list the cases that may fail, one `name: reason` a line:
//! - `tests/conformance/deliberate.txt`: cases kcr-testenv answers differently on purpose
//!   (where the real answer needs a component kcr-testenv does not emulate);
//! - `tests/conformance/known-failing.txt`: cases that do not conform yet, with what is missing.
//!
//! Both count as not conforming in the figure. The test fails when a case in neither file does
//! not conform (a regression), and when a listed case conforms (the list is out of date).

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

const CORPUS: &str = include_str!("../conformance/kube-apiserver-v1.36.2.jsonl");
const SHARDING_CORPUS: &str = include_str!("../conformance/kube-apiserver-v1.36.2-sharding.jsonl");
const DELIBERATE: &str = include_str!("../conformance/deliberate.txt");
const KNOWN_FAILING: &str = include_str!("../conformance/known-failing.txt");
const CONTROLLERS_CORPUS: &str =
    include_str!("../conformance/kube-apiserver-v1.36.2-with-controllers.jsonl");
const CONTROLLERS_KNOWN_FAILING: &str =
    include_str!("../conformance/with-controllers-known-failing.txt");
const TOKEN: &str = "conformance-token";
/// The longest a `retry` step is repeated.
const RETRY_CAP_SECONDS: f64 = 15.0;

/// One answer of the server, read to the end (or, for a watch, until enough events came).
#[derive(Debug)]
struct Answer {
    status: u16,
    warning: Option<String>,
    body: Vec<u8>,
}

/// The `name: reason` lines of a list file.
fn listed(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once(':') {
            Some((name, reason)) => (name.trim().to_owned(), reason.trim().to_owned()),
            None => (l.to_owned(), String::new()),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// HTTP

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The body of a chunked response so far, and whether its last chunk came.
fn dechunk(mut data: &[u8]) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    while let Some(pos) = find(data, b"\r\n") {
        let Some(size) = std::str::from_utf8(&data[..pos])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok())
        else {
            return (out, true);
        };
        if size == 0 {
            return (out, true);
        }
        data = &data[pos + 2..];
        if data.len() < size {
            return (out, false);
        }
        out.extend_from_slice(&data[..size]);
        data = &data[(size + 2).min(data.len())..];
    }
    (out, false)
}

struct Head {
    status: u16,
    headers: Vec<(String, String)>,
    body_start: usize,
}

fn parse_head(buf: &[u8]) -> Option<Head> {
    let end = find(buf, b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&buf[..end]);
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Some(Head {
        status,
        headers,
        body_start: end + 4,
    })
}

/// Sends one request and reads its answer: to the end, or, with `max_events`, until that many
/// watch events came, the stream ended or `timeout` passed.
async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    max_events: Option<usize>,
    timeout: Duration,
) -> Result<Answer, String> {
    let mut stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(body) = body {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    let mut bytes = req.into_bytes();
    bytes.extend_from_slice(body.unwrap_or_default());
    stream
        .write_all(&bytes)
        .await
        .map_err(|e| format!("write: {e}"))?;
    let deadline = Instant::now() + timeout;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let read = tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await;
        let ended = match read {
            Err(_) => {
                if max_events.is_none() {
                    return Err(format!("no complete answer within {timeout:?}"));
                }
                true
            }
            Ok(Err(e)) => return Err(format!("read: {e}")),
            Ok(Ok(0)) => true,
            Ok(Ok(n)) => {
                buf.extend_from_slice(&chunk[..n]);
                false
            }
        };
        let Some(head) = parse_head(&buf) else {
            if ended {
                return Err("the connection closed before a response head".into());
            }
            continue;
        };
        let raw = &buf[head.body_start..];
        let chunked = head
            .headers
            .iter()
            .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
        let (body, complete) = if chunked {
            dechunk(raw)
        } else {
            let length = head
                .headers
                .iter()
                .find(|(k, _)| k == "content-length")
                .and_then(|(_, v)| v.parse::<usize>().ok());
            let complete = length.is_some_and(|l| raw.len() >= l);
            (
                raw[..length.unwrap_or(raw.len()).min(raw.len())].to_vec(),
                complete,
            )
        };
        let enough = max_events.is_some_and(|n| {
            head.status == 200
                && body
                    .split(|b| *b == b'\n')
                    .filter(|l| !l.is_empty())
                    .count()
                    >= n
        });
        if ended || complete || enough {
            let warnings: Vec<&str> = head
                .headers
                .iter()
                .filter(|(k, _)| k == "warning")
                .map(|(_, v)| v.as_str())
                .collect();
            return Ok(Answer {
                status: head.status,
                warning: (!warnings.is_empty()).then(|| warnings.join(", ")),
                body,
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Placeholders

/// The value at a dot path with `[i]` indices.
fn at_path<'a>(mut value: &'a Value, path: &str) -> Option<&'a Value> {
    for part in path.split('.') {
        let (key, indices) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            value = value.get(key)?;
        }
        for index in indices.split('[').filter(|s| !s.is_empty()) {
            value = value.get(index.trim_end_matches(']').parse::<usize>().ok()?)?;
        }
    }
    Some(value)
}

fn url_quote(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The value a `steps[N].body.PATH|filter` expression names.
fn resolve(expr: &str, bodies: &[Value]) -> Result<Value, String> {
    let (reference, filter) = match expr.split_once('|') {
        Some((r, f)) => (r.trim(), Some(f.trim())),
        None => (expr.trim(), None),
    };
    let rest = reference
        .strip_prefix("steps[")
        .ok_or_else(|| format!("bad placeholder {expr}"))?;
    let (index, path) = rest
        .split_once("].body.")
        .ok_or_else(|| format!("bad placeholder {expr}"))?;
    let index: usize = index
        .parse()
        .map_err(|_| format!("bad placeholder {expr}"))?;
    let body = bodies
        .get(index)
        .ok_or_else(|| format!("placeholder {expr} names a later step"))?;
    let value = at_path(body, path)
        .cloned()
        .ok_or_else(|| format!("placeholder {expr}: no such value in step {index}"))?;
    let text = || match &value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Ok(match filter {
        None => value.clone(),
        Some(f) if f.starts_with("plus:") => {
            let add: u64 = f[5..].parse().map_err(|_| format!("bad filter {f}"))?;
            let base: u64 = text()
                .parse()
                .map_err(|_| format!("{expr}: {} is not an integer", text()))?;
            Value::String((base + add).to_string())
        }
        Some("urlquote") => Value::String(url_quote(&text())),
        Some(f) => return Err(format!("unknown filter {f}")),
    })
}

fn substitute_text(text: &str, bodies: &[Value]) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let end = rest[start..]
            .find("}}")
            .ok_or_else(|| format!("unclosed placeholder in {text}"))?;
        out.push_str(&rest[..start]);
        match resolve(&rest[start + 2..start + end], bodies)? {
            Value::String(s) => out.push_str(&s),
            other => out.push_str(&other.to_string()),
        }
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

fn substitute(value: &Value, bodies: &[Value]) -> Result<Value, String> {
    Ok(match value {
        Value::String(s) => {
            let trimmed = s.trim();
            if trimmed.starts_with("{{")
                && trimmed.ends_with("}}")
                && trimmed.matches("{{").count() == 1
                && s.len() == trimmed.len()
            {
                resolve(&trimmed[2..trimmed.len() - 2], bodies)?
            } else {
                Value::String(substitute_text(s, bodies)?)
            }
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| substitute(v, bodies))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), substitute(v, bodies)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

// ---------------------------------------------------------------------------------------------
// Normalisation (the README's table)

const TIME_KEYS: &[&str] = &[
    "creationTimestamp",
    "deletionTimestamp",
    "lastTransitionTime",
    "lastUpdateTime",
    "lastHeartbeatTime",
    "lastProbeTime",
];

fn is_uuid(s: &[u8]) -> bool {
    s.len() == 36
        && s.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// Replaces the digits that follow `prefix` by `<rv>`.
fn replace_number_after(s: &str, prefix: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(prefix) {
        let after = i + prefix.len();
        out.push_str(&rest[..after]);
        let digits = rest[after..].bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            out.push_str("<rv>");
        }
        rest = &rest[after + digits..];
    }
    out.push_str(rest);
    out
}

fn normalise_string(s: &str) -> String {
    // UUIDs except the zero one.
    let mut out = String::with_capacity(s.len());
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if i + 36 <= bytes.len()
            && s.is_char_boundary(i)
            && s.is_char_boundary(i + 36)
            && is_uuid(&bytes[i..i + 36])
            && &s[i..i + 36] != "00000000-0000-0000-0000-000000000000"
        {
            out.push_str("<uid>");
            i += 36;
        } else {
            let c = s[i..].chars().next().unwrap_or('\u{fffd}');
            out.push(c);
            i += c.len_utf8().max(1);
        }
    }
    let mut s = out;
    for prefix in [
        "resource version: ",
        "current: ",
        "the ResourceVersion in record (",
    ] {
        s = replace_number_after(&s, prefix);
    }
    // `too old resource version: N (M)`: the M.
    s = s.replace("resource version: <rv> (", "resource version: <rv> (\u{0}");
    s = replace_number_after(&s, "\u{0}").replace('\u{0}', "");
    // The random suffix of the projected token volume.
    let marker = "kube-api-access-";
    let mut out = String::new();
    let mut rest = s.as_str();
    while let Some(i) = rest.find(marker) {
        let after = i + marker.len();
        out.push_str(&rest[..after]);
        let suffix: String = rest[after..].chars().take(5).collect();
        if suffix.chars().count() == 5 && suffix.chars().all(|c| c.is_ascii_alphanumeric()) {
            out.push_str("<random>");
            rest = &rest[after + suffix.len()..];
        } else {
            rest = &rest[after..];
        }
    }
    out.push_str(rest);
    out
}

/// The order [`normalise`] gives `managedFields` entries, also applied to the recorded answer
/// (whose entries are in the recording server's order, by the second of their time).
fn managed_fields_key(v: &Value) -> (String, bool, String, String, String) {
    let field = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    (
        field("operation"),
        // An entry without a time sorts first, whatever the clock.
        v.get("time").is_some(),
        field("manager"),
        field("apiVersion"),
        field("subresource"),
    )
}

/// Puts every `managedFields` list of a recorded answer in [`managed_fields_key`] order.
fn order_managed_fields(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if key == "managedFields"
                    && let Value::Array(items) = child
                {
                    items.sort_by_key(managed_fields_key);
                }
                order_managed_fields(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(order_managed_fields),
        _ => {}
    }
}

fn normalise(value: &mut Value) {
    normalise_in(value, None);
}

fn normalise_in(value: &mut Value, parent_key: Option<&str>) {
    match value {
        Value::String(s) => *s = normalise_string(s),
        Value::Array(items) => {
            let in_managed_fields = parent_key == Some("managedFields");
            for item in items.iter_mut() {
                if in_managed_fields && let Some(Value::String(t)) = item.get_mut("time") {
                    *t = "<time>".into();
                }
                normalise_in(item, None);
            }
            if in_managed_fields {
                // kube-apiserver orders entries of one operation by the second of their time,
                // then by manager. The seconds are normalised away, so the recorded order
                // cannot be checked: a replay whose writes cross a second boundary (or a
                // recording whose writes did not) orders them otherwise. Entries of one
                // operation are compared in manager order (an entry without a time still first),
                // in both answers; Apply still comes before Update.
                items.sort_by_key(managed_fields_key);
            }
        }
        Value::Object(map) => {
            normalise_object(map, parent_key);
        }
        _ => {}
    }
}

fn normalise_object(map: &mut Map<String, Value>, parent_key: Option<&str>) {
    if let Some(Value::Object(meta)) = map.get_mut("metadata")
        && let (Some(Value::String(generate)), Some(Value::String(name))) =
            (meta.get("generateName").cloned(), meta.get_mut("name"))
        && name.starts_with(generate.as_str())
        && name[generate.len()..].chars().count() == 5
    {
        *name = format!("{generate}<random>");
    }
    for (key, child) in map.iter_mut() {
        match (key.as_str(), &mut *child) {
            ("uid", Value::String(s)) if !s.is_empty() => *s = "<uid>".into(),
            ("resourceVersion", Value::String(s)) if !s.is_empty() => *s = "<rv>".into(),
            (k, Value::String(s)) if TIME_KEYS.contains(&k) => *s = "<time>".into(),
            ("continue", Value::String(s)) if parent_key == Some("metadata") && !s.is_empty() => {
                *s = "<continue>".into()
            }
            ("clusterIP", Value::String(s))
                if parent_key == Some("spec") && s.parse::<std::net::IpAddr>().is_ok() =>
            {
                *s = "<ip>".into()
            }
            ("clusterIPs", Value::Array(ips)) if parent_key == Some("spec") => {
                for ip in ips {
                    if let Value::String(s) = ip
                        && s.parse::<std::net::IpAddr>().is_ok()
                    {
                        *s = "<ip>".into();
                    }
                }
            }
            (k, child) => normalise_in(child, Some(k)),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Comparison

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 160 {
        format!("{}…", s.chars().take(160).collect::<String>())
    } else {
        s
    }
}

/// The differences between `expected` and `actual`, as `path: expected X, got Y` lines.
fn diff(path: &str, expected: &Value, actual: &Value, out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let keys: BTreeSet<&String> = e.keys().chain(a.keys()).collect();
            for k in keys {
                let p = format!("{path}.{k}");
                match (e.get(k), a.get(k)) {
                    (Some(ev), Some(av)) => diff(&p, ev, av, out),
                    (Some(ev), None) => out.push(format!("{p}: expected {}, missing", short(ev))),
                    (None, Some(av)) => out.push(format!("{p}: not expected, got {}", short(av))),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                diff(&format!("{path}[{i}]"), ev, av, out);
            }
        }
        (e, a) if e != a => out.push(format!("{path}: expected {}, got {}", short(e), short(a))),
        _ => {}
    }
}

/// JSON as the recorder's Python `json.dumps` wrote it (`", "` and `": "` separators, non-ASCII
/// as `\uXXXX`): kube-apiserver quotes the start of a body it cannot decode in its message.
fn python_json<T: serde::Serialize + ?Sized>(v: &T) -> serde_json::Result<Vec<u8>> {
    struct Python;
    impl serde_json::ser::Formatter for Python {
        fn begin_array_value<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            if first { Ok(()) } else { w.write_all(b", ") }
        }
        fn begin_object_key<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            if first { Ok(()) } else { w.write_all(b", ") }
        }
        fn begin_object_value<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
        ) -> std::io::Result<()> {
            w.write_all(b": ")
        }
        fn write_string_fragment<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            fragment: &str,
        ) -> std::io::Result<()> {
            for c in fragment.chars() {
                if c.is_ascii() {
                    w.write_all(&[c as u8])?;
                } else {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        write!(w, "\\u{u:04x}")?;
                    }
                }
            }
            Ok(())
        }
    }
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Python);
    serde::Serialize::serialize(v, &mut ser)?;
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Bodies in the corpus's order

/// A JSON value whose objects keep their members in the order of the text: the replay sends each
/// body as the recorder did, since kube-apiserver reports some things (unknown fields, the first
/// value of the wrong type) in the order of the body, and serde_json's `Value` sorts members.
#[derive(Debug, Clone, PartialEq)]
enum Ordered {
    Scalar(Value),
    Array(Vec<Ordered>),
    Object(Vec<(String, Ordered)>),
}

impl Ordered {
    fn get(&self, key: &str) -> Option<&Ordered> {
        match self {
            Ordered::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The request body of each step of a corpus line, in the line's order.
    fn step_bodies(line: &str) -> Vec<Option<Ordered>> {
        let case: Ordered = serde_json::from_str(line).expect("a corpus line is JSON");
        match case.get("steps") {
            Some(Ordered::Array(steps)) => steps.iter().map(|s| s.get("body").cloned()).collect(),
            _ => Vec::new(),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(Value::Null))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(Value::from(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(Value::String(v.to_owned())))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Ordered, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Ordered::Array(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Ordered, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry()? {
                    members.push(member);
                }
                Ok(Ordered::Object(members))
            }
        }
        d.deserialize_any(Visitor)
    }
}

impl serde::Serialize for Ordered {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Ordered::Scalar(v) => v.serialize(s),
            Ordered::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Ordered::Object(members) => {
                let mut map = s.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// [`substitute`] on a body in order.
fn substitute_ordered(value: &Ordered, bodies: &[Value]) -> Result<Ordered, String> {
    Ok(match value {
        Ordered::Scalar(v) => Ordered::Scalar(substitute(v, bodies)?),
        Ordered::Array(items) => Ordered::Array(
            items
                .iter()
                .map(|v| substitute_ordered(v, bodies))
                .collect::<Result<_, _>>()?,
        ),
        Ordered::Object(members) => Ordered::Object(
            members
                .iter()
                .map(|(k, v)| Ok((k.clone(), substitute_ordered(v, bodies)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

// ---------------------------------------------------------------------------------------------
// Replay

/// A case of the corpus, with its steps' bodies in the order of the corpus file.
struct Case {
    value: Value,
    bodies: Vec<Option<Ordered>>,
}

struct Outcome {
    name: String,
    differences: Vec<String>,
}

async fn replay(env: &kcr_testenv::TestEnv, case: &Case) -> Outcome {
    let (ordered, case) = (&case.bodies, &case.value);
    let name = case["name"].as_str().unwrap_or("?").to_owned();
    let mut differences = Vec::new();
    let mut bodies: Vec<Value> = Vec::new();
    let steps = case["steps"].as_array().cloned().unwrap_or_default();
    for (index, step) in steps.iter().enumerate() {
        if step.get("action").and_then(Value::as_str) == Some("compact") {
            // `etcdctl compact` on the recording cluster: the storage, not the watch cache.
            env.faults().compact_storage();
            bodies.push(Value::Null);
            continue;
        }
        let ordered = ordered.get(index).and_then(Option::as_ref);
        match run_step(env.addr(), step, ordered, &bodies).await {
            Err(e) => {
                differences.push(format!("step {index}: {e}"));
                break;
            }
            Ok(answer) => {
                let setup = step.get("setup").and_then(Value::as_bool) == Some(true);
                let expect = &step["expect"];
                let expected_status = expect["status"].as_u64().unwrap_or(0);
                if u64::from(answer.status) != expected_status {
                    differences.push(format!(
                        "step {index} {} {}: status expected {expected_status}, got {} {}",
                        step["method"].as_str().unwrap_or(""),
                        step["path"].as_str().unwrap_or(""),
                        answer.status,
                        String::from_utf8_lossy(&answer.body)
                            .chars()
                            .take(200)
                            .collect::<String>()
                    ));
                    if step.get("retry").is_some() {
                        // A wait that never ended: the steps after it depend on it.
                        break;
                    }
                }
                let raw: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
                if !setup {
                    let mut actual = if step.get("watch").is_some() && answer.status == 200 {
                        Value::Array(
                            answer
                                .body
                                .split(|b| *b == b'\n')
                                .filter(|l| !l.is_empty())
                                .map(|l| {
                                    serde_json::from_slice(l).unwrap_or_else(|_| {
                                        Value::String(String::from_utf8_lossy(l).into_owned())
                                    })
                                })
                                .collect(),
                        )
                    } else if answer.body.is_empty() && expect["body"].is_null() {
                        // No body at all (a HEAD answer) is recorded as `null`.
                        Value::Null
                    } else if let Value::String(_) = expect["body"] {
                        Value::String(String::from_utf8_lossy(&answer.body).into_owned())
                    } else {
                        serde_json::from_slice(&answer.body).unwrap_or_else(|_| {
                            Value::String(String::from_utf8_lossy(&answer.body).into_owned())
                        })
                    };
                    normalise(&mut actual);
                    let mut expected = expect["body"].clone();
                    order_managed_fields(&mut expected);
                    diff(
                        &format!("step {index} body"),
                        &expected,
                        &actual,
                        &mut differences,
                    );
                    let expected_warning = expect["warning"].as_str();
                    if expected_warning != answer.warning.as_deref() {
                        differences.push(format!(
                            "step {index} warning: expected {expected_warning:?}, got {:?}",
                            answer.warning
                        ));
                    }
                }
                bodies.push(raw);
            }
        }
    }
    Outcome { name, differences }
}

async fn run_step(
    addr: SocketAddr,
    step: &Value,
    ordered: Option<&Ordered>,
    bodies: &[Value],
) -> Result<Answer, String> {
    let method = step["method"].as_str().unwrap_or("GET");
    let path = substitute_text(step["path"].as_str().unwrap_or("/"), bodies)?;
    let mut headers: Vec<(String, String)> = Vec::new();
    if let Some(map) = step["headers"].as_object() {
        for (k, v) in map {
            if let Some(v) = v.as_str() {
                headers.push((k.clone(), substitute_text(v, bodies)?));
            }
        }
    }
    if step.get("auth").and_then(Value::as_bool) != Some(false) {
        headers.push(("Authorization".into(), format!("Bearer {TOKEN}")));
    }
    let body = match (&step["body"], ordered) {
        (Value::Null, _) => None,
        (Value::String(s), _) => Some(substitute_text(s, bodies)?.into_bytes()),
        (_, Some(ordered)) => Some(
            python_json(&substitute_ordered(ordered, bodies)?)
                .map_err(|e| format!("encode: {e}"))?,
        ),
        (other, None) => {
            Some(python_json(&substitute(other, bodies)?).map_err(|e| format!("encode: {e}"))?)
        }
    };
    if let Some(watch) = step.get("watch") {
        let max = watch["max_events"].as_u64().unwrap_or(1) as usize;
        let timeout = Duration::from_secs_f64(watch["timeout_s"].as_f64().unwrap_or(5.0));
        return send(
            addr,
            method,
            &path,
            &headers,
            body.as_deref(),
            Some(max),
            timeout,
        )
        .await;
    }
    let timeout = Duration::from_secs(30);
    if let Some(retry) = step.get("retry") {
        let until = retry["until_status"].as_u64().unwrap_or(200);
        // kcr-testenv's controllers act within milliseconds: a wait longer than this is a
        // controller that does not act at all.
        let wait = retry["timeout_s"]
            .as_f64()
            .unwrap_or(10.0)
            .min(RETRY_CAP_SECONDS);
        let deadline = Instant::now() + Duration::from_secs_f64(wait);
        loop {
            let answer = send(
                addr,
                method,
                &path,
                &headers,
                body.as_deref(),
                None,
                timeout,
            )
            .await?;
            if u64::from(answer.status) == until || Instant::now() >= deadline {
                return Ok(answer);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    send(
        addr,
        method,
        &path,
        &headers,
        body.as_deref(),
        None,
        timeout,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_replay_matches_kube_apiserver() {
    let env = kcr_testenv::TestEnv::builder()
        .token(TOKEN)
        // The corpus was recorded without kube-controller-manager: a deleted namespace stays
        // `Terminating`, as with kcr-testenv's namespace finalizer off.
        .finalize_namespaces(false)
        .start()
        .await
        .expect("start the server");
    replay_corpus(&env, CORPUS, DELIBERATE, KNOWN_FAILING).await;
}

/// The `sharding` group (KEP-5866 `shardSelector`), recorded from a kube-apiserver started with
/// `--feature-gates=ShardedListAndWatch=true`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharding_corpus_replay_matches_kube_apiserver() {
    let env = kcr_testenv::TestEnv::builder()
        .token(TOKEN)
        .sharded_list_and_watch(true)
        .start()
        .await
        .expect("start the server");
    replay_corpus(&env, SHARDING_CORPUS, "", "").await;
}

/// The cases of a corpus file.
fn parse_cases(corpus: &str) -> Vec<Case> {
    corpus
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Case {
            value: serde_json::from_str(l).expect("a corpus line is JSON"),
            bodies: Ordered::step_bodies(l),
        })
        .collect()
}

/// Replays every case, concurrently; the outcomes sorted by name.
async fn replay_all(env: &kcr_testenv::TestEnv, cases: &[Case]) -> Vec<Outcome> {
    // Cases that compact the history run alone, after the others, so that the compaction cannot
    // touch another case's resource versions.
    let (alone, together): (Vec<&Case>, Vec<&Case>) = cases.iter().partition(|c| {
        c.value["steps"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s.get("action").is_some()))
    });
    let mut outcomes = futures::future::join_all(together.iter().map(|c| replay(env, c))).await;
    for case in alone {
        outcomes.push(replay(env, case).await);
    }
    outcomes.sort_by(|a, b| a.name.cmp(&b.name));
    outcomes
}

/// The corpus recorded with kube-controller-manager running (groups `update-validation`,
/// `admission`, `params`, `errors`, `gc`, `status`), against kcr-testenv with its optional
/// controllers on: every case must conform unless
/// `tests/conformance/with-controllers-known-failing.txt` lists it with what is missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_corpus_replay_matches_kube_apiserver_with_controllers() {
    let env = kcr_testenv::TestEnv::builder()
        .token(TOKEN)
        .realistic()
        .start()
        .await
        .expect("start the server");
    replay_corpus(&env, CONTROLLERS_CORPUS, "", CONTROLLERS_KNOWN_FAILING).await;
}

/// Replays every case of `corpus` against `env` and fails on a case that does not conform
/// unless `deliberate` or `known_failing` lists it (`name: reason` lines).
async fn replay_corpus(
    env: &kcr_testenv::TestEnv,
    corpus: &str,
    deliberate: &str,
    known_failing: &str,
) {
    let cases = parse_cases(corpus);
    let deliberate = listed(deliberate);
    let known_failing = listed(known_failing);
    let names: BTreeSet<&str> = cases
        .iter()
        .filter_map(|c| c.value["name"].as_str())
        .collect();
    for listed_name in deliberate.keys().chain(known_failing.keys()) {
        assert!(
            names.contains(listed_name.as_str()),
            "{listed_name} is listed but not in the corpus"
        );
    }
    for (name, reason) in deliberate.iter().chain(known_failing.iter()) {
        assert!(!reason.is_empty(), "{name} is listed without a reason");
    }

    let outcomes = replay_all(env, &cases).await;

    let conforming = outcomes.iter().filter(|o| o.differences.is_empty()).count();
    // A progress figure while field management is missing: differences in `managedFields` only.
    let apart_from_managed_fields = outcomes
        .iter()
        .filter(|o| o.differences.iter().all(|d| d.contains(".managedFields")))
        .count();
    let mut regressions = Vec::new();
    let mut stale = Vec::new();
    // `KCR_CONFORMANCE_ALL_DIFFS=1` shows every difference of a case, not only the first four.
    let shown = if std::env::var_os("KCR_CONFORMANCE_ALL_DIFFS").is_some() {
        usize::MAX
    } else {
        4
    };
    println!("failing cases:");
    for outcome in &outcomes {
        let listed_reason = deliberate
            .get(&outcome.name)
            .map(|r| format!("deliberate: {r}"))
            .or_else(|| known_failing.get(&outcome.name).cloned());
        if outcome.differences.is_empty() {
            if listed_reason.is_some() {
                stale.push(outcome.name.clone());
            }
            continue;
        }
        println!(
            "  {} ({})",
            outcome.name,
            listed_reason.as_deref().unwrap_or("NOT LISTED")
        );
        for line in outcome.differences.iter().take(shown) {
            println!("      {line}");
        }
        if outcome.differences.len() > shown {
            println!("      ... {} more", outcome.differences.len() - shown);
        }
        if listed_reason.is_none() {
            regressions.push(outcome.name.clone());
        }
    }
    println!(
        "{apart_from_managed_fields} of {} cases conform apart from managedFields",
        outcomes.len()
    );
    println!("{conforming} of {} cases conform", outcomes.len());
    assert!(
        regressions.is_empty(),
        "cases that must conform do not: {regressions:?}"
    );
    // A listed case that conforms is reported, not failed: a few cases conform or not with
    // the replay's timing (a page boundary, a second boundary), so they stay listed until
    // they conform in every run.
    if !stale.is_empty() {
        println!(
            "cases listed as failing conform in this run; remove each that always does: {stale:?}"
        );
    }
}

#[test]
fn normalisation_follows_the_readme() {
    let mut v = serde_json::json!({
        "metadata": {"name": "cm-abcde", "generateName": "cm-", "uid": "x", "resourceVersion": "12",
                     "creationTimestamp": "2026-01-01T00:00:00Z", "continue": "tok",
                     "managedFields": [{"manager": "m", "time": "2026-01-01T00:00:00Z"}]},
        "spec": {"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1", "None"]},
        "message": "too old resource version: 5 (9) for 123e4567-e89b-12d3-a456-426614174000 and \
                    00000000-0000-0000-0000-000000000000, kube-api-access-x7k2p"
    });
    normalise(&mut v);
    assert_eq!(
        v,
        serde_json::json!({
            "metadata": {"name": "cm-<random>", "generateName": "cm-", "uid": "<uid>",
                         "resourceVersion": "<rv>", "creationTimestamp": "<time>",
                         "continue": "<continue>",
                         "managedFields": [{"manager": "m", "time": "<time>"}]},
            "spec": {"clusterIP": "<ip>", "clusterIPs": ["<ip>", "None"]},
            "message": "too old resource version: <rv> (<rv>) for <uid> and \
                        00000000-0000-0000-0000-000000000000, kube-api-access-<random>"
        })
    );
}

#[test]
fn placeholders_resolve_with_their_json_type_and_filters() {
    let bodies = vec![
        serde_json::json!({"metadata": {"resourceVersion": "7", "continue": "a b"},
                                          "items": [{"spec": {"replicas": 3}}]}),
    ];
    let v = serde_json::json!({"r": "{{steps[0].body.items[0].spec.replicas}}",
                               "t": "rv={{steps[0].body.metadata.resourceVersion|plus:100000}}"});
    assert_eq!(
        substitute(&v, &bodies).unwrap(),
        serde_json::json!({"r": 3, "t": "rv=100007"})
    );
    assert_eq!(
        substitute_text("c={{steps[0].body.metadata.continue|urlquote}}", &bodies).unwrap(),
        "c=a%20b"
    );
}

#[test]
fn bodies_should_be_sent_in_the_order_of_the_corpus() {
    let line = r#"{"name": "x", "steps": [{"body": null}, {"body": {"z": 1, "a": {"y": "{{steps[0].body.n}}", "b": [true, {"d": 1.5, "c": null}]}}}]}"#;
    let bodies = Ordered::step_bodies(line);
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0], Some(Ordered::Scalar(Value::Null)));
    let sent = substitute_ordered(bodies[1].as_ref().unwrap(), &[serde_json::json!({"n": 7})]);
    assert_eq!(
        String::from_utf8(python_json(&sent.unwrap()).unwrap()).unwrap(),
        r#"{"z": 1, "a": {"y": 7, "b": [true, {"d": 1.5, "c": null}]}}"#
    );
}

#[test]
fn bodies_should_be_encoded_as_the_recorder_encoded_them() {
    let v = serde_json::json!({"a": [1, 2], "b": "é"});
    assert_eq!(
        String::from_utf8(python_json(&v).unwrap()).unwrap(),
        r#"{"a": [1, 2], "b": "\u00e9"}"#
    );
}
