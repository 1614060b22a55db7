//! Which fields a field selector may name on each kind, and the value each has on an object, as
//! kube-apiserver decides them: a kind's field label conversion (`AddFieldLabelConversionFunc`
//! of its API version, or `DefaultMetaV1FieldSelectorConversion` when it registers none, or the
//! custom resource converter with the CRD's `selectableFields`) accepts or refuses a label with
//! its own message, and the kind's `GetAttrs` gives every selectable field a value, Go's zero
//! value when the object leaves it out (an unset `spec.unschedulable` is `false`).
//!
//! The labels beyond `metadata.*` are [`ResourceDef::extra_fields`]; this module adds what the
//! conversion functions differ in: whether `metadata.namespace` is accepted, the message for a
//! label they refuse, the zero values and the fields that `GetAttrs` takes from elsewhere.

use serde_json::Value;

use super::ResourceDef;
use crate::meta::field_string;

/// How a kind's field label conversion refuses a label it does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// `DefaultMetaV1FieldSelectorConversion`: `"x" is not a known field selector: only
    /// "metadata.name", "metadata.namespace"`.
    Default,
    /// `field label not supported: x` (core/v1, events.k8s.io, certificates, custom resources).
    NotSupported,
    /// batch/v1 Jobs: `field label "x" not supported for batchv1.Job`.
    Job,
    /// resource.k8s.io/v1 ResourceSlices.
    ResourceSlice,
}

/// The field label conversion and selectable fields of one served resource.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FieldLabels {
    /// The labels besides `metadata.name` (and `metadata.namespace` when `namespace`).
    fields: Vec<String>,
    /// Whether `metadata.namespace` is a label (not for Nodes, Namespaces, CSRs, ResourceSlices
    /// and cluster-scoped custom resources, whose conversions leave it out).
    namespace: bool,
    refusal: Refusal,
    /// The resource is a custom resource: its selectable fields are JSON paths whose value is
    /// absent (`""`) when the object lacks them.
    custom: bool,
}

impl FieldLabels {
    /// The labels of `def`'s resource.
    pub(crate) fn of(def: &ResourceDef) -> Self {
        if def.custom {
            let fields = def
                .crd_version
                .as_deref()
                .and_then(|v| v.get("selectableFields"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                .map(|p| p.trim_start_matches('.').to_owned())
                .collect();
            return Self {
                fields,
                namespace: def.namespaced,
                refusal: Refusal::NotSupported,
                custom: true,
            };
        }
        let (namespace, refusal) = match (def.group.as_str(), def.kind.as_str()) {
            ("", "Node" | "Namespace") => (false, Refusal::NotSupported),
            ("", "Pod" | "ReplicationController" | "Event" | "Secret" | "Service")
            | ("events.k8s.io", "Event")
            | ("apps", "ReplicaSet") => (true, Refusal::NotSupported),
            ("certificates.k8s.io", "CertificateSigningRequest") => (false, Refusal::NotSupported),
            ("batch", "Job") => (true, Refusal::Job),
            ("resource.k8s.io", "ResourceSlice") => (false, Refusal::ResourceSlice),
            _ => (true, Refusal::Default),
        };
        Self {
            fields: def.extra_fields.iter().map(|f| (*f).to_owned()).collect(),
            namespace,
            refusal,
            custom: false,
        }
    }

    /// The labels of a kind without a conversion of its own: `metadata.name` and
    /// `metadata.namespace`.
    pub(crate) fn metadata() -> Self {
        Self {
            fields: Vec::new(),
            namespace: true,
            refusal: Refusal::Default,
            custom: false,
        }
    }

    /// The labels of a built-in kind whose conversion accepts `fields` besides the metadata ones
    /// and refuses others with `field label not supported`.
    pub(crate) fn with_fields(fields: &[&str]) -> Self {
        Self {
            fields: fields.iter().map(|f| (*f).to_owned()).collect(),
            refusal: Refusal::NotSupported,
            ..Self::metadata()
        }
    }

    /// The label as the field selector keeps it, or the conversion's error message.
    pub(crate) fn convert(&self, label: &str) -> Result<String, String> {
        let known = label == "metadata.name"
            || (self.namespace && label == "metadata.namespace")
            || self.fields.iter().any(|f| f == label);
        if known {
            return Ok(label.to_owned());
        }
        Err(match self.refusal {
            Refusal::Default => format!(
                "{label:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            ),
            Refusal::NotSupported => format!("field label not supported: {label}"),
            Refusal::Job => format!("field label {label:?} not supported for batchv1.Job"),
            Refusal::ResourceSlice => format!(
                "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: {label}"
            ),
        })
    }

    /// The value of the selectable field `label` of a stored object, as `GetAttrs` sets it.
    pub(crate) fn value(&self, obj: &Value, label: &str) -> String {
        let path = match label {
            // A core Event's `source` is its source's component.
            "source" if !self.custom => "source.component",
            other => other,
        };
        let value = field_string(obj, path);
        if !value.is_empty() || self.custom {
            return value;
        }
        zero_value(label).to_owned()
    }
}

/// Go's zero value of a selectable built-in field that is not a string, as `GetAttrs` formats
/// it (`strconv.FormatBool`, `strconv.Itoa`).
fn zero_value(label: &str) -> &'static str {
    match label {
        "spec.unschedulable" | "spec.hostNetwork" => "false",
        "status.replicas" | "status.successful" => "0",
        _ => "",
    }
}
