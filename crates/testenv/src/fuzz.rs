//! Fuzz targets for the request parsers, run by `cargo test` for a bounded number of cases each
//! (proptest's default, 256). Run them longer with, for example:
//!
//! ```text
//! PROPTEST_CASES=200000 cargo test -p kcr-testenv --lib fuzz -- --nocapture
//! ```
//!
//! Each target feeds arbitrary input (random bytes and strings, and inputs built from the
//! grammar's own pieces so that the deep paths are reached) to one parser and requires a typed
//! error or a result, never a panic: label and field selectors, JSON / merge / strategic merge
//! patches, apply bodies (JSON and YAML), the protobuf decoder, the request body decoder,
//! continue tokens and the Go-worded JSON and integer parsers.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::managed_fields::{self, Schema};
use crate::patch;
use crate::protobuf;
use crate::selector::{FieldSelector, LabelSelector};
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

proptest! {
    #[test]
    fn label_selectors(input in prop_oneof![pieces(SELECTOR_PIECES), ".*"]) {
        if let Ok(s) = LabelSelector::parse(&input) {
            let _ = s.matches(&deployment());
        }
    }

    #[test]
    fn field_selectors(input in prop_oneof![pieces(SELECTOR_PIECES), ".*"]) {
        if let Ok(s) = FieldSelector::parse(&input, &["spec.nodeName", "status.phase"]) {
            let _ = s.matches(&deployment());
        }
    }

    #[test]
    fn json_patches(patch in json_value()) {
        let mut target = deployment();
        let _ = patch::json_patch(&mut target, &patch);
    }

    #[test]
    fn json_patch_operations(ops in prop::collection::vec(json_value(), 0..6)) {
        let mut target = deployment();
        let _ = patch::json_patch(&mut target, &Value::Array(ops));
    }

    #[test]
    fn merge_patches(patch in json_value()) {
        let mut target = deployment();
        patch::merge_patch(&mut target, &patch);
    }

    #[test]
    fn strategic_merge_patches(patch in json_value()) {
        let schema = Schema::builtin("apps", "v1", "Deployment");
        let _ = patch::strategic_merge_patch(&schema, &deployment(), &patch);
    }

    #[test]
    fn apply_bodies(body in prop_oneof![
        any::<Vec<u8>>(),
        json_value().prop_map(|v| serde_json::to_vec(&v).unwrap_or_default()),
        json_value().prop_map(|v| serde_yaml::to_string(&v).unwrap_or_default().into_bytes()),
    ]) {
        let _ = managed_fields::parse_apply_body(&body);
    }

    #[test]
    fn protobuf_bodies(body in any::<Vec<u8>>()) {
        let mut prefixed = b"k8s\x00".to_vec();
        prefixed.extend_from_slice(&body);
        let _ = protobuf::decode(&body);
        let _ = protobuf::decode(&prefixed);
    }

    #[test]
    fn mutated_protobuf_bodies(flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4), cut in any::<prop::sample::Index>()) {
        let mut body = crate::protobuf::tests::configmap_body(&[]);
        for (at, byte) in flips {
            let i = at.index(body.len());
            body[i] = byte;
        }
        let _ = protobuf::decode(&body);
        body.truncate(cut.index(body.len() + 1));
        let _ = protobuf::decode(&body);
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
        if rv > 0 && !key.is_empty() && !key.contains('\u{0}') {
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
