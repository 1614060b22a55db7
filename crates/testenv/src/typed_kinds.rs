//! The k8s-openapi type of each built-in kind that kcr-testenv stores beyond the first few (those
//! are in `validation::unknown_fields`), so that their objects are decoded as kube-apiserver
//! decodes them: a value of the wrong type is a `400`, an unknown field is dropped with a
//! warning (or refused under `fieldValidation=Strict`).
//!
//! Only kinds that every Kubernetes version k8s-openapi 0.29 can select (1.33 to 1.37) has are
//! listed: a library must compile whichever version its user chooses. Kinds added later
//! (`resource.k8s.io/v1`, `MutatingAdmissionPolicy`, `VolumeAttributesClass` v1) pass
//! undecoded.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::registry::ResourceDef;

fn round_trip<T: DeserializeOwned + Serialize>(v: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

/// The object after a typed decode and encode; `None` for kinds this table does not know.
pub(crate) fn round_trip_of(def: &ResourceDef, v: &Value) -> Option<Result<Value, String>> {
    use k8s_openapi::api;
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration;
    Some(
        match (def.group.as_str(), def.version.as_str(), def.kind.as_str()) {
            ("", "v1", "ComponentStatus") => round_trip::<api::core::v1::ComponentStatus>(v),
            ("", "v1", "Endpoints") => round_trip::<api::core::v1::Endpoints>(v),
            ("", "v1", "LimitRange") => round_trip::<api::core::v1::LimitRange>(v),
            ("", "v1", "Node") => round_trip::<api::core::v1::Node>(v),
            ("", "v1", "PersistentVolume") => round_trip::<api::core::v1::PersistentVolume>(v),
            ("", "v1", "PersistentVolumeClaim") => {
                round_trip::<api::core::v1::PersistentVolumeClaim>(v)
            }
            ("", "v1", "PodTemplate") => round_trip::<api::core::v1::PodTemplate>(v),
            ("", "v1", "ReplicationController") => {
                round_trip::<api::core::v1::ReplicationController>(v)
            }
            ("", "v1", "ResourceQuota") => round_trip::<api::core::v1::ResourceQuota>(v),
            ("admissionregistration.k8s.io", "v1", kind) => {
                use api::admissionregistration::v1 as a;
                match kind {
                    "MutatingWebhookConfiguration" => {
                        round_trip::<a::MutatingWebhookConfiguration>(v)
                    }
                    "ValidatingWebhookConfiguration" => {
                        round_trip::<a::ValidatingWebhookConfiguration>(v)
                    }
                    "ValidatingAdmissionPolicy" => round_trip::<a::ValidatingAdmissionPolicy>(v),
                    "ValidatingAdmissionPolicyBinding" => {
                        round_trip::<a::ValidatingAdmissionPolicyBinding>(v)
                    }
                    _ => return None,
                }
            }
            ("apiregistration.k8s.io", "v1", "APIService") => {
                round_trip::<apiregistration::v1::APIService>(v)
            }
            ("apps", "v1", "ControllerRevision") => {
                round_trip::<api::apps::v1::ControllerRevision>(v)
            }
            ("apps", "v1", "DaemonSet") => round_trip::<api::apps::v1::DaemonSet>(v),
            ("apps", "v1", "ReplicaSet") => round_trip::<api::apps::v1::ReplicaSet>(v),
            ("apps", "v1", "StatefulSet") => round_trip::<api::apps::v1::StatefulSet>(v),
            ("autoscaling", "v1", "HorizontalPodAutoscaler") => {
                round_trip::<api::autoscaling::v1::HorizontalPodAutoscaler>(v)
            }
            ("autoscaling", "v2", "HorizontalPodAutoscaler") => {
                round_trip::<api::autoscaling::v2::HorizontalPodAutoscaler>(v)
            }
            ("batch", "v1", "CronJob") => round_trip::<api::batch::v1::CronJob>(v),
            ("batch", "v1", "Job") => round_trip::<api::batch::v1::Job>(v),
            ("certificates.k8s.io", "v1", "CertificateSigningRequest") => {
                round_trip::<api::certificates::v1::CertificateSigningRequest>(v)
            }
            ("discovery.k8s.io", "v1", "EndpointSlice") => {
                round_trip::<api::discovery::v1::EndpointSlice>(v)
            }
            ("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema") => {
                round_trip::<api::flowcontrol::v1::FlowSchema>(v)
            }
            ("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration") => {
                round_trip::<api::flowcontrol::v1::PriorityLevelConfiguration>(v)
            }
            ("networking.k8s.io", "v1", kind) => {
                use api::networking::v1 as n;
                match kind {
                    "Ingress" => round_trip::<n::Ingress>(v),
                    "IngressClass" => round_trip::<n::IngressClass>(v),
                    "IPAddress" => round_trip::<n::IPAddress>(v),
                    "NetworkPolicy" => round_trip::<n::NetworkPolicy>(v),
                    "ServiceCIDR" => round_trip::<n::ServiceCIDR>(v),
                    _ => return None,
                }
            }
            ("node.k8s.io", "v1", "RuntimeClass") => round_trip::<api::node::v1::RuntimeClass>(v),
            ("policy", "v1", "PodDisruptionBudget") => {
                round_trip::<api::policy::v1::PodDisruptionBudget>(v)
            }
            ("rbac.authorization.k8s.io", "v1", kind) => {
                use api::rbac::v1 as r;
                match kind {
                    "ClusterRole" => round_trip::<r::ClusterRole>(v),
                    "ClusterRoleBinding" => round_trip::<r::ClusterRoleBinding>(v),
                    "Role" => round_trip::<r::Role>(v),
                    "RoleBinding" => round_trip::<r::RoleBinding>(v),
                    _ => return None,
                }
            }
            ("scheduling.k8s.io", "v1", "PriorityClass") => {
                round_trip::<api::scheduling::v1::PriorityClass>(v)
            }
            ("storage.k8s.io", "v1", kind) => {
                use api::storage::v1 as s;
                match kind {
                    "CSIDriver" => round_trip::<s::CSIDriver>(v),
                    "CSINode" => round_trip::<s::CSINode>(v),
                    "CSIStorageCapacity" => round_trip::<s::CSIStorageCapacity>(v),
                    "StorageClass" => round_trip::<s::StorageClass>(v),
                    "VolumeAttachment" => round_trip::<s::VolumeAttachment>(v),
                    _ => return None,
                }
            }
            _ => return None,
        },
    )
}
