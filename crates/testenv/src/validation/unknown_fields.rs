//! Decoding a built-in object as kube-apiserver does: a value of the wrong type is a `400`
//! decode error, and fields the type does not have (or that come twice) are dropped with a
//! `Warning` each (`fieldValidation=Warn`, the default), dropped silently (`Ignore`), or refused
//! with `400` (`Strict`).
//!
//! The types' shape comes from k8s-openapi (see [`go_types`](crate::wire::go_types)); the body
//! is decoded into it as Go's decoder does (see [`go_decode`](crate::wire::go_decode)).

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::registry::ResourceDef;
use crate::status::{ApiError, ApiResult};
use crate::wire::go_decode::{self, Node, Step};
use crate::wire::go_types::{self, GoTypes};

/// What `fieldValidation` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldValidation {
    /// Drop unknown fields silently.
    Ignore,
    /// Drop unknown fields and warn about each (the default).
    Warn,
    /// Refuse an object with unknown fields.
    Strict,
}

impl FieldValidation {
    /// From the `fieldValidation` query parameter (already validated).
    pub(crate) fn from_param(param: Option<&str>) -> Self {
        match param {
            Some("Ignore") => Self::Ignore,
            Some("Strict") => Self::Strict,
            _ => Self::Warn,
        }
    }
}

/// The Go types of the built-in kinds kcr-testenv serves; `None` for others.
pub(crate) fn go_types(def: &ResourceDef) -> Option<Arc<GoTypes>> {
    use k8s_openapi::api;
    match (def.group.as_str(), def.kind.as_str()) {
        ("", "ConfigMap") => go_types::of::<api::core::v1::ConfigMap>(),
        ("", "Secret") => go_types::of::<api::core::v1::Secret>(),
        ("", "Pod") => go_types::of::<api::core::v1::Pod>(),
        ("", "Service") => go_types::of::<api::core::v1::Service>(),
        ("", "Namespace") => go_types::of::<api::core::v1::Namespace>(),
        ("", "ServiceAccount") => go_types::of::<api::core::v1::ServiceAccount>(),
        ("", "Event") => go_types::of::<api::core::v1::Event>(),
        ("apps", "Deployment") => go_types::of::<api::apps::v1::Deployment>(),
        ("coordination.k8s.io", "Lease") => go_types::of::<api::coordination::v1::Lease>(),
        ("events.k8s.io", "Event") => go_types::of::<api::events::v1::Event>(),
        _ => crate::typed_kinds::go_types_of(def),
    }
}

/// Removes the member at `path`.
fn remove(v: &mut Value, path: &[Step]) {
    let Some((last, init)) = path.split_last() else {
        return;
    };
    let mut cur = v;
    for step in init {
        let next = match step {
            Step::Index(i) => cur.get_mut(*i),
            Step::Key(k) => cur.get_mut(k.as_str()),
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
    if let (Some(m), Step::Key(k)) = (cur.as_object_mut(), last) {
        m.remove(k.as_str());
    }
}

fn cannot_handle(def: &ResourceDef, why: &str) -> ApiError {
    ApiError::bad_request(format!(
        "{kind} in version {version:?} cannot be handled as a {kind}: {why}",
        kind = def.kind,
        version = def.version
    ))
}

/// Decodes a built-in object: `400` for values of the wrong type, unknown and duplicate fields
/// dropped (their warnings returned) or refused under `Strict`. `raw` is the request body `obj`
/// was read from, whose order decides which error and which field come first. Custom resources
/// and kinds kcr-testenv has no type for pass unchanged.
pub(crate) fn decode(
    def: &ResourceDef,
    obj: &mut Map<String, Value>,
    mode: FieldValidation,
    raw: &[u8],
) -> ApiResult<Vec<String>> {
    if def.custom {
        return Ok(Vec::new());
    }
    let Some(types) = go_types(def) else {
        return Ok(Vec::new());
    };
    let body = Node::parse(raw).unwrap_or_else(|| Node::from_object(obj));
    let outcome = go_decode::decode(&types, &body);
    if let Some(e) = outcome.error {
        return Err(cannot_handle(def, &e));
    }
    if outcome.strict.is_empty() || mode == FieldValidation::Ignore {
        drop_unknown(obj, &outcome.strict);
        return Ok(Vec::new());
    }
    let messages: Vec<String> = outcome.strict.iter().map(|f| f.message()).collect();
    if mode == FieldValidation::Strict {
        return Err(cannot_handle(
            def,
            &format!("strict decoding error: {}", messages.join(", ")),
        ));
    }
    drop_unknown(obj, &outcome.strict);
    Ok(messages)
}

/// Turns the `null`s of a built-in object, and the fields it leaves out, into what
/// kube-apiserver's decoding into the kind's Go types and encoding again make of them (see
/// [`go_nulls`](crate::wire::go_nulls)), and its empty `omitempty` lists and maps dropped
/// ([`go_shape`](crate::wire::go_shape)). Custom resources and kinds kcr-testenv has no type
/// for pass unchanged.
pub(crate) fn normalize_nulls(def: &ResourceDef, obj: &mut Map<String, Value>) {
    if def.custom {
        return;
    }
    if let Some(types) = go_types(def) {
        crate::wire::go_nulls::round_trip(&types, obj);
        crate::wire::go_shape::decoded(&types, obj);
    }
}

/// A built-in object as kube-apiserver answers once it has stored it (see
/// [`go_shape`](crate::wire::go_shape)): empty lists and maps come back as `nil`, absent fields
/// as what Go writes for their zero value. Custom resources and kinds kcr-testenv has no type
/// for pass unchanged.
pub(crate) fn as_stored(def: &ResourceDef, obj: &mut Map<String, Value>) {
    if def.custom {
        return;
    }
    if let Some(types) = go_types(def) {
        crate::wire::go_shape::stored(&types, obj);
    }
}

/// A built-in object of `def`'s kind with nothing set, as decoding `{}` into its Go types and
/// encoding it again writes it (see [`go_nulls`](crate::wire::go_nulls)); `None` for custom
/// resources and kinds kcr-testenv has no Go type for.
pub(crate) fn zero_object(def: &ResourceDef) -> Option<Value> {
    if def.custom {
        return None;
    }
    let types = go_types(def)?;
    let mut m = Map::new();
    crate::wire::go_nulls::round_trip(&types, &mut m);
    Some(Value::Object(m))
}

/// Drops the unknown fields (a duplicate keeps its last value, as the decoded object has it).
fn drop_unknown(obj: &mut Map<String, Value>, fields: &[go_decode::StrictField]) {
    let mut value = Value::Object(std::mem::take(obj));
    for f in fields.iter().filter(|f| !f.duplicate) {
        remove(&mut value, &f.path);
    }
    if let Value::Object(m) = value {
        *obj = m;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_members_should_be_removed() {
        let mut v = json!({"a": 1, "b": {"c": 2, "d": [{"e": 1, "f": 2}]}});
        remove(&mut v, &[Step::Key("b".into()), Step::Key("c".into())]);
        remove(
            &mut v,
            &[
                Step::Key("b".into()),
                Step::Key("d".into()),
                Step::Index(0),
                Step::Key("f".into()),
            ],
        );
        remove(&mut v, &[Step::Key("x".into()), Step::Key("y".into())]);
        assert_eq!(v, json!({"a": 1, "b": {"d": [{"e": 1}]}}));
    }
}
