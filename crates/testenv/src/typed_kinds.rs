//! The k8s-openapi type of each built-in kind that kcr-testenv stores beyond the first few (those
//! are in `validation::unknown_fields`), so that their objects are decoded as kube-apiserver
//! decodes them: a value of the wrong type is a `400`, an unknown field is dropped with a
//! warning (or refused under `fieldValidation=Strict`).
//!
//! Only kinds that every Kubernetes version k8s-openapi 0.29 can select (1.33 to 1.37) has are
//! listed: a library must compile whichever version its user chooses. Kinds added later
//! (`resource.k8s.io/v1`, `MutatingAdmissionPolicy`, `VolumeAttributesClass` v1) pass
//! undecoded.

use std::sync::Arc;

use crate::registry::ResourceDef;
use crate::wire::go_types::{self, GoTypes};

/// The Go types of a kind; `None` for kinds this table does not know.
pub(crate) fn go_types_of(def: &ResourceDef) -> Option<Arc<GoTypes>> {
    use k8s_openapi::api;
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration;
    match (def.group.as_str(), def.version.as_str(), def.kind.as_str()) {
        ("", "v1", "ComponentStatus") => go_types::of::<api::core::v1::ComponentStatus>(),
        ("", "v1", "Endpoints") => go_types::of::<api::core::v1::Endpoints>(),
        ("", "v1", "LimitRange") => go_types::of::<api::core::v1::LimitRange>(),
        ("", "v1", "Node") => go_types::of::<api::core::v1::Node>(),
        ("", "v1", "PersistentVolume") => go_types::of::<api::core::v1::PersistentVolume>(),
        ("", "v1", "PersistentVolumeClaim") => {
            go_types::of::<api::core::v1::PersistentVolumeClaim>()
        }
        ("", "v1", "PodTemplate") => go_types::of::<api::core::v1::PodTemplate>(),
        ("", "v1", "ReplicationController") => {
            go_types::of::<api::core::v1::ReplicationController>()
        }
        ("", "v1", "ResourceQuota") => go_types::of::<api::core::v1::ResourceQuota>(),
        ("admissionregistration.k8s.io", "v1", kind) => {
            use api::admissionregistration::v1 as a;
            match kind {
                "MutatingWebhookConfiguration" => go_types::of::<a::MutatingWebhookConfiguration>(),
                "ValidatingWebhookConfiguration" => {
                    go_types::of::<a::ValidatingWebhookConfiguration>()
                }
                "ValidatingAdmissionPolicy" => go_types::of::<a::ValidatingAdmissionPolicy>(),
                "ValidatingAdmissionPolicyBinding" => {
                    go_types::of::<a::ValidatingAdmissionPolicyBinding>()
                }
                _ => None,
            }
        }
        ("apiregistration.k8s.io", "v1", "APIService") => {
            go_types::of::<apiregistration::v1::APIService>()
        }
        ("apps", "v1", "ControllerRevision") => go_types::of::<api::apps::v1::ControllerRevision>(),
        ("apps", "v1", "DaemonSet") => go_types::of::<api::apps::v1::DaemonSet>(),
        ("apps", "v1", "ReplicaSet") => go_types::of::<api::apps::v1::ReplicaSet>(),
        ("apps", "v1", "StatefulSet") => go_types::of::<api::apps::v1::StatefulSet>(),
        ("autoscaling", "v1", "HorizontalPodAutoscaler") => {
            go_types::of::<api::autoscaling::v1::HorizontalPodAutoscaler>()
        }
        ("autoscaling", "v2", "HorizontalPodAutoscaler") => {
            go_types::of::<api::autoscaling::v2::HorizontalPodAutoscaler>()
        }
        ("batch", "v1", "CronJob") => go_types::of::<api::batch::v1::CronJob>(),
        ("batch", "v1", "Job") => go_types::of::<api::batch::v1::Job>(),
        ("certificates.k8s.io", "v1", "CertificateSigningRequest") => {
            go_types::of::<api::certificates::v1::CertificateSigningRequest>()
        }
        ("discovery.k8s.io", "v1", "EndpointSlice") => {
            go_types::of::<api::discovery::v1::EndpointSlice>()
        }
        ("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema") => {
            go_types::of::<api::flowcontrol::v1::FlowSchema>()
        }
        ("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration") => {
            go_types::of::<api::flowcontrol::v1::PriorityLevelConfiguration>()
        }
        ("networking.k8s.io", "v1", kind) => {
            use api::networking::v1 as n;
            match kind {
                "Ingress" => go_types::of::<n::Ingress>(),
                "IngressClass" => go_types::of::<n::IngressClass>(),
                "IPAddress" => go_types::of::<n::IPAddress>(),
                "NetworkPolicy" => go_types::of::<n::NetworkPolicy>(),
                "ServiceCIDR" => go_types::of::<n::ServiceCIDR>(),
                _ => None,
            }
        }
        ("node.k8s.io", "v1", "RuntimeClass") => go_types::of::<api::node::v1::RuntimeClass>(),
        ("policy", "v1", "PodDisruptionBudget") => {
            go_types::of::<api::policy::v1::PodDisruptionBudget>()
        }
        ("rbac.authorization.k8s.io", "v1", kind) => {
            use api::rbac::v1 as r;
            match kind {
                "ClusterRole" => go_types::of::<r::ClusterRole>(),
                "ClusterRoleBinding" => go_types::of::<r::ClusterRoleBinding>(),
                "Role" => go_types::of::<r::Role>(),
                "RoleBinding" => go_types::of::<r::RoleBinding>(),
                _ => None,
            }
        }
        ("scheduling.k8s.io", "v1", "PriorityClass") => {
            go_types::of::<api::scheduling::v1::PriorityClass>()
        }
        ("storage.k8s.io", "v1", kind) => {
            use api::storage::v1 as s;
            match kind {
                "CSIDriver" => go_types::of::<s::CSIDriver>(),
                "CSINode" => go_types::of::<s::CSINode>(),
                "CSIStorageCapacity" => go_types::of::<s::CSIStorageCapacity>(),
                "StorageClass" => go_types::of::<s::StorageClass>(),
                "VolumeAttachment" => go_types::of::<s::VolumeAttachment>(),
                _ => None,
            }
        }
        _ => None,
    }
}
