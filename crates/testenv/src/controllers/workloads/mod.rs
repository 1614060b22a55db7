//! kube-controller-manager's Deployment and ReplicaSet controllers (v1.36), as they act on a
//! cluster without scheduler and kubelets: Pods are created and stay `Pending`, never `Ready`.
//!
//! # Sync protocol
//!
//! The controllers run as one task that makes a *pass* at start, after every change of the
//! store (its own writes included) and when a wait it asked for ends (a failed write is retried
//! after a second; a rollout's progress deadline is checked when it is due). A pass syncs every
//! Deployment, then every ReplicaSet, one object at a time; the sync of one object:
//!
//! - reads the object and what it needs (the ReplicaSets or Pods of its namespace) from the
//!   store *when it starts*, so it sees every write of the syncs before it;
//! - writes only through the API, as a client of the server: each write is a request (same
//!   decoding, defaulting, validation, admission, `managedFields` as for any client) sent as
//!   `kube-controller-manager` (user agent `kube-controller-manager/v1.36.2 ...`), with the
//!   Go client's verbs: `POST` to create ReplicaSets and Pods, `PUT` (update and
//!   `/status`), strategic merge `PATCH` with a `metadata.uid` precondition to adopt or release,
//!   `DELETE` for Pods and old ReplicaSets;
//! - stops at its first failed write, as kube-controller-manager's sync returns its error; the
//!   next pass starts over from the store.
//!
//! What a sync does is what kube-controller-manager's sync does for the same state
//! (`pkg/controller/deployment`, `pkg/controller/replicaset`, `pkg/controller/deployment/util`):
//! see [`deployment`] and [`replica_set`].
//!
//! ## Invariants (after every pass that writes nothing)
//!
//! - An object has at most one controller `ownerReference`: a controller adopts only an orphan
//!   (no controller reference), with a patch that names the orphan's `uid`; it releases only
//!   what it controls.
//! - No Pod is created twice for one missing replica: kube-controller-manager needs
//!   *expectations* because its informer cache lags behind its own writes; here each sync
//!   reads the store after the previous sync's writes were answered, so the count it sees
//!   already holds the Pods it created (the expectations are always satisfied). A ReplicaSet
//!   not being deleted controls exactly `spec.replicas` active Pods matching its selector, as
//!   far as creates and deletes succeed.
//! - A ReplicaSet's `status.observedGeneration` is its `metadata.generation` and its counts are
//!   those of the Pods it controls; a Deployment's `status.observedGeneration` is its
//!   `generation` and its counts those of its ReplicaSets.
//! - A Deployment controls at most one ReplicaSet whose template equals its own (ignoring the
//!   `pod-template-hash` label); that one is named `<deployment>-<pod-template-hash>`.

pub(crate) mod deployment;
pub(crate) mod replica_set;
mod util;

use std::sync::{Arc, Weak};
use std::time::Duration;

use http::Method;
use serde_json::{Value, json};

use crate::server::Shared;
use crate::store::object_key;

/// The user agent of kube-controller-manager's requests (its field manager is the part before
/// the first `/`).
const USER_AGENT: &str = "kube-controller-manager/v1.36.2 (linux/amd64) kubernetes/0000000/system:serviceaccount:kube-system:deployment-controller";

pub(crate) const DEPLOYMENTS: &str = "apps/deployments";
pub(crate) const REPLICA_SETS: &str = "apps/replicasets";
pub(crate) const PODS: &str = "/pods";

/// A failed request: its HTTP status and the `Status` body's message.
#[derive(Debug, Clone)]
pub(crate) struct ApiFailure {
    pub(crate) code: u16,
    pub(crate) message: String,
}

impl std::fmt::Display for ApiFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The outcome of a sync: `Err` is a write that failed (the sync stopped there).
pub(crate) type SyncResult<T = ()> = Result<T, ApiFailure>;

/// kube-controller-manager's client: requests to this server, answered as any client's.
pub(crate) struct Client {
    shared: Arc<Shared>,
}

impl Client {
    async fn send(
        &self,
        method: Method,
        path: &str,
        content_type: &'static str,
        body: Option<&Value>,
    ) -> SyncResult<Value> {
        let answer = super::requests::send_with(
            &self.shared,
            USER_AGENT,
            method,
            path,
            "",
            body,
            content_type,
        )
        .await;
        let (code, value) = (answer.status, answer.body);
        if (200..300).contains(&code) {
            Ok(value)
        } else {
            Err(ApiFailure {
                code,
                message: value
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            })
        }
    }

    pub(crate) async fn create(&self, path: &str, body: &Value) -> SyncResult<Value> {
        self.send(Method::POST, path, "application/json", Some(body))
            .await
    }

    pub(crate) async fn update(&self, path: &str, body: &Value) -> SyncResult<Value> {
        self.send(Method::PUT, path, "application/json", Some(body))
            .await
    }

    pub(crate) async fn get(&self, path: &str) -> SyncResult<Value> {
        self.send(Method::GET, path, "", None).await
    }

    pub(crate) async fn patch_strategic(&self, path: &str, body: &Value) -> SyncResult<Value> {
        self.send(
            Method::PATCH,
            path,
            "application/strategic-merge-patch+json",
            Some(body),
        )
        .await
    }

    pub(crate) async fn delete(&self, path: &str) -> SyncResult<Value> {
        self.send(Method::DELETE, path, "", None).await
    }

    /// The current objects of `storage` in `namespace`, as stored now.
    pub(crate) fn list(&self, storage: &str, namespace: &str) -> Vec<Arc<Value>> {
        let store = self.shared.store.lock();
        store
            .keys(storage, Some(namespace))
            .into_iter()
            .filter_map(|k| store.get(storage, &k).map(|s| s.value.clone()))
            .collect()
    }

    /// The current object of `storage` at `key`.
    pub(crate) fn current(&self, storage: &str, key: &str) -> Option<Arc<Value>> {
        self.shared
            .store
            .lock()
            .get(storage, key)
            .map(|s| s.value.clone())
    }
}

/// The path of an object (`collection` is e.g. `/apis/apps/v1/namespaces/NS/replicasets`).
pub(crate) fn collection_path(namespace: &str, group_version: &str, plural: &str) -> String {
    let prefix = if group_version == "v1" {
        "/api/v1".to_owned()
    } else {
        format!("/apis/{group_version}")
    };
    format!("{prefix}/namespaces/{namespace}/{plural}")
}

pub(crate) fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

pub(crate) fn int_at(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

pub(crate) fn name(v: &Value) -> &str {
    str_at(v, "/metadata/name")
}

pub(crate) fn namespace(v: &Value) -> &str {
    str_at(v, "/metadata/namespace")
}

pub(crate) fn uid(v: &Value) -> &str {
    str_at(v, "/metadata/uid")
}

pub(crate) fn deleting(v: &Value) -> bool {
    v.pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

/// The controller reference of `v` (`ownerReferences[]` with `controller: true`).
pub(crate) fn controller_of(v: &Value) -> Option<&Value> {
    v.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
}

/// `metav1.NewControllerRef` for `owner` of `kind` in `apps/v1`.
pub(crate) fn controller_ref(owner: &Value, kind: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": kind,
        "name": name(owner),
        "uid": uid(owner),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// Whether a `metav1.LabelSelector` selects `labels` (as `LabelSelectorAsSelector`: an empty
/// selector selects everything, a missing one nothing, an invalid one nothing).
pub(crate) fn selector_matches(selector: Option<&Value>, labels: Option<&Value>) -> bool {
    let Some(selector) = selector.filter(|s| s.is_object()) else {
        return false;
    };
    let empty = serde_json::Map::new();
    let labels = labels.and_then(Value::as_object).unwrap_or(&empty);
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    if let Some(ml) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in ml {
            if label(k) != v.as_str() {
                return false;
            }
        }
    }
    if let Some(exprs) = selector.get("matchExpressions").and_then(Value::as_array) {
        for e in exprs {
            let key = str_at(e, "/key");
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let ok = match str_at(e, "/operator") {
                "In" => label(key).is_some_and(|v| values.contains(&v)),
                "NotIn" => label(key).is_none_or(|v| !values.contains(&v)),
                "Exists" => label(key).is_some(),
                "DoesNotExist" => label(key).is_none(),
                _ => false,
            };
            if !ok {
                return false;
            }
        }
    }
    true
}

/// Whether the selector is empty (`{}`): kube-controller-manager refuses to act on it.
pub(crate) fn selector_is_empty(selector: Option<&Value>) -> bool {
    selector.is_none_or(|s| {
        s.get("matchLabels")
            .and_then(Value::as_object)
            .is_none_or(|m| m.is_empty())
            && s.get("matchExpressions")
                .and_then(Value::as_array)
                .is_none_or(|a| a.is_empty())
    })
}

/// What a claim (`ControllerRefManager.ClaimObject`) decides for one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claim {
    /// Already ours and selected.
    Owned,
    /// Ours but no longer selected: release it.
    Release,
    /// An orphan that the selector selects: adopt it.
    Adopt,
    /// Not ours.
    Ignore,
}

/// `ClaimObject`: what `controller` does with `obj` given whether its selector selects it.
pub(crate) fn claim(controller: &Value, obj: &Value, selected: bool) -> Claim {
    match controller_of(obj) {
        Some(r) => {
            if r.get("uid").and_then(Value::as_str) != Some(uid(controller)) {
                Claim::Ignore
            } else if selected {
                Claim::Owned
            } else if deleting(controller) {
                Claim::Ignore
            } else {
                Claim::Release
            }
        }
        None => {
            if deleting(controller)
                || !selected
                || deleting(obj)
                || namespace(controller) != namespace(obj)
            {
                Claim::Ignore
            } else {
                Claim::Adopt
            }
        }
    }
}

/// Adopts `obj` (at `path`) for `controller` of `kind`, after checking with a fresh read of the
/// controller at `controller_path` that it is still there and not being deleted (`canAdopt`).
/// `Ok(false)`: not adopted (gone meanwhile).
pub(crate) async fn adopt(
    client: &Client,
    controller: &Value,
    kind: &str,
    controller_path: &str,
    obj: &Value,
    path: &str,
) -> SyncResult<bool> {
    let fresh = client.get(controller_path).await?;
    if uid(&fresh) != uid(controller) {
        return Err(ApiFailure {
            code: 409,
            message: format!(
                "original {kind} {}/{} is gone: got uid {}, wanted {}",
                namespace(controller),
                name(controller),
                uid(&fresh),
                uid(controller)
            ),
        });
    }
    if deleting(&fresh) {
        return Err(ApiFailure {
            code: 409,
            message: format!(
                "{}/{} has just been deleted at {}",
                namespace(controller),
                name(controller),
                str_at(&fresh, "/metadata/deletionTimestamp")
            ),
        });
    }
    let patch = json!({
        "metadata": {
            "ownerReferences": [controller_ref(controller, kind)],
            "uid": uid(obj),
        }
    });
    match client.patch_strategic(path, &patch).await {
        Ok(_) => Ok(true),
        Err(e) if e.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}

/// Releases `obj` (at `path`) from `controller`: its reference removed by a patch that names
/// both uids. Gone or already changed objects are fine.
pub(crate) async fn release(
    client: &Client,
    controller: &Value,
    obj: &Value,
    path: &str,
) -> SyncResult {
    let patch = json!({
        "metadata": {
            "ownerReferences": [{"$patch": "delete", "uid": uid(controller)}],
            "uid": uid(obj),
        }
    });
    match client.patch_strategic(path, &patch).await {
        Ok(_) => Ok(()),
        Err(e) if matches!(e.code, 404 | 422) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The current time as `metav1.Time` writes it.
pub(crate) fn now() -> String {
    crate::meta::now_rfc3339()
}

/// What a pass asks of the runner.
#[derive(Debug, Default)]
pub(crate) struct PassOutcome {
    /// A write failed: make another pass after a while even if nothing changes.
    pub(crate) failed: bool,
    /// Make another pass after this long (a progress deadline falls due).
    pub(crate) wake_after: Option<Duration>,
}

async fn pass(shared: &Arc<Shared>) -> PassOutcome {
    let client = Client {
        shared: shared.clone(),
    };
    let mut outcome = PassOutcome::default();
    let deployments = shared.store.lock().keys(DEPLOYMENTS, None);
    for key in deployments {
        match deployment::sync(&client, &key).await {
            Ok(Some(wake)) => {
                outcome.wake_after = Some(outcome.wake_after.map_or(wake, |w| w.min(wake)));
            }
            Ok(None) => {}
            Err(_) => outcome.failed = true,
        }
    }
    let replica_sets = shared.store.lock().keys(REPLICA_SETS, None);
    for key in replica_sets {
        if replica_set::sync(&client, &key).await.is_err() {
            outcome.failed = true;
        }
    }
    outcome
}

/// How long a failed sync waits before it is tried again although nothing changed.
const RETRY_AFTER: Duration = Duration::from_secs(1);

async fn run(shared: Weak<Shared>) {
    let mut changed = match shared.upgrade() {
        Some(s) => s.changed.subscribe(),
        None => return,
    };
    // Whether timed passes are armed: a timer that fires long before its time on the wall
    // clock (a test's paused tokio clock) is not armed again until something changes, so a
    // waiting rollout does not spin.
    let mut timers = true;
    loop {
        changed.borrow_and_update();
        let outcome = {
            let Some(shared) = shared.upgrade() else {
                return;
            };
            pass(&shared).await
        };
        let wait = match (outcome.failed, outcome.wake_after) {
            (true, Some(w)) => Some(w.min(RETRY_AFTER)),
            (true, None) => Some(RETRY_AFTER),
            (false, w) => w,
        };
        match wait.filter(|_| timers) {
            Some(w) => {
                // The wall clock on purpose: it is what a paused tokio clock is not.
                let started = std::time::SystemTime::now();
                tokio::select! {
                    r = changed.changed() => {
                        if r.is_err() {
                            return;
                        }
                    }
                    () = tokio::time::sleep(w) => {
                        timers = started.elapsed().is_ok_and(|e| e >= w / 2);
                    }
                }
            }
            None => {
                if changed.changed().await.is_err() {
                    return;
                }
                timers = true;
            }
        }
    }
}

/// Starts the Deployment and ReplicaSet controllers for `shared`.
pub(crate) fn spawn(shared: &Arc<Shared>) {
    tokio::spawn(run(Arc::downgrade(shared)));
}

/// The `pod-template-hash` of a Deployment's template (see
/// [`super::pod_template_hash`]).
pub(crate) fn template_hash(template: &Value, collision_count: Option<i32>) -> String {
    super::pod_template_hash::compute(template, collision_count)
}

/// The store key of an object.
pub(crate) fn key_of(v: &Value) -> String {
    object_key(Some(namespace(v)), name(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_should_match_as_label_selectors_do() {
        let s = json!({"matchLabels": {"app": "a"}, "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["x", "y"]},
            {"key": "canary", "operator": "DoesNotExist"}
        ]});
        assert!(selector_matches(
            Some(&s),
            Some(&json!({"app": "a", "tier": "x"}))
        ));
        assert!(!selector_matches(
            Some(&s),
            Some(&json!({"app": "a", "tier": "z"}))
        ));
        assert!(!selector_matches(
            Some(&s),
            Some(&json!({"app": "a", "tier": "x", "canary": ""}))
        ));
        assert!(selector_matches(Some(&json!({})), None));
        assert!(!selector_matches(None, Some(&json!({"a": "b"}))));
        let not_in =
            json!({"matchExpressions": [{"key": "k", "operator": "NotIn", "values": ["v"]}]});
        assert!(selector_matches(Some(&not_in), None));
        assert!(!selector_matches(Some(&not_in), Some(&json!({"k": "v"}))));
    }

    #[test]
    fn claims_should_follow_the_controller_ref_manager() {
        let rs = json!({"metadata": {"name": "r", "namespace": "n", "uid": "u1"}});
        let orphan = json!({"metadata": {"name": "p", "namespace": "n", "uid": "p1"}});
        assert_eq!(claim(&rs, &orphan, true), Claim::Adopt);
        assert_eq!(claim(&rs, &orphan, false), Claim::Ignore);
        let mut ours = orphan.clone();
        ours["metadata"]["ownerReferences"] = json!([controller_ref(&rs, "ReplicaSet")]);
        assert_eq!(claim(&rs, &ours, true), Claim::Owned);
        assert_eq!(claim(&rs, &ours, false), Claim::Release);
        let mut theirs = orphan.clone();
        theirs["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "o", "uid": "u2", "controller": true}]);
        assert_eq!(claim(&rs, &theirs, true), Claim::Ignore);
        let mut gone = rs.clone();
        gone["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert_eq!(claim(&gone, &orphan, true), Claim::Ignore);
        assert_eq!(claim(&gone, &ours, false), Claim::Ignore);
        let mut other_ns = orphan.clone();
        other_ns["metadata"]["namespace"] = json!("m");
        assert_eq!(claim(&rs, &other_ns, true), Claim::Ignore);
    }
}
