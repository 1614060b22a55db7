//! Kubernetes' protobuf wire format (`application/vnd.kubernetes.protobuf`) for built-in
//! kinds, as client-go and kube-apiserver speak it.
//!
//! * [`Schema::for_kind`]: field tables (field numbers, JSON names and kinds) for the kinds of
//!   k8s.io/api's stable groups (`core/v1`, `apps/v1`, `batch/v1`, `coordination.k8s.io/v1`,
//!   `discovery.k8s.io/v1`, `networking.k8s.io/v1`, `policy/v1`, `rbac.authorization.k8s.io/v1`,
//!   `scheduling.k8s.io/v1`, `storage.k8s.io/v1`, `events.k8s.io/v1`, `autoscaling/v1` and
//!   `v2`, `certificates.k8s.io/v1`, `node.k8s.io/v1`, `flowcontrol.apiserver.k8s.io/v1`,
//!   `admissionregistration.k8s.io/v1`, `resource.k8s.io/v1`), `apiregistration.k8s.io/v1`
//!   `APIService`, `apiextensions.k8s.io/v1` `CustomResourceDefinition` and `meta/v1`
//!   `Status`, numbered as their `generated.proto` numbers them. `cargo xtask gen` writes
//!   them from the Go types' `protobuf` and `json` struct tags of Kubernetes v1.36.2. The
//!   decoder is checked against a real kube-apiserver's bytes (`tests/oracle.rs`: every
//!   listable built-in resource, recorded in JSON and protobuf); [`proven::is_proven`] and
//!   [`proven::kinds`] name the kinds that check covers.
//! * [`object::decode`], [`list::decode`], [`message::decode`]: a serde `Deserializer` that reads
//!   protobuf straight into any type whose `Deserialize` reads the JSON form (k8s-openapi's
//!   types), with no intermediate JSON value; [`DecodeOptions::skip_managed_fields`] skips
//!   `metadata.managedFields` without allocating them.
//! * The envelopes: the `k8s\0` prefix and `runtime.Unknown` ([`envelope::unwrap`],
//!   [`envelope::wrap`]), List messages ([`list`]), watch events ([`watch::decode_event`],
//!   [`watch::encode_frame`]) and the length-delimited frames of a watch stream
//!   ([`watch::FrameReader`]).
//! * [`object::encode`], [`list::encode`]: the JSON form of an object or list encoded as the
//!   serializer writes it; [`object::to_json`]: a body decoded strictly into its JSON form.
//!
//! The functions are grouped by what they read or write, one module each: [`envelope`] (the
//! `k8s\0` + `runtime.Unknown` wrapper), [`object`] (a whole object body), [`message`] (an
//! object's message without envelope, of a known [`Schema`]), [`list`] and [`watch`]; [`proven`]
//! names the kinds proven against a real server's bytes.
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
//! use kcr_protobuf::{DecodeOptions, object};
//!
//! let json = serde_json::json!({
//!     "apiVersion": "v1",
//!     "kind": "ConfigMap",
//!     "metadata": {"name": "settings", "namespace": "default"},
//!     "data": {"mode": "fast"},
//! });
//! let body = object::encode(&json)?;
//! assert!(body.starts_with(b"k8s\0"));
//! let cm: ConfigMap = object::decode(&body, DecodeOptions::default())?;
//! assert_eq!(cm.metadata.name.as_deref(), Some("settings"));
//! assert_eq!(cm.data.unwrap()["mode"], "fast");
//! # Ok::<(), kcr_protobuf::Error>(())
//! ```

mod de;
pub mod envelope;
mod error;
mod json;
pub mod list;
pub mod message;
pub mod object;
pub mod proven;
mod schema;
mod tables;
mod time;
pub mod watch;
mod wire;

pub use de::DecodeOptions;
pub use error::{Error, Result};
pub use schema::Schema;

/// The prefix of every body the protobuf serializer writes.
pub const MAGIC: &[u8; 4] = b"k8s\x00";

/// The media type of protobuf bodies.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The media type of protobuf watch streams.
pub const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";
