//! The per-kind strategy, as kube-apiserver's `registry/rest` `RESTCreateStrategy` /
//! `RESTUpdateStrategy` / `RESTDeleteStrategy` and the defaulting its decoder does: the generic
//! store ([`super::generic`]) and the handlers call these hooks, never a kind by name. A kind
//! without rules of its own gets [`DefaultStrategy`]; every other kind has its file under
//! `registry/<group>/`, and [`strategy_for`] is the one table that names them.

use serde_json::{Map, Value};

use super::ResourceDef;
use crate::store::Store;
use crate::validation::field::FieldError;
use crate::validation::names;

/// A metadata.name rule: the messages of what is wrong with a name (none: valid).
pub(crate) type NameRule = fn(&str) -> Vec<String>;

/// How a kind keeps `metadata.generation` (its strategy's `PrepareForCreate` and
/// `PrepareForUpdate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Generation {
    /// Not kept: the kind's strategy never sets it.
    Untracked,
    /// 1 on create, then one more on each update that changes anything but metadata and status
    /// (workloads, Pods, CRDs, custom resources, policies, ...).
    OnSpecChange,
    /// As `OnSpecChange`, and one more when an update of the main resource changes the
    /// annotations (Deployments: their annotations are copied to their ReplicaSets).
    OnSpecOrAnnotationsChange,
    /// 1 on create, then one more on each update that changes anything but metadata, or the
    /// labels (EndpointSlices, which have no status).
    OnChangeOrLabels,
    /// 1 on create, never bumped (PriorityClasses).
    OnCreate,
}

/// What a kind does differently from the generic store. Every hook has the generic behaviour
/// as its default.
pub(crate) trait Strategy: Send + Sync {
    /// The defaults the decoder sets on every write of the kind (create, update, the result of
    /// a patch), before the field manager records it (so the writer owns them): Go's
    /// `SetDefaults_*`.
    fn defaults(&self, _obj: &mut Map<String, Value>) {}

    /// The decoder's defaults of a new object ([`defaults`](Self::defaults) unless the kind
    /// sets more on create).
    fn defaults_on_create(&self, obj: &mut Map<String, Value>) {
        self.defaults(obj);
    }

    /// `PrepareForCreate`, after the field manager (nobody owns what it sets): initial status,
    /// allocations. `namespace`: the request's (empty for cluster-scoped kinds).
    fn prepare_for_create(&self, _store: &Store, _namespace: &str, _obj: &mut Map<String, Value>) {}

    /// `PrepareForUpdate` of the main resource: what an update keeps from the stored object.
    fn prepare_for_update(&self, _old: &Value, _new: &mut Map<String, Value>) {}

    /// `Validate`: the kind's rules for any stored state (also checked on update).
    fn validate(&self, _def: &ResourceDef, _obj: &Map<String, Value>) -> Vec<FieldError> {
        Vec::new()
    }

    /// `ValidateUpdate` beyond [`validate`](Self::validate): what may not change.
    fn validate_update(&self, _old: &Value, _new: &Map<String, Value>) -> Vec<FieldError> {
        Vec::new()
    }

    /// How the kind keeps `metadata.generation`.
    fn generation(&self) -> Generation {
        Generation::Untracked
    }

    /// Whether an object of the kind declares resources to serve (CustomResourceDefinitions):
    /// the store registers them when it is written and stops serving them when it goes.
    fn declares_resources(&self) -> bool {
        false
    }

    /// Whether a DELETE makes the object terminate (Namespaces: `Terminating` until their
    /// finalizers are gone, see `namespace`) instead of going at once or when its
    /// `metadata.finalizers` allow.
    fn terminates_on_delete(&self) -> bool {
        false
    }

    /// Whether a DELETE that removes the object at once answers with the object rather than a
    /// `Status` `Success` (the registries with `ReturnDeletedObject`: Pods, Namespaces,
    /// Services).
    fn returns_deleted_object(&self) -> bool {
        false
    }

    /// The status strategy's `ValidateUpdate`: the rules of a write through `status`.
    fn validate_status_update(&self, _old: &Value, _new: &Map<String, Value>) -> Vec<FieldError> {
        Vec::new()
    }

    /// Whether the kind's `ValidateUpdate` checks the new state ([`validate`](Self::validate))
    /// before what may not change ([`validate_update`](Self::validate_update)), which decides
    /// the order of the causes (Pods and workloads do; ConfigMaps, Secrets, Services check what
    /// may not change first).
    fn validates_new_state_first(&self) -> bool {
        false
    }

    /// Whether the kind's `ValidateUpdate` checks the new state with the create rules
    /// ([`validate`](Self::validate)) too (most do; PriorityClasses do not).
    fn validates_new_state_on_update(&self) -> bool {
        true
    }

    /// The rule of `metadata.name` (`ValidateObjectMeta`'s name function).
    fn name_rule(&self) -> NameRule {
        names::dns1123_subdomain
    }

    /// The group an `Invalid` error names: that of the kind's internal type.
    fn error_group<'a>(&self, def: &'a ResourceDef) -> &'a str {
        &def.group
    }

    /// `AllowUnconditionalUpdate`: whether an update may leave `metadata.resourceVersion` out.
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// The object's last state when it is deleted at once (graceful deletion of kinds that have
    /// it); `None`: as stored.
    fn deleted_state(&self, _obj: &Value) -> Option<Value> {
        None
    }
}

/// A kind with no rules of its own.
pub(crate) struct DefaultStrategy;

impl Strategy for DefaultStrategy {}

/// A kind whose only rule of its own is that it keeps `metadata.generation` (its strategy's
/// `PrepareForCreate` sets 1, its `PrepareForUpdate` bumps it when the spec changes).
pub(crate) struct GenerationStrategy;

impl Strategy for GenerationStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }
}

/// The strategy of `def`'s kind.
pub(crate) fn strategy_for(def: &ResourceDef) -> &'static dyn Strategy {
    use super::{
        admissionregistration as admission, apiextensions, apps, autoscaling, batch, coordination,
        core, discovery, events, flowcontrol, networking, policy, rbac, scheduling, storage,
    };
    if def.custom {
        return &super::custom_resource::CustomResourceStrategy;
    }
    match (def.group.as_str(), def.kind.as_str()) {
        ("", "ConfigMap") => &core::config_map::ConfigMapStrategy,
        ("", "Namespace") => &core::namespace::NamespaceStrategy,
        ("", "Pod") => &core::pod::PodStrategy,
        ("", "PodTemplate") => &core::pod_template::PodTemplateStrategy,
        ("", "PersistentVolumeClaim") => {
            &core::persistent_volume_claim::PersistentVolumeClaimStrategy
        }
        ("", "ResourceQuota") => &core::resource_quota::ResourceQuotaStrategy,
        ("", "Secret") => &core::secret::SecretStrategy,
        ("", "Service") => &core::service::ServiceStrategy,
        ("apps", "Deployment") => &apps::workload::DEPLOYMENT,
        ("apps", "ReplicaSet") => &apps::workload::REPLICA_SET,
        ("apps", "StatefulSet") => &apps::workload::STATEFUL_SET,
        ("apps", "DaemonSet") => &apps::workload::DAEMON_SET,
        ("batch", "Job") => &batch::job::JobStrategy,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            &apiextensions::custom_resource_definition::CustomResourceDefinitionStrategy
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            &admission::VALIDATING_WEBHOOK_CONFIGURATION
        }
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            &admission::MUTATING_WEBHOOK_CONFIGURATION
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => {
            &admission::VALIDATING_POLICY
        }
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicy") => &admission::MUTATING_POLICY,
        (
            "admissionregistration.k8s.io",
            "ValidatingAdmissionPolicyBinding" | "MutatingAdmissionPolicyBinding",
        ) => &admission::BINDING,
        ("coordination.k8s.io", "Lease") => &coordination::lease::LeaseStrategy,
        ("events.k8s.io", "Event") => &events::event::EventStrategy,
        ("", "ReplicationController") => {
            &core::replication_controller::ReplicationControllerStrategy
        }
        ("", "PersistentVolume") => &core::persistent_volume::PersistentVolumeStrategy,
        ("batch", "CronJob") => &batch::cron_job::CronJobStrategy,
        ("discovery.k8s.io", "EndpointSlice") => &discovery::endpoint_slice::EndpointSliceStrategy,
        ("scheduling.k8s.io", "PriorityClass") => {
            &scheduling::priority_class::PriorityClassStrategy
        }
        ("storage.k8s.io", "StorageClass") => &storage::storage_class::StorageClassStrategy,
        ("storage.k8s.io", "CSIDriver") => &storage::csi_driver::CsiDriverStrategy,
        ("rbac.authorization.k8s.io", "Role") => &rbac::ROLE,
        ("rbac.authorization.k8s.io", "ClusterRole") => &rbac::CLUSTER_ROLE,
        ("rbac.authorization.k8s.io", "RoleBinding") => &rbac::ROLE_BINDING,
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => &rbac::CLUSTER_ROLE_BINDING,
        ("", "Endpoints") => &core::endpoints::EndpointsStrategy,
        ("", "LimitRange") => &core::limit_range::LimitRangeStrategy,
        ("autoscaling", "HorizontalPodAutoscaler") => &autoscaling::HorizontalPodAutoscalerStrategy,
        ("networking.k8s.io", "NetworkPolicy") => &networking::NetworkPolicyStrategy,
        ("networking.k8s.io", "IngressClass") => &networking::IngressClassStrategy,
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => &flowcontrol::FlowSchemaStrategy,
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => {
            &flowcontrol::PriorityLevelStrategy
        }
        ("networking.k8s.io", "Ingress") => &networking::IngressStrategy,
        ("policy", "PodDisruptionBudget") => {
            &policy::pod_disruption_budget::PodDisruptionBudgetStrategy
        }
        ("resource.k8s.io", "DeviceClass" | "ResourceSlice") => &GenerationStrategy,
        _ => &DefaultStrategy,
    }
}
