//! Where the examples run: a client for `--apiserver URL`, `--kubeconfig
//! PATH`, `KUBECONFIG`, `~/.kube/config` or the in-cluster service account,
//! or else an in-process kcr-testenv; and the Foo CRD and demo Foos.

use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config, CustomResourceExt};

use crate::foo::{Foo, FooSpec};
use crate::{Error, Result};

/// What the examples talk to.
pub enum Target {
    /// A cluster named by a kubeconfig or the in-cluster service account.
    Cluster(Client),
    /// A running `kcr-apiserver` (`--apiserver URL`): a test server without
    /// a Deployment controller.
    ApiServer(Client),
    /// kcr-testenv started in this process (no kubeconfig found).
    InProcess(Box<kcr_testenv::TestEnv>),
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Target::Cluster(_) => "Target::Cluster",
            Target::ApiServer(_) => "Target::ApiServer",
            Target::InProcess(_) => "Target::InProcess",
        })
    }
}

impl Target {
    /// The client for the target.
    pub fn client(&self) -> Client {
        match self {
            Target::Cluster(c) | Target::ApiServer(c) => c.clone(),
            Target::InProcess(env) => env.client(),
        }
    }

    /// Whether the target is a kcr test server (in-process or
    /// `kcr-apiserver`), which runs no Deployment controller.
    pub fn is_test_server(&self) -> bool {
        !matches!(self, Target::Cluster(_))
    }
}

/// Where to connect, from the command line.
#[derive(Clone, Debug, Default)]
pub struct Connect {
    /// `--apiserver URL`: a running `kcr-apiserver`.
    pub apiserver: Option<String>,
    /// `--token T`: its bearer token, if it has one.
    pub token: Option<String>,
    /// `--kubeconfig PATH`.
    pub kubeconfig: Option<PathBuf>,
}

fn kubeconfig_error(e: impl std::fmt::Display) -> Error {
    Error::Kubeconfig(e.to_string())
}

/// Connects as `connect` says: `--apiserver`, then `--kubeconfig`, then
/// `KUBECONFIG`, `~/.kube/config` or in-cluster; with none of them, starts
/// kcr-testenv in this process.
pub async fn connect(connect: &Connect) -> Result<Target> {
    if let Some(url) = &connect.apiserver {
        let uri = url.parse().map_err(kubeconfig_error)?;
        let mut config = Config::new(uri);
        if let Some(token) = &connect.token {
            config.auth_info.token = Some(token.clone().into());
        }
        return Ok(Target::ApiServer(Client::try_from(config)?));
    }
    let config = if let Some(path) = &connect.kubeconfig {
        Some(from_kubeconfig(path).await?)
    } else if has_default_config() {
        Some(Config::infer().await.map_err(kubeconfig_error)?)
    } else {
        None
    };
    match config {
        Some(config) => Ok(Target::Cluster(Client::try_from(config)?)),
        None => {
            let env = kcr_testenv::TestEnv::start()
                .await
                .map_err(Error::TestEnv)?;
            Ok(Target::InProcess(Box::new(env)))
        }
    }
}

async fn from_kubeconfig(path: &Path) -> Result<Config> {
    let kubeconfig = Kubeconfig::read_from(path).map_err(kubeconfig_error)?;
    Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(kubeconfig_error)
}

/// Whether `KUBECONFIG`, `~/.kube/config` or an in-cluster service account
/// names a cluster.
pub fn has_default_config() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    if set("KUBECONFIG") || set("KUBERNETES_SERVICE_HOST") {
        return true;
    }
    std::env::var_os("HOME")
        .map(|home| Path::new(&home).join(".kube").join("config"))
        .is_some_and(|p| p.is_file())
}

/// Creates the Foo CRD unless it exists, then waits (up to 10 s) until the
/// API server serves Foos.
pub async fn install_foo_crd(client: &Client) -> Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    match crds.create(&PostParams::default(), &Foo::crd()).await {
        Ok(_) => tracing::info!(crd = %Foo::crd_name(), "installed the CRD"),
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => return Err(e.into()),
    }
    let foos: Api<Foo> = Api::all(client.clone());
    let mut last = None;
    for _ in 0..100 {
        match foos.list(&ListParams::default().limit(1)).await {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(last.map_or_else(
        || Error::Kubeconfig("the Foo CRD is not served".into()),
        Error::Kube,
    ))
}

/// Creates the Foo `name` in `namespace` asking for `replicas` replicas of
/// the Deployment `<name>-deployment`; an existing Foo is returned as is.
pub async fn create_foo(
    client: &Client,
    namespace: &str,
    name: &str,
    replicas: i32,
) -> Result<Foo> {
    let foos: Api<Foo> = Api::namespaced(client.clone(), namespace);
    let foo = Foo::new(
        name,
        FooSpec {
            deployment_name: format!("{name}-deployment"),
            replicas,
        },
    );
    match foos.create(&PostParams::default(), &foo).await {
        Ok(foo) => Ok(foo),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(foos.get(name).await?),
        Err(e) => Err(e.into()),
    }
}

/// The demo Foos: `example-foo-1`, `-2`, `-3` in `default`, asking for 1, 2
/// and 3 replicas.
pub const DEMO_FOOS: [(&str, i32); 3] = [
    ("example-foo-1", 1),
    ("example-foo-2", 2),
    ("example-foo-3", 3),
];

/// Installs the CRD and creates the [`DEMO_FOOS`] (existing ones are kept).
pub async fn install_demo(client: &Client) -> Result<()> {
    install_foo_crd(client).await?;
    for (name, replicas) in DEMO_FOOS {
        create_foo(client, "default", name, replicas).await?;
    }
    tracing::info!(
        foos = DEMO_FOOS.len(),
        "demo Foos created in namespace default"
    );
    Ok(())
}

/// How many Foos in the cluster have as many available replicas as they
/// ask for, out of how many.
pub async fn converged(client: &Client) -> Result<(usize, usize)> {
    let foos: Api<Foo> = Api::all(client.clone());
    let list = foos.list(&ListParams::default()).await?;
    let done = list
        .items
        .iter()
        .filter(|f| f.available_replicas() == f.spec.replicas)
        .count();
    Ok((done, list.items.len()))
}
