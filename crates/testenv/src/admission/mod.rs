//! The admission chain, as kube-apiserver's default admission plugins of v1.36 that act on an
//! API server without nodes: between decoding (and the field manager) and storage, every
//! mutating plugin may change a new object ([`admit_create`]), then every validating plugin may
//! refuse it ([`validate_create`]). What a mutating plugin sets is owned by no field manager.
//! One module per plugin, in kube-apiserver's order:
//!
//! - [`namespace_lifecycle`]: no object in a namespace that does not exist (`404`) or is
//!   terminating (`403`);
//! - [`service_account`]: a Pod's ServiceAccount and its token volume;
//! - [`default_toleration_seconds`]: a Pod tolerates `not-ready` and `unreachable` for 300 s;
//! - [`priority`]: a Pod's priority from its class.

mod default_toleration_seconds;
mod namespace_lifecycle;
mod priority;
mod service_account;

use serde_json::{Map, Value};

use crate::registry::ResourceDef;
use crate::status::ApiResult;
use crate::store::Store;

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
}

impl Attributes<'_> {
    /// Whether the request writes core/v1 `kind`.
    pub(crate) fn is_core(&self, kind: &str) -> bool {
        !self.def.custom && self.def.group.is_empty() && self.def.kind == kind
    }
}

/// An admission plugin; both phases do nothing unless the plugin says otherwise.
trait Plugin: Sync {
    /// Mutating admission of a new object.
    fn admit_create(&self, _a: &Attributes<'_>, _obj: &mut Map<String, Value>) -> ApiResult<()> {
        Ok(())
    }

    /// Validating admission of a new object.
    fn validate_create(&self, _a: &Attributes<'_>, _obj: &Map<String, Value>) -> ApiResult<()> {
        Ok(())
    }
}

/// The plugins, in kube-apiserver v1.36's order.
static PLUGINS: &[&dyn Plugin] = &[
    &namespace_lifecycle::NamespaceLifecycle,
    &service_account::ServiceAccount,
    &default_toleration_seconds::DefaultTolerationSeconds,
    &priority::Priority,
];

/// Runs every mutating plugin on a new object.
pub(crate) fn admit_create(a: &Attributes<'_>, obj: &mut Map<String, Value>) -> ApiResult<()> {
    PLUGINS.iter().try_for_each(|p| p.admit_create(a, obj))
}

/// Runs every validating plugin on a new object.
pub(crate) fn validate_create(a: &Attributes<'_>, obj: &Map<String, Value>) -> ApiResult<()> {
    PLUGINS.iter().try_for_each(|p| p.validate_create(a, obj))
}
