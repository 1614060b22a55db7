//! A serde [`Deserializer`] that reads a protobuf message straight into any type whose
//! `Deserialize` reads the message's JSON form (k8s-openapi's types), through the field table:
//! no intermediate JSON value or text is built.
//!
//! Each message is presented as a map from JSON names to values, as the JSON decoder would
//! present the object: zero values of fields that are not pointers are left out (as
//! `omitempty` leaves them out of JSON), repeated fields and map entries are gathered into one
//! sequence or map wherever in the message they occur, inlined structs' fields become keys of
//! the enclosing map, times become RFC 3339 strings, `map<string, bytes>` values base64
//! strings, and `FieldsV1`'s JSON bytes are handed to `serde_json`. Fields the table does not
//! know are skipped (a client reads what a newer server adds), and so are those the target
//! type ignores, without being decoded.

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::forward_to_deserialize_any;

use crate::error::{Error, Result};
use crate::json::{
    IntOrString, base64, check_wire, fields_v1, int_or_string, map_entry, quantity, raw_extension,
};
use crate::schema::{Field, Kind, MANAGED_FIELDS};
use crate::time;
use crate::wire::{Raw, Reader};

/// How objects are decoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecodeOptions {
    /// Skips `metadata.managedFields` as it is read: the entries are never decoded nor
    /// allocated (default `false`).
    pub skip_managed_fields: bool,
}

impl DecodeOptions {
    /// Options that skip `metadata.managedFields` when `skip` is true.
    #[must_use]
    pub fn skip_managed_fields(mut self, skip: bool) -> Self {
        self.skip_managed_fields = skip;
        self
    }
}

/// Deserializes a message of `fields` (the bytes of the message itself, without envelope).
pub(crate) fn from_message<'de, T: serde::Deserialize<'de>>(
    buf: &'de [u8],
    fields: &'static [Field],
    options: DecodeOptions,
) -> Result<T> {
    T::deserialize(Value::Msg(buf, fields, Ctx { options, depth: 0 }))
}

/// How many inlined structs may nest in one message (the tables nest two at most).
pub(crate) const MAX_INLINE: usize = 4;

/// How deeply messages may nest (a CRD's schema nests as deep as its objects; the stack of a
/// malicious body must stay bounded).
pub(crate) const MAX_DEPTH: u32 = 100;

/// What every value of one decoding shares: the options, and how deep it is.
#[derive(Clone, Copy)]
struct Ctx {
    options: DecodeOptions,
    depth: u32,
}

impl Ctx {
    /// The context of a message nested in this one.
    fn nested(self) -> Result<Ctx> {
        if self.depth >= MAX_DEPTH {
            return Err(Error::TooDeep);
        }
        Ok(Ctx {
            options: self.options,
            depth: self.depth + 1,
        })
    }
}

#[derive(Clone, Copy)]
struct Frame<'de> {
    reader: Reader<'de>,
    fields: &'static [Field],
    /// The repeated and nullable fields already presented (each once; a repeated one with
    /// all its occurrences).
    emitted: u128,
    /// Where the search for nullable fields left out by the message stands, once it is read.
    nulls: usize,
}

impl<'de> Frame<'de> {
    fn new(buf: &'de [u8], fields: &'static [Field]) -> Self {
        Self {
            reader: Reader::new(buf),
            fields,
            emitted: 0,
            nulls: 0,
        }
    }

    /// The next nullable field the message left out: JSON writes it as `null`.
    fn next_null(&mut self) -> Option<&'static str> {
        while let Some(&(number, name, kind)) = self.fields.get(self.nulls) {
            self.nulls += 1;
            let bit = 1u128 << (number & 127);
            if kind.unwrap_nullable().1 && self.emitted & bit == 0 {
                self.emitted |= bit;
                return Some(name);
            }
        }
        None
    }
}

/// A message read as a map.
struct Message<'de> {
    frames: [Frame<'de>; MAX_INLINE],
    depth: usize,
    pending: Option<Value<'de>>,
    ctx: Ctx,
}

impl<'de> Message<'de> {
    fn new(buf: &'de [u8], fields: &'static [Field], ctx: Ctx) -> Self {
        Self {
            frames: [Frame::new(buf, fields); MAX_INLINE],
            depth: 1,
            pending: None,
            ctx,
        }
    }

    /// The next field to present: its number, JSON name and value.
    fn next_field(&mut self) -> Result<Option<(u64, &'static str, Value<'de>)>> {
        loop {
            let top = &mut self.frames[self.depth - 1];
            if top.reader.done() {
                if let Some(name) = top.next_null() {
                    return Ok(Some((0, name, Value::Null)));
                }
                if self.depth == 1 {
                    return Ok(None);
                }
                self.depth -= 1;
                continue;
            }
            let f = top.reader.field()?;
            let Some(&(number, name, kind)) = top.fields.iter().find(|(n, _, _)| *n == f.number)
            else {
                continue;
            };
            check_wire(&f, name, kind)?;
            let (kind, nullable) = kind.unwrap_nullable();
            let bit = 1u128 << (number & 127);
            if kind.repeated() && top.emitted & bit != 0 {
                continue;
            }
            if kind.repeated() || nullable {
                top.emitted |= bit;
            }
            // `ObjectMeta` is the one message with this field.
            if number == MANAGED_FIELDS
                && name == "managedFields"
                && self.ctx.options.skip_managed_fields
            {
                continue;
            }
            let zero = f.varint == 0 && f.data.is_empty();
            #[allow(clippy::cast_possible_wrap)]
            let value = match kind {
                Kind::Str | Kind::Int | Kind::Bool | Kind::Bytes if zero => None,
                Kind::Str | Kind::OptStr => Some(Value::Str(f.data)),
                Kind::Bytes => Some(Value::Bytes(f.data)),
                Kind::Int | Kind::OptInt => Some(Value::Int(f.varint as i64)),
                Kind::Bool | Kind::OptBool => Some(Value::Bool(f.varint != 0)),
                Kind::Float => Some(Value::Float(float(f.data)?)),
                Kind::Time | Kind::MicroTime => time::read(f.data)?
                    .map(|(secs, nanos)| Value::Time(secs, nanos, matches!(kind, Kind::MicroTime))),
                Kind::Quantity => Some(Value::Str(quantity(f.data)?)),
                Kind::IntOrString => Some(match int_or_string(f.data)? {
                    IntOrString::Int(i) => Value::Int32(i),
                    IntOrString::Str(s) => Value::Str(s),
                }),
                Kind::FieldsV1 => Some(Value::Json(fields_v1(f.data)?)),
                Kind::Raw => Some(Value::Json(raw_extension(f.data)?)),
                Kind::Msg(inner) => Some(Value::Msg(f.data, inner, self.ctx.nested()?)),
                Kind::Either(inner) => Some(Value::Either(f.data, inner, self.ctx.nested()?)),
                Kind::Inline(inner) => {
                    if self.depth == MAX_INLINE {
                        return Err(Error::TooDeep);
                    }
                    self.frames[self.depth] = Frame::new(f.data, inner);
                    self.depth += 1;
                    continue;
                }
                Kind::MapStr
                | Kind::MapBytes
                | Kind::MapQuantity
                | Kind::MapTime
                | Kind::MapMsg(_)
                | Kind::MapEither(_)
                | Kind::RepStr
                | Kind::RepInt
                | Kind::RepBool
                | Kind::RepQuantity
                | Kind::RepRaw
                | Kind::RepMsg(_) => Some(Value::Repeated(Repeated {
                    first: Some(f),
                    rest: Reader::new(top.reader.rest()),
                    number,
                    name,
                    kind,
                    ctx: self.ctx,
                })),
                Kind::Nullable(_) | Kind::Always(_) => None,
            };
            match value {
                Some(value) => return Ok(Some((number, name, value))),
                None if nullable => return Ok(Some((number, name, Value::Null))),
                None => {}
            }
        }
    }
}

/// A `double` (`fixed64`, little-endian).
fn float(data: &[u8]) -> Result<f64> {
    let bytes: [u8; 8] = data
        .try_into()
        .map_err(|_| Error::Invalid("a double of other than 8 bytes".into()))?;
    Ok(f64::from_le_bytes(bytes))
}

/// The value of the field an [`Kind::Either`] message stands for: its highest-numbered field
/// that is set, `None` when none is.
fn either<'de>(buf: &'de [u8], fields: &'static [Field], ctx: Ctx) -> Result<Option<Value<'de>>> {
    let mut message = Message::new(buf, fields, ctx);
    let mut best: Option<(u64, Value<'de>)> = None;
    while let Some((number, _, value)) = message.next_field()? {
        if best.as_ref().is_none_or(|(n, _)| number >= *n) && !matches!(value, Value::Null) {
            best = Some((number, value));
        }
    }
    Ok(best.map(|(_, v)| v))
}

impl<'de> MapAccess<'de> for Message<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.next_field()? {
            Some((_, name, value)) => {
                self.pending = Some(value);
                seed.deserialize(BorrowedStrDeserializer::new(name))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        pending_value(&mut self.pending, seed)
    }
}

/// The value whose key a map access presented last.
fn pending_value<'de, V: DeserializeSeed<'de>>(
    pending: &mut Option<Value<'de>>,
    seed: V,
) -> Result<V::Value> {
    let value = pending
        .take()
        .ok_or_else(|| Error::Custom("a map value asked for before its key".into()))?;
    seed.deserialize(value)
}

/// All occurrences of a repeated field or map, from its first one on.
#[derive(Clone, Copy)]
struct Repeated<'de> {
    first: Option<Raw<'de>>,
    rest: Reader<'de>,
    number: u64,
    name: &'static str,
    kind: Kind,
    ctx: Ctx,
}

impl<'de> Repeated<'de> {
    /// The next occurrence of the field.
    fn next_occurrence(&mut self) -> Result<Option<Raw<'de>>> {
        if let Some(first) = self.first.take() {
            return Ok(Some(first));
        }
        while !self.rest.done() {
            let f = self.rest.field()?;
            if f.number == self.number {
                check_wire(&f, self.name, self.kind)?;
                return Ok(Some(f));
            }
        }
        Ok(None)
    }

    fn next_payload(&mut self) -> Result<Option<&'de [u8]>> {
        Ok(self.next_occurrence()?.map(|f| f.data))
    }
}

impl<'de> SeqAccess<'de> for Repeated<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        let Some(f) = self.next_occurrence()? else {
            return Ok(None);
        };
        #[allow(clippy::cast_possible_wrap)]
        let item = match self.kind {
            Kind::RepMsg(fields) => Value::Msg(f.data, fields, self.ctx.nested()?),
            Kind::RepInt => Value::Int(f.varint as i64),
            Kind::RepBool => Value::Bool(f.varint != 0),
            Kind::RepQuantity => Value::Str(quantity(f.data)?),
            Kind::RepRaw => Value::Json(raw_extension(f.data)?),
            _ => Value::Str(f.data),
        };
        seed.deserialize(item).map(Some)
    }

    /// The occurrences left, counted ahead: a `Vec` is then allocated at its length, where
    /// JSON decoding grows it by doubling and leaves the spare capacity (a fifth of a Pod).
    fn size_hint(&self) -> Option<usize> {
        let mut rest = self.rest;
        let mut n = usize::from(self.first.is_some());
        while !rest.done() {
            match rest.field() {
                Ok(f) if f.number == self.number => n += 1,
                Ok(_) => {}
                // A malformed field is reported when the items reach it.
                Err(_) => break,
            }
        }
        Some(n)
    }
}

/// The entries of a map field.
struct Entries<'de> {
    repeated: Repeated<'de>,
    pending: Option<Value<'de>>,
}

impl<'de> MapAccess<'de> for Entries<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let Some(data) = self.repeated.next_payload()? else {
            return Ok(None);
        };
        let (key, value) = map_entry(data)?;
        self.pending = Some(match self.repeated.kind {
            Kind::MapMsg(fields) => Value::Msg(
                value.unwrap_or_default(),
                fields,
                self.repeated.ctx.nested()?,
            ),
            Kind::MapEither(fields) => Value::Either(
                value.unwrap_or_default(),
                fields,
                self.repeated.ctx.nested()?,
            ),
            Kind::MapBytes => Value::Bytes(value.unwrap_or_default()),
            Kind::MapQuantity => Value::Str(match value {
                Some(v) => quantity(v)?,
                None => b"0",
            }),
            Kind::MapTime => match time::read(value.unwrap_or_default())? {
                Some((secs, nanos)) => Value::Time(secs, nanos, false),
                None => Value::Json(b"null"),
            },
            _ => Value::Str(value.unwrap_or_default()),
        });
        seed.deserialize(Value::Str(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        pending_value(&mut self.pending, seed)
    }
}

/// One value, as its JSON form would present it.
enum Value<'de> {
    Str(&'de [u8]),
    Int(i64),
    Int32(i32),
    Bool(bool),
    Time(u64, u32, bool),
    Float(f64),
    Bytes(&'de [u8]),
    Json(&'de [u8]),
    Msg(&'de [u8], &'static [Field], Ctx),
    Either(&'de [u8], &'static [Field], Ctx),
    Repeated(Repeated<'de>),
    Null,
}

impl<'de> Deserializer<'de> for Value<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self {
            Value::Str(b) => match std::str::from_utf8(b) {
                Ok(s) => visitor.visit_borrowed_str(s),
                // Go does not check UTF-8 when it decodes; its JSON encoder writes U+FFFD.
                Err(_) => visitor.visit_string(String::from_utf8_lossy(b).into_owned()),
            },
            Value::Int(i) => visitor.visit_i64(i),
            Value::Int32(i) => visitor.visit_i32(i),
            Value::Bool(b) => visitor.visit_bool(b),
            // Go writes a `float64` that is a whole number as an integer.
            #[allow(clippy::cast_possible_truncation, clippy::float_cmp)]
            Value::Float(x) if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 => {
                visitor.visit_i64(x as i64)
            }
            Value::Float(x) => visitor.visit_f64(x),
            Value::Null => visitor.visit_unit(),
            Value::Either(buf, fields, ctx) => match either(buf, fields, ctx)? {
                Some(v) => v.deserialize_any(visitor),
                None => visitor.visit_unit(),
            },
            Value::Time(secs, nanos, micro) => {
                visitor.visit_string(time::format(secs, nanos, micro))
            }
            Value::Bytes(b) => visitor.visit_string(base64(b)),
            Value::Json(b) => serde_json::Deserializer::from_slice(b)
                .deserialize_any(visitor)
                .map_err(|e| Error::Invalid(format!("fieldsV1: {e}"))),
            Value::Msg(buf, fields, ctx) => visitor.visit_map(Message::new(buf, fields, ctx)),
            Value::Repeated(r) => match r.kind {
                Kind::RepStr
                | Kind::RepInt
                | Kind::RepBool
                | Kind::RepQuantity
                | Kind::RepRaw
                | Kind::RepMsg(_) => visitor.visit_seq(r),
                _ => visitor.visit_map(Entries {
                    repeated: r,
                    pending: None,
                }),
            },
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self {
            Value::Null => visitor.visit_none(),
            Value::Either(buf, fields, ctx) => match either(buf, fields, ctx)? {
                Some(v) => visitor.visit_some(v),
                None => visitor.visit_none(),
            },
            Value::Json(b"null") => visitor.visit_none(),
            other => visitor.visit_some(other),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match self {
            // A string names a unit variant, as in JSON.
            Value::Str(b) => {
                let s = String::from_utf8_lossy(b).into_owned();
                visitor.visit_enum(s.into_deserializer())
            }
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        // Skipped without decoding.
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::APIEXTENSIONS_V1_JSON_SCHEMA_PROPS as PROPS;

    /// A `JSONSchemaProps` whose `not` (field 28) nests `depth` schemas.
    fn nested_schema(depth: usize) -> Vec<u8> {
        let mut message = Vec::new();
        for _ in 0..depth {
            let mut outer = Vec::new();
            crate::wire::put_bytes_field(28, &message, &mut outer);
            message = outer;
        }
        message
    }

    #[test]
    fn a_recursive_schema_should_decode_as_deep_as_the_limit_and_no_deeper() {
        let ok = nested_schema(MAX_DEPTH as usize);
        let value: serde_json::Value = from_message(&ok, &PROPS, DecodeOptions::default()).unwrap();
        assert!(value.pointer(&"/not".repeat(MAX_DEPTH as usize)).is_some());
        assert!(crate::json::to_json(&ok, &PROPS).is_ok());
        // A malicious body nests far deeper: a typed error, not an overflowed stack.
        let deep = nested_schema(1_000);
        assert_eq!(
            from_message::<serde_json::Value>(&deep, &PROPS, DecodeOptions::default()),
            Err(Error::TooDeep)
        );
        assert_eq!(crate::json::to_json(&deep, &PROPS), Err(Error::TooDeep));
    }
}
