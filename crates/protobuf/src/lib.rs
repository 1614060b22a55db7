//! Kubernetes' protobuf wire format (`application/vnd.kubernetes.protobuf`) for built-in
//! kinds, as client-go and kube-apiserver speak it.
//!
//! * [`schema_for`]: field tables (field numbers, JSON names and kinds) for the kinds of
//!   k8s.io/api's stable groups (`core/v1`, `apps/v1`, `batch/v1`, `coordination.k8s.io/v1`,
//!   `discovery.k8s.io/v1`, `networking.k8s.io/v1`, `policy/v1`, `rbac.authorization.k8s.io/v1`,
//!   `scheduling.k8s.io/v1`, `storage.k8s.io/v1`, `events.k8s.io/v1`, `autoscaling/v1` and
//!   `v2`, `certificates.k8s.io/v1`, `node.k8s.io/v1`, `flowcontrol.apiserver.k8s.io/v1`,
//!   `admissionregistration.k8s.io/v1`, `resource.k8s.io/v1`), `apiregistration.k8s.io/v1`
//!   `APIService`, `apiextensions.k8s.io/v1` `CustomResourceDefinition` and `meta/v1`
//!   `Status`, numbered as their `generated.proto` numbers them. `tools/gen_tables.py` writes
//!   them from the Go types' `protobuf` and `json` struct tags of Kubernetes v1.36.2. The
//!   decoder is checked against a real kube-apiserver's bytes (`tests/oracle.rs`: every
//!   listable built-in resource, recorded in JSON and protobuf); [`is_proven`] and
//!   [`proven_kinds`] name the kinds that check covers.
//! * [`decode_object`], [`decode_list`], [`decode_message`]: a serde `Deserializer` that reads
//!   protobuf straight into any type whose `Deserialize` reads the JSON form (k8s-openapi's
//!   types), with no intermediate JSON value; [`DecodeOptions::skip_managed_fields`] skips
//!   `metadata.managedFields` without allocating them.
//! * The envelopes: the `k8s\0` prefix and `runtime.Unknown` ([`unwrap`], [`wrap`]), List
//!   messages, watch events ([`decode_watch_event`], [`encode_watch_frame`]) and the
//!   length-delimited frames of a watch stream ([`FrameReader`]).
//! * [`encode_object`], [`encode_list`]: the JSON form of an object or list encoded as the
//!   serializer writes it; [`object_to_json`]: a body decoded strictly into its JSON form.
//!
//! Malformed input (a truncated varint, a wrong wire type, an unknown kind) is a typed
//! [`Error`], never a panic.
//!
//! The wire format is read and written by hand rather than with `prost`: the messages are
//! decoded through tables into serde visitors (so the target is any k8s-openapi type, not
//! generated structs), and the part of the wire format this takes (varints and
//! length-delimited fields) is small.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kcr_protobuf::{DecodeOptions, decode_object, encode_object};
//!
//! let json = serde_json::json!({
//!     "apiVersion": "v1",
//!     "kind": "ConfigMap",
//!     "metadata": {"name": "settings", "namespace": "default"},
//!     "data": {"mode": "fast"},
//! });
//! let body = encode_object(&json)?;
//! assert!(body.starts_with(b"k8s\0"));
//! let cm: ConfigMap = decode_object(&body, DecodeOptions::default())?;
//! assert_eq!(cm.metadata.name.as_deref(), Some("settings"));
//! assert_eq!(cm.data.unwrap()["mode"], "fast");
//! # Ok::<(), kcr_protobuf::Error>(())
//! ```

mod de;
mod envelope;
mod error;
mod json;
mod proven;
mod schema;
mod tables;
mod time;
mod wire;

pub use de::DecodeOptions;
pub use envelope::{
    FrameReader, ItemError, List, ListMessages, ListMeta, MAGIC, MEDIA_TYPE, Unknown,
    WATCH_MEDIA_TYPE, WatchEvent, decode_list, decode_message, decode_object, decode_watch_event,
    describe, encode_list, encode_list_of_messages, encode_message, encode_object,
    encode_watch_frame, list_messages, message_to_json, object_to_json, unwrap, wrap,
};
pub use error::{Error, Result};
pub use proven::{is_proven, proven_kinds};
pub use schema::{Schema, item_schema_for, kinds, schema_for};
