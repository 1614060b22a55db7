//! Small helpers for defaulting JSON objects the way Go's typed defaulters see them: a missing
//! or `null` member is unset, and so is the zero value of a field Go holds by value (`""`, `0`).

use serde_json::{Map, Value};

/// Sets `key` when it is missing or `null` (a Go pointer field that is `nil`).
pub(crate) fn or_insert(m: &mut Map<String, Value>, key: &str, value: Value) {
    if m.get(key).is_none_or(Value::is_null) {
        m.insert(key.into(), value);
    }
}

/// Sets `key` when it is missing, `null` or `""` (a Go string field held by value).
pub(crate) fn or_insert_str(m: &mut Map<String, Value>, key: &str, value: &str) {
    if m.get(key)
        .is_none_or(|v| v.is_null() || v.as_str() == Some(""))
    {
        m.insert(key.into(), Value::String(value.into()));
    }
}

/// Sets `key` when it is missing, `null` or `0` (a Go integer field held by value).
pub(crate) fn or_insert_int(m: &mut Map<String, Value>, key: &str, value: i64) {
    if m.get(key)
        .is_none_or(|v| v.is_null() || v.as_i64() == Some(0))
    {
        m.insert(key.into(), Value::from(value));
    }
}

/// The object member `key`, created empty when missing or `null` (a Go struct held by value,
/// which always encodes); `None` when it holds something else than an object.
pub(crate) fn object<'a>(
    m: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    or_insert(m, key, Value::Object(Map::new()));
    m.get_mut(key).and_then(Value::as_object_mut)
}

/// The object member `key` when it is present and an object.
pub(crate) fn existing<'a>(
    m: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    m.get_mut(key).and_then(Value::as_object_mut)
}

/// The object items of the array member `key`.
pub(crate) fn items<'a>(
    m: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    m.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}
