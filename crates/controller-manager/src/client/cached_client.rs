//! [`CachedClient`]: writes through the API server, reads from the manager's cache, and (with
//! read-your-own-writes on) never reads the cache older than its own writes.

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use either::Either;
use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcr_cache::{IndexedStore, Selector};
use kcr_informer::{SharedIndexInformer, SyncedVersion, parse_resource_version};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::core::Status;
use kube::{Client, Resource};
use parking_lot::Mutex;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::time::Instant;

use super::read_your_writes::WriteTracker;
use crate::controller::ReconcileContext;
use crate::error::{Error, Result};

/// How long a read waits for the cache to show this process's writes when neither the call
/// ([`ReadOptions::deadline`]) nor the reconcile ([`ReconcileContext::deadline`]) sets a
/// deadline.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// An informer of the manager's: its object type and the namespace it caches (`None`: all).
type InformerId = (TypeId, Option<String>);

/// The write trackers of a manager: one per informer (type and namespace), shared by every
/// [`CachedClient`] of that type, so a write through one client holds back reads through
/// another.
#[derive(Default)]
pub(crate) struct WriteTrackers {
    // A parking_lot lock, never held across `.await`.
    by_informer: Mutex<HashMap<InformerId, Arc<WriteTracker>>>,
}

impl WriteTrackers {
    fn tracker<K: 'static>(&self, namespace: Option<&str>) -> Arc<WriteTracker> {
        self.by_informer
            .lock()
            .entry((TypeId::of::<K>(), namespace.map(str::to_owned)))
            .or_default()
            .clone()
    }
}

impl Debug for WriteTrackers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteTrackers")
            .field("informers", &self.by_informer.lock().len())
            .finish()
    }
}

/// How one read of a [`CachedClient`] treats this process's writes the cache may not show yet.
///
/// ```
/// use std::time::Duration;
/// use kcr_controller_manager::client::ReadOptions;
///
/// // Wait at most 2 s for the cache to show our own writes.
/// let bounded = ReadOptions::new().timeout(Duration::from_secs(2));
/// // Read the cache as it is (no wait; may be older than our own last write).
/// let as_is = ReadOptions::new().wait(false);
/// # let _ = (bounded, as_is);
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct ReadOptions {
    wait: bool,
    deadline: Option<Instant>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl ReadOptions {
    /// Waits for this process's writes, until the reconcile's deadline (or
    /// [`DEFAULT_READ_TIMEOUT`] outside a reconcile or without a reconcile timeout).
    pub fn new() -> Self {
        Self {
            wait: true,
            deadline: None,
        }
    }

    /// Whether the read waits for the cache to show this process's writes (default: true);
    /// false reads the cache as it is (the per-call opt-out).
    pub fn wait(mut self, wait: bool) -> Self {
        self.wait = wait;
        self
    }

    /// Waits no later than `deadline`, then fails with [`Error::CacheNotCaughtUp`].
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// [`deadline`](Self::deadline) `timeout` from now.
    pub fn timeout(self, timeout: Duration) -> Self {
        self.deadline(Instant::now() + timeout)
    }

    fn resolve_deadline(&self) -> Instant {
        self.deadline
            .or_else(|| ReconcileContext::current().and_then(|c| c.deadline()))
            .unwrap_or_else(|| Instant::now() + DEFAULT_READ_TIMEOUT)
    }
}

/// Read-your-own-writes state of one informer.
struct Track {
    version: SyncedVersion,
    writes: Arc<WriteTracker>,
}

/// One informer behind the client (one per cached namespace, or one).
struct Shard<K> {
    namespace: Option<String>,
    informer: SharedIndexInformer<K>,
    cache: Arc<IndexedStore<K>>,
    track: Option<Track>,
}

impl<K: Resource + Send + Sync + 'static> Shard<K> {
    fn uid_at(&self, key: &str) -> Option<String> {
        self.cache
            .get_by_key(key)
            .and_then(|o| o.meta().uid.clone())
    }
}

/// A client for one type, as a reconciler uses it (controller-runtime's default client, with
/// its experimental read-your-own-writes on when the manager's
/// [`Options::read_your_own_writes`](crate::Options::read_your_own_writes) is): writes go to
/// the API server, reads come from the manager's cache (the informers of
/// [`Manager::informer_reader`](crate::Manager::informer_reader)). Made by
/// [`Manager::cached_client`](crate::Manager::cached_client); cheap to clone.
///
/// With read-your-own-writes on, every successful write (create, update, patch and apply,
/// delete, status and scale writes) records the resource version the server returned for the
/// object (a delete answered with a `Status` records the object's UID), and a read waits until
/// the cache shows this process's writes: [`get`](Self::get) until the object's informer has
/// reached its version, [`list`](Self::list) until every informer of the type has reached the
/// highest version of the type not shown yet. A read with nothing pending costs one atomic
/// load more than a plain cache read. Writes by anyone else never hold a read back. The wait
/// ends when the watch delivers the write (no polling) and no later than the deadline
/// ([`ReadOptions`]), with [`Error::CacheNotCaughtUp`]; [`ReadOptions::wait`] turns it off
/// per call. The protocol is described in the [module documentation](super).
///
/// ```no_run
/// # async fn doc(manager: kcr_controller_manager::Manager) -> kcr_controller_manager::Result<()> {
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::api::PostParams;
///
/// let config_maps = manager.cached_client::<ConfigMap>();
/// let mut cm = ConfigMap::default();
/// cm.metadata.name = Some("settings".into());
/// config_maps.create(Some("default"), &PostParams::default(), &cm).await?;
/// // The cache shows the create, although its watch event may not have arrived yet when the
/// // create returned: the read waits for it.
/// assert!(config_maps.get(Some("default"), "settings").await?.is_some());
/// # Ok(())
/// # }
/// ```
pub struct CachedClient<K> {
    client: Client,
    shards: Arc<[Shard<K>]>,
    /// The label selector of the informers: writes of objects it excludes are recorded only
    /// when the cache holds the object (else its informer would never see the write).
    label_selector: Option<Arc<Selector>>,
    kind: Arc<str>,
}

impl<K> Clone for CachedClient<K> {
    fn clone(&self) -> Self {
        Self {
            client: self.client.clone(),
            shards: self.shards.clone(),
            label_selector: self.label_selector.clone(),
            kind: self.kind.clone(),
        }
    }
}

impl<K> Debug for CachedClient<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let namespaces: Vec<Option<&str>> =
            self.shards.iter().map(|s| s.namespace.as_deref()).collect();
        f.debug_struct("CachedClient")
            .field("kind", &self.kind)
            .field("namespaces", &namespaces)
            .field(
                "read_your_own_writes",
                &self.shards.iter().any(|s| s.track.is_some()),
            )
            .finish()
    }
}

fn object_key(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_owned(),
    }
}

impl<K> CachedClient<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Send + Sync + 'static,
{
    /// A client over `informers`, the `i`-th caching `namespaces[i]` (an empty `namespaces`:
    /// one informer for every namespace, or a cluster-scoped type).
    pub(crate) fn new(
        client: Client,
        informers: Vec<SharedIndexInformer<K>>,
        namespaces: &[String],
        label_selector: Option<&str>,
        trackers: Option<&WriteTrackers>,
    ) -> Self {
        let shards: Vec<Shard<K>> = informers
            .into_iter()
            .enumerate()
            .map(|(i, informer)| {
                let namespace = namespaces.get(i).cloned();
                let track = trackers.map(|t| Track {
                    version: informer.synced_version(),
                    writes: t.tracker::<K>(namespace.as_deref()),
                });
                Shard {
                    cache: informer.get_indexer(),
                    namespace,
                    informer,
                    track,
                }
            })
            .collect();
        let label_selector = label_selector.and_then(|s| match Selector::parse(s) {
            Ok(sel) if !sel.is_empty() => Some(Arc::new(sel)),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(selector = s, error = %e, "the informers' label selector does not parse; every write is recorded");
                None
            }
        });
        Self {
            client,
            shards: shards.into(),
            label_selector,
            kind: Arc::from(K::kind(&()).as_ref()),
        }
    }

    /// The informer caching objects of `namespace`.
    fn shard_for(&self, namespace: Option<&str>) -> Option<&Shard<K>> {
        self.shards
            .iter()
            .find(|s| s.namespace.is_none() || s.namespace.as_deref() == namespace)
    }

    /// Whether read-your-own-writes is on for this client.
    pub fn reads_own_writes(&self) -> bool {
        self.shards.iter().any(|s| s.track.is_some())
    }

    /// The informers behind the client (one per cached namespace, or one).
    pub fn informers(&self) -> Vec<SharedIndexInformer<K>> {
        self.shards.iter().map(|s| s.informer.clone()).collect()
    }

    // ---- reads ----

    /// The cached object `name` in `namespace` (`None` for a cluster-scoped object), once the
    /// cache shows this process's writes of it (see [`ReadOptions::new`] for the deadline).
    pub async fn get(&self, namespace: Option<&str>, name: &str) -> Result<Option<Arc<K>>> {
        self.get_with(namespace, name, &ReadOptions::new()).await
    }

    /// [`get`](Self::get) with options: another deadline, or no wait.
    pub async fn get_with(
        &self,
        namespace: Option<&str>,
        name: &str,
        options: &ReadOptions,
    ) -> Result<Option<Arc<K>>> {
        let Some(shard) = self.shard_for(namespace) else {
            return Ok(None);
        };
        let key = object_key(namespace, name);
        if let Some(track) = &shard.track
            && options.wait
            && !track.writes.all_seen_at(|| track.version.current())
        {
            // The slow path's future is boxed: the fast path's stays small.
            Box::pin(self.wait_for_key(shard, track, &key, options)).await?;
        }
        Ok(shard.cache.get_by_key(&key))
    }

    /// Waits until `shard`'s cache shows this process's writes of `key`, or the deadline.
    async fn wait_for_key(
        &self,
        shard: &Shard<K>,
        track: &Track,
        key: &str,
        options: &ReadOptions,
    ) -> Result<()> {
        let uid_at = |k: &str| shard.uid_at(k);
        let ready = |current: u64| track.writes.key_seen_at(key, current, &uid_at);
        if ready(track.version.current()) {
            return Ok(());
        }
        let deadline = options.resolve_deadline();
        match tokio::time::timeout_at(deadline, track.version.wait_until(ready)).await {
            Ok(()) => Ok(()),
            Err(_) => Err(Error::CacheNotCaughtUp {
                kind: self.kind.to_string(),
                object: Some(key.to_owned()),
                wanted: track.writes.wanted_for(key).unwrap_or_default(),
                reached: track.version.current(),
            }),
        }
    }

    /// Every cached object, once every informer of the type shows this process's writes.
    pub async fn list(&self) -> Result<Vec<Arc<K>>> {
        self.list_with(&ReadOptions::new()).await
    }

    /// [`list`](Self::list) with options: another deadline, or no wait.
    pub async fn list_with(&self, options: &ReadOptions) -> Result<Vec<Arc<K>>> {
        if options.wait {
            let mut deadline = None;
            for shard in self.shards.iter() {
                let Some(track) = &shard.track else { continue };
                if track.writes.all_seen_at(|| track.version.current()) {
                    continue;
                }
                let uid_at = |k: &str| shard.uid_at(k);
                let ready = |current: u64| track.writes.all_seen(current, &uid_at);
                if ready(track.version.current()) {
                    continue;
                }
                let deadline = *deadline.get_or_insert_with(|| options.resolve_deadline());
                if tokio::time::timeout_at(deadline, track.version.wait_until(ready))
                    .await
                    .is_err()
                {
                    return Err(Error::CacheNotCaughtUp {
                        kind: self.kind.to_string(),
                        object: None,
                        wanted: track.writes.max_version(),
                        reached: track.version.current(),
                    });
                }
            }
        }
        let mut out = Vec::new();
        for shard in self.shards.iter() {
            out.extend(shard.cache.list().iter().cloned());
        }
        Ok(out)
    }

    // ---- the bookkeeping of writes ----

    /// Records a successful write of `namespace`/`name` whose answer carried `meta` (the
    /// written object's, or a scale's), or, for a delete answered with a status, `deleted_uid`.
    fn record(
        &self,
        namespace: Option<&str>,
        name: &str,
        meta: Option<&ObjectMeta>,
        deleted_uid: Option<String>,
    ) {
        let Some(shard) = self.shard_for(namespace) else {
            return;
        };
        let Some(track) = &shard.track else { return };
        let key = object_key(namespace, name);
        let version = meta
            .and_then(|m| m.resource_version.as_deref())
            .and_then(parse_resource_version);
        // A write the informer will never see (its object outside the informer's label
        // selector, neither cached nor written before) would hold reads back until the
        // deadline: not recorded. (A scale carries no labels: its object is known otherwise.)
        let visible = match &self.label_selector {
            None => true,
            Some(selector) => {
                meta.is_some_and(|m| selector.matches_labels(m.labels.as_ref()))
                    || shard.cache.get_by_key(&key).is_some()
                    || track.writes.has(&key)
            }
        };
        if !visible {
            return;
        }
        let uid_at = |k: &str| shard.uid_at(k);
        track
            .writes
            .record(&key, version, deleted_uid, track.version.current(), &uid_at);
    }

    fn record_object(&self, namespace: Option<&str>, obj: &K) {
        let meta = obj.meta();
        let namespace = meta.namespace.as_deref().or(namespace);
        if let Some(name) = meta.name.as_deref() {
            self.record(namespace, name, Some(meta), None);
        }
    }

    fn request(&self, namespace: Option<&str>) -> kube::core::Request {
        kube::core::Request::new(K::url_path(&(), namespace))
    }

    /// Sends a built write of the object itself and records the answer's resource version.
    async fn write(
        &self,
        namespace: Option<&str>,
        req: std::result::Result<http::Request<Vec<u8>>, kube::core::request::Error>,
    ) -> Result<K> {
        let req = req.map_err(kube::Error::BuildRequest)?;
        let written: K = self.client.request(req).await?;
        self.record_object(namespace, &written);
        Ok(written)
    }

    // ---- writes ----

    /// Creates `obj` in `namespace` (`None` for a cluster-scoped type).
    pub async fn create(&self, namespace: Option<&str>, pp: &PostParams, obj: &K) -> Result<K>
    where
        K: Serialize,
    {
        let body = serde_json::to_vec(obj).map_err(kube::Error::SerdeError)?;
        self.write(namespace, self.request(namespace).create(pp, body))
            .await
    }

    /// Replaces (updates) the object `name` with `obj`.
    pub async fn replace(
        &self,
        namespace: Option<&str>,
        name: &str,
        pp: &PostParams,
        obj: &K,
    ) -> Result<K>
    where
        K: Serialize,
    {
        let body = serde_json::to_vec(obj).map_err(kube::Error::SerdeError)?;
        self.write(namespace, self.request(namespace).replace(name, pp, body))
            .await
    }

    /// Patches the object `name`: a JSON, merge or strategic merge patch, or a server-side
    /// apply ([`Patch::Apply`]).
    pub async fn patch<P: Serialize + Debug>(
        &self,
        namespace: Option<&str>,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K> {
        self.write(namespace, self.request(namespace).patch(name, pp, patch))
            .await
    }

    /// Deletes the object `name`: `Left` with the object when its deletion has begun (a
    /// finalizer or a grace period keeps it, with a new resource version) or when the server
    /// returns it, `Right` with the server's status when it is gone (the status's UID is then
    /// what the cache must stop holding).
    pub async fn delete(
        &self,
        namespace: Option<&str>,
        name: &str,
        dp: &DeleteParams,
    ) -> Result<Either<K, Status>> {
        let req = self
            .request(namespace)
            .delete(name, dp)
            .map_err(kube::Error::BuildRequest)?;
        let outcome = self.client.request_status::<K>(req).await?;
        match &outcome {
            Either::Left(obj) => self.record_object(namespace, obj),
            Either::Right(status) => {
                let uid = status.details.as_ref().map(|d| d.uid.clone());
                match uid.filter(|u| !u.is_empty()) {
                    Some(uid) => self.record(namespace, name, None, Some(uid)),
                    None => tracing::debug!(
                        kind = %self.kind,
                        name,
                        "a delete answered with a status without a UID is not tracked"
                    ),
                }
            }
        }
        Ok(outcome)
    }

    /// Replaces the status of the object `name` with `obj`'s (the `status` subresource).
    pub async fn replace_status(
        &self,
        namespace: Option<&str>,
        name: &str,
        pp: &PostParams,
        obj: &K,
    ) -> Result<K>
    where
        K: Serialize,
    {
        let body = serde_json::to_vec(obj).map_err(kube::Error::SerdeError)?;
        self.write(
            namespace,
            self.request(namespace)
                .replace_subresource("status", name, pp, body),
        )
        .await
    }

    /// Patches the status of the object `name` (the `status` subresource).
    pub async fn patch_status<P: Serialize + Debug>(
        &self,
        namespace: Option<&str>,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K> {
        self.write(
            namespace,
            self.request(namespace)
                .patch_subresource("status", name, pp, patch),
        )
        .await
    }

    /// Replaces the scale of the object `name` (the `scale` subresource); the answer's
    /// resource version is the object's.
    pub async fn replace_scale(
        &self,
        namespace: Option<&str>,
        name: &str,
        pp: &PostParams,
        scale: &Scale,
    ) -> Result<Scale> {
        let body = serde_json::to_vec(scale).map_err(kube::Error::SerdeError)?;
        let req = self
            .request(namespace)
            .replace_subresource("scale", name, pp, body)
            .map_err(kube::Error::BuildRequest)?;
        let replaced: Scale = self.client.request(req).await?;
        self.record(namespace, name, Some(&replaced.metadata), None);
        Ok(replaced)
    }

    /// Patches the scale of the object `name` (the `scale` subresource).
    pub async fn patch_scale<P: Serialize + Debug>(
        &self,
        namespace: Option<&str>,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<Scale> {
        let req = self
            .request(namespace)
            .patch_subresource("scale", name, pp, patch)
            .map_err(kube::Error::BuildRequest)?;
        let patched: Scale = self.client.request(req).await?;
        self.record(namespace, name, Some(&patched.metadata), None);
        Ok(patched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_util::sync::CancellationToken;

    #[tokio::test(start_paused = true)]
    async fn a_reads_deadline_should_be_the_calls_else_the_reconciles_else_the_default() {
        let now = Instant::now();
        let call = now + Duration::from_secs(1);
        let reconcile = now + Duration::from_secs(3);
        assert_eq!(
            ReadOptions::new().resolve_deadline(),
            now + DEFAULT_READ_TIMEOUT
        );
        let in_reconcile = |options: ReadOptions| {
            ReconcileContext::new(Some(reconcile), CancellationToken::new())
                .scope(async move { options.resolve_deadline() })
        };
        assert_eq!(in_reconcile(ReadOptions::new()).await, reconcile);
        assert_eq!(in_reconcile(ReadOptions::new().deadline(call)).await, call);
        let no_timeout = ReconcileContext::new(None, CancellationToken::new())
            .scope(async { ReadOptions::new().resolve_deadline() })
            .await;
        assert_eq!(no_timeout, now + DEFAULT_READ_TIMEOUT);
    }
}
