//! Objects: a body (`k8s\0` + `runtime.Unknown`) decoded into any type whose `Deserialize`
//! reads the JSON form, decoded into that JSON form, or encoded from it.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::de::{DecodeOptions, from_message};
use crate::envelope::{unknown_kind, unwrap, wrap};
use crate::error::{Error, Result};
use crate::json::to_json as message_to_json;
use crate::schema::{Schema, schema_for};

/// Decodes an object body (`k8s\0` + `runtime.Unknown`) into `T`, through the table of the
/// kind its envelope names.
pub fn decode<'de, T: Deserialize<'de>>(body: &'de [u8], options: DecodeOptions) -> Result<T> {
    let u = unwrap(body)?;
    let schema = schema_for(&u.api_version, &u.kind).ok_or_else(|| unknown_kind(&u))?;
    from_message(u.raw, schema.fields, options)
}

/// Decodes an object body into its JSON form (with `apiVersion` and `kind`), strictly: a
/// field the table does not know is refused unless it holds only zero values. For bodies a
/// client sends.
pub fn to_json(body: &[u8]) -> Result<Value> {
    let u = unwrap(body)?;
    let schema = schema_for(&u.api_version, &u.kind).ok_or_else(|| unknown_kind(&u))?;
    let mut obj = message_to_json(u.raw, schema.fields)?;
    if let Value::Object(m) = &mut obj {
        m.insert(
            "apiVersion".into(),
            Value::String(u.api_version.into_owned()),
        );
        m.insert("kind".into(), Value::String(u.kind.into_owned()));
    }
    Ok(obj)
}

/// Encodes an object's JSON form (with `apiVersion` and `kind`) as the protobuf serializer
/// writes it. A field the kind's table does not know is refused.
pub fn encode(object: &Value) -> Result<Vec<u8>> {
    let (obj, schema) = typed(object)?;
    let raw = crate::message::encode(obj, schema)?;
    Ok(wrap(schema.api_version(), schema.kind(), &raw))
}

fn typed(object: &Value) -> Result<(&Map<String, Value>, &'static Schema)> {
    let obj = object
        .as_object()
        .ok_or_else(|| Error::Invalid("an object is not a JSON object".into()))?;
    let field = |name| obj.get(name).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    let schema = schema_for(api_version, kind).ok_or_else(|| Error::UnknownKind {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
    })?;
    Ok((obj, schema))
}
