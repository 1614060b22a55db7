//! An embedded Kubernetes API server for tests, examples and demos.
//!
//! [`TestEnv::start`] runs a real HTTP API server on a free loopback port, in-process;
//! [`TestEnv::client`] is a `kube::Client` for it and [`TestEnv::kubeconfig_path`] a kubeconfig
//! that `kubectl` accepts. The `kcr-apiserver` binary runs the same server standalone.
//! Nothing is mocked: resource versions, watch streams, bookmarks, `410 Gone` and conflicts
//! behave as they do on kube-apiserver, so controllers tested here behave the same on a cluster.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let env = kcr_testenv::TestEnv::start().await?;
//! let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! let created = api.create(&PostParams::default(), &cm).await?;
//! assert!(created.metadata.resource_version.is_some());
//!
//! // Two writers start from the same version: the second one gets 409 Conflict.
//! let mut first = created.clone();
//! first.data = Some([("writer".to_string(), "first".to_string())].into());
//! api.replace("settings", &PostParams::default(), &first).await?;
//! let mut second = created.clone();
//! second.data = Some([("writer".to_string(), "second".to_string())].into());
//! let err = api.replace("settings", &PostParams::default(), &second).await.unwrap_err();
//! assert!(matches!(err, kube::Error::Api(s) if s.code == 409));
//! # Ok(())
//! # }
//! ```
//!
//! # What it serves
//!
//! - **Discovery**: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>`,
//!   `/apis/<group>/<version>`, aggregated discovery (`apidiscovery.k8s.io/v2`) when asked for,
//!   minimal `/openapi/v2` and `/openapi/v3`, `/healthz`, `/livez`, `/readyz`.
//! - **Built-in resources**: core/v1 `namespaces` (`default`, `kube-system`, `kube-public`,
//!   `kube-node-lease` exist from the start), `configmaps`, `secrets`, `pods`, `services`,
//!   `events`, `serviceaccounts`; apps/v1 `deployments` (with `status` and `scale`);
//!   coordination.k8s.io/v1 `leases`; events.k8s.io/v1 `events`; apiextensions.k8s.io/v1
//!   `customresourcedefinitions` (core/v1 and events.k8s.io/v1 events are stored apart).
//!   Creating a CRD serves its resource (namespaced or
//!   cluster-scoped, every served version, `status` when declared); deleting it stops serving
//!   it and deletes its objects.
//! - **Validation** (as kube-apiserver v1.36, `422 Invalid` with the recorded causes): object
//!   names, label keys and values, annotation keys and their 256 KiB total; ConfigMap and Secret
//!   keys, `binaryData` duplicates, `immutable`, Secret types' required keys and immutable
//!   `type`; Service ports and types; Pod containers (names, images, ports, duplicates);
//!   Deployment selectors (required, matching the template, immutable) and templates; Lease
//!   durations; events.k8s.io Events; CRD names, groups (a dot required, `*.k8s.io` and
//!   `*.kubernetes.io` only with `api-approved.kubernetes.io`). Built-in objects are decoded
//!   through their k8s-openapi types: a value of the wrong type is a `400`; unknown fields are
//!   dropped with a `Warning` header, dropped silently under `fieldValidation=Ignore`, refused
//!   with `400` under `fieldValidation=Strict`. Write options are validated (`dryRun` only
//!   `All`, `fieldValidation`, `propagationPolicy`). Custom resources are not yet validated
//!   against their `openAPIV3Schema` (no pruning, no schema defaults).
//! - **Namespaces**: a new one gets the `kubernetes` finalizer and the
//!   `kubernetes.io/metadata.name` label. Deleting one makes it `Terminating`; creates in it get
//!   `403`. kcr-testenv's own namespace finalizer (kube-controller-manager's namespace
//!   controller on a cluster; [`TestEnvBuilder::finalize_namespaces`], on by default) deletes
//!   its objects, waits for their finalizers, then removes the namespace; with it off the
//!   namespace stays `Terminating` until `PUT .../finalize` empties `spec.finalizers`.
//! - **Verbs**, following the API conventions: `create` (`generateName`, `uid`,
//!   `creationTimestamp`, `resourceVersion`, `generation` = 1, `409 AlreadyExists`, `404` for a
//!   missing namespace), `get`, `list`, `watch`, `update` (a stale `resourceVersion` gets
//!   `409 Conflict`; custom resources require one; `generation` increments when anything but
//!   metadata and status changes; a no-op update keeps the version; with a `status`
//!   subresource the main resource ignores `status` and `/status` ignores everything else),
//!   `patch` (JSON merge patch, JSON patch, strategic merge patch with the built-in types'
//!   merge keys and `$patch`/`$retainKeys`/`$setElementOrder`/`$deleteFromPrimitiveList`, `415`
//!   for custom resources as on kube-apiserver; server-side apply with YAML or JSON bodies),
//!   `metadata.managedFields` on every write as kube-apiserver keeps them (`Update` entries per
//!   manager, API version and subresource; `Apply` entries; field ownership by the types' list
//!   and map semantics, from a table of the built-in types or the CRD's `openAPIV3Schema`;
//!   apply conflicts (`409`), `force`, removal of fields an applier stops applying), `delete`
//!   (finalizers set `deletionTimestamp` and keep the object until the last one is removed;
//!   `preconditions`; a `Status` `Success` answer except for Pods and Namespaces, which answer
//!   with the object; `propagationPolicy=Foreground`/`Orphan` add the
//!   `foregroundDeletion`/`orphan` finalizer, which stays: as in envtest no garbage collector
//!   runs), `deletecollection`; `dryRun=All` is honoured. An update whose `metadata.uid` is not
//!   the object's gets `409`. Only workloads, Pods, CRDs and custom resources carry
//!   `generation`. Errors are `metav1.Status` bodies.
//! - **List**: `labelSelector` (full syntax), `fieldSelector` (`metadata.name`,
//!   `metadata.namespace`, and a few per-type fields), `limit` + `continue` (a token older than
//!   the history gets `410 Expired`), `resourceVersion` + `resourceVersionMatch`, validated as
//!   kube-apiserver does (`422` on `ListOptions`). The history is the watch cache's window: exact
//!   lists and continue tokens in it are served after a storage compaction
//!   ([`Faults::compact_storage`]); `resourceVersion=0` ignores `limit`; a version from the future
//!   waits up to 3 s, then `504` "Too large resource version" (see the `watch_cache` module).
//! - **Watch**: from a `resourceVersion` (`""`/`"0"` start with `ADDED` for the current state;
//!   older than the history, which starts when the server starts: an `ERROR` event with
//!   `410 Expired`), `allowWatchBookmarks` (a `BOOKMARK` every
//!   [`TestEnvBuilder::bookmark_interval`], a minute by default, and 2 s before the watch's
//!   timeout), `timeoutSeconds`,
//!   `sendInitialEvents=true` (the state as `ADDED`, then a `BOOKMARK` annotated
//!   `k8s.io/initial-events-end: "true"`), selectors (an object that stops matching is sent as
//!   `DELETED`, one that starts matching as `ADDED`); a watch-list from the future ends with an
//!   `ERROR` after 3 s, a plain watch from the future waits for it silently, as kube-apiserver's.
//!   Events are chunked JSON lines. Each watch
//!   has its own task and buffer, so a slow client never holds up the others.
//! - **Auth**: with [`TestEnvBuilder::token`], a request with another token gets `401`, one
//!   without credentials is `system:anonymous`, `403 Forbidden` as RBAC words it (except
//!   `/version` and the health checks). Plain HTTP on loopback by default; [`TestEnvBuilder::tls`] serves HTTPS with a
//!   freshly generated CA and serving certificate for `127.0.0.1`/`localhost`, trusted by
//!   [`TestEnv::client`] and written into the kubeconfig (`certificate-authority-data`).
//!   kubectl (client-go) sends a token only over TLS, so give it a token only with TLS on.
//! - **Reviews**: `authentication.k8s.io/v1` `tokenreviews` and `authorization.k8s.io/v1`
//!   `subjectaccessreviews` (create only, cluster-scoped), answered from a policy set with
//!   [`TestEnvBuilder::user_token`] / [`TestEnvBuilder::allow`] and changed while serving through
//!   [`TestEnv::reviews`]: a known token authenticates as its [`UserInfo`], any other gets
//!   `status.authenticated: false`; a review is allowed when an [`AccessRule`] matches its user
//!   or group, verb and resource or non-resource URL, else `status.allowed: false`.
//! - **Encodings**: JSON; `PartialObjectMetadata` when asked for (metadata informers);
//!   protobuf request bodies for `ConfigMap`, `Secret`, `Namespace`, `ServiceAccount` and `Lease`
//!   (typed `kubectl create` commands), other protobuf bodies get `415`. Answers are JSON.
//! - **Faults**: see [`Faults`] (in-process) and the admin endpoint (`/kcr/faults/...`, enabled
//!   with [`TestEnvBuilder::admin_endpoint`], on in `kcr-apiserver`): close every watch, close
//!   watches after N events, compact the history, fail the next N requests, add latency,
//!   refuse writes from a user agent or to an object, stop and restart serving on the same port.
//! - **Robustness**: malformed JSON, wrong `kind`/`apiVersion`, missing names, unknown
//!   resources and oversized bodies get `400`/`404`/`413`/`422` Status errors; no input panics
//!   the server. A connection that does not send its request head (or finish its TLS handshake)
//!   within 32 s is closed, as kube-apiserver's `ReadHeaderTimeout` does; the `Bearer` scheme is
//!   case-insensitive; every request is logged at debug level (target
//!   `kcr_testenv::request`: verb, URI, status, duration).
//!
//! # Conformance
//!
//! `tests/conformance.rs` replays a corpus recorded from a real kube-apiserver v1.36.2
//! (`tests/conformance/`) and prints how many cases conform; `tests/conformance/known-failing.txt`
//! lists, with reasons, the cases that do not yet. Not emulated: field management
//! (`managedFields`) and server-side apply field ownership, strategic merge by patch keys,
//! custom resource schema validation, defaulting of built-in kinds beyond namespaces, exact
//! lists older than the watch cache window but not compacted in storage (kube-apiserver reads
//! them from etcd; kcr-testenv keeps no history beyond its window), Go's `cannot unmarshal ...
//! into Go struct field` messages for values of the wrong type, garbage
//! collection, and every controller of kube-controller-manager except the namespace finalizer.
//!
//! # Admin endpoint
//!
//! Every call is a `POST` (with the bearer token when one is configured):
//!
//! | path | query | effect |
//! | --- | --- | --- |
//! | `/kcr/faults/close-watches` | | [`Faults::close_all_watches`] |
//! | `/kcr/faults/close-watches-after` | `events=N` (absent: off) | [`Faults::close_watches_after_events`] |
//! | `/kcr/faults/compact` | | [`Faults::compact_history`] |
//! | `/kcr/faults/compact-storage` | | [`Faults::compact_storage`] |
//! | `/kcr/faults/fail` | `count=N&status=S[&verb=V][&resource=R][&retryAfter=SECS]` | [`Faults::fail_next`] |
//! | `/kcr/faults/latency` | `ms=N` | [`Faults::set_latency`] |
//! | `/kcr/faults/refuse-user-agent` | `userAgent=UA` | [`Faults::refuse_updates_from_user_agent`] |
//! | `/kcr/faults/refuse-object` | `resource=R[&namespace=NS]&name=N` | [`Faults::refuse_updates_to`] |
//! | `/kcr/faults/clear` | | [`Faults::clear`] |
//! | `/kcr/faults/restart` | `downMs=N` (default 500) | stop serving, wait, serve again on the same port |
//!
//! # The binary
//!
//! `kcr-apiserver --port N --kubeconfig-out PATH [--token T] [--tls] [--history-size N]
//! [--bookmark-interval-ms N]` serves until interrupted and prints where it listens. Build it on
//! its own with `cargo build -p kcr-testenv --features latest --bin kcr-apiserver` (the `latest`
//! feature selects k8s-openapi's newest Kubernetes version, which a library must not do).

mod admin;
mod api;
mod body;
mod defaults;
mod discovery;
mod error;
mod faults;
#[cfg(test)]
mod fuzz;
mod managed_fields;
mod meta;
mod namespace;
mod patch;
mod protobuf;
mod registry;
mod review;
mod selector;
mod server;
mod status;
mod store;
mod test_cluster;
mod test_env;
mod tls;
mod type_meta;
mod validation;
mod watch;
mod watch_cache;
mod wire;

pub use error::{Error, Result};
pub use faults::{Failure, Faults};
pub use review::{AccessRule, Reviews, UserInfo};
pub use test_cluster::{KUBECONFIG_VAR, TestCluster};
pub use test_env::{TestEnv, TestEnvBuilder};
