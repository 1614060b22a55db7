//! Code shared by kcr's examples: the `Foo` custom resource of
//! kubernetes/sample-controller, its controller, a stand-in for the
//! Deployment controller, and how the examples find a cluster.
//!
//! - [`foo`]: the `Foo` type (`samplecontroller.k8s.io/v1alpha1`) and its
//!   CRD, generated from the Rust type.
//! - [`sample_controller`]: for each Foo, its Deployment (owned by the Foo),
//!   the Foo's `status.availableReplicas`, an Event on every sync, and an
//!   Event (not a change) when a Deployment of that name belongs to someone
//!   else.
//! - [`deployment_status`]: sets a Deployment's status from its spec after
//!   a delay, playing kube-controller-manager's Deployment controller where
//!   there is none (kcr-testenv, kcr-apiserver).
//! - [`cluster`]: a client for `--apiserver URL`, `--kubeconfig`,
//!   `KUBECONFIG`, `~/.kube/config` or in-cluster, or else an in-process
//!   kcr-testenv; installing the CRD and demo Foos.
//!
//! ```
//! use kcr_controller_manager::{Manager, Options};
//! use kcr_examples::{cluster, deployment_status, foo, sample_controller};
//! use std::time::Duration;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let env = kcr_testenv::TestEnv::start().await?;
//! cluster::install_foo_crd(&env.client()).await?;
//! let foo = cluster::create_foo(&env.client(), "default", "example-foo", 2).await?;
//! assert_eq!(foo.spec.replicas, 2);
//!
//! let manager = Manager::new(env.client(), Options::default().metrics_bind_address("0"))?;
//! sample_controller::add_to_manager(&manager, sample_controller::Settings::default()).await?;
//! deployment_status::add_to_manager(&manager, Duration::from_millis(10))?;
//! // manager.start(shutdown_signal).await? runs them (see the examples).
//! # let _ = foo::Foo::crd_json()?;
//! # Ok(())
//! # }
//! ```

// `foo` names sample-controller's Foo resource here, not a placeholder.
#![allow(clippy::disallowed_names)]

pub mod cluster;
pub mod demo;
pub mod deployment_status;
pub mod foo;
pub mod reconcile_log;
pub mod sample_controller;

/// The error of the examples' shared code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Kubernetes API answered with an error or could not be reached.
    #[error("kubernetes API: {0}")]
    Kube(#[source] kube::Error),
    /// The manager or a controller could not be set up.
    #[error("controller manager: {0}")]
    Manager(#[source] kcr_controller_manager::Error),
    /// The in-process test API server did not start.
    #[error("kcr-testenv: {0}")]
    TestEnv(#[source] kcr_testenv::Error),
    /// A kubeconfig could not be read or used.
    #[error("kubeconfig: {0}")]
    Kubeconfig(String),
    /// A Deployment named by a Foo exists and is not controlled by it.
    #[error("resource {0:?} already exists and is not managed by Foo")]
    NotManaged(String),
    /// A Foo that cannot be reconciled until it changes.
    #[error(transparent)]
    Invalid(#[from] kcr_controller_manager::controller::TerminalError),
    /// Serialising the CRD failed.
    #[error("serialising: {0}")]
    Serialize(String),
    /// Writing the reconcile log failed.
    #[error("reconcile log: {0}")]
    Io(#[source] std::io::Error),
}

impl From<kube::Error> for Error {
    fn from(e: kube::Error) -> Self {
        Error::Kube(e)
    }
}

impl From<kcr_controller_manager::Error> for Error {
    fn from(e: kcr_controller_manager::Error) -> Self {
        Error::Manager(e)
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
