//! The controllers of kube-controller-manager that kcr-testenv can run (off by default, on
//! with [`TestEnvBuilder::namespace_controllers`](crate::TestEnvBuilder::namespace_controllers)
//! and in [`TestEnvBuilder::realistic`](crate::TestEnvBuilder::realistic)): the
//! ServiceAccounts controller (a `default` ServiceAccount in every namespace) and the root CA
//! certificate publisher (a `kube-root-ca.crt` ConfigMap in every namespace); and, with
//! [`TestEnvBuilder::garbage_collector`](crate::TestEnvBuilder::garbage_collector), the garbage
//! collector; with [`TestEnvBuilder::quota_controller`](crate::TestEnvBuilder::quota_controller),
//! the resource quota controller; with
//! [`TestEnvBuilder::storage_protection`](crate::TestEnvBuilder::storage_protection), the PVC
//! and PV protection controllers; with
//! [`TestEnvBuilder::workload_controllers`](crate::TestEnvBuilder::workload_controllers), the
//! Deployment and ReplicaSet controllers ([`workloads`]); with
//! [`TestEnvBuilder::stateful_set_controller`](crate::TestEnvBuilder::stateful_set_controller)
//! and [`TestEnvBuilder::job_controller`](crate::TestEnvBuilder::job_controller), the
//! StatefulSet and Job controllers (which write through [`requests`], as a client does); with
//! [`TestEnvBuilder::cluster_role_aggregation`](crate::TestEnvBuilder::cluster_role_aggregation),
//! the clusterrole-aggregation controller. The namespace finalizer lives in `namespace`.
//!
//! Like kube-controller-manager they work after the fact: a pass after every change, so a
//! client sees the objects shortly after the namespace, not in the namespace's create answer,
//! and an object deleted by a client comes back.

mod cluster_role_aggregation;
mod events;
mod garbage_collector;
mod go_types;
mod history;
mod job;
pub(crate) mod pod_template_hash;
mod requests;
mod resource_quota;
mod root_ca_publisher;
mod service_account;
mod stateful_set;
mod storage_protection;
pub(crate) mod workloads;

use std::sync::{Arc, Weak};

use serde_json::Value;

use crate::server::Shared;
use crate::store::Store;

/// The field manager of kube-controller-manager's writes.
const MANAGER: &str = "kube-controller-manager";

/// The namespaces that are not terminating (controllers add nothing to a terminating one).
fn active_namespaces(store: &Store) -> Vec<String> {
    store
        .keys("/namespaces", None)
        .into_iter()
        .filter(|k| {
            store.get("/namespaces", k).is_some_and(|s| {
                s.value.pointer("/metadata/deletionTimestamp").is_none()
                    && s.value.pointer("/status/phase").and_then(Value::as_str)
                        != Some("Terminating")
            })
        })
        .collect()
}

/// Starts the ServiceAccounts controller and the root CA publisher for `shared`; the published
/// `ca.crt` is `root_ca_pem`.
pub(crate) fn spawn(shared: &Arc<Shared>, root_ca_pem: String) {
    tokio::spawn(run_on_changes(
        Arc::downgrade(shared),
        move |shared: &Shared, store: &mut Store| {
            for ns in active_namespaces(store) {
                service_account::ensure_default(shared, store, &ns);
                root_ca_publisher::ensure_root_ca(shared, store, &ns, &root_ca_pem);
            }
        },
    ));
}

/// Starts the garbage collector for `shared`.
pub(crate) fn spawn_garbage_collector(shared: &Arc<Shared>) {
    tokio::spawn(run_on_changes(
        Arc::downgrade(shared),
        garbage_collector::collect,
    ));
}

/// A pass of a controller with timers: when its next timer falls due, in the seconds of its
/// [`Clock`](job::Clock), if it has one.
type TimedPass<'a> = std::pin::Pin<Box<dyn Future<Output = Option<i64>> + Send + 'a>>;

/// Runs a controller that writes through requests (the StatefulSet, Job and clusterrole-
/// aggregation controllers) until the server is
/// gone: `pass` at start, after every change of the store and when the time it returned falls
/// due, with the controller's Event recorder and clock.
async fn run_timed<P>(shared: Weak<Shared>, pass: P)
where
    P: for<'a> Fn(&'a Arc<Shared>, &'a events::Recorder, &'a job::Clock) -> TimedPass<'a>,
{
    let clock = job::Clock::start();
    let recorder = events::Recorder::default();
    let mut changed = match shared.upgrade() {
        Some(s) => s.changed.subscribe(),
        None => return,
    };
    loop {
        let next = {
            let Some(shared) = shared.upgrade() else {
                return;
            };
            changed.borrow_and_update();
            pass(&shared, &recorder, &clock).await
        };
        let wake = async {
            match next {
                Some(secs) => tokio::time::sleep_until(clock.instant(secs)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = changed.changed() => if r.is_err() { return },
            () = wake => {}
        }
    }
}

/// Runs `pass` under the store lock at start and after every change, until the server is gone.
async fn run_on_changes<P>(shared: Weak<Shared>, pass: P)
where
    P: Fn(&Shared, &mut Store),
{
    let mut changed = match shared.upgrade() {
        Some(s) => s.changed.subscribe(),
        None => return,
    };
    loop {
        {
            let Some(shared) = shared.upgrade() else {
                return;
            };
            let mut store = shared.store.lock();
            pass(&shared, &mut store);
        }
        if changed.changed().await.is_err() {
            return;
        }
    }
}

/// Starts the resource quota controller for `shared`.
pub(crate) fn spawn_quota_controller(shared: &Arc<Shared>) {
    tokio::spawn(run_on_changes(Arc::downgrade(shared), resource_quota::sync));
}

/// Starts the Deployment and ReplicaSet controllers for `shared`.
pub(crate) fn spawn_workload_controllers(shared: &Arc<Shared>) {
    workloads::spawn(shared);
}

/// Starts the PVC and PV protection controllers for `shared`.
pub(crate) fn spawn_storage_protection(shared: &Arc<Shared>) {
    tokio::spawn(run_on_changes(
        Arc::downgrade(shared),
        storage_protection::sync,
    ));
}

/// Starts the StatefulSet controller for `shared`.
pub(crate) fn spawn_stateful_set_controller(shared: &Arc<Shared>) {
    tokio::spawn(stateful_set::run(Arc::downgrade(shared)));
}

/// Starts the clusterrole-aggregation controller for `shared`.
pub(crate) fn spawn_cluster_role_aggregation(shared: &Arc<Shared>) {
    tokio::spawn(cluster_role_aggregation::run(Arc::downgrade(shared)));
}

/// Starts the Job controller for `shared`.
pub(crate) fn spawn_job_controller(shared: &Arc<Shared>) {
    tokio::spawn(job::run(Arc::downgrade(shared)));
}
