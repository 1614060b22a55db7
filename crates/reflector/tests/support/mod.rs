//! Shared helpers of the HTTP tests: a recording decorator around the real
//! `kube::Api` lister-watcher, a version-checking store around a real
//! `IndexedStore`, and small waiting helpers.

#![allow(dead_code)]

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use k8s_openapi::api::core::v1::ConfigMap;
use kcr_cache::{BoxError, IndexedStore};
use kcr_reflector::{
    ListOptions, ListerWatcher, ObjectList, ReflectorStore, Result, WatchOptions, WatchStream,
};
use kube::Resource;
use kube::api::{Api, ObjectMeta, PostParams};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

/// Delegates to a real lister-watcher (the `kube::Api`), remembering each
/// call's options and when it was made.
pub struct Recorded<L> {
    inner: L,
    pub lists: Mutex<Vec<(Instant, ListOptions)>>,
    pub watches: Mutex<Vec<(Instant, WatchOptions)>>,
    /// The reason of each list or watch request that failed, and when.
    pub errors: Mutex<Vec<(Instant, String)>>,
}

impl<L> Recorded<L> {
    pub fn new(inner: L) -> Arc<Self> {
        Arc::new(Self {
            inner,
            lists: Mutex::new(Vec::new()),
            watches: Mutex::new(Vec::new()),
            errors: Mutex::new(Vec::new()),
        })
    }

    pub fn list_calls(&self) -> Vec<(Instant, ListOptions)> {
        self.lists.lock().clone()
    }

    pub fn watch_calls(&self) -> Vec<(Instant, WatchOptions)> {
        self.watches.lock().clone()
    }
}

#[async_trait]
impl<K, L> ListerWatcher<K> for Recorded<L>
where
    L: ListerWatcher<K>,
    K: 'static,
{
    async fn list(&self, options: &ListOptions) -> Result<ObjectList<K>> {
        self.lists.lock().push((Instant::now(), options.clone()));
        let result = self.inner.list(options).await;
        if let Err(e) = &result {
            self.errors
                .lock()
                .push((Instant::now(), e.reason().to_owned()));
        }
        result
    }

    async fn watch(&self, options: &WatchOptions) -> Result<WatchStream<K>> {
        self.watches.lock().push((Instant::now(), options.clone()));
        let result = self.inner.watch(options).await;
        if let Err(e) = &result {
            self.errors
                .lock()
                .push((Instant::now(), e.reason().to_owned()));
        }
        result
    }
}

/// A real `IndexedStore` that also checks that no key's resource version ever goes
/// backwards (an event applied twice or out of order would), across deletes.
pub struct Checked<K> {
    pub cache: Arc<IndexedStore<K>>,
    last: Mutex<HashMap<String, u64>>,
    pub violations: Mutex<Vec<String>>,
    pub replaces: Mutex<u64>,
}

impl<K: Resource + Send + Sync + 'static> Checked<K> {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            cache: Arc::new(IndexedStore::default()),
            last: Mutex::new(HashMap::new()),
            violations: Mutex::new(Vec::new()),
            replaces: Mutex::new(0),
        })
    }

    /// Fails the test if any key's version went backwards.
    pub fn assert_no_violations(&self) {
        let violations = self.violations.lock();
        assert!(violations.is_empty(), "{violations:?}");
    }

    fn key(obj: &K) -> String {
        let m = obj.meta();
        format!(
            "{}/{}",
            m.namespace.as_deref().unwrap_or_default(),
            m.name.as_deref().unwrap_or_default()
        )
    }

    fn check(&self, op: &str, obj: &K, strictly: bool) {
        let key = Self::key(obj);
        let Some(rv) = obj
            .meta()
            .resource_version
            .as_deref()
            .and_then(|v| v.parse::<u64>().ok())
        else {
            self.violations
                .lock()
                .push(format!("{op} {key}: no numeric version"));
            return;
        };
        let mut last = self.last.lock();
        if let Some(prev) = last.get(&key)
            && (rv < *prev || (strictly && rv == *prev))
        {
            self.violations
                .lock()
                .push(format!("{op} {key}: version {rv} after {prev}"));
        }
        last.insert(key, rv);
    }
}

impl<K: Resource + Send + Sync + 'static> ReflectorStore<K> for Checked<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), BoxError> {
        self.check("add", &obj, true);
        ReflectorStore::add(&*self.cache, obj)
    }
    fn update(&self, obj: Arc<K>) -> Result<(), BoxError> {
        self.check("update", &obj, true);
        ReflectorStore::update(&*self.cache, obj)
    }
    fn delete(&self, obj: Arc<K>) -> Result<(), BoxError> {
        self.check("delete", &obj, true);
        ReflectorStore::delete(&*self.cache, obj)
    }
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) -> Result<(), BoxError> {
        for obj in &list {
            self.check("replace", obj, false);
        }
        *self.replaces.lock() += 1;
        ReflectorStore::replace(&*self.cache, list, resource_version)
    }
    fn resync(&self) -> Result<(), BoxError> {
        ReflectorStore::resync(&*self.cache)
    }
}

/// Polls `cond` every 10 ms (of tokio time) until it holds; fails after `secs` (on a real
/// cluster: [`TestCluster::bound`](kcr_testenv::TestCluster::bound) of it).
pub async fn eventually(what: &str, secs: u64, cond: impl FnMut() -> bool) {
    eventually_or(what, secs, cond, String::new).await;
}

/// [`eventually`], adding `context()` to the failure message.
pub async fn eventually_or(
    what: &str,
    secs: u64,
    mut cond: impl FnMut() -> bool,
    context: impl Fn() -> String,
) {
    let deadline = Instant::now() + kcr_testenv::TestCluster::bound(Duration::from_secs(secs));
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for: {what} {}",
            context()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A client without kube-client's own retry layer (which already retries
/// 429/503/504 honouring `Retry-After`), so the reflector sees every error.
pub fn client_without_retries(env: &kcr_testenv::TestEnv) -> kube::Client {
    let mut config = env.config().unwrap_or_else(|e| panic!("config: {e}"));
    config.default_retry = false;
    kube::Client::try_from(config).unwrap_or_else(|e| panic!("client: {e}"))
}

/// Creates the namespace `name` (a test's second one; its own comes with its `TestCluster`).
pub async fn create_namespace(client: kube::Client, name: &str) {
    use k8s_openapi::api::core::v1::Namespace;
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(client)
        .create(&PostParams::default(), &ns)
        .await
        .unwrap_or_else(|e| panic!("namespace {name}: {e}"));
}

/// Deletes the namespace `name` and everything in it (in the background).
pub async fn delete_namespace(client: kube::Client, name: &str) {
    use k8s_openapi::api::core::v1::Namespace;
    let _ = Api::<Namespace>::all(client)
        .delete(name, &kube::api::DeleteParams::background())
        .await;
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

pub async fn create_config_maps(api: &Api<ConfigMap>, prefix: &str, n: usize) {
    for i in 0..n {
        api.create(
            &PostParams::default(),
            &config_map(&format!("{prefix}{i}"), "0"),
        )
        .await
        .unwrap_or_else(|e| panic!("create {prefix}{i}: {e}"));
    }
}

/// A hand-written custom resource (`widgets.example.com/v1`, namespaced).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Widget {
    #[serde(
        default,
        rename = "apiVersion",
        skip_serializing_if = "Option::is_none"
    )]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub metadata: ObjectMeta,
    pub spec: WidgetSpec,
}

/// The widget's spec: `size` must be a number.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct WidgetSpec {
    pub size: u32,
}

impl Resource for Widget {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Widget".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        "example.com".into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "widgets".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// Installs the `widgets.example.com` CRD.
pub async fn install_widget_crd(client: kube::Client) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let crd: CustomResourceDefinition = serde_json::from_value(serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    }))
    .unwrap_or_else(|e| panic!("crd: {e}"));
    match Api::<CustomResourceDefinition>::all(client.clone())
        .create(&PostParams::default(), &crd)
        .await
    {
        // Left by an earlier run on a real cluster: the same definition.
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => panic!("create crd: {e}"),
    }
    // A real server serves the resource once the definition is established, a moment later.
    let widgets = Api::<Widget>::all(client);
    let deadline = Instant::now() + kcr_testenv::TestCluster::bound(Duration::from_secs(10));
    while widgets.list(&Default::default()).await.is_err() {
        assert!(Instant::now() < deadline, "widgets are not served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Deletes the `widgets.example.com` CRD (on a real cluster; kcr-testenv goes with the test).
pub async fn delete_widget_crd(client: kube::Client) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let _ = Api::<CustomResourceDefinition>::all(client)
        .delete("widgets.example.com", &kube::api::DeleteParams::default())
        .await;
}

/// A TCP proxy on loopback in front of a server, counting the bytes the server sends back
/// (the bytes on the wire of its answers: headers, chunk framing and bodies).
pub struct CountingProxy {
    pub addr: std::net::SocketAddr,
    to_client: Arc<std::sync::atomic::AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl CountingProxy {
    pub async fn start(upstream: std::net::SocketAddr) -> Self {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("addr: {e}"));
        let to_client = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counter = to_client.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(upstream).await else {
                    continue;
                };
                let counter = counter.clone();
                tokio::spawn(async move {
                    let (mut client_read, mut client_write) = client.into_split();
                    let (mut server_read, mut server_write) = server.into_split();
                    let up = tokio::spawn(async move {
                        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
                        let _ = server_write.shutdown().await;
                    });
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        match server_read.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                counter.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
                                if client_write.write_all(&buf[..n]).await.is_err() {
                                    break;
                                }
                            }
                        }
                    }
                    let _ = client_write.shutdown().await;
                    up.abort();
                });
            }
        });
        Self {
            addr,
            to_client,
            task,
        }
    }

    /// Bytes the server has sent so far.
    pub fn bytes(&self) -> u64 {
        self.to_client.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A client of `env` that talks to it through this proxy (without kube-client's retries).
    pub fn client(&self, env: &kcr_testenv::TestEnv) -> kube::Client {
        let mut config = env.config().unwrap_or_else(|e| panic!("config: {e}"));
        config.default_retry = false;
        config.cluster_url = format!("http://{}", self.addr)
            .parse()
            .unwrap_or_else(|e| panic!("url: {e}"));
        kube::Client::try_from(config).unwrap_or_else(|e| panic!("client: {e}"))
    }
}

impl Drop for CountingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}
