//! `ValidateObjectMeta`: the name (per kind: RFC 1123 subdomain, RFC 1123 label for
//! namespaces, RFC 1035 label for Services), label keys and values, annotation keys and the
//! annotations' total size (256 KiB).

use serde_json::{Map, Value, json};

use super::field::FieldError;
use super::names;
use crate::registry::rest::NameRule;

/// The largest total size of an object's annotations (keys and values), in bytes.
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// The field errors of an object's metadata.
pub(crate) fn validate(name_rule: NameRule, obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(meta) = obj.get("metadata").and_then(Value::as_object) else {
        return errs;
    };
    if let Some(name) = meta.get("name").and_then(Value::as_str)
        && !name.is_empty()
    {
        for msg in name_rule(name) {
            errs.push(FieldError::invalid("metadata.name", &json!(name), &msg));
        }
    }
    if let Some(labels) = meta.get("labels").and_then(Value::as_object) {
        for (key, value) in labels {
            for msg in names::qualified_name(key) {
                errs.push(FieldError::invalid("metadata.labels", &json!(key), &msg));
            }
            let value = value.as_str().unwrap_or_default();
            for msg in names::label_value(value) {
                errs.push(FieldError::invalid("metadata.labels", &json!(value), &msg));
            }
        }
    }
    if let Some(annotations) = meta.get("annotations").and_then(Value::as_object) {
        let mut total = 0;
        for (key, value) in annotations {
            total += key.len() + value.as_str().map_or(0, str::len);
            for msg in names::qualified_name(&key.to_lowercase()) {
                errs.push(FieldError::invalid(
                    "metadata.annotations",
                    &json!(key),
                    &msg,
                ));
            }
        }
        if total > TOTAL_ANNOTATION_SIZE_LIMIT {
            errs.push(FieldError::too_long(
                "metadata.annotations",
                TOTAL_ANNOTATION_SIZE_LIMIT,
            ));
        }
    }
    errs
}

/// `ValidateObjectMetaUpdate`'s immutable fields that an update's body may carry: a changed
/// `uid`, `deletionTimestamp` or `deletionGracePeriodSeconds` (the update keeps the stored
/// values of the others, `creationTimestamp` and `generation`, without a word).
pub(crate) fn update(old: &Map<String, Value>, new: &Map<String, Value>) -> Vec<FieldError> {
    let Some(new) = new.get("metadata").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    for key in ["uid", "deletionTimestamp", "deletionGracePeriodSeconds"] {
        let Some(value) = new.get(key).filter(|v| !v.is_null()) else {
            continue;
        };
        if key == "uid" && value.as_str() == Some("") {
            continue;
        }
        if old.get(key) != Some(value) {
            errs.push(FieldError::invalid(
                format!("metadata.{key}"),
                value,
                "field is immutable",
            ));
        }
    }
    errs
}
