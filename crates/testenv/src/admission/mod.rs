//! The admission chain, as kube-apiserver's default admission plugins of v1.36 that act on an
//! API server without nodes: between decoding (and the field manager) and storage, every
//! mutating plugin may change a new object ([`admit_create`]), then every validating plugin may
//! refuse it ([`validate_create`]); after the create is accepted (and is not a dry run), the
//! plugins that keep state record it ([`record_create`]: ResourceQuota charges its quotas). An
//! update, patch or apply goes through the mutating plugins that act on updates
//! ([`admit_update`]: DefaultTolerationSeconds) before the strategy validates it, then through
//! the validating plugins that act on updates ([`validate_update`]: ValidatingAdmissionPolicy,
//! PodSecurity's namespace labels) before it is stored.
//! What a mutating plugin sets is owned by no field manager. One module per plugin, in
//! kube-apiserver's order:
//!
//! - [`namespace_lifecycle`] (`NamespaceLifecycle`): no object in a namespace that does not
//!   exist (`404`) or is terminating (`403`);
//! - [`limit_ranger`] (`LimitRanger`): a namespace's LimitRanges default and bound the
//!   resources of Pods and PersistentVolumeClaims;
//! - [`service_account`] (`ServiceAccount`): a Pod's ServiceAccount (which must exist), its
//!   image pull secrets and its token volume;
//! - [`pod_security`] (`PodSecurity`): the Pod Security Standards a namespace's
//!   `pod-security.kubernetes.io/*` labels choose: refusals and `Warning` headers;
//! - [`priority`] (`Priority`): a Pod's priority from its class;
//! - [`default_toleration_seconds`] (`DefaultTolerationSeconds`): a Pod tolerates `not-ready`
//!   and `unreachable` for 300 s;
//! - [`storage_protection`] (`StorageObjectInUseProtection`): the protection finalizers of
//!   PersistentVolumeClaims and PersistentVolumes;
//! - [`validating_admission_policy`] (`ValidatingAdmissionPolicy`): ValidatingAdmissionPolicies
//!   and their bindings, with CEL;
//! - [`resource_quota`] (`ResourceQuota`): a namespace's ResourceQuotas bound what is created
//!   in it, and `status.used` is charged at once.
//!
//! Each can be switched off by name, as kube-apiserver's `--disable-admission-plugins` does
//! ([`TestEnvBuilder::admission_plugin`](crate::TestEnvBuilder::admission_plugin)).

mod default_toleration_seconds;
mod limit_ranger;
mod namespace_lifecycle;
mod pod_security;
mod priority;
pub(crate) mod quantity;
pub(crate) mod resource_quota;
mod service_account;
pub(crate) mod storage_protection;
mod validating_admission_policy;

use std::collections::BTreeSet;

use parking_lot::Mutex;
use serde_json::{Map, Value, json};

use crate::registry::ResourceDef;
use crate::server::Shared;
use crate::status::{ApiError, ApiResult};
use crate::store::Store;

/// Every admission plugin kube-apiserver v1.36 knows (its `AllOrderedPlugins`): a name
/// `--disable-admission-plugins` accepts. kcr-testenv runs those listed in this module's documentation; switching
/// off another one changes nothing.
pub(crate) const KNOWN_PLUGINS: &[&str] = &[
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "DenyServiceExternalIPs",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
    "AlwaysAdmit",
];

/// What a plugin knows of a request: kube-apiserver's `admission.Attributes`.
pub(crate) struct Attributes<'a> {
    /// The resource written.
    pub(crate) def: &'a ResourceDef,
    /// The request's namespace (empty for cluster-scoped resources).
    pub(crate) namespace: &'a str,
    /// The object's name, or its `generateName` when it has none yet.
    pub(crate) name: &'a str,
    /// The storage as the request sees it.
    pub(crate) store: &'a Store,
    /// The `Warning` headers of the response.
    pub(crate) warnings: &'a Mutex<Vec<String>>,
    /// The plugins switched off.
    pub(crate) disabled: &'a BTreeSet<String>,
    /// Whether kube-controller-manager's ServiceAccounts controller runs (see
    /// [`service_account`]).
    pub(crate) service_accounts_controller: bool,
    /// The subresource written (`status`, `scale`), if any.
    pub(crate) subresource: Option<&'a str>,
}

impl Attributes<'_> {
    /// Whether the request writes core/v1 `kind`.
    pub(crate) fn is_core(&self, kind: &str) -> bool {
        !self.def.custom && self.def.group.is_empty() && self.def.kind == kind
    }

    /// The resource as kube-apiserver names it in messages (`pods`, `deployments.apps`).
    pub(crate) fn qualified_resource(&self) -> String {
        if self.def.group.is_empty() {
            self.def.plural.clone()
        } else {
            format!("{}.{}", self.def.plural, self.def.group)
        }
    }

    /// kube-apiserver's `admission.NewForbidden`: `403` `<resource> "<name>" is forbidden:
    /// <why>`.
    pub(crate) fn forbidden(&self, why: &str) -> ApiError {
        let mut details =
            json!({"name": self.name, "group": self.def.group, "kind": self.def.plural});
        if self.def.group.is_empty()
            && let Some(d) = details.as_object_mut()
        {
            d.remove("group");
        }
        ApiError::new(
            403,
            "Forbidden",
            format!(
                "{} {:?} is forbidden: {why}",
                self.qualified_resource(),
                self.name
            ),
        )
        .with_details(details)
    }
}

/// The message of kube-apiserver's `utilerrors.NewAggregate`: repeated messages once, one
/// message as it is, several as `[a, b]`.
pub(crate) fn aggregate(errors: &[String]) -> String {
    let mut unique: Vec<&str> = Vec::new();
    for e in errors {
        if !unique.contains(&e.as_str()) {
            unique.push(e);
        }
    }
    match unique.as_slice() {
        [one] => (*one).to_owned(),
        _ => format!("[{}]", unique.join(", ")),
    }
}

/// An admission plugin; every phase does nothing unless the plugin says otherwise.
trait Plugin: Sync {
    /// Its name, as `--disable-admission-plugins` takes it.
    fn name(&self) -> &'static str;

    /// Mutating admission of a new object.
    fn admit_create(&self, _a: &Attributes<'_>, _obj: &mut Map<String, Value>) -> ApiResult<()> {
        Ok(())
    }

    /// Mutating admission of the object an update would store (`old`: the stored object).
    fn admit_update(
        &self,
        _a: &Attributes<'_>,
        _old: &Value,
        _obj: &mut Map<String, Value>,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// Validating admission of a new object.
    fn validate_create(&self, _a: &Attributes<'_>, _obj: &Map<String, Value>) -> ApiResult<()> {
        Ok(())
    }

    /// Validating admission of an update from `old` to `new`.
    fn validate_update(&self, _a: &Attributes<'_>, _old: &Value, _new: &Value) -> ApiResult<()> {
        Ok(())
    }
}

/// The plugins, in kube-apiserver v1.36's order.
static PLUGINS: &[&dyn Plugin] = &[
    &namespace_lifecycle::NamespaceLifecycle,
    &limit_ranger::LimitRanger,
    &service_account::ServiceAccount,
    &pod_security::PodSecurity,
    &priority::Priority,
    &default_toleration_seconds::DefaultTolerationSeconds,
    &storage_protection::StorageObjectInUseProtection,
    &validating_admission_policy::ValidatingAdmissionPolicy,
    &resource_quota::ResourceQuota,
];

fn enabled<'p>(a: &'p Attributes<'_>) -> impl Iterator<Item = &'static dyn Plugin> + 'p {
    PLUGINS
        .iter()
        .copied()
        .filter(|p| !a.disabled.contains(p.name()))
}

/// Runs every mutating plugin on a new object.
pub(crate) fn admit_create(a: &Attributes<'_>, obj: &mut Map<String, Value>) -> ApiResult<()> {
    enabled(a).try_for_each(|p| p.admit_create(a, obj))
}

/// Runs every validating plugin on a new object.
pub(crate) fn validate_create(a: &Attributes<'_>, obj: &Map<String, Value>) -> ApiResult<()> {
    enabled(a).try_for_each(|p| p.validate_create(a, obj))
}

/// Runs every mutating plugin that acts on updates (DefaultTolerationSeconds) on the object an
/// update, patch or apply would store, after the field manager and before the strategy
/// prepares and validates it, as kube-apiserver's update handler does.
pub(crate) fn admit_update(
    shared: &Shared,
    store: &Store,
    req: &crate::server::Request,
    t: &crate::endpoints::installer::Target,
    old: &Value,
    new: &mut Value,
) -> ApiResult<()> {
    let Value::Object(obj) = new else {
        return Ok(());
    };
    let a = Attributes {
        def: &t.def,
        namespace: t
            .namespace
            .as_deref()
            .filter(|_| t.def.namespaced)
            .unwrap_or_default(),
        name: t.name(),
        store,
        warnings: &req.warnings,
        disabled: &shared.options.disabled_admission_plugins,
        service_accounts_controller: shared.options.namespace_controllers,
        subresource: t.sub.as_deref(),
    };
    enabled(&a).try_for_each(|p| p.admit_update(&a, old, obj))
}

/// Runs every validating plugin on an update (`new`: the object the update would store;
/// `None`, a no-op, is not admitted). The plugins that act on updates: PodSecurity (a
/// namespace's labels) and ValidatingAdmissionPolicy.
pub(crate) fn validate_update(
    shared: &Shared,
    store: &Store,
    req: &crate::server::Request,
    t: &crate::endpoints::installer::Target,
    old: &Value,
    new: Option<&Value>,
) -> ApiResult<()> {
    if t.def.custom {
        // The warnings of the update's validation (before admission): the CRD's rules that
        // fail on unchanged values (a no-op update changes none).
        let warnings = crate::custom_resource::rule_warnings(&t.def, old, new.unwrap_or(old));
        req.warnings.lock().extend(warnings);
    }
    let Some(new) = new else {
        return Ok(());
    };
    let a = Attributes {
        def: &t.def,
        namespace: t
            .namespace
            .as_deref()
            .filter(|_| t.def.namespaced)
            .unwrap_or_default(),
        name: t.name(),
        store,
        warnings: &req.warnings,
        disabled: &shared.options.disabled_admission_plugins,
        service_accounts_controller: shared.options.namespace_controllers,
        subresource: t.sub.as_deref(),
    };
    enabled(&a).try_for_each(|p| p.validate_update(&a, old, new))
}

/// Records an admitted create in the plugins that keep state (ResourceQuota's `status.used`).
pub(crate) fn record_create(
    shared: &Shared,
    store: &mut Store,
    def: &ResourceDef,
    namespace: &str,
    obj: &Map<String, Value>,
) {
    if !shared
        .options
        .disabled_admission_plugins
        .contains("ResourceQuota")
    {
        resource_quota::charge(shared, store, def, namespace, obj);
    }
}
