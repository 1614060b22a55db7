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
    T::deserialize(Value::Msg(buf, fields, options))
}

/// How many inlined structs may nest in one message (the tables nest two at most).
pub(crate) const MAX_INLINE: usize = 4;

#[derive(Clone, Copy)]
struct Frame<'de> {
    reader: Reader<'de>,
    fields: &'static [Field],
    /// The repeated fields already presented (each once, with all its occurrences).
    emitted: u128,
}

/// A message read as a map.
struct Message<'de> {
    frames: [Frame<'de>; MAX_INLINE],
    depth: usize,
    pending: Option<Value<'de>>,
    options: DecodeOptions,
}

impl<'de> Message<'de> {
    fn new(buf: &'de [u8], fields: &'static [Field], options: DecodeOptions) -> Self {
        let frame = Frame {
            reader: Reader::new(buf),
            fields,
            emitted: 0,
        };
        Self {
            frames: [frame; MAX_INLINE],
            depth: 1,
            pending: None,
            options,
        }
    }

    /// The next field to present: its JSON name and value.
    fn next_field(&mut self) -> Result<Option<(&'static str, Value<'de>)>> {
        loop {
            let top = &mut self.frames[self.depth - 1];
            if top.reader.done() {
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
            if kind.repeated() {
                let bit = 1u128 << (number & 127);
                if top.emitted & bit != 0 {
                    continue;
                }
                top.emitted |= bit;
            }
            // `ObjectMeta` is the one message with this field.
            if number == MANAGED_FIELDS
                && name == "managedFields"
                && self.options.skip_managed_fields
            {
                continue;
            }
            let zero = f.varint == 0 && f.data.is_empty();
            #[allow(clippy::cast_possible_wrap)]
            let value = match kind {
                Kind::Str | Kind::Int | Kind::Bool | Kind::Bytes if zero => continue,
                Kind::Str | Kind::OptStr => Value::Str(f.data),
                Kind::Bytes => Value::Bytes(f.data),
                Kind::Int | Kind::OptInt => Value::Int(f.varint as i64),
                Kind::Bool | Kind::OptBool => Value::Bool(f.varint != 0),
                Kind::Time | Kind::MicroTime => match time::read(f.data)? {
                    Some((secs, nanos)) => {
                        Value::Time(secs, nanos, matches!(kind, Kind::MicroTime))
                    }
                    None => continue,
                },
                Kind::Quantity => Value::Str(quantity(f.data)?),
                Kind::IntOrString => match int_or_string(f.data)? {
                    IntOrString::Int(i) => Value::Int32(i),
                    IntOrString::Str(s) => Value::Str(s),
                },
                Kind::FieldsV1 => Value::Json(fields_v1(f.data)?),
                Kind::Raw => Value::Json(raw_extension(f.data)?),
                Kind::Msg(inner) => Value::Msg(f.data, inner, self.options),
                Kind::Inline(inner) => {
                    if self.depth == MAX_INLINE {
                        return Err(Error::TooDeep);
                    }
                    self.frames[self.depth] = Frame {
                        reader: Reader::new(f.data),
                        fields: inner,
                        emitted: 0,
                    };
                    self.depth += 1;
                    continue;
                }
                Kind::MapStr
                | Kind::MapBytes
                | Kind::MapQuantity
                | Kind::MapTime
                | Kind::RepStr
                | Kind::RepInt
                | Kind::RepMsg(_) => Value::Repeated(Repeated {
                    first: Some(f),
                    rest: Reader::new(top.reader.rest()),
                    number,
                    name,
                    kind,
                    options: self.options,
                }),
            };
            return Ok(Some((name, value)));
        }
    }
}

impl<'de> MapAccess<'de> for Message<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.next_field()? {
            Some((name, value)) => {
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
    options: DecodeOptions,
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
            Kind::RepMsg(fields) => Value::Msg(f.data, fields, self.options),
            Kind::RepInt => Value::Int(f.varint as i64),
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
    Bytes(&'de [u8]),
    Json(&'de [u8]),
    Msg(&'de [u8], &'static [Field], DecodeOptions),
    Repeated(Repeated<'de>),
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
            Value::Time(secs, nanos, micro) => {
                visitor.visit_string(time::format(secs, nanos, micro))
            }
            Value::Bytes(b) => visitor.visit_string(base64(b)),
            Value::Json(b) => serde_json::Deserializer::from_slice(b)
                .deserialize_any(visitor)
                .map_err(|e| Error::Invalid(format!("fieldsV1: {e}"))),
            Value::Msg(buf, fields, options) => {
                visitor.visit_map(Message::new(buf, fields, options))
            }
            Value::Repeated(r) => match r.kind {
                Kind::RepStr | Kind::RepInt | Kind::RepMsg(_) => visitor.visit_seq(r),
                _ => visitor.visit_map(Entries {
                    repeated: r,
                    pending: None,
                }),
            },
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
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
