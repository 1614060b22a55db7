//! Messages to and from their JSON form ([`serde_json::Value`]), through the field tables.
//!
//! Decoding is strict, for bodies a client sends: a field the table does not know is skipped
//! when it holds only zero values and refused otherwise, so nothing a client set is dropped
//! silently. Encoding refuses a JSON field the table does not know.

use serde_json::{Map, Number, Value};

use crate::error::{Error, Result};
use crate::schema::{Field, Kind};
use crate::time;
use crate::wire::{self, Raw, Reader};

/// How deep a field the decoder does not know is looked into for a value that is not zero.
const MAX_UNKNOWN_DEPTH: usize = 16;

/// How deep messages nest at most (as the serde decoder allows).
const MAX_DEPTH: usize = crate::de::MAX_DEPTH as usize;

/// Whether a field holds only zero values: a zero number, an empty payload, or a message of
/// such fields (what Go writes for a field that is not a pointer and was not set).
fn is_zero(raw: &Raw<'_>, depth: usize) -> bool {
    match raw.wire {
        wire::VARINT => raw.varint == 0,
        wire::LEN if raw.data.is_empty() => true,
        wire::LEN if depth < MAX_UNKNOWN_DEPTH => {
            Reader::new(raw.data).all(|inner| inner.is_ok_and(|inner| is_zero(&inner, depth + 1)))
        }
        wire::FIXED64 | wire::FIXED32 => raw.data.iter().all(|b| *b == 0),
        _ => false,
    }
}

pub(crate) fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Standard base64 with padding, as Go's `encoding/json` writes `[]byte`.
pub(crate) fn unbase64(s: &str) -> Result<Vec<u8>> {
    let bad = || Error::Invalid(format!("{s:?} is not base64"));
    let b = s.as_bytes();
    if !b.len().is_multiple_of(4) {
        return Err(bad());
    }
    let mut out = Vec::with_capacity(b.len() / 4 * 3);
    for (i, chunk) in b.chunks(4).enumerate() {
        let last = i + 1 == b.len() / 4;
        let mut n = 0u32;
        let mut pad = 0;
        for (j, c) in chunk.iter().enumerate() {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' => 62,
                b'/' => 63,
                b'=' if last && j >= 2 => {
                    pad += 1;
                    0
                }
                _ => return Err(bad()),
            };
            if pad > 0 && *c != b'=' {
                return Err(bad());
            }
            n = n << 6 | u32::from(v);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..4 - pad]);
    }
    Ok(out)
}

/// A string field. Go does not check UTF-8 when it decodes, and its JSON encoder writes an
/// invalid byte as U+FFFD.
pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A map entry (`key` = 1, `value` = 2): the key and value payloads.
pub(crate) fn map_entry(b: &[u8]) -> Result<(&[u8], Option<&[u8]>)> {
    let (mut key, mut value) = (&[][..], None);
    for f in Reader::new(b) {
        let f = f?;
        match f.number {
            1 => key = f.data,
            2 => value = Some(f.data),
            _ => {}
        }
    }
    Ok((key, value))
}

/// The payload of field 1 of a message of one bytes field, `default` when it is absent or
/// empty (the last one wins, as in any message).
fn only_field<'a>(b: &'a [u8], default: &'static [u8]) -> Result<&'a [u8]> {
    let mut out = default;
    for f in Reader::new(b) {
        let f = f?;
        if f.number == 1 && !f.data.is_empty() {
            out = f.data;
        }
    }
    Ok(out)
}

/// `resource.Quantity` (`string` = 1): its string, `"0"` for the zero quantity.
pub(crate) fn quantity(b: &[u8]) -> Result<&[u8]> {
    only_field(b, b"0")
}

/// `intstr.IntOrString` (`type` = 1: 0 a number, 1 a string; `intVal` = 2; `strVal` = 3).
pub(crate) enum IntOrString<'a> {
    Int(i32),
    Str(&'a [u8]),
}

pub(crate) fn int_or_string(b: &[u8]) -> Result<IntOrString<'_>> {
    let (mut ty, mut int, mut string) = (0, 0u64, &[][..]);
    for f in Reader::new(b) {
        let f = f?;
        match f.number {
            1 => ty = f.varint,
            2 => int = f.varint,
            3 => string = f.data,
            _ => {}
        }
    }
    #[allow(clippy::cast_possible_truncation)]
    match ty {
        0 => Ok(IntOrString::Int(int as i32)),
        1 => Ok(IntOrString::Str(string)),
        other => Err(Error::Invalid(format!(
            "IntOrString of unknown type {other}"
        ))),
    }
}

/// `metav1.FieldsV1` (`Raw` = 1): the JSON bytes, `{}` when there are none.
pub(crate) fn fields_v1(b: &[u8]) -> Result<&[u8]> {
    only_field(b, b"{}")
}

/// `runtime.RawExtension` (`raw` = 1): the JSON bytes, `null` when there are none (as Go's
/// `RawExtension.MarshalJSON` writes an empty one).
pub(crate) fn raw_extension(b: &[u8]) -> Result<&[u8]> {
    only_field(b, b"null")
}

/// Checks a field's wire type against its kind.
pub(crate) fn check_wire(f: &Raw<'_>, name: &'static str, kind: Kind) -> Result<()> {
    if f.wire == kind.wire() {
        Ok(())
    } else {
        Err(Error::WrongWireType {
            field: f.number,
            name,
            found: f.wire,
            expected: kind.wire(),
        })
    }
}

/// Decodes a message into its JSON form (strictly: see the module docs).
pub(crate) fn to_json(b: &[u8], fields: &'static [Field]) -> Result<Value> {
    let mut out = Map::new();
    message_into(b, fields, &mut out, 0)?;
    Ok(Value::Object(out))
}

fn message_into(
    b: &[u8],
    fields: &'static [Field],
    out: &mut Map<String, Value>,
    depth: usize,
) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(Error::TooDeep);
    }
    for f in Reader::new(b) {
        let f = f?;
        let Some(&(_, name, kind)) = fields.iter().find(|(num, _, _)| *num == f.number) else {
            if is_zero(&f, 0) {
                continue;
            }
            return Err(Error::UnknownField { field: f.number });
        };
        check_wire(&f, name, kind)?;
        let (kind, nullable) = kind.unwrap_nullable();
        let zero = f.varint == 0 && f.data.is_empty();
        let value = match kind {
            Kind::Str | Kind::Int | Kind::Bool | Kind::Bytes if zero => None,
            Kind::Str | Kind::OptStr => Some(Value::String(text(f.data))),
            Kind::Bytes => Some(Value::String(base64(f.data))),
            #[allow(clippy::cast_possible_wrap)]
            Kind::Int | Kind::OptInt => Some(Value::Number(Number::from(f.varint as i64))),
            Kind::Bool | Kind::OptBool => Some(Value::Bool(f.varint != 0)),
            Kind::Float => Some(float_json(f.data)?),
            Kind::Time | Kind::MicroTime => time::read(f.data)?.map(|(secs, nanos)| {
                Value::String(time::format(secs, nanos, matches!(kind, Kind::MicroTime)))
            }),
            Kind::Quantity => Some(Value::String(text(quantity(f.data)?))),
            Kind::IntOrString => Some(match int_or_string(f.data)? {
                IntOrString::Int(i) => Value::Number(i.into()),
                IntOrString::Str(s) => Value::String(text(s)),
            }),
            Kind::FieldsV1 => Some(
                serde_json::from_slice(fields_v1(f.data)?)
                    .map_err(|e| Error::Invalid(format!("fieldsV1: {e}")))?,
            ),
            Kind::Raw => Some(raw_json(f.data, name)?),
            Kind::Msg(s) => {
                let mut inner = Map::new();
                message_into(f.data, s, &mut inner, depth + 1)?;
                Some(Value::Object(inner))
            }
            Kind::Either(s) => Some(either_json(f.data, s, depth + 1)?),
            Kind::Inline(s) => {
                message_into(f.data, s, out, depth + 1)?;
                continue;
            }
            Kind::MapStr
            | Kind::MapBytes
            | Kind::MapQuantity
            | Kind::MapTime
            | Kind::MapMsg(_)
            | Kind::MapEither(_) => {
                let (k, v) = map_entry(f.data)?;
                let v = match (kind, v) {
                    (Kind::MapBytes, v) => Value::String(base64(v.unwrap_or_default())),
                    (Kind::MapQuantity, Some(v)) => Value::String(text(quantity(v)?)),
                    (Kind::MapQuantity, None) => Value::String("0".into()),
                    // Go's JSON writes a zero `metav1.Time` as `null`.
                    (Kind::MapTime, v) => match time::read(v.unwrap_or_default())? {
                        Some((secs, nanos)) => Value::String(time::format(secs, nanos, false)),
                        None => Value::Null,
                    },
                    (Kind::MapMsg(s), v) => {
                        let mut inner = Map::new();
                        message_into(v.unwrap_or_default(), s, &mut inner, depth + 1)?;
                        Value::Object(inner)
                    }
                    (Kind::MapEither(s), v) => either_json(v.unwrap_or_default(), s, depth + 1)?,
                    (_, v) => Value::String(text(v.unwrap_or_default())),
                };
                let entry = out.entry(name).or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(m) = entry {
                    m.insert(text(k), v);
                }
                continue;
            }
            Kind::RepStr
            | Kind::RepInt
            | Kind::RepBool
            | Kind::RepQuantity
            | Kind::RepRaw
            | Kind::RepMsg(_) => {
                #[allow(clippy::cast_possible_wrap)]
                let item = match kind {
                    Kind::RepMsg(s) => {
                        let mut inner = Map::new();
                        message_into(f.data, s, &mut inner, depth + 1)?;
                        Value::Object(inner)
                    }
                    Kind::RepInt => Value::Number(Number::from(f.varint as i64)),
                    Kind::RepBool => Value::Bool(f.varint != 0),
                    Kind::RepQuantity => Value::String(text(quantity(f.data)?)),
                    Kind::RepRaw => raw_json(f.data, name)?,
                    _ => Value::String(text(f.data)),
                };
                if let Value::Array(a) = out.entry(name).or_insert_with(|| Value::Array(vec![])) {
                    a.push(item);
                }
                continue;
            }
            Kind::Nullable(_) | Kind::Always(_) => None,
        };
        match value {
            Some(v) => {
                out.insert(name.to_owned(), v);
            }
            None if nullable => {
                out.insert(name.to_owned(), Value::Null);
            }
            None => {}
        }
    }
    // What JSON writes as `null` and protobuf leaves out.
    for (_, name, kind) in fields {
        if kind.unwrap_nullable().1 && !out.contains_key(*name) {
            out.insert((*name).to_owned(), Value::Null);
        }
    }
    Ok(())
}

/// A `runtime.RawExtension` or `JSON` message's JSON value.
fn raw_json(b: &[u8], name: &str) -> Result<Value> {
    serde_json::from_slice(raw_extension(b)?).map_err(|e| Error::Invalid(format!("{name}: {e}")))
}

/// A `double`'s JSON number: an integer when it is one, as Go writes a `float64`.
fn float_json(b: &[u8]) -> Result<Value> {
    let bytes: [u8; 8] = b
        .try_into()
        .map_err(|_| Error::Invalid("a double of other than 8 bytes".into()))?;
    let x = f64::from_le_bytes(bytes);
    #[allow(clippy::cast_possible_truncation)]
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        return Ok(Value::Number(Number::from(x as i64)));
    }
    Number::from_f64(x)
        .map(Value::Number)
        .ok_or_else(|| Error::Invalid(format!("{x} is not a JSON number")))
}

/// The JSON form of a [`Kind::Either`] message: its highest-numbered field that is set.
fn either_json(b: &[u8], fields: &'static [Field], depth: usize) -> Result<Value> {
    let mut inner = Map::new();
    message_into(b, fields, &mut inner, depth)?;
    Ok(fields
        .iter()
        .rev()
        .find_map(|(_, name, _)| inner.remove(*name).filter(|v| !v.is_null()))
        .unwrap_or(Value::Null))
}

/// Where a JSON value sits, for error messages (built only when one is reported).
#[derive(Clone, Copy)]
pub(crate) enum Path<'a> {
    Root,
    Field(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Field(parent, name) => write!(f, "{parent}.{name}"),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// Encodes a JSON object as a message of `fields`, in field number order (the tables' order).
/// Keys in `skip` (`apiVersion` and `kind` of a top-level object) are left out.
pub(crate) fn from_json(
    v: &Map<String, Value>,
    fields: &'static [Field],
    skip: &[&str],
    path: &Path<'_>,
    out: &mut Vec<u8>,
) -> Result<()> {
    // Every key must belong to the table (or to an inlined table).
    for key in v.keys() {
        if skip.contains(&key.as_str()) || knows(fields, key) {
            continue;
        }
        return Err(Error::UnknownJsonField {
            path: Path::Field(path, key).to_string(),
        });
    }
    write_fields(v, fields, path, out)
}

/// Encodes the fields of a table found in a JSON object whose keys are known to belong to it.
fn write_fields(
    v: &Map<String, Value>,
    fields: &'static [Field],
    path: &Path<'_>,
    out: &mut Vec<u8>,
) -> Result<()> {
    for &(number, name, kind) in fields {
        if let Kind::Inline(inner) = kind {
            // The inlined struct's fields are keys of the same JSON object; Go writes the
            // struct always.
            wire::put_message_field(number, out, |buf| write_fields(v, inner, path, buf))?;
            continue;
        }
        match v.get(name) {
            Some(value) if !value.is_null() => {
                encode_field(number, kind, value, &Path::Field(path, name), out)?;
            }
            _ => put_zero(number, kind, &Path::Field(path, name), out)?,
        }
    }
    Ok(())
}

/// What Go writes for a field the JSON form leaves out (or sets to `null`): the zero value of
/// a field that is not a pointer (a string, number or boolean with `omitempty`, a struct),
/// nothing for a pointer, slice or map.
fn put_zero(number: u64, kind: Kind, path: &Path<'_>, out: &mut Vec<u8>) -> Result<()> {
    match kind {
        Kind::Str => wire::put_bytes_field(number, b"", out),
        Kind::Int | Kind::Bool => wire::put_varint_field(number, 0, out),
        Kind::Always(inner) => match inner.unwrap_nullable().0 {
            Kind::Msg(s) => {
                wire::put_message_field(number, out, |buf| {
                    write_fields(&Map::new(), s, path, buf)
                })?;
            }
            Kind::Quantity => {
                wire::put_bytes_field(number, &quantity_message(&Value::from("0"), path)?, out);
            }
            Kind::IntOrString => {
                encode_field(number, Kind::IntOrString, &Value::from(0), path, out)?
            }
            // A zero time, an empty `RawExtension` or `FieldsV1`: an empty message.
            _ => wire::put_bytes_field(number, b"", out),
        },
        _ => {}
    }
    Ok(())
}

/// Whether a table (or a table it inlines) has a field of that JSON name.
fn knows(fields: &[Field], key: &str) -> bool {
    fields.iter().any(|(_, name, kind)| match kind {
        Kind::Inline(inner) => knows(inner, key),
        _ => *name == key,
    })
}

fn invalid(path: &Path<'_>, what: &str) -> Error {
    Error::Invalid(format!("{path} is not {what}"))
}

fn int_of(value: &Value, path: &Path<'_>) -> Result<i64> {
    value.as_i64().ok_or_else(|| invalid(path, "an integer"))
}

fn str_of<'v>(value: &'v Value, path: &Path<'_>) -> Result<&'v str> {
    value.as_str().ok_or_else(|| invalid(path, "a string"))
}

fn encode_field(
    number: u64,
    kind: Kind,
    value: &Value,
    path: &Path<'_>,
    out: &mut Vec<u8>,
) -> Result<()> {
    if value.is_null() {
        return put_zero(number, kind, path, out);
    }
    match kind {
        Kind::Nullable(inner) | Kind::Always(inner) => {
            encode_field(number, *inner, value, path, out)?;
        }
        Kind::Str | Kind::OptStr => {
            wire::put_bytes_field(number, str_of(value, path)?.as_bytes(), out);
        }
        Kind::Int | Kind::OptInt => {
            wire::put_varint_field(number, int_of(value, path)?.cast_unsigned(), out);
        }
        Kind::Bool | Kind::OptBool => {
            let b = value.as_bool().ok_or_else(|| invalid(path, "a boolean"))?;
            wire::put_varint_field(number, u64::from(b), out);
        }
        Kind::Float => {
            let x = value.as_f64().ok_or_else(|| invalid(path, "a number"))?;
            wire::put_fixed64_field(number, x.to_bits(), out);
        }
        Kind::Time | Kind::MicroTime => {
            let mut t = Vec::new();
            put_time(str_of(value, path)?, &mut t)?;
            wire::put_bytes_field(number, &t, out);
        }
        Kind::Quantity => {
            wire::put_bytes_field(number, &quantity_message(value, path)?, out);
        }
        Kind::IntOrString => {
            let mut m = Vec::new();
            match value {
                Value::String(s) => {
                    wire::put_varint_field(1, 1, &mut m);
                    wire::put_varint_field(2, 0, &mut m);
                    wire::put_bytes_field(3, s.as_bytes(), &mut m);
                }
                _ => {
                    let i = i32::try_from(int_of(value, path)?)
                        .map_err(|_| invalid(path, "a 32-bit integer"))?;
                    wire::put_varint_field(1, 0, &mut m);
                    wire::put_varint_field(2, i64::from(i).cast_unsigned(), &mut m);
                    wire::put_bytes_field(3, b"", &mut m);
                }
            }
            wire::put_bytes_field(number, &m, out);
        }
        Kind::Bytes => {
            wire::put_bytes_field(number, &unbase64(str_of(value, path)?)?, out);
        }
        Kind::FieldsV1 | Kind::Raw => {
            wire::put_bytes_field(number, &raw_message(value)?, out);
        }
        Kind::Msg(s) => {
            let obj = value
                .as_object()
                .ok_or_else(|| invalid(path, "an object"))?;
            wire::put_message_field(number, out, |buf| from_json(obj, s, &[], path, buf))?;
        }
        Kind::Either(s) => {
            wire::put_message_field(number, out, |buf| encode_either(s, value, path, buf))?;
        }
        Kind::Inline(_) => {}
        Kind::MapStr
        | Kind::MapBytes
        | Kind::MapQuantity
        | Kind::MapTime
        | Kind::MapMsg(_)
        | Kind::MapEither(_) => {
            let obj = value
                .as_object()
                .ok_or_else(|| invalid(path, "an object"))?;
            // Go writes map entries sorted by key.
            let mut keys: Vec<&String> = obj.keys().collect();
            keys.sort();
            for k in keys {
                let v = &obj[k];
                let here = Path::Field(path, k);
                let mut entry = Vec::new();
                wire::put_bytes_field(1, k.as_bytes(), &mut entry);
                match kind {
                    Kind::MapStr => {
                        wire::put_bytes_field(2, str_of(v, &here)?.as_bytes(), &mut entry);
                    }
                    Kind::MapBytes => {
                        wire::put_bytes_field(2, &unbase64(str_of(v, &here)?)?, &mut entry);
                    }
                    Kind::MapTime => {
                        let mut t = Vec::new();
                        if !v.is_null() {
                            put_time(str_of(v, &here)?, &mut t)?;
                        }
                        wire::put_bytes_field(2, &t, &mut entry);
                    }
                    Kind::MapMsg(s) => {
                        let obj = v.as_object().ok_or_else(|| invalid(&here, "an object"))?;
                        wire::put_message_field(2, &mut entry, |buf| {
                            from_json(obj, s, &[], &here, buf)
                        })?;
                    }
                    Kind::MapEither(s) => {
                        wire::put_message_field(2, &mut entry, |buf| {
                            encode_either(s, v, &here, buf)
                        })?;
                    }
                    _ => {
                        wire::put_bytes_field(2, &quantity_message(v, &here)?, &mut entry);
                    }
                }
                wire::put_bytes_field(number, &entry, out);
            }
        }
        Kind::RepStr => {
            let items = value.as_array().ok_or_else(|| invalid(path, "an array"))?;
            for item in items {
                wire::put_bytes_field(number, str_of(item, path)?.as_bytes(), out);
            }
        }
        Kind::RepInt | Kind::RepBool => {
            let items = value.as_array().ok_or_else(|| invalid(path, "an array"))?;
            for (i, item) in items.iter().enumerate() {
                let here = Path::Index(path, i);
                let n = match kind {
                    Kind::RepBool => {
                        u64::from(item.as_bool().ok_or_else(|| invalid(&here, "a boolean"))?)
                    }
                    _ => int_of(item, &here)?.cast_unsigned(),
                };
                wire::put_varint_field(number, n, out);
            }
        }
        Kind::RepQuantity | Kind::RepRaw => {
            let items = value.as_array().ok_or_else(|| invalid(path, "an array"))?;
            for (i, item) in items.iter().enumerate() {
                let m = match kind {
                    Kind::RepRaw => raw_message(item)?,
                    _ => quantity_message(item, &Path::Index(path, i))?,
                };
                wire::put_bytes_field(number, &m, out);
            }
        }
        Kind::RepMsg(s) => {
            let items = value.as_array().ok_or_else(|| invalid(path, "an array"))?;
            for (i, item) in items.iter().enumerate() {
                let here = Path::Index(path, i);
                let obj = item
                    .as_object()
                    .ok_or_else(|| invalid(&here, "an object"))?;
                wire::put_message_field(number, out, |buf| from_json(obj, s, &[], &here, buf))?;
            }
        }
    }
    Ok(())
}

/// A `resource.Quantity` message (`string` = 1).
fn quantity_message(value: &Value, path: &Path<'_>) -> Result<Vec<u8>> {
    let mut m = Vec::new();
    wire::put_bytes_field(1, quantity_string(value, path)?.as_bytes(), &mut m);
    Ok(m)
}

/// A message of raw JSON bytes (`raw` = 1: `FieldsV1`, `RawExtension`, `JSON`).
fn raw_message(value: &Value) -> Result<Vec<u8>> {
    let raw = serde_json::to_vec(value).map_err(|e| Error::Invalid(e.to_string()))?;
    let mut m = Vec::new();
    wire::put_bytes_field(1, &raw, &mut m);
    Ok(m)
}

/// A [`Kind::Either`] message for its JSON form: a boolean sets the table's boolean field, an
/// array its repeated field, an object its message field (and the boolean to true, as Go's
/// `JSONSchemaPropsOrBool` does).
fn encode_either(
    fields: &'static [Field],
    value: &Value,
    path: &Path<'_>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let wanted = |f: &&Field| match value {
        Value::Bool(_) => matches!(f.2, Kind::Bool | Kind::OptBool),
        Value::Array(_) => matches!(f.2, Kind::RepMsg(_) | Kind::RepStr),
        Value::Object(_) => matches!(f.2, Kind::Msg(_) | Kind::Bool | Kind::OptBool),
        _ => false,
    };
    if value.is_null() {
        return Ok(());
    }
    let mut written = false;
    for f @ &(number, _, kind) in fields.iter().filter(wanted) {
        match (kind, value) {
            (Kind::Bool | Kind::OptBool, Value::Object(_)) => {
                wire::put_varint_field(number, 1, out);
            }
            _ => {
                encode_field(number, f.2, value, path, out)?;
                written = true;
            }
        }
    }
    if written {
        Ok(())
    } else {
        Err(invalid(path, "a value of this field's shape"))
    }
}

/// The fields of a `metav1.Time` (`seconds` = 1, `nanos` = 2) for an RFC 3339 string.
fn put_time(s: &str, out: &mut Vec<u8>) -> Result<()> {
    let (secs, nanos) = time::parse(s)?;
    // Go writes both fields, `nanos` even when 0.
    wire::put_varint_field(1, secs.cast_unsigned(), out);
    wire::put_varint_field(2, i64::from(nanos).cast_unsigned(), out);
    Ok(())
}

/// A quantity's string (JSON numbers are quantities too).
fn quantity_string(value: &Value, path: &Path<'_>) -> Result<String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        _ => Err(invalid(path, "a quantity")),
    }
}
