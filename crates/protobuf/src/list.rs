//! Lists: a `<Kind>List` body (`metadata` = 1, `items` = 2, in the `k8s\0` envelope), decoded
//! item by item straight into `T`, or encoded from JSON forms or from the items' messages.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::de::{DecodeOptions, from_message};
use crate::envelope::{unknown_kind, unwrap, wrap};
use crate::error::{Error, Result};
use crate::json::{Path, from_json};
use crate::message::describe;
use crate::schema::{LIST_META, Schema, item_schema_for};
use crate::wire::{self, Reader};

/// Encodes a list: `metadata` (a `ListMeta`'s JSON form) and the items' JSON forms, as a
/// `<Kind>List` of the item schema's group and version.
pub fn encode<'v>(
    schema: &Schema,
    metadata: &Map<String, Value>,
    items: impl IntoIterator<Item = &'v Value>,
) -> Result<Vec<u8>> {
    list_body(schema, metadata, |list| {
        let root = Path::Root;
        let items_path = Path::Field(&root, "items");
        for (i, item) in items.into_iter().enumerate() {
            let obj = item
                .as_object()
                .ok_or_else(|| Error::Invalid(format!("items[{i}] is not an object")))?;
            let path = Path::Index(&items_path, i);
            wire::put_message_field(2, list, |buf| {
                from_json(obj, schema.fields, &["apiVersion", "kind"], &path, buf)
            })?;
        }
        Ok(())
    })
}

/// Encodes a list from `metadata` (a `ListMeta`'s JSON form) and the items' messages (as
/// [`message::encode`](crate::message::encode) writes them), as a `<Kind>List` of the item schema's group and version.
pub fn encode_messages<'m>(
    schema: &Schema,
    metadata: &Map<String, Value>,
    items: impl IntoIterator<Item = &'m [u8]>,
) -> Result<Vec<u8>> {
    list_body(schema, metadata, |list| {
        for item in items {
            wire::put_bytes_field(2, item, list);
        }
        Ok(())
    })
}

/// A `<Kind>List` body: its metadata (field 1), the items `put_items` writes (field 2), in the
/// `k8s\0` envelope.
fn list_body(
    schema: &Schema,
    metadata: &Map<String, Value>,
    put_items: impl FnOnce(&mut Vec<u8>) -> Result<()>,
) -> Result<Vec<u8>> {
    let mut list = Vec::new();
    let root = Path::Root;
    let meta_path = Path::Field(&root, "metadata");
    wire::put_message_field(1, &mut list, |buf| {
        from_json(metadata, LIST_META, &[], &meta_path, buf)
    })?;
    put_items(&mut list)?;
    Ok(wrap(
        schema.api_version(),
        &format!("{}List", schema.kind()),
        &list,
    ))
}

/// A list's metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListMeta {
    /// `resourceVersion`.
    pub resource_version: String,
    /// `continue` (empty on the last page).
    pub continue_token: String,
    /// `remainingItemCount`.
    pub remaining_item_count: Option<i64>,
    /// `shardInfo.selector`: the shard selector the server applied to the list (KEP-5866;
    /// `None` when the list carries no `shardInfo`).
    pub shard_selector: Option<String>,
}

/// A decoded list.
#[derive(Clone, Debug, PartialEq)]
pub struct List<T> {
    /// The list's metadata.
    pub metadata: ListMeta,
    /// The items, in order.
    pub items: Vec<T>,
}

/// An item of a list that did not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} {name}: {source}")]
pub struct ItemError {
    /// The item's kind.
    pub kind: String,
    /// The item's `namespace/name` (or `name`), `<unknown name>` when unreadable.
    pub name: String,
    /// Why it did not decode.
    #[source]
    pub source: Error,
}

fn read_list_meta(b: &[u8]) -> Result<ListMeta> {
    let mut meta = ListMeta::default();
    for f in Reader::new(b) {
        let f = f?;
        #[allow(clippy::cast_possible_wrap)]
        match (f.number, f.wire) {
            (2, wire::LEN) => meta.resource_version = String::from_utf8_lossy(f.data).into_owned(),
            (3, wire::LEN) => meta.continue_token = String::from_utf8_lossy(f.data).into_owned(),
            (4, wire::VARINT) => meta.remaining_item_count = Some(f.varint as i64),
            (5, wire::LEN) => meta.shard_selector = Some(read_shard_selector(f.data)?),
            _ => {}
        }
    }
    Ok(meta)
}

/// The `selector` of a `ShardInfo` message (empty when absent, as Go reads it).
fn read_shard_selector(b: &[u8]) -> Result<String> {
    let mut selector = String::new();
    for f in Reader::new(b) {
        let f = f?;
        if (f.number, f.wire) == (1, wire::LEN) {
            selector = String::from_utf8_lossy(f.data).into_owned();
        }
    }
    Ok(selector)
}

/// Decodes a list body (`k8s\0` + `runtime.Unknown` of a `<Kind>List`), each item through its
/// kind's table straight into `T`. An item that does not decode is named in the error.
pub fn decode<'de, T: Deserialize<'de>>(
    body: &'de [u8],
    options: DecodeOptions,
) -> Result<List<T>, ItemError> {
    let whole = |source| ItemError {
        kind: "list".into(),
        name: String::new(),
        source,
    };
    let u = unwrap(body).map_err(whole)?;
    let schema = item_schema_for(&u.api_version, &u.kind).ok_or_else(|| whole(unknown_kind(&u)))?;
    let mut list = List {
        metadata: ListMeta::default(),
        items: Vec::new(),
    };
    for f in Reader::new(u.raw) {
        let f = f.map_err(whole)?;
        match (f.number, f.wire) {
            (1, wire::LEN) => list.metadata = read_list_meta(f.data).map_err(whole)?,
            (2, wire::LEN) => {
                let item =
                    from_message(f.data, schema.fields, options).map_err(|source| ItemError {
                        kind: schema.kind().to_owned(),
                        name: describe(f.data),
                        source,
                    })?;
                list.items.push(item);
            }
            _ => {}
        }
    }
    Ok(list)
}

/// A list body taken apart without decoding its items: the list's type, its metadata and each
/// item's message (without envelope), in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Messages<'a> {
    /// `typeMeta.apiVersion` of the list.
    pub api_version: Cow<'a, str>,
    /// `typeMeta.kind` of the list (`ConfigMapList`).
    pub kind: Cow<'a, str>,
    /// The list's metadata.
    pub metadata: ListMeta,
    /// The items' messages.
    pub items: Vec<&'a [u8]>,
}

/// Takes a list body (`k8s\0` + `runtime.Unknown` of a `<Kind>List`) apart into its metadata
/// and its items' messages, whatever the kind (the items can then be decoded one by one, with
/// [`message::decode`](crate::message::decode) or [`message::to_json`](crate::message::to_json)).
pub fn messages(body: &[u8]) -> Result<Messages<'_>> {
    let u = unwrap(body)?;
    let mut list = Messages {
        api_version: u.api_version,
        kind: u.kind,
        metadata: ListMeta::default(),
        items: Vec::new(),
    };
    for f in Reader::new(u.raw) {
        let f = f?;
        match (f.number, f.wire) {
            (1, wire::LEN) => list.metadata = read_list_meta(f.data)?,
            (2, wire::LEN) => list.items.push(f.data),
            _ => {}
        }
    }
    Ok(list)
}
