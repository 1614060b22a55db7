//! [`TestCluster`]: the cluster an end-to-end test runs against — the real one that
//! `KCR_TEST_KUBECONFIG` names, or else a fresh [`TestEnv`] — with a namespace of the test's own.
//!
//! # Clocks
//!
//! Against kcr-testenv a test may run under a paused clock (`#[tokio::test(start_paused =
//! true)]`): the server runs in the test's runtime, tokio advances the clock only when every
//! task waits on a timer, and a test of leases or backoffs takes milliseconds. Against a real
//! server that breaks: the runtime idles while a request is on the network, the paused clock
//! jumps to the next timer, and every timeout fires at once. So such a test starts its cluster
//! with [`TestCluster::start_paused`], which resumes the clock on a real cluster (the test then
//! takes the real durations it asserts) and leaves it paused on kcr-testenv (no added wall-clock
//! wait there). Waits are bounded by [`TestCluster::bound`], longer on a real cluster; a
//! duration asserted exactly under the paused clock is asserted within a window on the real
//! one (see [`TestCluster::is_real`]). A test that needs fault injection skips on a real
//! cluster with [`TestCluster::skip_on_real_cluster`], which prints why; a test that needs a
//! kubelet (Pods that run, Deployments that become available) skips on a cluster without a
//! Ready Node with [`TestCluster::skip_without_kubelet`].
//!
//! # Realistic namespaces
//!
//! A real cluster's namespaces are not empty: kube-controller-manager puts a `default`
//! ServiceAccount and the `kube-root-ca.crt` ConfigMap in each (distributions add more). With
//! `KCR_TEST_REALISTIC=1` the [`TestEnv`] a test starts runs those controllers too
//! ([`TestEnvBuilder::realistic`](crate::TestEnvBuilder::realistic)), so a test that assumes an
//! empty namespace fails without a real cluster; `cargo xtask ci` runs the networked tests once
//! more that way.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, PostParams};

use crate::{Error, Result, TestEnv};

/// The variable that names the kubeconfig of a real cluster for the end-to-end tests.
pub const KUBECONFIG_VAR: &str = "KCR_TEST_KUBECONFIG";

/// The variable that, set to `1` (without [`KUBECONFIG_VAR`]), starts each test's [`TestEnv`]
/// in its realistic mode ([`TestEnvBuilder::realistic`](crate::TestEnvBuilder::realistic)).
pub const REALISTIC_VAR: &str = "KCR_TEST_REALISTIC";

/// Where an end-to-end test runs: with `KCR_TEST_KUBECONFIG=path` set, the cluster (current
/// context) of that kubeconfig; otherwise a [`TestEnv`] started for the test. Either way the
/// test gets a namespace of its own (`kcr-e2e-<test>-<unique>`), created on start and, on a real
/// cluster, deleted by [`shutdown`](Self::shutdown) (or, as a fallback, when dropped inside a
/// tokio runtime).
///
/// Tests written against it use only what a real kube-apiserver guarantees; those that need
/// kcr-testenv's fault injection ask [`test_env`](Self::test_env) and skip on a real cluster
/// (see [`skip_on_real_cluster`](Self::skip_on_real_cluster)).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::api::{Api, ListParams};
///
/// let cluster = kcr_testenv::TestCluster::start("doc").await?;
/// let api: Api<ConfigMap> = Api::namespaced(cluster.client(), cluster.namespace());
/// let _ = api.list(&ListParams::default()).await?;
/// cluster.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub struct TestCluster {
    client: kube::Client,
    namespace: String,
    env: Option<TestEnv>,
    /// The kubeconfig of the real cluster (to clean up from [`Drop`]).
    kubeconfig: Option<PathBuf>,
    cleaned: bool,
}

impl std::fmt::Debug for TestCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCluster")
            .field("namespace", &self.namespace)
            .field("real", &self.env.is_none())
            .finish_non_exhaustive()
    }
}

/// The kubeconfig of the real cluster, if `KCR_TEST_KUBECONFIG` names one.
fn real_kubeconfig() -> Option<PathBuf> {
    std::env::var_os(KUBECONFIG_VAR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Waits (at most ten seconds) until the ServiceAccounts controller has created `default` in
/// a new namespace: until then the ServiceAccount admission plugin refuses the namespace's Pods,
/// on a cluster as on a realistic kcr-testenv.
async fn wait_for_default_service_account(client: &kube::Client, namespace: &str) {
    let accounts: Api<k8s_openapi::api::core::v1::ServiceAccount> =
        Api::namespaced(client.clone(), namespace);
    for _ in 0..200 {
        if matches!(accounts.get_opt("default").await, Ok(Some(_))) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Whether `KCR_TEST_REALISTIC=1` asks for realistic test servers.
fn realistic_requested() -> bool {
    std::env::var_os(REALISTIC_VAR).is_some_and(|v| v == "1")
}

/// Whether `node` has the condition `Ready` with status `True` (its kubelet reports in).
fn node_is_ready(node: &k8s_openapi::api::core::v1::Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
        })
}

/// `kcr-e2e-<test>-<unique>`: a valid namespace name (DNS label) unique to this run.
fn namespace_name(test: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let unique = format!("{:x}{:x}{n:x}", std::process::id(), nanos);
    let mut slug: String = test
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    // 63 characters at most: "kcr-e2e-" + slug + "-" + unique.
    slug.truncate(63 - 8 - 1 - unique.len());
    let slug = slug.trim_matches('-');
    if slug.is_empty() {
        format!("kcr-e2e-{unique}")
    } else {
        format!("kcr-e2e-{slug}-{unique}")
    }
}

impl TestCluster {
    /// Connects to the real cluster of `KCR_TEST_KUBECONFIG`, or starts a [`TestEnv`], and
    /// creates a namespace for the test named `test`.
    pub async fn start(test: &str) -> Result<Self> {
        Self::start_with(real_kubeconfig().as_deref(), test).await
    }

    /// As [`start`](Self::start), with the kubeconfig given rather than read from
    /// `KCR_TEST_KUBECONFIG` (`None`: a [`TestEnv`], realistic when `KCR_TEST_REALISTIC=1`).
    pub async fn start_with(kubeconfig: Option<&std::path::Path>, test: &str) -> Result<Self> {
        Self::start_in(kubeconfig, realistic_requested(), test).await
    }

    /// As [`start_with`](Self::start_with), with the realistic mode of the [`TestEnv`] given.
    async fn start_in(
        kubeconfig: Option<&std::path::Path>,
        realistic: bool,
        test: &str,
    ) -> Result<Self> {
        let (client, env) = match kubeconfig {
            Some(path) => {
                let kubeconfig = kube::config::Kubeconfig::read_from(path).map_err(|e| {
                    Error::RealCluster(format!("cannot read {}: {e}", path.display()))
                })?;
                let config = kube::Config::from_custom_kubeconfig(
                    kubeconfig,
                    &kube::config::KubeConfigOptions::default(),
                )
                .await
                .map_err(|e| Error::RealCluster(format!("{}: {e}", path.display())))?;
                let client = kube::Client::try_from(config)
                    .map_err(|e| Error::RealCluster(format!("cannot build a client: {e}")))?;
                (client, None)
            }
            None => {
                let mut builder = TestEnv::builder();
                if realistic {
                    builder = builder.realistic();
                }
                let env = builder.start().await?;
                (env.client(), Some(env))
            }
        };
        let namespace = namespace_name(test);
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some(namespace.clone()),
                labels: Some([("kcr.dev/e2e".to_owned(), "true".to_owned())].into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &ns)
            .await
            .map_err(|e| Error::RealCluster(format!("cannot create namespace {namespace}: {e}")))?;
        if env.is_none() || realistic {
            wait_for_default_service_account(&client, &namespace).await;
        }
        Ok(Self {
            client,
            namespace,
            kubeconfig: env
                .is_none()
                .then(|| kubeconfig.map(PathBuf::from))
                .flatten(),
            env,
            cleaned: false,
        })
    }

    /// As [`start`](Self::start), for a test whose runtime starts with a paused clock
    /// (`#[tokio::test(start_paused = true)]`, a current-thread runtime). On kcr-testenv the
    /// clock stays paused: the server runs in the test's runtime and the test drives time. On a
    /// real cluster the clock is resumed first: a paused clock auto-advances whenever the
    /// runtime waits on the network, so every timeout would fire at once against a server in
    /// another process.
    ///
    /// # Panics
    ///
    /// On a real cluster, when the clock is not paused (see [`tokio::time::resume`]).
    pub async fn start_paused(test: &str) -> Result<Self> {
        if Self::real_cluster_requested() {
            tokio::time::resume();
        }
        Self::start(test).await
    }

    /// How long a test waits for what takes `on_test_env` against kcr-testenv: that, or six
    /// times as long (at least a minute) on a real cluster, whose server and controllers are
    /// further away and busier. Waits are bounded either way.
    pub fn bound(on_test_env: std::time::Duration) -> std::time::Duration {
        if Self::real_cluster_requested() {
            (on_test_env * 6).max(std::time::Duration::from_secs(60))
        } else {
            on_test_env
        }
    }

    /// Whether `KCR_TEST_KUBECONFIG` names a real cluster (the tests then run against it).
    pub fn real_cluster_requested() -> bool {
        real_kubeconfig().is_some()
    }

    /// For a test that needs kcr-testenv (fault injection, its admin endpoint, several
    /// servers): when a real cluster is requested, prints that `test` is skipped and why, and
    /// returns true; the test then returns at once.
    pub fn skip_on_real_cluster(test: &str, needs: &str) -> bool {
        let skip = Self::real_cluster_requested();
        if skip {
            eprintln!(
                "skipped on the real cluster ({KUBECONFIG_VAR} is set): {test} needs {needs}"
            );
        }
        skip
    }

    /// For a test that needs a kubelet (Pods that start, Deployments that become available):
    /// on a real cluster without a Ready Node, prints that `test` is skipped and why, and
    /// returns true; the test then returns at once. On kcr-testenv (whose tests stand in for
    /// the kubelet) and on a cluster with a Ready Node it returns false.
    pub async fn skip_without_kubelet(&self, test: &str) -> bool {
        if !self.is_real() {
            return false;
        }
        let nodes = Api::<k8s_openapi::api::core::v1::Node>::all(self.client.clone())
            .list(&kube::api::ListParams::default())
            .await;
        let reason = match nodes {
            Ok(list) if list.items.iter().any(node_is_ready) => return false,
            Ok(_) => "no Ready Node".to_owned(),
            Err(e) => format!("its Nodes cannot be listed: {e}"),
        };
        eprintln!(
            "skipped on the real cluster ({KUBECONFIG_VAR} is set): {test} needs a kubelet ({reason})"
        );
        true
    }

    /// A client of the cluster (its default namespace is not the test's: use
    /// [`namespace`](Self::namespace)).
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// The test's own namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The embedded server, when the test runs against kcr-testenv.
    pub fn test_env(&self) -> Option<&TestEnv> {
        self.env.as_ref()
    }

    /// Whether the test runs against a real cluster.
    pub fn is_real(&self) -> bool {
        self.env.is_none()
    }

    /// Deletes the test's namespace (on a real cluster: in the background, with everything in
    /// it) and stops the embedded server. Dropping the cluster without it deletes the namespace
    /// too.
    pub async fn shutdown(mut self) {
        self.cleaned = true;
        match self.env.take() {
            Some(env) => env.shutdown().await,
            None => {
                let deleted = Api::<Namespace>::all(self.client.clone())
                    .delete(&self.namespace, &DeleteParams::background())
                    .await;
                if let Err(e) = deleted {
                    eprintln!("kcr-testenv: namespace {} not deleted: {e}", self.namespace);
                }
            }
        }
    }
}

/// Deletes `namespace` on the cluster of `kubeconfig` from a thread of its own, with a runtime
/// and a client of its own: the test's runtime may be ending (a test that returned or panicked),
/// and its client's connection tasks with it.
fn delete_namespace_blocking(kubeconfig: PathBuf, namespace: String) {
    let deleted = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(async {
            let kubeconfig =
                kube::config::Kubeconfig::read_from(&kubeconfig).map_err(|e| e.to_string())?;
            let config = kube::Config::from_custom_kubeconfig(
                kubeconfig,
                &kube::config::KubeConfigOptions::default(),
            )
            .await
            .map_err(|e| e.to_string())?;
            let client = kube::Client::try_from(config).map_err(|e| e.to_string())?;
            tokio::time::timeout(
                std::time::Duration::from_secs(30),
                Api::<Namespace>::all(client).delete(&namespace, &DeleteParams::background()),
            )
            .await
            .map_err(|_| "timed out".to_owned())?
            .map(drop)
            .map_err(|e| format!("namespace {namespace} not deleted: {e}"))
        })
    })
    .join();
    match deleted {
        Ok(Ok(())) => {}
        Ok(Err(e)) => eprintln!("kcr-testenv: {e}"),
        Err(_) => eprintln!("kcr-testenv: the namespace deletion panicked"),
    }
}

impl Drop for TestCluster {
    /// A test that returned or panicked before [`shutdown`](Self::shutdown) still deletes its
    /// namespace on a real cluster (blocking the dropping thread for that one request).
    fn drop(&mut self) {
        if self.cleaned || self.env.is_some() {
            return;
        }
        if let Some(kubeconfig) = self.kubeconfig.take() {
            delete_namespace_blocking(kubeconfig, std::mem::take(&mut self.namespace));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_kubeconfig_should_be_used_as_a_real_cluster_with_its_own_namespace_deleted_after() {
        // A TestEnv stands in for the real cluster: the test cluster reaches it only through the
        // kubeconfig it writes.
        let server = TestEnv::start().await.expect("server");
        let cluster = TestCluster::start_with(Some(server.kubeconfig_path()), "kubeconfig")
            .await
            .expect("cluster");
        assert!(cluster.is_real() && cluster.test_env().is_none());
        let namespaces = Api::<Namespace>::all(server.client());
        let ns = namespaces
            .get(cluster.namespace())
            .await
            .expect("the namespace is made on the server of the kubeconfig");
        assert_eq!(
            ns.metadata
                .labels
                .unwrap_or_default()
                .get("kcr.dev/e2e")
                .map(String::as_str),
            Some("true")
        );
        let name = cluster.namespace().to_owned();
        cluster.shutdown().await;
        let after = namespaces.get_opt(&name).await.expect("get");
        assert!(
            after.is_none_or(|n| n.metadata.deletion_timestamp.is_some()),
            "the namespace is deleted (or terminating)"
        );
        server.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_real_clusters_namespace_should_be_deleted_when_the_test_drops_it() {
        // Two worker threads: the drop blocks one while the in-process server answers.
        let server = TestEnv::start().await.expect("server");
        let cluster = TestCluster::start_with(Some(server.kubeconfig_path()), "dropped")
            .await
            .expect("cluster");
        let name = cluster.namespace().to_owned();
        drop(cluster);
        let after = Api::<Namespace>::all(server.client())
            .get_opt(&name)
            .await
            .expect("get");
        assert!(
            after.is_none_or(|n| n.metadata.deletion_timestamp.is_some()),
            "the namespace is deleted (or terminating)"
        );
        server.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn without_a_kubeconfig_a_test_env_should_be_started_with_the_namespace() {
        let cluster = TestCluster::start_with(None, "local")
            .await
            .expect("cluster");
        assert!(!cluster.is_real());
        let env = cluster.test_env().expect("a TestEnv");
        Api::<Namespace>::all(env.client())
            .get(cluster.namespace())
            .await
            .expect("namespace");
        cluster.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_realistic_test_env_should_fill_the_tests_namespace_as_a_cluster_does() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let cluster = TestCluster::start_in(None, true, "realistic")
            .await
            .expect("cluster");
        let config_maps = Api::<ConfigMap>::namespaced(cluster.client(), cluster.namespace());
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        while config_maps
            .get_opt("kube-root-ca.crt")
            .await
            .expect("get")
            .is_none()
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no kube-root-ca.crt"
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        cluster.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cluster_without_a_ready_node_should_skip_a_test_that_needs_a_kubelet() {
        use k8s_openapi::api::core::v1::{Node, NodeCondition, NodeStatus};
        let server = TestEnv::start().await.expect("server");
        let cluster = TestCluster::start_with(Some(server.kubeconfig_path()), "kubelet")
            .await
            .expect("cluster");
        assert!(cluster.skip_without_kubelet("t").await, "no Node at all");
        let node = |name: &str, ready: &str| Node {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            },
            status: Some(NodeStatus {
                conditions: Some(vec![NodeCondition {
                    type_: "Ready".into(),
                    status: ready.into(),
                    ..NodeCondition::default()
                }]),
                ..NodeStatus::default()
            }),
            ..Node::default()
        };
        let nodes = Api::<Node>::all(server.client());
        // Created, then given their status through /status (as a kubelet reports it).
        let ready_at = |name: &'static str, ready: &'static str| {
            let nodes = nodes.clone();
            async move {
                let mut n = match nodes.get_opt(name).await.expect("get") {
                    Some(n) => n,
                    None => nodes
                        .create(&PostParams::default(), &node(name, ready))
                        .await
                        .expect("node"),
                };
                n.status = node(name, ready).status;
                nodes
                    .replace_status(name, &PostParams::default(), &n)
                    .await
                    .expect("status");
            }
        };
        ready_at("a", "False").await;
        assert!(
            cluster.skip_without_kubelet("t").await,
            "a Node that is not Ready runs no Pods"
        );
        ready_at("b", "True").await;
        assert!(!cluster.skip_without_kubelet("t").await, "a Ready Node");
        cluster.shutdown().await;
        server.shutdown().await;

        let local = TestCluster::start_with(None, "kubelet-local")
            .await
            .expect("cluster");
        assert!(
            !local.skip_without_kubelet("t").await,
            "kcr-testenv's tests stand in for the kubelet"
        );
        local.shutdown().await;
    }

    #[test]
    fn namespace_names_should_be_valid_dns_labels_unique_to_the_test() {
        let a = namespace_name("controller_manager::Leader Election!");
        let b = namespace_name("controller_manager::Leader Election!");
        assert_ne!(a, b);
        assert!(
            a.starts_with("kcr-e2e-controller-manager--leader-election-"),
            "{a}"
        );
        let long = namespace_name(&"x".repeat(200));
        assert!(long.len() <= 63, "{long}");
        for name in [&a, &long, &namespace_name("__")] {
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                    && !name.ends_with('-'),
                "{name}"
            );
        }
    }
}
