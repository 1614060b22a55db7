//! Shared helpers of the HTTP tests: a handler that records every call, a
//! gate that holds a handler, and small waiting helpers.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_informer::{DeletedObject, ResourceEventHandler, is_resync};
use kcr_testenv::{TestCluster, TestEnv};
use kube::Resource;
use kube::api::{Api, ObjectMeta, PostParams};
use parking_lot::{Condvar, Mutex};
use tokio::time::Instant;

/// One handler call, reduced to what the tests check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    Add {
        key: String,
        rv: u64,
        initial: bool,
    },
    Update {
        key: String,
        old_rv: u64,
        new_rv: u64,
        resync: bool,
    },
    Delete {
        key: String,
        rv: Option<u64>,
        tombstone: bool,
    },
}

impl Call {
    pub fn key(&self) -> &str {
        match self {
            Call::Add { key, .. } | Call::Update { key, .. } | Call::Delete { key, .. } => key,
        }
    }
}

pub fn key_of<K: Resource>(obj: &K) -> String {
    let m = obj.meta();
    match m.namespace.as_deref() {
        Some(ns) => format!("{ns}/{}", m.name.as_deref().unwrap_or_default()),
        None => m.name.clone().unwrap_or_default(),
    }
}

pub fn rv_of<K: Resource>(obj: &K) -> u64 {
    obj.meta()
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Records every call it gets.
#[derive(Default)]
pub struct Recorder {
    pub calls: Mutex<Vec<Call>>,
}

impl Recorder {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().clone()
    }

    pub fn len(&self) -> usize {
        self.calls.lock().len()
    }

    /// The calls about one key, in order.
    pub fn calls_for(&self, key: &str) -> Vec<Call> {
        self.calls
            .lock()
            .iter()
            .filter(|c| c.key() == key)
            .cloned()
            .collect()
    }

    pub fn resyncs(&self) -> usize {
        self.calls
            .lock()
            .iter()
            .filter(|c| matches!(c, Call::Update { resync: true, .. }))
            .count()
    }
}

impl<K: Resource + Send + Sync + 'static> ResourceEventHandler<K> for Recorder {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        self.calls.lock().push(Call::Add {
            key: key_of(&**obj),
            rv: rv_of(&**obj),
            initial: is_in_initial_list,
        });
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        self.calls.lock().push(Call::Update {
            key: key_of(&**new),
            old_rv: rv_of(&**old),
            new_rv: rv_of(&**new),
            resync: Arc::ptr_eq(old, new) && is_resync(old, new),
        });
    }
    fn on_delete(&self, obj: &DeletedObject<K>) {
        let key = obj.key().into_owned();
        if let (Some(o), false) = (obj.object(), obj.is_final_state_unknown()) {
            assert_eq!(key, key_of(&**o), "a delete's key is the object's");
        }
        self.calls.lock().push(Call::Delete {
            key,
            rv: obj.object().map(|o| rv_of(&**o)),
            tombstone: obj.is_final_state_unknown(),
        });
    }
}

/// Holds whoever calls [`Gate::wait`] until [`Gate::open`].
#[derive(Default)]
pub struct Gate {
    open: Mutex<bool>,
    cond: Condvar,
    pub waiting: Mutex<usize>,
}

impl Gate {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub fn wait(&self) {
        let mut open = self.open.lock();
        *self.waiting.lock() += 1;
        while !*open {
            self.cond.wait(&mut open);
        }
    }

    pub fn open(&self) {
        *self.open.lock() = true;
        self.cond.notify_all();
    }
}

/// A handler that waits at the gate before recording each call.
pub struct Gated {
    pub gate: Arc<Gate>,
    pub recorder: Arc<Recorder>,
}

impl<K: Resource + Send + Sync + 'static> ResourceEventHandler<K> for Gated {
    fn on_add(&self, obj: &Arc<K>, initial: bool) {
        self.gate.wait();
        ResourceEventHandler::<K>::on_add(&*self.recorder, obj, initial);
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        self.gate.wait();
        ResourceEventHandler::<K>::on_update(&*self.recorder, old, new);
    }
    fn on_delete(&self, obj: &DeletedObject<K>) {
        self.gate.wait();
        ResourceEventHandler::<K>::on_delete(&*self.recorder, obj);
    }
}

/// Polls `cond` every 10 ms (of tokio time) until it holds; fails after `secs` (on a real
/// cluster: [`TestCluster::bound`] of it).
pub async fn eventually(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + TestCluster::bound(Duration::from_secs(secs));
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub async fn start_env() -> TestEnv {
    TestEnv::start()
        .await
        .unwrap_or_else(|e| panic!("testenv: {e}"))
}

/// The test's cluster: kcr-testenv, or the real one of `KCR_TEST_KUBECONFIG`, with a namespace
/// of the test's own.
pub async fn start_cluster(test: &str) -> TestCluster {
    TestCluster::start(test)
        .await
        .unwrap_or_else(|e| panic!("cluster: {e}"))
}

/// [`start_cluster`] for a test whose clock starts paused (resumed on a real cluster).
pub async fn start_cluster_paused(test: &str) -> TestCluster {
    TestCluster::start_paused(test)
        .await
        .unwrap_or_else(|e| panic!("cluster: {e}"))
}

/// The label of every object a test creates, and [`OWN`] its selector: a real cluster puts
/// objects of its own into every namespace (`kube-root-ca.crt`, a distribution's CA bundles),
/// so a test lists, watches and counts only what carries it.
pub const OWN_LABEL: (&str, &str) = ("kcr.dev/e2e-object", "true");

/// The label selector of the objects a test creates ([`OWN_LABEL`]).
pub const OWN: &str = "kcr.dev/e2e-object=true";

/// Labels of a test's own object: [`OWN_LABEL`].
pub fn own_labels() -> std::collections::BTreeMap<String, String> {
    [(OWN_LABEL.0.to_owned(), OWN_LABEL.1.to_owned())].into()
}

/// A config map of the test's own ([`OWN_LABEL`]).
pub fn config_map(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(own_labels()),
            ..ObjectMeta::default()
        },
        data: Some([("v".to_owned(), value.to_owned())].into()),
        ..ConfigMap::default()
    }
}

pub async fn create(api: &Api<ConfigMap>, name: &str, value: &str) -> ConfigMap {
    api.create(&PostParams::default(), &config_map(name, value))
        .await
        .unwrap_or_else(|e| panic!("create {name}: {e}"))
}

pub async fn update(api: &Api<ConfigMap>, name: &str, value: &str) -> ConfigMap {
    let mut cm = api
        .get(name)
        .await
        .unwrap_or_else(|e| panic!("get {name}: {e}"));
    cm.data = Some([("v".to_owned(), value.to_owned())].into());
    api.replace(name, &PostParams::default(), &cm)
        .await
        .unwrap_or_else(|e| panic!("update {name}: {e}"))
}

pub async fn delete(api: &Api<ConfigMap>, name: &str) {
    api.delete(name, &Default::default())
        .await
        .unwrap_or_else(|e| panic!("delete {name}: {e}"));
}
