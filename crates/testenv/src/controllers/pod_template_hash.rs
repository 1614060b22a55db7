//! kube-controller-manager's `pod-template-hash`: the name suffix of a Deployment's
//! ReplicaSets and the label of their Pods (`controller.ComputeHash(&d.Spec.Template,
//! d.Status.CollisionCount)`).
//!
//! kube-controller-manager prints the Go value of the template with go-spew (`%#v`, sorted map
//! keys, no `String()` methods: `k8s.io/utils/dump.ForHash`), feeds the text to a 32-bit FNV-1a
//! hash, then, when the Deployment has a `status.collisionCount`, the count as 8 little-endian
//! bytes (`uint32` in the first four), and writes the sum in decimal with each digit mapped to
//! `rand.SafeEncodeString`'s alphabet. This module prints the same text straight into the hash
//! (no string is built), walking the Go types of [`super::go_types`] (generated from the Go
//! declarations by `cargo xtask gen`) and reading their values from the stored JSON.
//!
//! go-spew's `%#v` rules, as its `format.go` (v1.1.2-0.20180830191138-d8f796af33cc, the version
//! Kubernetes pins) has them:
//! - a value is preceded by its type in parentheses, `(v1.PodSpec)`, except where the type is
//!   known from the context: a slice's items and a map's keys and values, and the value a
//!   pointer points to;
//! - a pointer prints as its type and the value it points to, `(*int64)30`, or `(*int64)<nil>`;
//!   a pointer in a slice or map prints `<*>` before its value (a nil one just `<nil>`);
//! - a struct prints `{Name:value Name:value}`, every field (unexported ones too) in
//!   declaration order, an embedded field under its type's name;
//! - a slice prints `[a b]`, a nil one `<nil>`; a map prints `map[k:v k:v]` with its keys
//!   sorted (as strings: Go's byte order), a nil one `<nil>`;
//! - a string prints raw, without quotes; numbers in decimal; booleans `true`/`false`.
//!
//! The Go value is the one kube-controller-manager's informer decodes from the API server's
//! protobuf, so the JSON maps to it as protobuf carries it:
//! - an absent or `null` field is Go's zero value: `<nil>` for a pointer, slice or map, the
//!   zero struct (every field zero) for a struct value;
//! - a pointer field present in JSON (`securityContext: {}`, `readOnly: false`) is a non-nil
//!   pointer (protobuf writes an optional field that is set, even to a zero message);
//! - an empty list `[]` or map `{}` is nil: protobuf writes no element, and Go decodes no
//!   element as a nil slice or map (a `[]byte`, one protobuf `bytes` field, is non-nil when
//!   present);
//! - a `resource.Quantity` is what `ParseQuantity` makes of the canonical string the server
//!   writes (`Quantity.String()`), with its unexported `i`, `d`, `s`, `Format`;
//! - an `intstr.IntOrString` is `{Type:0 IntVal:n StrVal:}` for a number and
//!   `{Type:1 IntVal:0 StrVal:s}` for a string;
//! - a `metav1.Time` is the zero `time.Time` when absent (protobuf carries a zero time as an
//!   empty message), else `time.Unix(seconds, 0).Local()`.
//!
//! Checked against seven real kube-controller-manager v1.36.2 hashes (the with-controllers
//! corpus and the wire fixtures: quantities in all three formats, IntOrString ports, every
//! volume source, probes, lifecycle hooks, security contexts, affinity, a DaemonSet's
//! revision); the forms no recorded template has (a set time, `managedFields`, the `inf.Dec`
//! form of a quantity) are checked against go-spew's rules only. Known limits:
//! - a set `metav1.Time` (a template's `creationTimestamp`) prints `time.Local` as Go sets it up
//!   without a zone file (named `UTC`, nothing else), an assumption about the process;
//! - a `FieldsV1` (a template's `managedFields`) prints serde_json's compact text of the
//!   object, not necessarily the bytes the server keeps;
//! - a quantity whose `inf.Dec` form exceeds 2^128 nano units prints as a zero Quantity.

use std::cmp::Ordering;

use serde_json::Value;

use super::go_types::{ROOT, TYPES};
use crate::admission::quantity::Quantity as CanonicalQuantity;

/// A Go type of the generated table: its name as `reflect.Type.String` writes it, and its kind.
pub(super) struct GoType {
    name: &'static str,
    kind: Kind,
}

impl GoType {
    pub(super) const fn new(name: &'static str, kind: Kind) -> Self {
        Self { name, kind }
    }
}

/// A Go type's kind; the numbers are indices into [`TYPES`].
pub(super) enum Kind {
    Bool,
    Int,
    Uint,
    // The table has no float today (no field of a PodTemplateSpec is one); printing one is
    // refused rather than guessed.
    #[allow(dead_code)]
    Float32,
    #[allow(dead_code)]
    Float64,
    String,
    Ptr(u16),
    Slice(u16),
    Map(u16, u16),
    Struct(&'static [Field]),
}

/// A struct field: its Go name, the JSON key it is read from (empty: an embedded struct whose
/// fields are in the same JSON object) and its type.
pub(super) struct Field {
    name: &'static str,
    json: &'static str,
    ty: u16,
}

impl Field {
    pub(super) const fn new(name: &'static str, json: &'static str, ty: u16) -> Self {
        Self { name, json, ty }
    }
}

/// kube-controller-manager's `controller.ComputeHash(template, collisionCount)` of a
/// Deployment's stored `spec.template` (defaults applied) and its `status.collisionCount`.
pub(crate) fn compute(template: &serde_json::Value, collision_count: Option<i32>) -> String {
    let mut hasher = Fnv32a::new();
    Printer {
        out: &mut hasher,
        ignore_next_type: false,
    }
    .format(ROOT, present(Some(template)));
    if let Some(count) = collision_count {
        let mut bytes = [0u8; 8];
        bytes[..4].copy_from_slice(&(count as u32).to_le_bytes());
        hasher.put(&bytes);
    }
    safe_encode(hasher.0)
}

/// `rand.SafeEncodeString(fmt.Sprint(sum))`: each decimal digit as a letter of the alphabet
/// of `rand.String` (no vowels).
fn safe_encode(sum: u32) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    sum.to_string()
        .bytes()
        .map(|d| ALPHANUMS[usize::from(d) % ALPHANUMS.len()] as char)
        .collect()
}

/// Where the printout goes.
trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

/// Go's `hash/fnv` `New32a`.
struct Fnv32a(u32);

impl Fnv32a {
    fn new() -> Self {
        Self(0x811c_9dc5)
    }
}

impl Sink for Fnv32a {
    fn put(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u32::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0193);
        }
    }
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// A JSON value that is there (`null` is not).
fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

/// go-spew's `formatState` for the `%#v` verb.
struct Printer<'a, S: Sink> {
    out: &'a mut S,
    ignore_next_type: bool,
}

impl<S: Sink> Printer<'_, S> {
    fn put(&mut self, s: &str) {
        self.out.put(s.as_bytes());
    }

    fn int(&mut self, n: i64) {
        let mut buf = itoa_buf();
        let s = fmt_i64(n, &mut buf);
        self.out.put(s);
    }

    fn uint(&mut self, n: u64) {
        let mut buf = itoa_buf();
        let s = fmt_u64(n, &mut buf);
        self.out.put(s);
    }

    /// Prints the value `v` (`None`: Go's zero value) of the type `ty`.
    fn format(&mut self, ty: u16, v: Option<&Value>) {
        let t = &TYPES[usize::from(ty)];
        if let Kind::Ptr(elem) = t.kind {
            return self.format_ptr(t, elem, v);
        }
        if let (Kind::Struct(_), Some(v)) = (&t.kind, v)
            && let Some(value) = special(t.name, v)
        {
            // A type with a JSON form of its own: its Go fields, made from the JSON.
            return self.format_plain(t, Some(&value));
        }
        self.format_plain(t, v);
    }

    fn format_ptr(&mut self, t: &GoType, elem: u16, v: Option<&Value>) {
        let nil = v.is_none();
        if nil && self.ignore_next_type {
            return self.put("<nil>");
        }
        if self.ignore_next_type {
            self.put("<*>");
        } else {
            // `(*T)`: one indirection and the pointee's type, or the nil pointer's own type.
            self.put("(");
            self.put(t.name);
            self.put(")");
        }
        if nil {
            self.put("<nil>");
        } else {
            self.ignore_next_type = true;
            self.format(elem, v);
        }
    }

    fn format_plain(&mut self, t: &GoType, v: Option<&Value>) {
        if !self.ignore_next_type {
            self.put("(");
            self.put(t.name);
            self.put(")");
        }
        self.ignore_next_type = false;
        match t.kind {
            Kind::Bool => self.put(if v.and_then(Value::as_bool).unwrap_or(false) {
                "true"
            } else {
                "false"
            }),
            Kind::Int => self.int(v.and_then(Value::as_i64).unwrap_or(0)),
            Kind::Uint => self.uint(v.and_then(Value::as_u64).unwrap_or(0)),
            Kind::Float32 | Kind::Float64 => {
                // No float is reachable from a PodTemplateSpec (see `Kind`); Go would print
                // `strconv.FormatFloat(f, 'g', -1, bits)`.
                self.put(&v.and_then(Value::as_f64).unwrap_or(0.0).to_string())
            }
            Kind::String => self.put(v.and_then(Value::as_str).unwrap_or("")),
            Kind::Slice(elem) => {
                let items = v.and_then(Value::as_array);
                let bytes = matches!(TYPES[usize::from(elem)].name, "uint8");
                match items {
                    // Protobuf carries no empty repeated field: Go decodes it as nil.
                    Some(items) if !items.is_empty() || bytes => {
                        self.put("[");
                        for (i, item) in items.iter().enumerate() {
                            if i > 0 {
                                self.put(" ");
                            }
                            self.ignore_next_type = true;
                            self.format(elem, present(Some(item)));
                        }
                        self.put("]");
                    }
                    _ => self.put("<nil>"),
                }
            }
            Kind::Map(key, value) => match v.and_then(Value::as_object) {
                Some(map) if !map.is_empty() => {
                    self.put("map[");
                    // serde_json's map keeps its keys in byte order unless built with
                    // `preserve_order`: sort only then.
                    if map.keys().is_sorted_by(|a, b| a.as_bytes() <= b.as_bytes()) {
                        self.map_entries(key, value, map, map.keys());
                    } else {
                        let mut keys: Vec<&String> = map.keys().collect();
                        keys.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
                        self.map_entries(key, value, map, keys.into_iter());
                    }
                    self.put("]");
                }
                _ => self.put("<nil>"),
            },
            Kind::Struct(fields) => {
                self.put("{");
                let object = v.and_then(Value::as_object);
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        self.put(" ");
                    }
                    self.put(f.name);
                    self.put(":");
                    let fv = if f.json.is_empty() {
                        v.filter(|v| v.is_object())
                    } else {
                        present(object.and_then(|o| o.get(f.json)))
                    };
                    self.format(f.ty, fv);
                }
                self.put("}");
            }
            Kind::Ptr(_) => unreachable!("pointers are printed by format_ptr"),
        }
    }

    /// A map's `k:v` pairs in the order of `keys`, each key and value without its type.
    fn map_entries<'k>(
        &mut self,
        key: u16,
        value: u16,
        map: &serde_json::Map<String, Value>,
        keys: impl Iterator<Item = &'k String>,
    ) {
        for (i, k) in keys.enumerate() {
            if i > 0 {
                self.put(" ");
            }
            self.ignore_next_type = true;
            // Every map key of the API is a string (or a named string).
            self.format_key(key, k);
            self.put(":");
            self.ignore_next_type = true;
            self.format(value, present(map.get(k)));
        }
    }

    fn format_key(&mut self, ty: u16, key: &str) {
        let t = &TYPES[usize::from(ty)];
        if !self.ignore_next_type {
            self.put("(");
            self.put(t.name);
            self.put(")");
        }
        self.ignore_next_type = false;
        self.put(key);
    }
}

fn itoa_buf() -> [u8; 20] {
    [0; 20]
}

fn fmt_u64(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

fn fmt_i64(n: i64, buf: &mut [u8; 20]) -> &[u8] {
    if n >= 0 {
        return fmt_u64(n as u64, buf);
    }
    // `-` and at most 19 digits.
    let digits = fmt_u64(n.unsigned_abs(), buf).len();
    let start = buf.len() - digits - 1;
    buf[start] = b'-';
    &buf[start..]
}

/// The Go fields (as JSON keyed by their Go names) of a value of a type with a JSON form of
/// its own, made from that form; `None` for every other type.
fn special(type_name: &str, v: &Value) -> Option<Value> {
    match type_name {
        "resource.Quantity" => Some(quantity(v)),
        "intstr.IntOrString" => Some(int_or_string(v)),
        "v1.Time" => Some(time(v)),
        "v1.FieldsV1" => Some(fields_v1(v)),
        _ => None,
    }
}

/// `intstr.IntOrString` from `80` or `"http"`.
fn int_or_string(v: &Value) -> Value {
    match v {
        Value::String(s) => serde_json::json!({"Type": 1, "StrVal": s}),
        other => serde_json::json!({"Type": 0, "IntVal": other.as_i64().unwrap_or(0)}),
    }
}

/// `metav1.Time` as kube-controller-manager decodes it from protobuf:
/// `time.Unix(seconds, 0).Local()` (`wall` holds no monotonic reading and no nanoseconds;
/// `ext` counts seconds from year 1). `loc` is the process's `time.Local`: assumed to be
/// what Go makes without a zone file (`/etc/localtime` absent, `TZ` unset, as in the distroless
/// kube-controller-manager image): a Location named `UTC` and nothing else.
fn time(v: &Value) -> Value {
    let Some(seconds) = v.as_str().and_then(parse_rfc3339) else {
        return Value::Null;
    };
    const UNIX_TO_INTERNAL: i64 = (1969 * 365 + 1969 / 4 - 1969 / 100 + 1969 / 400) * 86_400;
    serde_json::json!({
        "Time": {
            "wall": 0,
            "ext": seconds + UNIX_TO_INTERNAL,
            "loc": {"name": "UTC"},
        }
    })
}

/// Seconds since the Unix epoch of an RFC 3339 time (`2024-01-02T03:04:05Z`, an offset or
/// fractional seconds allowed).
fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        std::str::from_utf8(b.get(r)?).ok()?.parse().ok()
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = s.get(19..)?;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let oh: i64 = rest.get(1..3)?.parse().ok()?;
            let om: i64 = rest.get(4..6)?.parse().ok()?;
            sign * (oh * 3600 + om * 60)
        }
    };
    // Days from the civil date (proleptic Gregorian).
    let (yy, mm) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + sec - offset)
}

/// `metav1.FieldsV1`: its `Raw` bytes, the JSON text of the object.
fn fields_v1(v: &Value) -> Value {
    let raw = serde_json::to_vec(v).unwrap_or_default();
    serde_json::json!({ "Raw": raw })
}

/// A `resource.Quantity` as kube-controller-manager holds it: `ParseQuantity` of the canonical
/// string the server sends (`Quantity.String()`).
fn quantity(v: &Value) -> Value {
    let written = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return Value::Null,
    };
    let canonical = CanonicalQuantity::parse(&written).map_or(written, |q| q.to_string());
    parse_quantity(&canonical).unwrap_or(Value::Null)
}

const DECIMAL_SI: &str = "DecimalSI";
const BINARY_SI: &str = "BinarySI";
const DECIMAL_EXPONENT: &str = "DecimalExponent";

/// `resource.ParseQuantity`, its result as JSON keyed by the Go field names.
fn parse_quantity(s: &str) -> Option<Value> {
    let int64 = |value: i64, scale: i32, cached: &str, format: &str| {
        serde_json::json!({
            "i": {"value": value, "scale": scale},
            "s": cached,
            "Format": format,
        })
    };
    if s.is_empty() {
        return None;
    }
    if s == "0" {
        return Some(int64(0, 0, s, DECIMAL_SI));
    }
    let parts = split_quantity(s)?;
    let (base, exponent, format) = suffix(parts.suffix)?;
    let (num, denom) = (parts.num, parts.denom);
    let mut scale: i32 = 0;
    let mut mantissa: i64 = 1;
    let precision: i32 = match format {
        BINARY_SI if exponent >= 0 && denom.is_empty() => {
            mantissa <<= exponent;
            15 - num.len() as i32 - ((exponent as f32) * 3.0 / 10.0) as i32 - 1
        }
        BINARY_SI => -1,
        _ => {
            scale = exponent;
            18i32.saturating_sub(i32::try_from(num.len() + denom.len()).unwrap_or(i32::MAX))
        }
    };
    if precision >= 0 {
        // Go's int32 arithmetic wraps.
        scale = scale.wrapping_sub(denom.len() as i32);
        if scale >= -9 {
            let shifted = format!("{num}{denom}");
            let value: i64 = shifted.parse().ok()?;
            if let Some(mut result) = value.checked_mul(mantissa) {
                if !parts.positive {
                    result = -result;
                }
                let canonical = match format {
                    BINARY_SI => exponent % 10 == 0 && value & 0x07 != 0,
                    _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
                };
                return Some(int64(result, scale, if canonical { s } else { "" }, format));
            }
        }
    }
    // The `inf.Dec` form: the digits as an integer scaled to nanos (rounded up, away from 0).
    let digits = format!("{num}{denom}");
    let mut unscaled: u128 = digits.parse().ok()?;
    let mut dec_scale = denom.len() as i32;
    if base == 10 {
        dec_scale = dec_scale.wrapping_sub(exponent);
    } else {
        unscaled = unscaled.checked_mul(1u128.checked_shl(exponent as u32)?)?;
    }
    let mut format = format;
    if unscaled != 0 {
        match dec_scale.cmp(&9) {
            Ordering::Less => {
                let shift = u32::try_from(9 - i64::from(dec_scale)).ok()?;
                unscaled = unscaled.checked_mul(10u128.checked_pow(shift)?)?;
            }
            Ordering::Greater => {
                // A divisor beyond u128: a quotient of 0 with a remainder, rounded up to 1.
                let shift = u32::try_from(i64::from(dec_scale) - 9).ok()?;
                unscaled = match 10u128.checked_pow(shift) {
                    Some(div) => unscaled.div_ceil(div),
                    None => 1,
                };
            }
            Ordering::Equal => {}
        }
        dec_scale = 9;
    }
    const MAX_ALLOWED: u128 = (i64::MAX as u128) * 1_000_000_000;
    if format == BINARY_SI && dec_scale == 9 && unscaled > MAX_ALLOWED {
        // `maxAllowed` is `inf.NewDec(2^63-1, 0)`: `Set` copies its scale too.
        unscaled = i64::MAX as u128;
        dec_scale = 0;
    }
    if format == BINARY_SI && dec_scale == 9 && unscaled < 1_000_000_000 && unscaled > 0 {
        format = DECIMAL_SI;
    }
    let words: Vec<u64> = match (unscaled as u64, (unscaled >> 64) as u64) {
        (0, 0) => Vec::new(),
        (lo, 0) => vec![lo],
        (lo, hi) => vec![lo, hi],
    };
    Some(serde_json::json!({
        "d": {"Dec": {
            "unscaled": {"neg": !parts.positive && unscaled != 0, "abs": words},
            "scale": dec_scale,
        }},
        "Format": format,
    }))
}

/// A quantity string's parts (`parseQuantityString`).
struct QuantityParts<'a> {
    positive: bool,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

fn split_quantity(s: &str) -> Option<QuantityParts<'_>> {
    let b = s.as_bytes();
    let mut pos = 0;
    let mut positive = true;
    match b.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    while pos < b.len() && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= b.len() {
        return Some(QuantityParts {
            positive,
            num: "0",
            denom: "",
            suffix: "",
        });
    }
    let start = pos;
    while pos < b.len() && b[pos].is_ascii_digit() {
        pos += 1;
    }
    let mut num = &s[start..pos];
    if num.is_empty() {
        num = "0";
    }
    let mut denom = "";
    if pos < b.len() && b[pos] == b'.' {
        pos += 1;
        let start = pos;
        while pos < b.len() && b[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[start..pos];
    }
    let suffix_start = pos;
    while pos < b.len() && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < b.len() && matches!(b[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < b.len() && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < b.len() {
        return None;
    }
    Some(QuantityParts {
        positive,
        num,
        denom,
        suffix: &s[suffix_start..],
    })
}

/// A suffix's base, exponent and format (`suffixHandler.interpret`).
fn suffix(s: &str) -> Option<(i32, i32, &'static str)> {
    let decimal = |e| Some((10, e, DECIMAL_SI));
    let binary = |e| Some((2, e, BINARY_SI));
    match s {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ if s.len() > 1 && (s.starts_with('e') || s.starts_with('E')) => {
            let e: i64 = s[1..].parse().ok()?;
            Some((10, e as i32, DECIMAL_EXPONENT))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
