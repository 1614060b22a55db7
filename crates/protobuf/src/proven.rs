//! The kinds whose decoding is proven against a real kube-apiserver's bytes.
//!
//! `tests/oracle.rs` decodes, for every listable built-in resource of kube-apiserver v1.36.2
//! (`tests/data/wire/`, recorded in JSON and in protobuf at one resourceVersion), the protobuf
//! list with this crate and the JSON with serde, and requires equal objects; it also checks
//! that this list names exactly the kinds it covers. Clients use protobuf by default for these
//! kinds only (kcr-reflector's `WireFormat`): [`is_proven`] asks, [`kinds`] lists them.

use crate::schema::{Schema, schema_for};

/// Every proven kind, as `(apiVersion, kind)`, sorted.
const PROVEN: &[(&str, &str)] = &[
    ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io/v1",
        "MutatingAdmissionPolicyBinding",
    ),
    (
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicy",
    ),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicyBinding",
    ),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingWebhookConfiguration",
    ),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("apiregistration.k8s.io/v1", "APIService"),
    ("apps/v1", "ControllerRevision"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"),
    ("autoscaling/v1", "HorizontalPodAutoscaler"),
    ("autoscaling/v2", "HorizontalPodAutoscaler"),
    ("batch/v1", "CronJob"),
    ("batch/v1", "Job"),
    ("certificates.k8s.io/v1", "CertificateSigningRequest"),
    ("coordination.k8s.io/v1", "Lease"),
    ("discovery.k8s.io/v1", "EndpointSlice"),
    ("events.k8s.io/v1", "Event"),
    ("flowcontrol.apiserver.k8s.io/v1", "FlowSchema"),
    (
        "flowcontrol.apiserver.k8s.io/v1",
        "PriorityLevelConfiguration",
    ),
    ("networking.k8s.io/v1", "IPAddress"),
    ("networking.k8s.io/v1", "Ingress"),
    ("networking.k8s.io/v1", "IngressClass"),
    ("networking.k8s.io/v1", "NetworkPolicy"),
    ("networking.k8s.io/v1", "ServiceCIDR"),
    ("node.k8s.io/v1", "RuntimeClass"),
    ("policy/v1", "PodDisruptionBudget"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("resource.k8s.io/v1", "DeviceClass"),
    ("resource.k8s.io/v1", "ResourceClaim"),
    ("resource.k8s.io/v1", "ResourceClaimTemplate"),
    ("resource.k8s.io/v1", "ResourceSlice"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("storage.k8s.io/v1", "CSIDriver"),
    ("storage.k8s.io/v1", "CSINode"),
    ("storage.k8s.io/v1", "CSIStorageCapacity"),
    ("storage.k8s.io/v1", "StorageClass"),
    ("storage.k8s.io/v1", "VolumeAttachment"),
    ("storage.k8s.io/v1", "VolumeAttributesClass"),
    ("v1", "ComponentStatus"),
    ("v1", "ConfigMap"),
    ("v1", "Endpoints"),
    ("v1", "Event"),
    ("v1", "LimitRange"),
    ("v1", "Namespace"),
    ("v1", "Node"),
    ("v1", "PersistentVolume"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "Pod"),
    ("v1", "PodTemplate"),
    ("v1", "ReplicationController"),
    ("v1", "ResourceQuota"),
    ("v1", "Secret"),
    ("v1", "Service"),
    ("v1", "ServiceAccount"),
];

/// Whether the decoding of `kind` of `api_version` is proven against a real server's bytes
/// (so a client may ask for it in protobuf by default).
#[must_use]
pub fn is_proven(api_version: &str, kind: &str) -> bool {
    PROVEN.binary_search(&(api_version, kind)).is_ok()
}

/// The proven kinds' tables, in `(apiVersion, kind)` order.
pub fn kinds() -> impl Iterator<Item = &'static Schema> {
    PROVEN
        .iter()
        .filter_map(|(api_version, kind)| schema_for(api_version, kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_proven_kind_should_have_a_complete_table_and_be_listed_once() {
        assert!(PROVEN.windows(2).all(|w| w[0] < w[1]), "sorted, each once");
        assert_eq!(kinds().count(), PROVEN.len());
        assert!(kinds().all(Schema::complete));
        assert!(is_proven("v1", "ConfigMap"));
        assert!(is_proven("apps/v1", "Deployment"));
        assert!(!is_proven("v1", "Binding"));
        assert!(!is_proven("example.com/v1", "Widget"));
    }
}
