//! The 400 answers to request bodies that are not an object of the resource's kind, worded as
//! kube-apiserver's handlers word them (`transformDecodeError` in
//! `apiserver/pkg/endpoints/handlers/rest.go`).

use std::sync::LazyLock;

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

/// A body the decoder for the request's content type could not read (`why`), as
/// `transformDecodeError` reports it.
pub(crate) fn undecodable(kind: &str, why: &str, body: &[u8]) -> ApiError {
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {kind}): {why} ({})",
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
    let body_fixed = replace_lone_surrogates(body);
    let value: Value = serde_json::from_slice(&body_fixed)
        .map_err(|e| unrecognized(kind, &e.to_string(), body))?;
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

/// The versions of each API group that kube-apiserver's scheme (`legacyscheme`) registers,
/// served or not: a body of one of them decodes (and is then refused for its version), a body
/// of another has "no kind registered".
const SCHEME_VERSIONS: &[(&str, &[&str])] = &[
    ("", &["v1"]),
    (
        "admissionregistration.k8s.io",
        &["v1", "v1beta1", "v1alpha1"],
    ),
    ("apps", &["v1", "v1beta1", "v1beta2"]),
    ("authentication.k8s.io", &["v1", "v1beta1", "v1alpha1"]),
    ("authorization.k8s.io", &["v1", "v1beta1"]),
    ("autoscaling", &["v1", "v2", "v2beta1", "v2beta2"]),
    ("batch", &["v1", "v1beta1"]),
    ("certificates.k8s.io", &["v1", "v1beta1", "v1alpha1"]),
    ("coordination.k8s.io", &["v1", "v1beta1", "v1alpha2"]),
    ("discovery.k8s.io", &["v1", "v1beta1"]),
    ("events.k8s.io", &["v1", "v1beta1"]),
    (
        "flowcontrol.apiserver.k8s.io",
        &["v1", "v1beta1", "v1beta2", "v1beta3"],
    ),
    ("networking.k8s.io", &["v1", "v1beta1"]),
    ("node.k8s.io", &["v1", "v1beta1", "v1alpha1"]),
    ("policy", &["v1", "v1beta1"]),
    ("rbac.authorization.k8s.io", &["v1", "v1beta1", "v1alpha1"]),
    ("resource.k8s.io", &["v1", "v1beta1", "v1beta2", "v1alpha3"]),
    ("scheduling.k8s.io", &["v1", "v1beta1", "v1alpha1"]),
    ("storage.k8s.io", &["v1", "v1beta1", "v1alpha1"]),
];

/// The kinds the deprecated `extensions/v1beta1` still registers.
const EXTENSIONS_KINDS: &[&str] = &[
    "Deployment",
    "DaemonSet",
    "ReplicaSet",
    "Ingress",
    "NetworkPolicy",
    "Scale",
];

/// The built-in kinds of each group (and their list kinds).
static GROUP_KINDS: LazyLock<Vec<(String, String)>> = LazyLock::new(|| {
    let mut kinds: Vec<(String, String)> = crate::registry::builtins()
        .into_iter()
        .flat_map(|d| [(d.group.clone(), d.kind), (d.group, d.list_kind)])
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
});

/// `body` with every `\\u` escape of a UTF-16 surrogate that is not part of a pair replaced by
/// `\\ufffd`, as Go's `encoding/json` decodes such an escape (serde_json refuses it).
fn replace_lone_surrogates(body: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    fn escape_at(b: &[u8], i: usize) -> Option<u16> {
        if b.get(i) != Some(&b'\\') || b.get(i + 1) != Some(&b'u') {
            return None;
        }
        let hex = std::str::from_utf8(b.get(i + 2..i + 6)?).ok()?;
        u16::from_str_radix(hex, 16).ok()
    }
    let has_surrogate = body.windows(3).any(|w| {
        w[0] == b'u'
            && matches!(w[1], b'd' | b'D')
            && matches!(w[2], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
    });
    if !has_surrogate {
        return std::borrow::Cow::Borrowed(body);
    }
    let mut out = Vec::with_capacity(body.len());
    let (mut i, mut in_string) = (0, false);
    while i < body.len() {
        let c = body[i];
        if !in_string {
            in_string = c == b'"';
            out.push(c);
            i += 1;
            continue;
        }
        match c {
            b'"' => {
                in_string = false;
                out.push(c);
                i += 1;
            }
            b'\\' => match escape_at(body, i) {
                Some(0xD800..=0xDBFF)
                    if escape_at(body, i + 6)
                        .is_some_and(|low| (0xDC00..=0xDFFF).contains(&low)) =>
                {
                    out.extend_from_slice(&body[i..i + 12]);
                    i += 12;
                }
                Some(0xD800..=0xDFFF) => {
                    out.extend_from_slice(b"\\ufffd");
                    i += 6;
                }
                _ => {
                    out.extend_from_slice(&body[i..(i + 2).min(body.len())]);
                    i += 2;
                }
            },
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether kube-apiserver's scheme decodes `kind` in `group`/`version` (approximately: the
/// group's kinds in every version the scheme registers for it; `List`, `Status` and the
/// options kinds in core/v1; `extensions/v1beta1` with its few kinds).
fn registered(group: &str, version: &str, kind: &str) -> bool {
    if group == "extensions" {
        return version == "v1beta1"
            && EXTENSIONS_KINDS
                .iter()
                .any(|k| *k == kind || kind.strip_suffix("List") == Some(*k));
    }
    let Some((_, versions)) = SCHEME_VERSIONS.iter().find(|(g, _)| *g == group) else {
        return false;
    };
    if !versions.contains(&version) {
        return false;
    }
    if matches!(
        kind,
        "Status" | "WatchEvent" | "DeleteOptions" | "ListOptions" | "GetOptions"
    ) || (group.is_empty() && kind == "List")
    {
        return true;
    }
    GROUP_KINDS.iter().any(|(g, k)| g == group && k == kind)
}

/// Whether kube-apiserver's scheme knows `group` (kcr-testenv checks bodies of other groups,
/// apiextensions' and aggregation's, only by their version and kind).
pub(crate) fn in_scheme(group: &str) -> bool {
    group == "extensions" || SCHEME_VERSIONS.iter().any(|(g, _)| *g == group)
}

/// Checks the `apiVersion` and `kind` of a built-in object's body against the resource it is
/// written to, as kube-apiserver's decoder and then its handler do: an empty or missing one is
/// the resource's; a kind the body's version does not register is "no kind registered", another
/// kind has no conversion to the resource's, another version of the kind is refused as such.
pub(crate) fn check_builtin_type(
    body_api_version: &str,
    body_kind: &str,
    group: &str,
    version: &str,
    kind: &str,
) -> ApiResult<()> {
    let (body_group, body_version) = match body_api_version {
        "" => (group, version),
        v => v.split_once('/').unwrap_or(("", v)),
    };
    let body_kind = if body_kind.is_empty() {
        kind
    } else {
        body_kind
    };
    if !registered(body_group, body_version, body_kind) {
        let gv = if body_group.is_empty() {
            body_version.to_owned()
        } else {
            format!("{body_group}/{body_version}")
        };
        return Err(ApiError::bad_request(format!(
            "{body_kind} in version {body_version:?} cannot be handled as a {kind}: no kind {body_kind:?} is registered for version {gv:?} in scheme \"pkg/api/legacyscheme/scheme.go:30\""
        )));
    }
    if body_kind != kind {
        return Err(wrong_kind(body_version, body_kind, group, kind));
    }
    if (body_group, body_version) != (group, version) {
        let want = if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        };
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({body_api_version}) does not match the expected API version ({want})"
        )));
    }
    Ok(())
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
    fn a_body_of_another_version_or_kind_should_be_refused_as_the_decoder_does() {
        let check = |v: &str, k: &str| {
            check_builtin_type(v, k, "apps", "v1", "Deployment").map_err(|e| e.message)
        };
        assert_eq!(check("", ""), Ok(()));
        assert_eq!(check("apps/v1", ""), Ok(()));
        assert_eq!(
            check("extensions/v1beta1", "Deployment").unwrap_err(),
            "the API version in the data (extensions/v1beta1) does not match the expected API version (apps/v1)"
        );
        assert_eq!(
            check("apps/v2", "Deployment").unwrap_err(),
            "Deployment in version \"v2\" cannot be handled as a Deployment: no kind \"Deployment\" is registered for version \"apps/v2\" in scheme \"pkg/api/legacyscheme/scheme.go:30\""
        );
        assert_eq!(
            check("apps/v1", "StatefulSetList").unwrap_err(),
            "StatefulSetList in version \"v1\" cannot be handled as a Deployment: converting (v1.StatefulSetList) to (apps.Deployment): unknown conversion"
        );
        assert!(
            check("v1", "Deployment")
                .unwrap_err()
                .contains("no kind \"Deployment\" is registered for version \"v1\" in scheme")
        );
        assert_eq!(
            check_builtin_type("v1", "Status", "", "v1", "ConfigMap")
                .unwrap_err()
                .message,
            "Status in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Status) to (core.ConfigMap): unknown conversion"
        );
    }

    #[test]
    fn a_lone_surrogate_should_decode_as_the_replacement_character() {
        let map = parse_object(
            br#"{"data":{"a":"\ud800","b":"\ud83d\ude00","c":"\\ud800"}}"#,
            "ConfigMap",
        )
        .unwrap();
        assert_eq!(map["data"]["a"], "\u{fffd}");
        assert_eq!(map["data"]["b"], "\u{1f600}");
        assert_eq!(map["data"]["c"], "\\ud800");
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
