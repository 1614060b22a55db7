//! Kubernetes' protobuf wire format (`application/vnd.kubernetes.protobuf`, through
//! kcr-protobuf's field tables) for the built-in kinds those tables cover.
//!
//! Request bodies: typed kubectl commands (`kubectl create configmap|secret|namespace|
//! serviceaccount|deployment`) send built-in objects as protobuf and do not fall back to JSON;
//! such a body is decoded into its JSON form. A field the tables do not know is skipped when
//! it holds only zero values and refused (`415`, send JSON) otherwise, so nothing a client set
//! is dropped silently.
//!
//! Responses: a client that asks for protobuf first (as client-go does:
//! `application/vnd.kubernetes.protobuf, application/json`) gets objects and lists of these
//! kinds as kube-apiserver writes them (`k8s\0` + `runtime.Unknown`), and watches as
//! length-delimited `WatchEvent` frames; any other kind, or an object the tables cannot encode
//! whole, is answered in JSON. Errors of every built-in kind come as a protobuf `Status`, as
//! kube-apiserver writes an error in the format it negotiated (`ErrorNegotiated`).
//!
//! Metadata only: a client whose first choice is protobuf as `PartialObjectMetadata` (client-go's
//! metadata client: `application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;
//! g=meta.k8s.io;v=v1, ...`) gets a built-in kind's objects, lists and watch events as
//! `meta.k8s.io/v1` `PartialObjectMetadata(List)` in protobuf; its errors come in JSON, the first
//! range it accepts without a conversion.

use bytes::Bytes;
use http::{HeaderValue, Response, header};
use serde_json::{Map, Value};

use crate::body::Body;
use crate::store::Stored;

/// A malformed or unsupported protobuf body.
#[derive(Debug)]
pub(crate) struct Unsupported(pub(crate) String);

/// Decodes a `application/vnd.kubernetes.protobuf` body (`k8s\0` + `runtime.Unknown`) of a
/// supported kind into its JSON form.
pub(crate) fn decode(body: &[u8]) -> Result<Value, Unsupported> {
    kcr_protobuf::object::to_json(body).map_err(|e| {
        let unsupported = matches!(
            e,
            kcr_protobuf::Error::UnknownKind { .. } | kcr_protobuf::Error::UnknownField { .. }
        );
        let message = match kcr_protobuf::envelope::unwrap(body) {
            Ok(u) if !matches!(e, kcr_protobuf::Error::UnknownKind { .. }) => {
                format!("{} {}: {e}", u.api_version, u.kind)
            }
            _ => e.to_string(),
        };
        Unsupported(if unsupported {
            format!("{message}; send JSON")
        } else {
            message
        })
    })
}

/// Decodes the protobuf body of a create or update of `kind` into its JSON form; a body that is
/// not protobuf is a `400` worded as kube-apiserver's protobuf serializer and handler word it,
/// a kind or field kcr-testenv cannot decode a `415` (see [`decode`]).
pub(crate) fn decode_request(body: &[u8], kind: &str) -> Result<Value, crate::status::ApiError> {
    use crate::wire::decode_error::undecodable;
    match kcr_protobuf::object::to_json(body) {
        Ok(v) => Ok(v),
        Err(kcr_protobuf::Error::MissingPrefix) => Err(undecodable(
            kind,
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
            body,
        )),
        Err(kcr_protobuf::Error::UnknownWireType { wire, .. }) => Err(undecodable(
            kind,
            &format!("proto: illegal wireType {wire}"),
            body,
        )),
        Err(kcr_protobuf::Error::UnknownKind { .. } | kcr_protobuf::Error::UnknownField { .. }) => {
            Err(crate::status::ApiError::new(
                415,
                "UnsupportedMediaType",
                decode(body).err().map(|u| u.0).unwrap_or_default(),
            ))
        }
        Err(e) => Err(undecodable(kind, &e.to_string(), body)),
    }
}

/// Whether an `Accept` header asks for protobuf before anything else kcr-testenv serves.
pub(crate) fn wanted(accept: &str) -> bool {
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or_default().trim();
        if media.eq_ignore_ascii_case(kcr_protobuf::MEDIA_TYPE) {
            // `as=...` asks for another type (a Table, PartialObjectMetadata).
            return !parts.any(|p| p.trim().starts_with("as="));
        }
        if matches!(
            media,
            "application/json" | "application/yaml" | "*/*" | "application/*"
        ) {
            return false;
        }
    }
    false
}

/// An error answer re-encoded for a client that asked for protobuf first: the JSON `Status`
/// body becomes `k8s\0` + `Unknown` (`v1`, `Status`) under the protobuf media type, with the
/// same code and headers (`Retry-After`). Any other answer is returned as it is.
pub(crate) fn error_in_protobuf(mut resp: Response<Body>) -> Response<Body> {
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if resp.status().as_u16() < 400 || !is_json {
        return resp;
    }
    let Body::Full(Some(json)) = resp.body() else {
        return resp;
    };
    let encoded = serde_json::from_slice::<Value>(json)
        .ok()
        .filter(|v| v.get("kind").and_then(Value::as_str) == Some("Status"))
        .and_then(|status| kcr_protobuf::object::encode(&status).ok());
    if let Some(body) = encoded {
        *resp.body_mut() = Body::full(body);
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(kcr_protobuf::MEDIA_TYPE),
        );
    }
    resp
}

/// Whether an `Accept` header's first range is protobuf as `PartialObjectMetadata` or
/// `PartialObjectMetadataList` (`g=meta.k8s.io;v=v1`).
pub(crate) fn wanted_as_metadata(accept: &str) -> bool {
    let Some(range) = accept.split(',').next() else {
        return false;
    };
    let mut parts = range.split(';');
    let media = parts.next().unwrap_or_default().trim();
    if !media.eq_ignore_ascii_case(kcr_protobuf::MEDIA_TYPE) {
        return false;
    }
    let (mut as_, mut g, mut v) = (false, false, false);
    for p in parts {
        match p.trim().split_once('=') {
            Some(("as", "PartialObjectMetadata" | "PartialObjectMetadataList")) => as_ = true,
            Some(("g", "meta.k8s.io")) => g = true,
            Some(("v", "v1")) => v = true,
            _ => {}
        }
    }
    as_ && g && v
}

/// The table of `meta.k8s.io/v1` `PartialObjectMetadata`.
pub(crate) fn metadata_schema() -> Option<&'static kcr_protobuf::Schema> {
    kcr_protobuf::Schema::for_kind("meta.k8s.io/v1", "PartialObjectMetadata")
}

/// Whether `schema` is `PartialObjectMetadata`'s: the object's metadata alone is encoded.
fn is_metadata(schema: &kcr_protobuf::Schema) -> bool {
    schema.kind() == "PartialObjectMetadata" && schema.api_version() == "meta.k8s.io/v1"
}

/// A stored object's message through `schema`: its own (cached) message, or for
/// `PartialObjectMetadata` one of its metadata alone.
fn message(schema: &kcr_protobuf::Schema, stored: &Stored) -> Option<Bytes> {
    if !is_metadata(schema) {
        return stored.protobuf(schema).cloned();
    }
    let mut object = Map::new();
    object.insert(
        "metadata".into(),
        stored.value.get("metadata").cloned().unwrap_or_default(),
    );
    kcr_protobuf::message::encode(&object, schema)
        .ok()
        .map(Bytes::from)
}

/// The table of a built-in kind served as protobuf, if any.
pub(crate) fn schema(api_version: &str, kind: &str) -> Option<&'static kcr_protobuf::Schema> {
    kcr_protobuf::Schema::for_kind(api_version, kind)
}

/// A stored object's protobuf body, `None` when the tables cannot encode it whole.
pub(crate) fn encode_object(schema: &kcr_protobuf::Schema, stored: &Stored) -> Option<Vec<u8>> {
    let message = message(schema, stored)?;
    Some(kcr_protobuf::envelope::wrap(
        schema.api_version(),
        schema.kind(),
        &message,
    ))
}

/// A list's protobuf body, `None` when the tables cannot encode every item whole.
pub(crate) fn encode_list(
    schema: &kcr_protobuf::Schema,
    metadata: &Map<String, Value>,
    items: &[Stored],
) -> Option<Vec<u8>> {
    let messages: Option<Vec<Bytes>> = items.iter().map(|s| message(schema, s)).collect();
    kcr_protobuf::list::encode_messages(schema, metadata, messages?.iter().map(|m| &m[..])).ok()
}

/// One watch frame of an event about a stored object.
pub(crate) fn watch_frame(
    schema: &kcr_protobuf::Schema,
    event_type: &str,
    stored: &Stored,
) -> Result<Vec<u8>, Unsupported> {
    let body = encode_object(schema, stored)
        .ok_or_else(|| Unsupported("a field does not encode as protobuf".into()))?;
    kcr_protobuf::watch::encode_frame(event_type, &body).map_err(|e| Unsupported(e.to_string()))
}

/// One watch frame of an event about an object's JSON form (a bookmark, an error's Status).
pub(crate) fn watch_frame_of(event_type: &str, object: &Value) -> Result<Vec<u8>, Unsupported> {
    let body = kcr_protobuf::object::encode(object).map_err(|e| Unsupported(e.to_string()))?;
    kcr_protobuf::watch::encode_frame(event_type, &body).map_err(|e| Unsupported(e.to_string()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn field(n: u64, data: &[u8], out: &mut Vec<u8>) {
        varint(n << 3 | 2, out);
        varint(data.len() as u64, out);
        out.extend_from_slice(data);
    }

    /// A protobuf ConfigMap body (`k8s\0` + `runtime.Unknown`) named `settings` with data
    /// `k: v` and the given labels.
    pub(crate) fn configmap_body(labels: &[(&str, &str)]) -> Vec<u8> {
        let mut meta = Vec::new();
        field(1, b"settings", &mut meta);
        for (k, v) in labels {
            let mut label = Vec::new();
            field(1, k.as_bytes(), &mut label);
            field(2, v.as_bytes(), &mut label);
            field(11, &label, &mut meta);
        }
        let mut cm = Vec::new();
        field(1, &meta, &mut cm);
        let mut entry = Vec::new();
        field(1, b"k", &mut entry);
        field(2, b"v", &mut entry);
        field(2, &entry, &mut cm);
        let mut tm = Vec::new();
        field(1, b"v1", &mut tm);
        field(2, b"ConfigMap", &mut tm);
        let mut body = b"k8s\x00".to_vec();
        field(1, &tm, &mut body);
        field(2, &cm, &mut body);
        body
    }

    #[test]
    fn a_protobuf_configmap_should_decode_to_json() {
        let body = configmap_body(&[("app", "web")]);
        let v = decode(&body).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"app": "web"}}, "data": {"k": "v"}})
        );
    }

    fn varint_field(n: u64, v: u64, out: &mut Vec<u8>) {
        varint(n << 3, out);
        varint(v, out);
    }

    fn message(fields: &[(u64, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (n, data) in fields {
            field(*n, data, &mut out);
        }
        out
    }

    /// `k8s\0` + `runtime.Unknown` around an encoded object.
    fn body(api_version: &str, kind: &str, object: &[u8]) -> Vec<u8> {
        let tm = message(&[(1, api_version.as_bytes()), (2, kind.as_bytes())]);
        let mut out = b"k8s\x00".to_vec();
        out.extend(message(&[(1, &tm), (2, object)]));
        out
    }

    /// What kubectl v1.32 sends for `kubectl create ...`, and what it prints for the same
    /// command with `--dry-run=client -o json`.
    const KUBECTL: &[(&str, &[u8], &str)] = &[
        (
            "create deployment web --image=nginx",
            include_bytes!("../tests/data/protobuf/deployment-web.pb"),
            include_str!("../tests/data/protobuf/deployment-web.json"),
        ),
        (
            "create deployment web2 --image=nginx:1.27 --port=80 --replicas=3 -n team -- nginx -g 'daemon off;'",
            include_bytes!("../tests/data/protobuf/deployment-web2.pb"),
            include_str!("../tests/data/protobuf/deployment-web2.json"),
        ),
        (
            "create configmap settings --from-literal=mode=fast",
            include_bytes!("../tests/data/protobuf/configmap-settings.pb"),
            include_str!("../tests/data/protobuf/configmap-settings.json"),
        ),
        (
            "create secret generic creds --from-literal=password=hunter2",
            include_bytes!("../tests/data/protobuf/secret-creds.pb"),
            include_str!("../tests/data/protobuf/secret-creds.json"),
        ),
        (
            "create namespace team",
            include_bytes!("../tests/data/protobuf/namespace-team.pb"),
            include_str!("../tests/data/protobuf/namespace-team.json"),
        ),
        (
            "create serviceaccount bot",
            include_bytes!("../tests/data/protobuf/serviceaccount-bot.pb"),
            include_str!("../tests/data/protobuf/serviceaccount-bot.json"),
        ),
    ];

    /// Drops `creationTimestamp: null`: kube-apiserver v1.36 leaves the zero time out where
    /// kubectl v1.32 prints null.
    fn without_null_times(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.retain(|k, v| !(k == "creationTimestamp" && v.is_null()));
                m.values_mut().for_each(without_null_times);
            }
            Value::Array(a) => a.iter_mut().for_each(without_null_times),
            _ => {}
        }
    }

    #[test]
    fn what_kubectl_sends_should_decode_to_the_json_it_prints_for_the_same_object() {
        for (command, pb, printed) in KUBECTL {
            let mut expected: Value = serde_json::from_str(printed).unwrap();
            without_null_times(&mut expected);
            let decoded = decode(pb).unwrap_or_else(|e| panic!("kubectl {command}: {}", e.0));
            assert_eq!(decoded, expected, "kubectl {command}");
        }
    }

    #[test]
    fn a_deployment_should_decode_pointer_zeros_inlined_structs_and_int_or_strings() {
        let labels = message(&[(1, b"app"), (2, b"web")]);
        let selector = message(&[(1, &labels)]);
        let mut port = Vec::new();
        varint_field(1, 1, &mut port);
        field(3, b"25%", &mut port);
        let rolling = message(&[(2, &port)]);
        let strategy = message(&[(1, b"RollingUpdate"), (2, &rolling)]);
        let mut http_port = Vec::new();
        varint_field(2, 8080, &mut http_port);
        let http_get = message(&[(1, b"/healthz"), (2, &http_port)]);
        let handler = message(&[(2, &http_get)]);
        let mut probe = message(&[(1, &handler)]);
        varint_field(4, 10, &mut probe);
        let cpu = message(&[(1, b"500m")]);
        let limit = message(&[(1, b"cpu"), (2, &cpu)]);
        let resources = message(&[(1, &limit)]);
        let key_ref = message(&[(1, &message(&[(1, b"settings")])), (2, b"mode")]);
        let source = message(&[(3, &key_ref)]);
        let env = message(&[(1, b"MODE"), (3, &source)]);
        let mut container = message(&[
            (1, b"app"),
            (2, b"nginx"),
            (7, &env),
            (8, &resources),
            (11, &probe),
        ]);
        varint_field(16, 0, &mut container);
        let volume_source = message(&[(19, &message(&[(1, &message(&[(1, b"settings")]))]))]);
        let volume = message(&[(1, b"config"), (2, &volume_source)]);
        let mut pod_spec = message(&[(1, &volume), (2, &container), (3, b"")]);
        varint_field(21, 0, &mut pod_spec);
        let template = message(&[(1, &message(&[(11, &labels)])), (2, &pod_spec)]);
        let mut spec = Vec::new();
        varint_field(1, 0, &mut spec);
        spec.extend(message(&[(2, &selector), (3, &template), (4, &strategy)]));
        varint_field(5, 0, &mut spec);
        let mut time = Vec::new();
        varint_field(1, 1_700_000_000, &mut time);
        varint_field(2, 5, &mut time);
        let meta = message(&[(1, b"web"), (8, &time)]);
        let deployment = message(&[(1, &meta), (2, &spec)]);
        let decoded = decode(&body("apps/v1", "Deployment", &deployment)).unwrap();
        assert_eq!(
            decoded,
            json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "creationTimestamp": "2023-11-14T22:13:20Z"},
                "spec": {
                    "replicas": 0,
                    "selector": {"matchLabels": {"app": "web"}},
                    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {
                            "automountServiceAccountToken": false,
                            "volumes": [{"name": "config", "configMap": {"name": "settings"}}],
                            "containers": [{
                                "name": "app",
                                "image": "nginx",
                                "env": [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}}],
                                "resources": {"limits": {"cpu": "500m"}},
                                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
                            }],
                        },
                    },
                },
            })
        );
    }

    #[test]
    fn a_micro_time_should_keep_its_microseconds() {
        let mut time = Vec::new();
        varint_field(1, 1_700_000_000, &mut time);
        let mut lease_spec = message(&[(3, &time)]);
        varint_field(2, 0, &mut lease_spec);
        let lease = message(&[(1, &message(&[(1, b"leader")])), (2, &lease_spec)]);
        let decoded = decode(&body("coordination.k8s.io/v1", "Lease", &lease)).unwrap();
        assert_eq!(
            decoded["spec"],
            json!({"acquireTime": "2023-11-14T22:13:20.000000Z", "leaseDurationSeconds": 0})
        );
    }

    #[test]
    fn unknown_fields_should_be_skipped_when_zero_and_refused_otherwise() {
        let mut meta = message(&[(1, b"settings"), (16, b"")]);
        varint_field(15, 0, &mut meta);
        field(18, &[0x08, 0x00], &mut meta);
        assert_eq!(
            decode(&body("v1", "ConfigMap", &message(&[(1, &meta)]))).unwrap()["metadata"],
            json!({"name": "settings"})
        );
        let meta = message(&[(1, b"settings"), (18, &message(&[(1, b"kubectl")]))]);
        let e = decode(&body("v1", "ConfigMap", &message(&[(1, &meta)]))).unwrap_err();
        assert_eq!(
            e.0,
            "v1 ConfigMap: protobuf field 18 is not supported here; send JSON"
        );
    }

    #[test]
    fn unsupported_or_malformed_protobuf_should_be_refused() {
        assert!(decode(b"not protobuf").is_err());
        assert!(decode(b"k8s\x00\x0a\xff").is_err());
        let e = decode(&body("example.com/v1", "Widget", &[])).unwrap_err();
        assert_eq!(
            e.0,
            "protobuf is not supported for example.com/v1 Widget; send JSON"
        );
        // A string field sent as a number.
        let mut meta = Vec::new();
        varint_field(1, 7, &mut meta);
        let e = decode(&body("v1", "ConfigMap", &message(&[(1, &meta)]))).unwrap_err();
        assert_eq!(
            e.0,
            "v1 ConfigMap: protobuf field 1 (name) has wire type 0, not 2"
        );
        // A fixed-size field cut short.
        assert!(decode(&body("v1", "ConfigMap", &[0x09, 1, 2])).is_err());
        // A time past year 9999.
        let mut time = Vec::new();
        varint_field(1, u64::MAX, &mut time);
        let meta = message(&[(8, &time)]);
        assert!(decode(&body("v1", "ConfigMap", &message(&[(1, &meta)]))).is_err());
    }
}
