//! The crate's error type.

/// What can go wrong starting or driving a test server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The listening socket could not be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address.
        addr: std::net::SocketAddr,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The kubeconfig file could not be written.
    #[error("cannot write the kubeconfig {path}")]
    Kubeconfig {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The `kube::Client` could not be built.
    #[error("cannot build a kube client")]
    Client(#[source] Box<kube::Error>),
    /// The server URL is not a valid URI.
    #[error("invalid server URL {0}")]
    Url(String),
    /// The TLS certificate or configuration could not be made.
    #[error("cannot set up TLS: {0}")]
    Tls(String),
    /// A token could not be issued for a ServiceAccount (see
    /// [`TestEnv::service_account_client`](crate::TestEnv::service_account_client)).
    #[error("cannot issue a token for the ServiceAccount {service_account}: {message}")]
    TokenRequest {
        /// `namespace/name`.
        service_account: String,
        /// Why (kube-apiserver's message, e.g. the ServiceAccount is not found).
        message: String,
    },
    /// An admission plugin switched off is not one of kube-apiserver's (see
    /// [`TestEnvBuilder::admission_plugin`](crate::TestEnvBuilder::admission_plugin)).
    #[error("admission-control plugin {0:?} does not exist")]
    AdmissionPlugin(String),
    /// The real cluster named by `KCR_TEST_KUBECONFIG` could not be used (see
    /// [`TestCluster`](crate::TestCluster)).
    #[error("cannot use the cluster of KCR_TEST_KUBECONFIG: {0}")]
    RealCluster(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
