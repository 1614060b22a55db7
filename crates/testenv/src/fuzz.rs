//! Fuzz entry points for the request parsers: label and field selectors, JSON / merge /
//! strategic merge patches, server-side apply bodies (JSON and YAML) and the protobuf decoder.
//!
//! Each entry point takes the raw bytes of a request part, runs the parser as the server does
//! and checks the parser's contract: a result or a typed error with a message (the Status the
//! server answers), never a panic, plus the laws the result obeys (a merge patch is idempotent,
//! a parsed apply body reads back the same from its JSON form, ...). A broken contract panics,
//! which is what a fuzzer reports.
//!
//! They are driven two ways:
//!
//! - by libFuzzer, through the cargo-fuzz targets of `crates/testenv/fuzz/` (one per entry
//!   point, named after it): `cargo xtask fuzz [--seconds N] [TARGET...]`;
//! - by proptest, from `cargo test` (the tests below, 256 cases each; more with, for example,
//!   `PROPTEST_CASES=200000 cargo test -p kcr-testenv --lib fuzz -- --nocapture`), with inputs
//!   built from each grammar's own pieces so that the deep paths are reached. Those tests also
//!   cover the request body decoder, continue tokens and the Go-worded JSON and integer parsers.
//!
//! Not a stable API: hidden from the documentation, for the fuzz targets only.

use serde_json::{Value, json};

use crate::managed_fields::{self, Schema};
use crate::patch::{self, JsonPatchError, SmpError};
use crate::protobuf;
use crate::registry::field_labels::FieldLabels;
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::ApiError;

/// A Status error as the server answers a malformed request part: `400 BadRequest` with a message.
fn assert_bad_request(e: &ApiError, input: &str) {
    assert_eq!(
        (e.code, e.reason),
        (400, "BadRequest"),
        "{input:?}: {}",
        e.message
    );
    assert!(
        !e.message.is_empty(),
        "{input:?}: an error without a message"
    );
}

/// A `labelSelector` query parameter (decoded from the URL as text).
pub fn label_selector(data: &[u8]) {
    let input = String::from_utf8_lossy(data);
    match LabelSelector::parse(&input) {
        Ok(s) => {
            let _ = s.matches(&deployment());
        }
        Err(e) => assert_bad_request(&e, &input),
    }
}

/// A `fieldSelector` query parameter of a kind with two selectable fields of its own.
pub fn field_selector(data: &[u8]) {
    let input = String::from_utf8_lossy(data);
    match FieldSelector::parse(
        &input,
        FieldLabels::with_fields(&["spec.nodeName", "status.phase"]),
    ) {
        Ok(s) => {
            let _ = s.matches(&deployment());
        }
        Err(e) => assert_bad_request(&e, &input),
    }
}

/// A body that is not JSON: the Go-worded error the server answers with.
fn assert_json_error(data: &[u8], e: &serde_json::Error) {
    assert!(!patch::go_json_error(data, e).is_empty(), "{data:?}");
}

/// An `application/json-patch+json` body applied to a Deployment.
pub fn json_patch(data: &[u8]) {
    let ops: Value = match serde_json::from_slice(data) {
        Ok(v) => v,
        Err(e) => return assert_json_error(data, &e),
    };
    let mut target = deployment();
    match patch::json_patch(&mut target, &ops) {
        Ok(()) => assert!(ops.is_array(), "{ops}: only a list of operations applies"),
        Err(JsonPatchError::Malformed(m) | JsonPatchError::Failed(m)) => {
            assert!(!m.is_empty(), "{ops}: an error without a message");
        }
    }
}

/// An `application/merge-patch+json` body applied to a Deployment (RFC 7386: applying the same
/// patch twice changes nothing more).
pub fn merge_patch(data: &[u8]) {
    let p: Value = match serde_json::from_slice(data) {
        Ok(v) => v,
        Err(e) => return assert_json_error(data, &e),
    };
    if !p.is_object() {
        // Refused before any merge: "a merge patch must be a JSON object".
        return;
    }
    let mut once = deployment();
    patch::merge_patch(&mut once, &p);
    assert!(once.is_object(), "{p}");
    let mut twice = once.clone();
    patch::merge_patch(&mut twice, &p);
    assert_eq!(once, twice, "{p}: a merge patch is idempotent");
}

/// An `application/strategic-merge-patch+json` body applied to a Deployment with the built-in
/// Deployment schema.
pub fn strategic_merge_patch(data: &[u8]) {
    let p: Value = match serde_json::from_slice(data) {
        Ok(v) => v,
        Err(e) => return assert_json_error(data, &e),
    };
    let schema = Schema::builtin("apps", "v1", "Deployment");
    match patch::strategic_merge_patch(&schema, &deployment(), &p) {
        Ok(v) => assert!(v.is_object(), "{p} gave {v}"),
        Err(e @ (SmpError::UnknownDirective(..) | SmpError::Invalid(_))) => {
            assert!(!e.to_string().is_empty(), "{p}: an error without a message");
        }
    }
}

/// An `application/apply-patch+yaml` body (YAML, or JSON, which is YAML too): go-yaml's error
/// wording, and a parsed body reads back the same from its JSON form.
pub fn apply_body(data: &[u8]) {
    // The strict decoding's repeated keys: never a panic.
    let _ = crate::wire::go_yaml::duplicate_keys(data);
    match managed_fields::parse_apply_body(data) {
        Ok(v) => {
            let json = serde_json::to_vec(&v).expect("a JSON value serializes");
            let again = managed_fields::parse_apply_body(&json);
            assert_eq!(again.ok().as_ref(), Some(&v), "{data:?}");
        }
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.starts_with("error decoding YAML: error converting YAML to JSON: yaml: "),
                "{data:?}: {message}"
            );
        }
    }
}

/// An `application/vnd.kubernetes.protobuf` body, as sent and with the `k8s\0` prefix added
/// (so that the decoder's fields are reached without the fuzzer finding the prefix first).
pub fn protobuf_body(data: &[u8]) {
    let mut prefixed = b"k8s\x00".to_vec();
    prefixed.extend_from_slice(data);
    for body in [data, prefixed.as_slice()] {
        match protobuf::decode(body) {
            Ok(v) => {
                let kind = v.get("kind").and_then(Value::as_str);
                let api_version = v.get("apiVersion").and_then(Value::as_str);
                assert!(
                    kind.is_some_and(|k| !k.is_empty())
                        && api_version.is_some_and(|a| !a.is_empty()),
                    "{body:?} decoded to {v}"
                );
            }
            Err(e) => assert!(!e.0.is_empty(), "{body:?}: an error without a message"),
        }
    }
}

/// A Deployment as a real server stores it.
fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}, "finalizers": ["a", "b"]},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "app", "image": "nginx", "ports": [{"containerPort": 80, "protocol": "TCP"}], "env": [{"name": "A", "value": "1"}]},
                        {"name": "side", "image": "busybox"}
                    ],
                    "volumes": [{"name": "v", "emptyDir": {}}]
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::*;
    use crate::wire::{continue_token, decode_error, go_json, go_strconv};

    /// Strings made of a grammar's pieces and a few arbitrary characters.
    fn pieces(alphabet: &'static [&'static str]) -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                4 => prop::sample::select(alphabet).prop_map(str::to_owned),
                1 => any::<char>().prop_map(|c| c.to_string()),
            ],
            0..24,
        )
        .prop_map(|parts| parts.concat())
    }

    const SELECTOR_PIECES: &[&str] = &[
        "a",
        "b",
        "app",
        "x.io/name",
        "-",
        "_",
        ".",
        "/",
        "=",
        "==",
        "!=",
        "!",
        "in",
        "notin",
        " in ",
        " notin ",
        "(",
        ")",
        ",",
        " ",
        "",
        "metadata.name",
        "metadata.namespace",
        "status.phase",
        "spec.nodeName",
        "\\",
        "\\,",
        "\\=",
        "<",
        ">",
        "gt",
        "lt",
    ];

    /// Arbitrary JSON values, a few levels deep, with keys that patches give meaning to.
    fn json_value() -> impl Strategy<Value = Value> {
        let keys = prop::sample::select(
            &[
                "metadata",
                "name",
                "labels",
                "spec",
                "replicas",
                "template",
                "containers",
                "image",
                "env",
                "ports",
                "containerPort",
                "protocol",
                "volumes",
                "selector",
                "matchLabels",
                "$patch",
                "$retainKeys",
                "$setElementOrder/containers",
                "$deleteFromPrimitiveList/finalizers",
                "finalizers",
                "op",
                "path",
                "value",
                "from",
                "data",
                "a",
                "",
            ][..],
        );
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<f64>().prop_map(|f| json!(f)),
            prop::sample::select(
                &[
                    "add",
                    "remove",
                    "replace",
                    "move",
                    "copy",
                    "test",
                    "/spec/replicas",
                    "/metadata/labels/a",
                    "/spec/template/spec/containers/0",
                    "/spec/template/spec/containers/-",
                    "/a/~1b/~0c",
                    "delete",
                    "merge",
                    "replace",
                    "",
                    "/",
                    "/0",
                    "~",
                    "nginx",
                ][..]
            )
            .prop_map(|s| Value::String(s.to_owned())),
            ".*".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((keys.clone(), inner), 0..6).prop_map(|kv| Value::Object(
                    kv.into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect::<Map<_, _>>()
                )),
            ]
        })
    }

    fn to_json(v: &Value) -> Vec<u8> {
        serde_json::to_vec(v).unwrap_or_default()
    }

    proptest! {
        #[test]
        fn label_selectors(input in prop_oneof![pieces(SELECTOR_PIECES), ".*"]) {
            label_selector(input.as_bytes());
        }

        #[test]
        fn field_selectors(input in prop_oneof![pieces(SELECTOR_PIECES), ".*"]) {
            field_selector(input.as_bytes());
        }

        #[test]
        fn json_patches(patch in json_value()) {
            json_patch(&to_json(&patch));
        }

        #[test]
        fn json_patch_operations(ops in prop::collection::vec(json_value(), 0..6)) {
            json_patch(&to_json(&Value::Array(ops)));
        }

        #[test]
        fn merge_patches(patch in json_value()) {
            merge_patch(&to_json(&patch));
        }

        #[test]
        fn strategic_merge_patches(patch in json_value()) {
            strategic_merge_patch(&to_json(&patch));
        }

        #[test]
        fn apply_bodies(body in prop_oneof![
            any::<Vec<u8>>(),
            json_value().prop_map(|v| to_json(&v)),
            json_value().prop_map(|v| serde_yaml::to_string(&v).unwrap_or_default().into_bytes()),
        ]) {
            apply_body(&body);
        }

        #[test]
        fn protobuf_bodies(body in any::<Vec<u8>>()) {
            protobuf_body(&body);
        }

        #[test]
        fn mutated_protobuf_bodies(flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4), cut in any::<prop::sample::Index>()) {
            let mut body = crate::protobuf::tests::configmap_body(&[]);
            for (at, byte) in flips {
                let i = at.index(body.len());
                body[i] = byte;
            }
            protobuf_body(&body);
            body.truncate(cut.index(body.len() + 1));
            protobuf_body(&body);
        }

        #[test]
        fn request_bodies(body in prop_oneof![
            any::<Vec<u8>>(),
            ".*".prop_map(String::into_bytes),
            json_value().prop_map(|v| serde_json::to_vec(&v).unwrap_or_default()),
        ]) {
            if let Err(e) = decode_error::parse_object(&body, "ConfigMap") {
                prop_assert_eq!(e.code, 400);
            }
        }

        #[test]
        fn go_json_accepts_what_serde_accepts(body in prop_oneof![
            any::<Vec<u8>>(),
            json_value().prop_map(|v| serde_json::to_vec(&v).unwrap_or_default()),
            pieces(&["{", "}", "[", "]", "\"", ":", ",", "1", "-", ".", "e", "true", "nul", "\\u00", " "])
                .prop_map(String::into_bytes),
        ]) {
            let go = go_json::syntax_error(&body);
            if serde_json::from_slice::<Value>(&body).is_ok() {
                prop_assert_eq!(go, None);
            }
        }

        #[test]
        fn continue_tokens(token in prop_oneof![".*", "[A-Za-z0-9_-]{0,64}"], rv in any::<u64>(), key in ".*") {
            let _ = continue_token::decode(&token);
            // A store key is made of object names: segments `path.Clean` keeps (a start key it
            // would change is refused, as kube-apiserver refuses it).
            let clean = key
                .split('/')
                .all(|segment| !segment.is_empty() && segment != "." && segment != "..");
            if rv > 0 && clean && !key.contains('\u{0}') {
                prop_assert_eq!(continue_token::decode(&continue_token::encode(rv, &key)), Ok((rv, key)));
            }
        }

        #[test]
        fn go_integers(s in prop_oneof![".*", "[+-]?[0-9]{0,22}"]) {
            match go_strconv::parse_int(&s) {
                Ok(n) => prop_assert_eq!(Some(n), s.parse::<i64>().ok()),
                Err(e) => prop_assert!(e.starts_with("strconv.ParseInt: parsing ")),
            }
            let _ = go_strconv::parse_uint(&s);
        }
    }
}
