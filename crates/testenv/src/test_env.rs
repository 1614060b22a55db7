//! [`TestEnv`]: a running in-process API server, and its builder.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http::{HeaderName, HeaderValue};

use crate::error::{Error, Result};
use crate::faults::Faults;
use crate::review::{AccessRule, Reviews, UserInfo};
use crate::server::{self, Options, Shared};
use crate::tls::{self, Tls};

/// Options for a [`TestEnv`]; get one from [`TestEnv::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct TestEnvBuilder {
    options: Options,
    port: u16,
    host: Ipv4Addr,
    kubeconfig_path: Option<PathBuf>,
    /// Admission plugins switched off that kube-apiserver does not know.
    unknown_admission_plugins: Vec<String>,
}

impl Default for TestEnvBuilder {
    fn default() -> Self {
        Self {
            options: Options {
                history_size: 10_000,
                token: None,
                body_limit: 3 * 1024 * 1024,
                bookmark_interval: Duration::from_secs(60),
                admin_endpoint: false,
                watch_buffer: 128,
                tls: false,
                reviews: Default::default(),
                finalize_namespaces: true,
                rbac: false,
                namespace_controllers: false,
                sharded_list_and_watch: false,
                garbage_collector: false,
                quota_controller: false,
                storage_protection: false,
                workload_controllers: false,
                stateful_set_controller: false,
                job_controller: false,
                cluster_role_aggregation: false,
                disabled_admission_plugins: Default::default(),
            },
            port: 0,
            host: Ipv4Addr::LOCALHOST,
            kubeconfig_path: None,
            unknown_admission_plugins: Vec::new(),
        }
    }
}

impl TestEnvBuilder {
    /// How many changes the history keeps for watches and consistent lists (default 10,000):
    /// the watch cache's window. Older versions get `410 Gone`.
    pub fn history_size(mut self, events: usize) -> Self {
        self.options.history_size = events.max(1);
        self
    }

    /// Requires `Authorization: Bearer <token>` on every request (another token gets `401`, none
    /// `403` for `system:anonymous`, as kube-apiserver's default anonymous auth). The client and the
    /// kubeconfig carry it.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.options.token = Some(token.into());
        self
    }

    /// The largest request body accepted (default 3 MiB, as kube-apiserver); larger get `413`.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.options.body_limit = bytes;
        self
    }

    /// How often watches with `allowWatchBookmarks=true` get a `BOOKMARK` (default 60 s, as
    /// kube-apiserver; a watch also gets one 2 s before its `timeoutSeconds` end). Set a shorter
    /// interval to see bookmarks sooner in tests.
    pub fn bookmark_interval(mut self, interval: Duration) -> Self {
        self.options.bookmark_interval = interval;
        self
    }

    /// How many event lines a watch buffers for a slow client before it waits for that client
    /// (default 128). Other watches never wait for it.
    pub fn watch_buffer(mut self, events: usize) -> Self {
        self.options.watch_buffer = events.max(1);
        self
    }

    /// Serves the fault-injection admin endpoint under `/kcr/faults/` (off by default; the
    /// `kcr-apiserver` binary turns it on). See the crate docs for its paths.
    pub fn admin_endpoint(mut self, enabled: bool) -> Self {
        self.options.admin_endpoint = enabled;
        self
    }

    /// Serves HTTPS instead of HTTP (default off). A certificate authority and a serving
    /// certificate for `127.0.0.1`, `::1`, `localhost` (and [`host`](Self::host)) are generated
    /// at start; the client, [`TestEnv::config`] and the kubeconfig (`certificate-authority-data`)
    /// trust it, and [`TestEnv::ca_certificate_pem`] returns it. kubectl sends a token only over
    /// TLS, so use this to drive a server with a [`token`](Self::token) from kubectl.
    pub fn tls(mut self, enabled: bool) -> Self {
        self.options.tls = enabled;
        self
    }

    /// `TokenReview`s (`authentication.k8s.io/v1`) of `token` authenticate `user`; any other
    /// token is reported unauthenticated. Change it later through [`TestEnv::reviews`].
    pub fn user_token(mut self, token: impl Into<String>, user: UserInfo) -> Self {
        self.options.reviews.tokens.insert(token.into(), user);
        self
    }

    /// `SubjectAccessReview`s (`authorization.k8s.io/v1`) that `rule` matches are allowed; those
    /// no rule matches are denied. Change it later through [`TestEnv::reviews`].
    pub fn allow(mut self, rule: AccessRule) -> Self {
        self.options.reviews.rules.push(rule);
        self
    }

    /// Runs kcr-testenv's namespace finalizer (default on): a deleted namespace is `Terminating`
    /// while the finalizer deletes its objects (waiting for their finalizers), then it goes, as on
    /// a cluster where kube-controller-manager's namespace controller runs. Off, a deleted
    /// namespace stays `Terminating` until its `kubernetes` finalizer is removed through
    /// `PUT /api/v1/namespaces/<name>/finalize`, as on a bare kube-apiserver.
    pub fn finalize_namespaces(mut self, enabled: bool) -> Self {
        self.options.finalize_namespaces = enabled;
        self
    }

    /// Enforces RBAC (default off): every request is authorized as kube-apiserver's RBAC
    /// authorizer does, from the stored Roles, ClusterRoles, RoleBindings and
    /// ClusterRoleBindings (and the [`allow`](Self::allow) rules); a denied request gets
    /// kube-apiserver's `403 Forbidden`. The admin (the [`token`](Self::token), or no token when
    /// none is configured) is in `system:masters` and may still do anything; clients for a
    /// ServiceAccount ([`TestEnv::service_account_client`]) or a user
    /// ([`TestEnv::client_for_user`]) are held to their bindings. Requests with an unknown token
    /// get `401`.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
    /// use kube::api::{Api, ListParams, PostParams};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let env = kcr_testenv::TestEnv::builder().rbac(true).start().await?;
    /// let mut sa = ServiceAccount::default();
    /// sa.metadata.name = Some("operator".into());
    /// Api::<ServiceAccount>::namespaced(env.client(), "default")
    ///     .create(&PostParams::default(), &sa)
    ///     .await?;
    /// let operator = env.service_account_client("default", "operator")?;
    /// let err = Api::<ConfigMap>::namespaced(operator, "default")
    ///     .list(&ListParams::default())
    ///     .await
    ///     .unwrap_err();
    /// assert!(matches!(err, kube::Error::Api(s) if s.code == 403));
    /// # Ok(())
    /// # }
    /// ```
    pub fn rbac(mut self, enabled: bool) -> Self {
        self.options.rbac = enabled;
        self
    }

    /// Runs the kube-controller-manager controllers that fill every namespace (off by
    /// default, as in the recorded kube-apiserver without kube-controller-manager): the
    /// ServiceAccounts controller (a `default` ServiceAccount) and the root CA publisher (a
    /// `kube-root-ca.crt` ConfigMap holding the CA that verifies this server: the TLS CA, or a
    /// CA generated for the purpose when serving plain HTTP). Like kube-controller-manager they
    /// act shortly after a namespace appears, not within its create request.
    pub fn namespace_controllers(mut self, enabled: bool) -> Self {
        self.options.namespace_controllers = enabled;
        self
    }

    /// The `ShardedListAndWatch` feature gate (KEP-5866; default off, as on kube-apiserver
    /// v1.36, where it is alpha). On, list, watch and deletecollection requests honour
    /// `shardSelector` (`shardRange(object.metadata.uid, '0x...', '0x...')`, or on
    /// `object.metadata.namespace`, several ranges joined by `||`): only the objects whose
    /// field's 64-bit FNV-1a hash lies in a range are listed, watched or deleted, and lists of
    /// built-in kinds echo the selector in `metadata.shardInfo` (its canonical form), which is how
    /// a client learns that the server filtered. An invalid selector gets kube-apiserver's
    /// `500` (`invalid shard selector: ...`). Off, the parameter is ignored, so a sharded
    /// controller sees what it sees on a cluster without the gate: full lists without
    /// `shardInfo`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let env = kcr_testenv::TestEnv::builder()
    ///     .sharded_list_and_watch(true)
    ///     .start()
    ///     .await?;
    /// let req = http::Request::get(
    ///     "/api/v1/namespaces/default/configmaps?shardSelector=shardRange(object.metadata.uid,%20'0x0000000000000000',%20'0x8000000000000000')",
    /// )
    /// .body(Vec::new())?;
    /// let list: serde_json::Value = env.client().request(req).await?;
    /// assert_eq!(
    ///     list["metadata"]["shardInfo"]["selector"],
    ///     "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
    /// );
    /// # Ok(())
    /// # }
    /// ```
    pub fn sharded_list_and_watch(mut self, enabled: bool) -> Self {
        self.options.sharded_list_and_watch = enabled;
        self
    }

    /// Runs kube-controller-manager's garbage collector (off by default, as in the recorded
    /// kube-apiserver without kube-controller-manager): an object whose owners
    /// (`metadata.ownerReferences`, matched by group, kind, name and uid) are all gone is
    /// deleted; a reference to a missing owner is dropped while another owner remains; an owner
    /// deleted with `propagationPolicy=Foreground` goes once its dependents are gone, one
    /// deleted with `Orphan` once they no longer name it. Like kube-controller-manager it acts
    /// shortly after the change, not within the request.
    pub fn garbage_collector(mut self, enabled: bool) -> Self {
        self.options.garbage_collector = enabled;
        self
    }

    /// Runs kube-controller-manager's resource quota controller (off by default, as in the
    /// recorded kube-apiserver without kube-controller-manager): every ResourceQuota's
    /// `status.hard` follows its `spec.hard` and its `status.used` counts what its namespace
    /// holds, shortly after each change. Until it has filled a quota's status, the
    /// `ResourceQuota` admission plugin enforces nothing for it, as on a cluster.
    pub fn quota_controller(mut self, enabled: bool) -> Self {
        self.options.quota_controller = enabled;
        self
    }

    /// Runs kube-controller-manager's PVC and PV protection controllers (off by default): a
    /// deleted PersistentVolumeClaim keeps its `kubernetes.io/pvc-protection` finalizer (which
    /// the `StorageObjectInUseProtection` admission plugin gives every claim) only while a Pod
    /// that has not ended mounts it, a PersistentVolume its `kubernetes.io/pv-protection` only
    /// while a claim is bound to it. Without them such objects stay `Terminating`, as on a
    /// kube-apiserver without kube-controller-manager.
    pub fn storage_protection(mut self, enabled: bool) -> Self {
        self.options.storage_protection = enabled;
        self
    }

    /// Runs kube-controller-manager's Deployment and ReplicaSet controllers (off by default):
    /// a Deployment gets its ReplicaSet `<name>-<pod-template-hash>` (rolling updates and
    /// `Recreate` as kube-controller-manager does them, its status with the `Available` and
    /// `Progressing` conditions), a ReplicaSet its Pods (created, adopted, released, deleted as
    /// kube-controller-manager ranks them) and its status. No scheduler or kubelet runs, so the
    /// Pods stay `Pending` and never become ready, as on a cluster without nodes.
    pub fn workload_controllers(mut self, enabled: bool) -> Self {
        self.options.workload_controllers = enabled;
        self
    }

    /// Runs kube-controller-manager's StatefulSet controller (off by default): each
    /// StatefulSet gets its ControllerRevisions (`<set>-<hash>`, hashed as kube-controller-manager
    /// hashes them), its Pods `<set>-<ordinal>` with their claims from `volumeClaimTemplates`
    /// (`OrderedReady`: one at a time, each waiting for the previous one to be Running and
    /// Ready; `Parallel`: all), scale-down and rolling-update deletions, and its status. As on a
    /// cluster without scheduler and kubelets, its Pods stay `Pending`.
    pub fn stateful_set_controller(mut self, enabled: bool) -> Self {
        self.options.stateful_set_controller = enabled;
        self
    }

    /// Runs kube-controller-manager's Job controller (off by default): each Job that has not
    /// finished gets its Pods (`parallelism`, at most what `completions` still needs; none while
    /// `suspend`ed, with the `Suspended` condition), its status (`startTime`, `active`, `ready`,
    /// `terminating`, `uncountedTerminatedPods`, the counters of finished Pods) and its end
    /// (`FailureTarget`/`Failed` past `activeDeadlineSeconds` or `backoffLimit`,
    /// `SuccessCriteriaMet`/`Complete` at `completions`). Deadlines follow tokio's clock, so a
    /// test with `tokio::time::pause()` reaches one with `tokio::time::advance`.
    pub fn job_controller(mut self, enabled: bool) -> Self {
        self.options.job_controller = enabled;
        self
    }

    /// Runs kube-controller-manager's clusterrole-aggregation controller (off by default): a
    /// ClusterRole with an `aggregationRule` gets the rules of the ClusterRoles its selectors
    /// match written into its `rules` (a forced apply by `clusterrole-aggregation-controller`).
    /// Authorization honours `aggregationRule` either way.
    pub fn cluster_role_aggregation(mut self, enabled: bool) -> Self {
        self.options.cluster_role_aggregation = enabled;
        self
    }

    /// Switches an admission plugin on or off by its kube-apiserver name, as
    /// `--enable-admission-plugins` / `--disable-admission-plugins` do (all are on by default,
    /// as in kube-apiserver v1.36): `NamespaceLifecycle`, `LimitRanger`, `ServiceAccount`,
    /// `PodSecurity`, `Priority`, `DefaultTolerationSeconds`, `StorageObjectInUseProtection`,
    /// `ValidatingAdmissionPolicy`, `ResourceQuota`. Another plugin of
    /// kube-apiserver may be named (switching it off changes nothing); starting fails with
    /// [`Error::AdmissionPlugin`] for a name kube-apiserver does not know.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let env = kcr_testenv::TestEnv::builder()
    ///     .admission_plugin("LimitRanger", false)
    ///     .start()
    ///     .await?;
    /// # drop(env);
    /// # Ok(())
    /// # }
    /// ```
    pub fn admission_plugin(mut self, name: impl Into<String>, enabled: bool) -> Self {
        let name = name.into();
        if enabled {
            self.options.disabled_admission_plugins.remove(&name);
            self.unknown_admission_plugins.retain(|n| *n != name);
        } else {
            if !crate::admission::KNOWN_PLUGINS.contains(&name.as_str()) {
                self.unknown_admission_plugins.push(name.clone());
            }
            self.options.disabled_admission_plugins.insert(name);
        }
        self
    }

    /// A preset that behaves as a cluster with kube-controller-manager running, as far as
    /// kcr-testenv emulates one: the namespace finalizer, the namespace controllers
    /// ([`namespace_controllers`](Self::namespace_controllers)), the garbage collector, the
    /// resource quota controller, the storage protection controllers and the Deployment,
    /// ReplicaSet, StatefulSet and Job controllers and the clusterrole-aggregation controller on.
    pub fn realistic(self) -> Self {
        self.finalize_namespaces(true)
            .namespace_controllers(true)
            .garbage_collector(true)
            .quota_controller(true)
            .storage_protection(true)
            .workload_controllers(true)
            .stateful_set_controller(true)
            .job_controller(true)
            .cluster_role_aggregation(true)
    }

    /// Listens on this port (default 0: a free port).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Listens on this IPv4 address (default `127.0.0.1`).
    pub fn host(mut self, host: Ipv4Addr) -> Self {
        self.host = host;
        self
    }

    /// Writes the kubeconfig here instead of into a temporary directory (which is removed when
    /// the `TestEnv` is dropped; a path given here is left in place).
    pub fn kubeconfig_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.kubeconfig_path = Some(path.into());
        self
    }

    /// Starts the server.
    pub async fn start(self) -> Result<TestEnv> {
        if let Some(name) = self.unknown_admission_plugins.first() {
            return Err(Error::AdmissionPlugin(name.clone()));
        }
        let listener = server::bind(SocketAddr::from((self.host, self.port))).await?;
        let addr = listener.local_addr().map_err(|source| Error::Bind {
            addr: SocketAddr::from((self.host, self.port)),
            source,
        })?;
        let tls = if self.options.tls {
            tls::install_default_provider();
            Some(Tls::generate(addr.ip())?)
        } else {
            None
        };
        let shared = Shared::new(self.options, addr, tls);
        server::spawn(&shared, listener);
        if shared.options.finalize_namespaces {
            crate::namespace::spawn_finalizer(&shared);
        }
        if shared.options.namespace_controllers {
            let root_ca = match &shared.tls {
                Some(t) => t.ca_pem.clone(),
                None => Tls::generate(addr.ip())?.ca_pem,
            };
            crate::controllers::spawn(&shared, root_ca);
        }
        if shared.options.garbage_collector {
            crate::controllers::spawn_garbage_collector(&shared);
        }
        if shared.options.quota_controller {
            crate::controllers::spawn_quota_controller(&shared);
        }
        if shared.options.storage_protection {
            crate::controllers::spawn_storage_protection(&shared);
        }
        if shared.options.workload_controllers {
            crate::controllers::spawn_workload_controllers(&shared);
        }
        if shared.options.stateful_set_controller {
            crate::controllers::spawn_stateful_set_controller(&shared);
        }
        if shared.options.cluster_role_aggregation {
            crate::controllers::spawn_cluster_role_aggregation(&shared);
        }
        if shared.options.job_controller {
            crate::controllers::spawn_job_controller(&shared);
        }
        let host = if addr.ip().is_unspecified() {
            Ipv4Addr::LOCALHOST.into()
        } else {
            addr.ip()
        };
        let scheme = if shared.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let base_url = format!("{scheme}://{host}:{}", addr.port());
        static DIRS: AtomicU64 = AtomicU64::new(0);
        let (kubeconfig, temp_dir) = match self.kubeconfig_path {
            Some(p) => (p, None),
            None => {
                let dir = std::env::temp_dir().join(format!(
                    "kcr-testenv-{}-{}-{}",
                    std::process::id(),
                    addr.port(),
                    DIRS.fetch_add(1, Ordering::Relaxed)
                ));
                (dir.join("kubeconfig"), Some(dir))
            }
        };
        let client = build_client(
            &base_url,
            shared.options.token.as_deref(),
            ca_der(&shared),
            Vec::new(),
        )?;
        let env = TestEnv {
            client,
            shared,
            base_url,
            kubeconfig,
            temp_dir,
        };
        env.write_kubeconfig().await?;
        Ok(env)
    }
}

/// A running API server on a loopback port. Dropping it stops the server (every connection and
/// watch ends) and removes its temporary kubeconfig.
///
/// See the [crate docs](crate) for what it serves.
pub struct TestEnv {
    client: kube::Client,
    shared: Arc<Shared>,
    base_url: String,
    kubeconfig: PathBuf,
    temp_dir: Option<PathBuf>,
}

impl std::fmt::Debug for TestEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestEnv")
            .field("base_url", &self.base_url)
            .field("kubeconfig", &self.kubeconfig)
            .finish_non_exhaustive()
    }
}

impl TestEnv {
    /// Starts a server with the default options.
    pub async fn start() -> Result<Self> {
        Self::builder().start().await
    }

    /// Options for a server.
    pub fn builder() -> TestEnvBuilder {
        TestEnvBuilder::default()
    }

    /// A `kube::Client` for this server (default namespace `default`).
    ///
    /// Like every `kube::Client` it retries `429`, `503` and `504` answers by default; to see
    /// them (e.g. from [`Faults::fail_next`]), build one from [`TestEnv::config`] with
    /// `default_retry = false`.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// A `kube::Client` that sends `User-Agent: <user_agent>`, to tell replicas apart (see
    /// [`Faults::refuse_updates_from_user_agent`]).
    pub fn client_with_user_agent(&self, user_agent: &str) -> Result<kube::Client> {
        let value = HeaderValue::from_str(user_agent)
            .map_err(|_| Error::Url(format!("invalid user agent {user_agent:?}")))?;
        build_client(
            &self.base_url,
            self.token(),
            ca_der(&self.shared),
            vec![(http::header::USER_AGENT, value)],
        )
    }

    /// A `kube::Client` that authenticates with `token` (a user token, a ServiceAccount token,
    /// or any other; unknown tokens get `401` when the server checks tokens).
    pub fn client_with_token(&self, token: &str) -> Result<kube::Client> {
        build_client(
            &self.base_url,
            Some(token),
            ca_der(&self.shared),
            Vec::new(),
        )
    }

    /// A `kube::Client` for the user `user`: a fresh token that authenticates as `user` (and
    /// that `TokenReview` accepts) is registered and sent. With [`TestEnvBuilder::rbac`] its
    /// requests are authorized by the bindings of the user and its groups.
    pub fn client_for_user(&self, user: UserInfo) -> Result<kube::Client> {
        let token = format!("kcr-user-{}", crate::meta::new_uid());
        self.shared
            .reviews
            .lock()
            .tokens
            .insert(token.clone(), user);
        self.client_with_token(&token)
    }

    /// A `kube::Client` that runs as the ServiceAccount `namespace/name`, which must exist: it
    /// sends a token issued through the ServiceAccount's `token` subresource (TokenRequest, one
    /// hour), so its user is `system:serviceaccount:<namespace>:<name>` in the groups
    /// `system:serviceaccounts`, `system:serviceaccounts:<namespace>` and
    /// `system:authenticated`. With [`TestEnvBuilder::rbac`] its requests are authorized by the
    /// bindings of the ServiceAccount and those groups.
    pub fn service_account_client(&self, namespace: &str, name: &str) -> Result<kube::Client> {
        let request = serde_json::json!({
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {},
        });
        let issued = crate::subresources::token::issue(&self.shared, namespace, name, &request)
            .map_err(|e| Error::TokenRequest {
                service_account: format!("{namespace}/{name}"),
                message: e.message,
            })?;
        let token = issued
            .pointer("/status/token")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned();
        self.client_with_token(&token)
    }

    /// Sets the log of the current instance of `container` in the Pod `namespace/pod`: what
    /// `GET .../pods/<pod>/log` returns (empty until set). Each line is an entry written now
    /// (for `timestamps`, `sinceSeconds` and `sinceTime`); a `follow` stream starts again from
    /// the top of the new log. The Pod need not exist yet.
    pub fn set_pod_log(&self, namespace: &str, pod: &str, container: &str, log: impl Into<String>) {
        self.shared.pod_logs.lock().set(
            namespace,
            pod,
            container,
            &log.into(),
            std::time::SystemTime::now(),
        );
    }

    /// Appends lines to the log of the current instance of `container`, written now; `follow`
    /// streams send them as they come.
    pub fn append_pod_log(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
        log: impl Into<String>,
    ) {
        self.append_pod_log_at(namespace, pod, container, std::time::SystemTime::now(), log);
    }

    /// Appends lines to the log of the current instance of `container`, written at `at` (each
    /// line's time, as `timestamps=true` shows it and `sinceSeconds` / `sinceTime` compare it).
    pub fn append_pod_log_at(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
        at: std::time::SystemTime,
        log: impl Into<String>,
    ) {
        self.shared
            .pod_logs
            .lock()
            .append(namespace, pod, container, &log.into(), at);
    }

    /// Sets the log of the previous, terminated instance of `container`: what `previous=true`
    /// returns (without it, the kubelet's `400`: `previous terminated container "<container>"
    /// in pod "<pod>" not found`). Each line is an entry written now.
    pub fn set_previous_pod_log(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
        log: impl Into<String>,
    ) {
        self.shared.pod_logs.lock().set_previous(
            namespace,
            pod,
            container,
            &log.into(),
            std::time::SystemTime::now(),
        );
    }

    /// The `kube::Config` the clients use (to build one with other settings).
    pub fn config(&self) -> Result<kube::Config> {
        client_config(&self.base_url, self.token(), ca_der(&self.shared))
    }

    /// A kubeconfig file for this server that `kubectl` (and `kube::Config`) accept.
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// The PEM certificate of the authority that signed the server's certificate, when serving
    /// HTTPS ([`TestEnvBuilder::tls`]).
    pub fn ca_certificate_pem(&self) -> Option<&str> {
        self.shared.tls.as_ref().map(|t| t.ca_pem.as_str())
    }

    /// The policy behind the `TokenReview` and `SubjectAccessReview` APIs.
    pub fn reviews(&self) -> Reviews {
        Reviews {
            shared: self.shared.clone(),
        }
    }

    /// The server's URL, `http://127.0.0.1:<port>` (`https://` with [`TestEnvBuilder::tls`]).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.shared.addr
    }

    /// The bearer token clients must send, if one is configured.
    pub fn token(&self) -> Option<&str> {
        self.shared.options.token.as_deref()
    }

    /// The current (newest) resource version.
    pub fn resource_version(&self) -> u64 {
        self.shared.store.lock().rv()
    }

    /// Fault injection for this server.
    pub fn faults(&self) -> Faults {
        Faults {
            shared: self.shared.clone(),
        }
    }

    /// Stops the server and waits until every connection is closed.
    pub async fn shutdown(self) {
        server::stop(&self.shared).await;
    }

    async fn write_kubeconfig(&self) -> Result<()> {
        let path = &self.kubeconfig;
        let err = |source| Error::Kubeconfig {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            tokio::fs::create_dir_all(dir).await.map_err(err)?;
        }
        let ca = self.ca_certificate_pem();
        tokio::fs::write(path, kubeconfig_yaml(&self.base_url, self.token(), ca))
            .await
            .map_err(err)
    }
}

fn ca_der(shared: &Shared) -> Option<Vec<u8>> {
    shared.tls.as_ref().map(|t| t.ca_der.clone())
}

fn client_config(
    base_url: &str,
    token: Option<&str>,
    ca_der: Option<Vec<u8>>,
) -> Result<kube::Config> {
    let url: http::Uri = base_url
        .parse()
        .map_err(|_| Error::Url(base_url.to_owned()))?;
    let mut config = kube::Config::new(url);
    config.root_cert = ca_der.map(|der| vec![der]);
    if let Some(token) = token {
        let value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| Error::Url("the token is not a valid header value".into()))?;
        config.headers.push((http::header::AUTHORIZATION, value));
    }
    Ok(config)
}

fn build_client(
    base_url: &str,
    token: Option<&str>,
    ca_der: Option<Vec<u8>>,
    headers: Vec<(HeaderName, HeaderValue)>,
) -> Result<kube::Client> {
    let mut config = client_config(base_url, token, ca_der)?;
    config.headers.extend(headers);
    kube::Client::try_from(config).map_err(|e| Error::Client(Box::new(e)))
}

/// The text of a kubeconfig for `server` (with a bearer token and the CA certificate when
/// given).
pub(crate) fn kubeconfig_yaml(server: &str, token: Option<&str>, ca_pem: Option<&str>) -> String {
    let ca = ca_pem.map_or_else(String::new, |pem| {
        format!(
            "    certificate-authority-data: {}\n",
            tls::base64(pem.as_bytes())
        )
    });
    let user = match token {
        Some(t) => format!("    token: {}\n", serde_json::Value::String(t.to_owned())),
        None => "    {}\n".to_owned(),
    };
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: kcr-testenv\n  cluster:\n    server: {server}\n{ca}contexts:\n- name: kcr-testenv\n  context:\n    cluster: kcr-testenv\n    user: kcr-testenv\n    namespace: default\ncurrent-context: kcr-testenv\nusers:\n- name: kcr-testenv\n  user:\n{user}preferences: {{}}\n"
    )
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        if let Some(task) = self.shared.serving.lock().take() {
            task.abort();
        }
        if let Some(dir) = &self.temp_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
