//! Messages: an object's protobuf message without envelope, of a kind known from elsewhere
//! (a list's item, a watch event's object), decoded, encoded, or named.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::de::{DecodeOptions, from_message};
use crate::error::Result;
use crate::json::{Path, from_json};
use crate::schema::Schema;

/// Decodes an object's message (without envelope) of a known kind into `T`.
pub fn decode<'de, T: Deserialize<'de>>(
    message: &'de [u8],
    schema: &Schema,
    options: DecodeOptions,
) -> Result<T> {
    from_message(message, schema.fields, options)
}

/// The message of an object's JSON form (without envelope), through its kind's table.
pub fn encode(object: &Map<String, Value>, schema: &Schema) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    from_json(
        object,
        schema.fields,
        &["apiVersion", "kind"],
        &Path::Root,
        &mut out,
    )?;
    Ok(out)
}

/// The `namespace/name` (or `name`) of an object's message, `<unknown name>` when its
/// metadata cannot be read.
#[must_use]
pub fn describe(message: &[u8]) -> String {
    #[derive(Deserialize, Default)]
    struct Meta {
        name: Option<String>,
        namespace: Option<String>,
    }
    #[derive(Deserialize, Default)]
    struct Partial {
        #[serde(default)]
        metadata: Meta,
    }
    const TABLE: &[crate::schema::Field] = &[(
        1,
        "metadata",
        crate::schema::Kind::Msg(crate::schema::OBJECT_META),
    )];
    let p: Partial = from_message(
        message,
        TABLE,
        DecodeOptions::default().skip_managed_fields(true),
    )
    .unwrap_or_default();
    match (p.metadata.namespace, p.metadata.name) {
        (Some(ns), Some(name)) if !ns.is_empty() => format!("{ns}/{name}"),
        (_, Some(name)) => name,
        _ => "<unknown name>".into(),
    }
}

/// Decodes an object's message (without envelope) of a known kind into its JSON form (without
/// `apiVersion` and `kind`), strictly, as [`object::to_json`](crate::object::to_json) does.
pub fn to_json(message: &[u8], schema: &Schema) -> Result<Value> {
    crate::json::to_json(message, schema.fields)
}
