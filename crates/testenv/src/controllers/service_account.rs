//! kube-controller-manager's ServiceAccounts controller: every active namespace has a
//! ServiceAccount named `default`.

use serde_json::json;

use crate::bootstrap;
use crate::server::Shared;
use crate::store::{Store, object_key};

/// The ServiceAccount every namespace gets.
const DEFAULT: &str = "default";

/// Creates `default` in `namespace` unless it exists.
pub(super) fn ensure_default(shared: &Shared, store: &mut Store, namespace: &str) {
    if store
        .get("/serviceaccounts", &object_key(Some(namespace), DEFAULT))
        .is_some()
    {
        return;
    }
    bootstrap::create_as(
        shared,
        store,
        super::MANAGER,
        ("", "v1", "serviceaccounts"),
        Some(namespace),
        json!({"metadata": {"name": DEFAULT}}),
    );
}
