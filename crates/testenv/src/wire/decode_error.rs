//! The 400 answers to request bodies that are not an object of the resource's kind, worded as
//! kube-apiserver's handlers word them (`transformDecodeError` in
//! `apiserver/pkg/endpoints/handlers/rest.go`).

use serde_json::{Map, Value};

use super::go_json;
use crate::status::{ApiError, ApiResult};

/// How many bytes of the body a message shows.
const SUMMARY: usize = 30;

/// The start of a body for a message: as text when it looks like a JSON object, else in hex.
fn summarize(data: &[u8]) -> String {
    let (shown, more) = if data.len() > SUMMARY {
        (&data[..SUMMARY], " ...")
    } else {
        (data, "")
    };
    match data.first() {
        None => "<empty>".to_owned(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(shown)),
        Some(_) => {
            let hex: String = shown.iter().map(|b| format!("{b:02x}")).collect();
            format!("{hex}{more}")
        }
    }
}

/// A body whose version and kind could not be read.
fn unrecognized(kind: &str, why: &str, body: &[u8]) -> ApiError {
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: {why} ({})",
        summarize(body)
    ))
}

/// The Go type kube-apiserver reads `apiVersion` and `kind` into first.
const TYPE_META: &str = r#"struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }"#;

/// Parses a request body as a JSON object meant for a resource of kind `kind`; the errors are
/// kube-apiserver's.
pub(crate) fn parse_object(body: &[u8], kind: &str) -> ApiResult<Map<String, Value>> {
    if let Some(e) = go_json::syntax_error(body) {
        return Err(unrecognized(kind, &e, body));
    }
    let value: Value =
        serde_json::from_slice(body).map_err(|e| unrecognized(kind, &e.to_string(), body))?;
    let map = match value {
        Value::Object(map) => map,
        Value::Null => {
            return Err(ApiError::bad_request("Object 'Kind' is missing in 'null'"));
        }
        other => {
            let why = format!(
                "json: cannot unmarshal {} into Go value of type {TYPE_META}",
                go_json::value_kind(&other)
            );
            return Err(unrecognized(kind, &why, body));
        }
    };
    for key in ["apiVersion", "kind"] {
        if let Some(v) = map.get(key).filter(|v| !v.is_string() && !v.is_null()) {
            let why = format!(
                "json: cannot unmarshal {} into Go struct field .{key} of type string",
                go_json::value_kind(v)
            );
            return Err(unrecognized(kind, &why, body));
        }
    }
    Ok(map)
}

/// Whether a kind is one of the built-in kinds kcr-testenv serves.
pub(crate) fn is_builtin_kind(kind: &str) -> bool {
    crate::registry::builtins().iter().any(|d| d.kind == kind)
}

/// A body of another built-in kind than the resource's (`Secret` posted to `configmaps`):
/// kube-apiserver finds no conversion between the two types.
pub(crate) fn wrong_kind(body_version: &str, body_kind: &str, group: &str, kind: &str) -> ApiError {
    let version = body_version.rsplit('/').next().unwrap_or(body_version);
    // The internal package of the resource's group (`core` for the legacy group).
    let package = match group {
        "" => "core",
        g => g.split('.').next().unwrap_or(g),
    };
    ApiError::bad_request(format!(
        "{body_kind} in version {version:?} cannot be handled as a {kind}: converting ({version}.{body_kind}) to ({package}.{kind}): unknown conversion"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(body: &[u8]) -> String {
        parse_object(body, "ConfigMap").unwrap_err().message
    }

    #[test]
    fn undecodable_bodies_should_be_reported_as_kube_apiserver_does() {
        assert_eq!(
            message(b"{bad"),
            "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'b' looking for beginning of object key string ({bad)"
        );
        assert_eq!(
            message(b""),
            "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)"
        );
        assert_eq!(
            message(b"[1, 2]"),
            "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" } (5b312c20325d)"
        );
        assert!(message(b"{\"kind\": 1}").contains("Go struct field .kind of type string"));
        assert_eq!(summarize(&[b'x'; 40]), format!("{} ...", "78".repeat(30)));
    }

    #[test]
    fn another_kind_should_have_no_conversion() {
        assert_eq!(
            wrong_kind("v1", "Secret", "", "ConfigMap").message,
            "Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion"
        );
        assert!(
            wrong_kind("v1", "Pod", "apps", "Deployment")
                .message
                .ends_with("(apps.Deployment): unknown conversion")
        );
    }
}
