//! Decoding a built-in object as kube-apiserver does: a value of the wrong type is a `400`
//! decode error, and fields the type does not have are unknown: dropped with a `Warning`
//! (`fieldValidation=Warn`, the default), dropped silently (`Ignore`), or refused with `400`
//! (`Strict`).
//!
//! The type's shape comes from k8s-openapi: the object is decoded into its typed struct and
//! encoded again; a member of the request that does not come back is an unknown field.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::registry::ResourceDef;
use crate::status::{ApiError, ApiResult};

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

fn round_trip<T: DeserializeOwned + Serialize>(v: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

/// The object after a typed decode and encode, for the built-in kinds kcr-testenv serves;
/// `None` for others.
fn typed(def: &ResourceDef, v: &Value) -> Option<Result<Value, String>> {
    use k8s_openapi::api;
    Some(match (def.group.as_str(), def.kind.as_str()) {
        ("", "ConfigMap") => round_trip::<api::core::v1::ConfigMap>(v),
        ("", "Secret") => round_trip::<api::core::v1::Secret>(v),
        ("", "Pod") => round_trip::<api::core::v1::Pod>(v),
        ("", "Service") => round_trip::<api::core::v1::Service>(v),
        ("", "Namespace") => round_trip::<api::core::v1::Namespace>(v),
        ("", "ServiceAccount") => round_trip::<api::core::v1::ServiceAccount>(v),
        ("", "Event") => round_trip::<api::core::v1::Event>(v),
        ("apps", "Deployment") => round_trip::<api::apps::v1::Deployment>(v),
        ("coordination.k8s.io", "Lease") => round_trip::<api::coordination::v1::Lease>(v),
        ("events.k8s.io", "Event") => round_trip::<api::events::v1::Event>(v),
        _ => return crate::typed_kinds::round_trip_of(def, v),
    })
}

/// Paths (`spec.template.spec.containers[0].x`) in `given` that `known` lacks.
fn missing(given: &Value, known: &Value, path: &str, out: &mut Vec<String>) {
    match (given, known) {
        (Value::Object(g), Value::Object(k)) => {
            for (key, value) in g {
                let p = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match k.get(key) {
                    Some(kv) => missing(value, kv, &p, out),
                    None if !value.is_null() => out.push(p),
                    None => {}
                }
            }
        }
        (Value::Array(g), Value::Array(k)) => {
            for (i, (gv, kv)) in g.iter().zip(k).enumerate() {
                missing(gv, kv, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Removes the member at `path` (as [`missing`] writes it).
fn remove(v: &mut Value, path: &str) {
    let mut parts: Vec<String> = Vec::new();
    for seg in path.split('.') {
        match seg.find('[') {
            Some(i) => {
                parts.push(seg[..i].to_owned());
                for idx in seg[i..].split('[').filter(|s| !s.is_empty()) {
                    parts.push(format!("[{}", idx.trim_end_matches(']')));
                }
            }
            None => parts.push(seg.to_owned()),
        }
    }
    let Some((last, init)) = parts.split_last() else {
        return;
    };
    let mut cur = v;
    for p in init {
        let next = match p.strip_prefix('[') {
            Some(i) => i.parse::<usize>().ok().and_then(|i| cur.get_mut(i)),
            None => cur.get_mut(p.as_str()),
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
    if let Some(m) = cur.as_object_mut() {
        m.remove(last.as_str());
    }
}

/// The Go-style base64 error of a Secret's `data`, if any value is not base64.
fn secret_base64_error(obj: &Map<String, Value>) -> Option<String> {
    let data = obj.get("data")?.as_object()?;
    for value in data.values() {
        let s = value.as_str()?;
        let bytes = s.as_bytes();
        let valid = |c: u8| c.is_ascii_alphanumeric() || c == b'+' || c == b'/';
        let body_len = bytes.iter().rposition(|c| *c != b'=').map_or(0, |p| p + 1);
        if let Some(bad) = bytes[..body_len].iter().position(|c| !valid(*c)) {
            return Some(format!("illegal base64 data at input byte {bad}"));
        }
        let padding = bytes.len() - body_len;
        if padding > 2 || bytes.len() % 4 != 0 {
            let at = if bytes.len() % 4 == 0 {
                body_len
            } else {
                bytes.len() / 4 * 4
            };
            return Some(format!("illegal base64 data at input byte {at}"));
        }
    }
    None
}

fn cannot_handle(def: &ResourceDef, why: &str) -> ApiError {
    ApiError::bad_request(format!(
        "{kind} in version {version:?} cannot be handled as a {kind}: {why}",
        kind = def.kind,
        version = def.version
    ))
}

/// Orders unknown paths as the request wrote them (by where their last key first appears in the
/// raw body), as kube-apiserver's decoder reports them.
fn document_order(paths: &mut [String], raw: &[u8]) {
    let text = String::from_utf8_lossy(raw);
    let position = |p: &String| {
        let last = p.rsplit('.').next().unwrap_or(p);
        let key = last.split('[').next().unwrap_or(last);
        text.find(&format!("\"{key}\"")).unwrap_or(usize::MAX)
    };
    paths.sort_by_key(position);
}

/// Decodes a built-in object: `400` for values of the wrong type, unknown fields dropped (their
/// warnings returned) or refused under `Strict`. Custom resources and kinds kcr-testenv has no
/// type for pass unchanged.
pub(crate) fn decode(
    def: &ResourceDef,
    obj: &mut Map<String, Value>,
    mode: FieldValidation,
    raw: &[u8],
) -> ApiResult<Vec<String>> {
    if def.custom {
        return Ok(Vec::new());
    }
    if def.group.is_empty()
        && def.kind == "Secret"
        && let Some(e) = secret_base64_error(obj)
    {
        return Err(cannot_handle(def, &e));
    }
    let given = Value::Object(obj.clone());
    let known = match typed(def, &given) {
        None => return Ok(Vec::new()),
        Some(Err(e)) => {
            let why = e.split(" at line ").next().unwrap_or(&e).to_owned();
            return Err(cannot_handle(def, &why));
        }
        Some(Ok(k)) => k,
    };
    let mut unknown = Vec::new();
    missing(&given, &known, "", &mut unknown);
    if unknown.is_empty() {
        return Ok(Vec::new());
    }
    document_order(&mut unknown, raw);
    if mode == FieldValidation::Strict {
        let list: Vec<String> = unknown
            .iter()
            .map(|p| format!("unknown field {p:?}"))
            .collect();
        return Err(cannot_handle(
            def,
            &format!("strict decoding error: {}", list.join(", ")),
        ));
    }
    let mut value = given;
    for p in &unknown {
        remove(&mut value, p);
    }
    if let Value::Object(m) = value {
        *obj = m;
    }
    Ok(match mode {
        FieldValidation::Warn => unknown
            .iter()
            .map(|p| format!("unknown field {p:?}"))
            .collect(),
        _ => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_paths_should_be_found_and_removed() {
        let given = json!({"a": 1, "b": {"c": 2, "d": [{"e": 1, "f": 2}]}});
        let known = json!({"a": 1, "b": {"d": [{"e": 1}]}});
        let mut out = Vec::new();
        missing(&given, &known, "", &mut out);
        assert_eq!(out, vec!["b.c".to_owned(), "b.d[0].f".to_owned()]);
        let mut v = given.clone();
        for p in &out {
            remove(&mut v, p);
        }
        assert_eq!(v, known);
    }

    #[test]
    fn secret_data_should_be_base64() {
        let ok = json!({"data": {"a": "YQ=="}});
        assert_eq!(secret_base64_error(ok.as_object().unwrap()), None);
        let bad = json!({"data": {"a": "abc!"}});
        assert_eq!(
            secret_base64_error(bad.as_object().unwrap()).as_deref(),
            Some("illegal base64 data at input byte 3")
        );
    }
}
