//! [`Reflector`]: keeps a store in step with the API server through List &
//! Watch and the resource version (client-go's `reflector.go`).

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kcr_metrics::reflector::{NamedReflectorMetrics, ReflectorMetrics};
use kube::Resource;
use parking_lot::Mutex;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, debug, info_span, warn};

use crate::backoff::{Backoff, BackoffConfig};
use crate::error::{Error, Result};
use crate::listwatch::{
    ListOptions, ListerWatcher, VersionMatch, WatchEvent, WatchOptions, WatchStream,
};
use crate::store::ReflectorStore;

/// client-go's default page size for the initial list.
pub const DEFAULT_PAGE_SIZE: u32 = 500;

/// client-go's minimum watch timeout: each watch asks the server to end it
/// after a random time in `[min, 2 × min)`.
pub const DEFAULT_MIN_WATCH_TIMEOUT: Duration = Duration::from_secs(300);

type WatchErrorHandler = Arc<dyn Fn(&Error) + Send + Sync>;
type ShouldResync = Arc<dyn Fn() -> bool + Send + Sync>;

/// What the reflector shares with its readers while it runs.
#[derive(Debug, Default)]
struct Shared {
    // parking_lot locks: held only to copy a short string, never across `.await`.
    last_sync_resource_version: Mutex<String>,
    /// The last synced version is known to be too old (client-go's
    /// `isLastSyncResourceVersionUnavailable`): the next list uses `""`.
    resource_version_unavailable: Mutex<bool>,
    /// The server refused a streaming list; use list + watch from now on.
    watch_list_unsupported: Mutex<bool>,
}

/// Why a list-and-watch cycle ended without an error.
enum Restart {
    /// The version expired (`410`): relist. `delivered` tells whether any
    /// watch event arrived since the last list.
    Expired { delivered: bool },
}

/// Keeps a [`ReflectorStore`] in step with the API server (client-go's
/// `Reflector`).
///
/// It lists (resource version `"0"`, pages of 500), hands the store one
/// `replace`, then watches from the list's version with bookmarks and a
/// random server-side timeout in `[300 s, 600 s)`, re-opening the watch from
/// the last version whenever it ends. An expired version (`410 Gone`) makes
/// it relist; other errors back off exponentially (800 ms doubling to 30 s,
/// jittered, reset after 2 min of health; `429` waits `Retry-After`). It never
/// gives up: [`Reflector::run`] returns only when cancelled.
///
/// ```no_run
/// # async fn doc(client: kube::Client) {
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kcr_cache::Cache;
/// use kcr_reflector::Reflector;
/// use tokio_util::sync::CancellationToken;
///
/// let cache = Arc::new(Cache::<ConfigMap>::default());
/// let api = kube::Api::<ConfigMap>::all(client);
/// let reflector = Reflector::new(api, cache.clone()).name("configmaps");
/// let cancel = CancellationToken::new();
/// tokio::spawn({
///     let cancel = cancel.clone();
///     async move { reflector.run(cancel).await }
/// });
/// # }
/// ```
pub struct Reflector<K> {
    name: String,
    lister_watcher: Arc<dyn ListerWatcher<K>>,
    store: Arc<dyn ReflectorStore<K>>,
    label_selector: Option<String>,
    field_selector: Option<String>,
    page_size: u32,
    min_watch_timeout: Duration,
    resync_period: Option<Duration>,
    should_resync: Option<ShouldResync>,
    watch_error_handler: Option<WatchErrorHandler>,
    use_watch_list: bool,
    backoff: BackoffConfig,
    metrics: NamedReflectorMetrics,
    shared: Arc<Shared>,
}

impl<K> std::fmt::Debug for Reflector<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reflector")
            .field("name", &self.name)
            .field("label_selector", &self.label_selector)
            .field("field_selector", &self.field_selector)
            .field("page_size", &self.page_size)
            .field("resync_period", &self.resync_period)
            .field("use_watch_list", &self.use_watch_list)
            .field("backoff", &self.backoff)
            .field(
                "last_sync_resource_version",
                &*self.shared.last_sync_resource_version.lock(),
            )
            .finish_non_exhaustive()
    }
}

fn catch<T>(what: &str, f: impl FnOnce() -> T) -> Option<T> {
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "<non-string panic>".to_owned());
            warn!(hook = what, %message, "a reflector hook panicked; the panic was caught");
            None
        }
    }
}

impl<K> Reflector<K>
where
    K: Resource + Send + Sync + 'static,
{
    /// A reflector that lists and watches `lister_watcher` into `store`, with
    /// client-go's defaults. Configure it with the builder methods.
    pub fn new<L, S>(lister_watcher: L, store: Arc<S>) -> Self
    where
        L: ListerWatcher<K> + 'static,
        S: ReflectorStore<K> + 'static,
    {
        Self::from_parts(Arc::new(lister_watcher), store)
    }

    /// A reflector over an already shared lister-watcher and store.
    pub fn from_parts(
        lister_watcher: Arc<dyn ListerWatcher<K>>,
        store: Arc<dyn ReflectorStore<K>>,
    ) -> Self {
        let name = "reflector".to_owned();
        Self {
            metrics: ReflectorMetrics::global().for_reflector(&name),
            name,
            lister_watcher,
            store,
            label_selector: None,
            field_selector: None,
            page_size: DEFAULT_PAGE_SIZE,
            min_watch_timeout: DEFAULT_MIN_WATCH_TIMEOUT,
            resync_period: None,
            should_resync: None,
            watch_error_handler: None,
            use_watch_list: false,
            backoff: BackoffConfig::default(),
            shared: Arc::default(),
        }
    }

    /// Names the reflector (logs, spans and the metrics' `name` label).
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self.metrics = ReflectorMetrics::global().for_reflector(&self.name);
        self
    }

    /// Records metrics into `metrics` (families registered against a registry
    /// of the caller's own) instead of the default registry.
    #[must_use]
    pub fn metrics(mut self, metrics: &ReflectorMetrics) -> Self {
        self.metrics = metrics.for_reflector(&self.name);
        self
    }

    /// Lists and watches only objects matching this label selector.
    #[must_use]
    pub fn label_selector(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into());
        self
    }

    /// Lists and watches only objects matching this field selector.
    #[must_use]
    pub fn field_selector(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into());
        self
    }

    /// The list page size (client-go's `WatchListPageSize`; default 500, 0
    /// lists everything in one response).
    #[must_use]
    pub fn page_size(mut self, page_size: u32) -> Self {
        self.page_size = page_size;
        self
    }

    /// The minimum server-side watch timeout (default 5 min); each watch
    /// asks for a random timeout in `[min, 2 × min)`.
    #[must_use]
    pub fn min_watch_timeout(mut self, min: Duration) -> Self {
        self.min_watch_timeout = min.max(Duration::from_secs(1));
        self
    }

    /// Calls the store's `resync` every `period` (zero disables it).
    #[must_use]
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync_period = (!period.is_zero()).then_some(period);
        self
    }

    /// Asked at every resync tick; the store resyncs only when it answers
    /// `true` (client-go's `ShouldResync`). A panic counts as `false`.
    #[must_use]
    pub fn should_resync(mut self, f: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        self.should_resync = Some(Arc::new(f));
        self
    }

    /// Called with every list and watch error (client-go's
    /// `WatchErrorHandler`), after the reflector has logged and counted it.
    /// A panic is caught and logged.
    #[must_use]
    pub fn watch_error_handler(mut self, f: impl Fn(&Error) + Send + Sync + 'static) -> Self {
        self.watch_error_handler = Some(Arc::new(f));
        self
    }

    /// Uses streaming lists (client-go's WatchList: `sendInitialEvents=true`,
    /// `resourceVersionMatch=NotOlderThan`, the initial state ending at the
    /// bookmark annotated `k8s.io/initial-events-end`) instead of a list,
    /// falling back to list + watch when the server refuses them.
    #[must_use]
    pub fn use_watch_list(mut self, enabled: bool) -> Self {
        self.use_watch_list = enabled;
        self
    }

    /// The backoff between failed attempts (default: client-go's).
    #[must_use]
    pub fn backoff(mut self, backoff: BackoffConfig) -> Self {
        self.backoff = backoff;
        self
    }

    /// The resource version of the last list or event the store received
    /// (client-go's `LastSyncResourceVersion`); empty before the first list.
    pub fn last_sync_resource_version(&self) -> String {
        self.shared.last_sync_resource_version.lock().clone()
    }

    /// The reflector's name.
    pub fn reflector_name(&self) -> &str {
        &self.name
    }

    fn set_last_sync_resource_version(&self, resource_version: &str) {
        if resource_version.is_empty() {
            return;
        }
        {
            let mut last = self.shared.last_sync_resource_version.lock();
            if *last == resource_version {
                return;
            }
            resource_version.clone_into(&mut last);
        }
        self.metrics.set_last_resource_version(resource_version);
    }

    fn set_resource_version_unavailable(&self, unavailable: bool) {
        *self.shared.resource_version_unavailable.lock() = unavailable;
    }

    /// client-go's `relistResourceVersion`: `""` when the last version is
    /// known to be gone, `"0"` before the first list, else the last version.
    fn relist_resource_version(&self) -> String {
        if *self.shared.resource_version_unavailable.lock() {
            return String::new();
        }
        let last = self.last_sync_resource_version();
        if last.is_empty() {
            "0".to_owned()
        } else {
            last
        }
    }

    /// client-go's `rewatchResourceVersion`.
    fn rewatch_resource_version(&self) -> String {
        if *self.shared.resource_version_unavailable.lock() {
            return String::new();
        }
        self.last_sync_resource_version()
    }

    fn watch_timeout_seconds(&self) -> u32 {
        let r: f64 = rand::random();
        let secs = self.min_watch_timeout.as_secs_f64() * (1.0 + r);
        // Below 2 × min; `as` saturates and the minimum is at least 1 s.
        (secs.floor() as u32).max(1)
    }

    /// Logs, counts and hands an error to the watch error handler.
    fn report(&self, error: &Error) {
        self.metrics.watch_error(error.reason());
        if error.is_decode() {
            self.metrics.decode_errors.inc();
        }
        if error.is_expired() {
            debug!(reflector = %self.name, %error, "resource version expired");
        } else {
            warn!(reflector = %self.name, %error, "list/watch failed");
        }
        if let Some(handler) = &self.watch_error_handler {
            catch("watch_error_handler", || handler(error));
        }
    }

    /// Runs List & Watch until `cancel` fires. Never gives up on errors; a
    /// request in flight is dropped at once on cancellation, and the store is
    /// only ever written between requests, so it stays consistent.
    pub async fn run(&self, cancel: CancellationToken) {
        let span = info_span!("reflector", reflector = %self.name);
        async {
            let mut backoff = Backoff::new(self.backoff);
            let mut delay: Option<Duration> = None;
            loop {
                if let Some(d) = delay.take() {
                    debug!(delay_ms = d.as_millis() as u64, "backing off");
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => return,
                        () = tokio::time::sleep(d) => {}
                    }
                }
                let cycle = tokio::select! {
                    biased;
                    () = cancel.cancelled() => return,
                    r = self.list_and_watch(&mut backoff) => r,
                };
                match cycle {
                    Ok(Restart::Expired { delivered }) => {
                        self.metrics.relists_expired.inc();
                        // A server that answers every watch with 410 must not
                        // make us relist in a tight loop.
                        if !delivered {
                            delay = Some(backoff.next_delay());
                        }
                    }
                    Err(error) => {
                        self.report(&error);
                        delay = Some(error.retry_after().unwrap_or_else(|| backoff.next_delay()));
                    }
                }
            }
        }
        .instrument(span)
        .await;
    }

    async fn list_and_watch(&self, backoff: &mut Backoff) -> Result<Restart> {
        let mut initial = None;
        if self.use_watch_list && !*self.shared.watch_list_unsupported.lock() {
            match self.watch_list().await {
                Ok(stream) => initial = Some(stream),
                Err(error) => {
                    self.report(&error);
                    if error.is_expired() {
                        self.set_resource_version_unavailable(true);
                    } else if error
                        .status()
                        .is_some_and(|s| (400..500).contains(&s.code) && s.code != 429)
                    {
                        warn!(reflector = %self.name, "the server refuses streaming lists; using list + watch");
                        *self.shared.watch_list_unsupported.lock() = true;
                    }
                    debug!(reflector = %self.name, "falling back to list + watch");
                }
            }
        }
        if initial.is_none() {
            self.list().await?;
        }
        self.watch_loop(initial, backoff).await
    }

    fn list_options(&self) -> ListOptions {
        ListOptions {
            label_selector: self.label_selector.clone(),
            field_selector: self.field_selector.clone(),
            ..ListOptions::default()
        }
    }

    fn watch_options(&self, resource_version: String) -> WatchOptions {
        WatchOptions {
            label_selector: self.label_selector.clone(),
            field_selector: self.field_selector.clone(),
            resource_version,
            timeout_seconds: Some(self.watch_timeout_seconds()),
            allow_watch_bookmarks: true,
            ..WatchOptions::default()
        }
    }

    /// Lists everything (all pages) and replaces the store's content.
    async fn list(&self) -> Result<()> {
        let resource_version = self.relist_resource_version();
        let span = info_span!("list", reflector = %self.name, resource_version = %resource_version);
        async {
            let started = Instant::now();
            let (items, list_version) = match self.list_all(&resource_version).await {
                Ok(listed) => listed,
                Err(error) if error.is_expired() || error.is_too_large_resource_version() => {
                    // The version (or a continue token) is gone: list the latest.
                    self.report(&error);
                    self.metrics.relists_expired.inc();
                    self.set_resource_version_unavailable(true);
                    self.list_all("").await?
                }
                Err(error) => return Err(error),
            };
            self.metrics
                .list_duration
                .observe(started.elapsed().as_secs_f64());
            self.metrics.items_per_list.observe(items.len() as f64);
            debug!(items = items.len(), resource_version = %list_version, "listed");
            self.store
                .replace(items, &list_version)
                .map_err(|source| Error::Store {
                    op: "replace",
                    source,
                })?;
            self.set_resource_version_unavailable(false);
            self.set_last_sync_resource_version(&list_version);
            Ok(())
        }
        .instrument(span)
        .await
    }

    async fn list_all(&self, resource_version: &str) -> Result<(Vec<Arc<K>>, String)> {
        self.metrics.lists.inc();
        // client-go pages only lists served from the cache ("0") or etcd
        // (""); a list at a given version asks for everything at once.
        let paginate =
            self.page_size > 0 && (resource_version.is_empty() || resource_version == "0");
        let mut options = self.list_options();
        options.resource_version =
            (!resource_version.is_empty()).then(|| resource_version.to_owned());
        options.limit = paginate.then_some(self.page_size);
        let mut items = Vec::new();
        loop {
            let page = self.lister_watcher.list(&options).await?;
            if items.is_empty() {
                // Trust the server's count only so far: it is outside input.
                let remaining =
                    usize::try_from(page.remaining_item_count.unwrap_or(0)).unwrap_or(0);
                items.reserve(page.items.len() + remaining.min(1 << 20));
            }
            items.extend(page.items.into_iter().map(Arc::new));
            match page.continue_token {
                Some(token) => options.continue_token = Some(token),
                None => return Ok((items, page.resource_version)),
            }
        }
    }

    /// A streaming list: returns the open watch once the initial state has
    /// been handed to the store.
    async fn watch_list(&self) -> Result<WatchStream<K>> {
        let mut options = self.watch_options(self.rewatch_resource_version());
        options.send_initial_events = true;
        options.resource_version_match = Some(VersionMatch::NotOlderThan);
        let span = info_span!("watch_list", reflector = %self.name, resource_version = %options.resource_version);
        async {
            let started = Instant::now();
            self.metrics.watches.inc();
            let mut stream = self.lister_watcher.watch(&options).await?;
            let mut state: HashMap<String, Arc<K>> = HashMap::new();
            loop {
                match stream.next().await {
                    None | Some(Err(Error::Read(_))) => return Err(Error::WatchListIncomplete),
                    Some(Err(error)) => return Err(error),
                    Some(Ok(WatchEvent::Added(obj) | WatchEvent::Modified(obj))) => {
                        state.insert(object_key(&obj), Arc::new(obj));
                    }
                    Some(Ok(WatchEvent::Deleted(obj))) => {
                        state.remove(&object_key(&obj));
                    }
                    Some(Ok(WatchEvent::Bookmark(bookmark))) if bookmark.is_initial_events_end() => {
                        let items: Vec<Arc<K>> = state.into_values().collect();
                        self.metrics.list_duration.observe(started.elapsed().as_secs_f64());
                        self.metrics.items_per_list.observe(items.len() as f64);
                        debug!(items = items.len(), resource_version = %bookmark.resource_version, "streamed the initial state");
                        self.store
                            .replace(items, &bookmark.resource_version)
                            .map_err(|source| Error::Store { op: "replace", source })?;
                        self.set_resource_version_unavailable(false);
                        self.set_last_sync_resource_version(&bookmark.resource_version);
                        return Ok(stream);
                    }
                    Some(Ok(WatchEvent::Bookmark(_))) => {}
                    Some(Ok(WatchEvent::Error(status))) => return Err(Error::from_status(*status)),
                }
            }
        }
        .instrument(span)
        .await
    }

    /// Watches (re-opening the watch from the last version whenever it ends
    /// normally) until the version expires or an error needs a relist.
    async fn watch_loop(
        &self,
        mut pending: Option<WatchStream<K>>,
        backoff: &mut Backoff,
    ) -> Result<Restart> {
        let mut resync_at = self.resync_period.map(|p| Instant::now() + p);
        let mut delivered = false;
        loop {
            let stream = match pending.take() {
                Some(stream) => stream,
                None => {
                    let options = self.watch_options(self.rewatch_resource_version());
                    self.metrics.watches.inc();
                    let opened = self
                        .with_resync(self.lister_watcher.watch(&options), &mut resync_at)
                        .await;
                    match opened {
                        Ok(stream) => stream,
                        Err(error) if error.is_expired() => {
                            self.report(&error);
                            return Ok(Restart::Expired { delivered });
                        }
                        // client-go retries these watches without relisting.
                        Err(error)
                            if error.is_server_unreachable() || error.is_too_many_requests() =>
                        {
                            self.report(&error);
                            let delay = error.retry_after().unwrap_or_else(|| backoff.next_delay());
                            self.with_resync(tokio::time::sleep(delay), &mut resync_at)
                                .await;
                            continue;
                        }
                        Err(error) => return Err(error),
                    }
                }
            };
            let span = info_span!("watch", reflector = %self.name, resource_version = %self.last_sync_resource_version());
            let handled = self
                .watch_handler(stream, &mut resync_at, &mut delivered)
                .instrument(span)
                .await;
            match handled {
                Ok(()) => {}
                Err(error) if error.is_expired() => {
                    self.report(&error);
                    return Ok(Restart::Expired { delivered });
                }
                Err(error) if error.is_too_many_requests() => {
                    self.report(&error);
                    let delay = error.retry_after().unwrap_or_else(|| backoff.next_delay());
                    self.with_resync(tokio::time::sleep(delay), &mut resync_at)
                        .await;
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Applies one watch's events to the store until it ends.
    async fn watch_handler(
        &self,
        mut stream: WatchStream<K>,
        resync_at: &mut Option<Instant>,
        delivered: &mut bool,
    ) -> Result<()> {
        let started = Instant::now();
        let mut count: u64 = 0;
        let result = loop {
            let next = self.with_resync(stream.next(), resync_at).await;
            let event = match next {
                None => break Ok(()),
                // A transport error ends a watch like a close does.
                Some(Err(Error::Read(error))) => {
                    debug!(%error, "the watch stream broke; re-watching");
                    break Ok(());
                }
                Some(Err(error)) => break Err(error),
                Some(Ok(event)) => event,
            };
            let (op, result, resource_version) = match event {
                WatchEvent::Added(obj) => {
                    let rv = resource_version_of(&obj);
                    ("add", self.store.add(Arc::new(obj)), rv)
                }
                WatchEvent::Modified(obj) => {
                    let rv = resource_version_of(&obj);
                    ("update", self.store.update(Arc::new(obj)), rv)
                }
                WatchEvent::Deleted(obj) => {
                    let rv = resource_version_of(&obj);
                    ("delete", self.store.delete(Arc::new(obj)), rv)
                }
                WatchEvent::Bookmark(bookmark) => {
                    ("bookmark", Ok(()), Some(bookmark.resource_version))
                }
                WatchEvent::Error(status) => break Err(Error::from_status(*status)),
            };
            if let Err(source) = result {
                // client-go logs and goes on: the event's version still counts.
                self.report(&Error::Store { op, source });
            }
            if let Some(rv) = resource_version {
                self.set_last_sync_resource_version(&rv);
            }
            count += 1;
            *delivered = true;
        };
        let elapsed = started.elapsed();
        self.metrics.watch_duration.observe(elapsed.as_secs_f64());
        self.metrics.items_per_watch.observe(count as f64);
        if result.is_ok() && count == 0 && elapsed < Duration::from_secs(1) {
            self.metrics.short_watches.inc();
            return Err(Error::VeryShortWatch);
        }
        result
    }

    /// Awaits `fut`, calling the store's resync whenever the resync period
    /// elapses meanwhile.
    async fn with_resync<F: Future>(&self, fut: F, resync_at: &mut Option<Instant>) -> F::Output {
        let mut fut = pin!(fut);
        loop {
            let Some(at) = *resync_at else {
                return fut.await;
            };
            tokio::select! {
                biased;
                out = &mut fut => return out,
                () = sleep_until(at) => {
                    *resync_at = self.resync_period.map(|p| Instant::now() + p);
                    let should = match &self.should_resync {
                        Some(f) => catch("should_resync", || f()).unwrap_or(false),
                        None => true,
                    };
                    if should {
                        debug!(reflector = %self.name, "resync");
                        if let Err(source) = self.store.resync() {
                            self.report(&Error::Store { op: "resync", source });
                        }
                    }
                }
            }
        }
    }
}

fn resource_version_of<K: Resource>(obj: &K) -> Option<String> {
    obj.meta().resource_version.clone()
}

fn object_key<K: Resource>(obj: &K) -> String {
    let meta = obj.meta();
    let name = meta.name.as_deref().unwrap_or_default();
    match meta.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    }
}

#[cfg(test)]
#[path = "reflector_tests.rs"]
mod tests;
