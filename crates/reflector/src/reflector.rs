//! [`Reflector`]: keeps a store in step with the API server through List &
//! Watch and the resource version (client-go's `reflector.go`).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use kcr_cache::TransformFunc;
use kcr_metrics::reflector::{NamedReflectorMetrics, ReflectorMetrics};
use kube::Resource;
use parking_lot::Mutex;
use tokio::time::{Instant, MissedTickBehavior, sleep_until};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, debug, info_span, warn};

use crate::backoff::{Backoff, BackoffConfig};
use crate::error::{Error, Result};
use crate::listwatch::{
    ListOptions, ListerWatcher, VersionMatch, WatchEvent, WatchOptions, WatchStream,
};
use crate::retry_with_deadline::RetryWithDeadline;
use crate::store::ReflectorStore;
use crate::temporary_store::TemporaryStore;

/// client-go's default list page size (its pager's).
pub const DEFAULT_PAGE_SIZE: u32 = 500;

/// client-go's minimum watch timeout: each watch asks the server to end it
/// after a random time in `[min, 2 × min)`. A smaller minimum is not honoured.
pub const DEFAULT_MIN_WATCH_TIMEOUT: Duration = Duration::from_secs(300);

type WatchErrorHandler = Arc<dyn Fn(&Error) + Send + Sync>;
type ShouldResync = Arc<dyn Fn() -> bool + Send + Sync>;

/// How long a streaming list waits, by default, for the bookmark that ends its initial events
/// before the reflector falls back to list and watch (see
/// [`Reflector::initial_events_end_timeout`]).
pub const DEFAULT_INITIAL_EVENTS_END_TIMEOUT: Duration = Duration::from_secs(60);

/// How often a streaming list that has not yet ended warns (client-go's
/// initial-events-end bookmark ticker).
const INITIAL_EVENTS_END_WARNING_INTERVAL: Duration = Duration::from_secs(10);

/// How long without an internal error ends a run of them (client-go: 1 min).
const INTERNAL_ERROR_RESET_PERIOD: Duration = Duration::from_secs(60);

/// What the reflector shares with its readers while it runs.
#[derive(Debug)]
struct Shared {
    // parking_lot locks: held only to copy a short string or step the
    // backoff, never across `.await`.
    last_sync_resource_version: Mutex<String>,
    /// The last synced version is known to be too old or too new (client-go's
    /// `isLastSyncResourceVersionUnavailable`): the next list uses `""`.
    resource_version_unavailable: AtomicBool,
    /// A list at `"0"` came back in pages (client-go's `paginatedResult`):
    /// later lists page too, whatever their version.
    paginated_result: AtomicBool,
    /// The delay between attempts (client-go's `delayHandler`), shared by
    /// the cycle loop and the watch retries.
    backoff: Mutex<Backoff>,
    /// How many initial-events-end warnings were logged (read by tests).
    initial_events_end_warnings: AtomicU64,
    /// The watch ended because its shard selector changed: the next cycle lists at once.
    relist_now: AtomicBool,
    /// When a streaming list last gave up waiting for its initial-events-end bookmark: the
    /// server does not end streaming lists of this resource, and cycles list instead (until
    /// the re-probe interval, if any, has passed).
    watch_list_given_up_at: Mutex<Option<Instant>>,
}

impl Shared {
    fn new(backoff: BackoffConfig) -> Self {
        Self {
            last_sync_resource_version: Mutex::default(),
            resource_version_unavailable: AtomicBool::new(false),
            paginated_result: AtomicBool::new(false),
            relist_now: AtomicBool::new(false),
            backoff: Mutex::new(Backoff::new(backoff)),
            initial_events_end_warnings: AtomicU64::new(0),
            watch_list_given_up_at: Mutex::new(None),
        }
    }
}

/// How a streaming list's initial events ended.
enum Streamed<K> {
    /// The initial-events-end bookmark came: the state, its version and the
    /// still open watch.
    Complete {
        items: Vec<Arc<K>>,
        resource_version: String,
        stream: WatchStream<K>,
    },
    /// The stream closed before the bookmark.
    Closed,
}

/// Keeps a [`ReflectorStore`] in step with the API server (client-go's
/// `Reflector`).
///
/// Each cycle ([`Reflector::list_and_watch`]) gets the whole state, by
/// default with a streaming list (a watch with `sendInitialEvents=true`, as
/// client-go 1.36 does), else with a list (resource version `"0"`, pages of
/// 500), hands the store one `replace`, then watches from that version with
/// bookmarks and a random server-side timeout in `[300 s, 600 s)`,
/// re-opening the watch from the last version whenever it ends normally. A
/// watch that ends with an error (`410 Gone`, a very short watch, a decode
/// error) ends the cycle; [`Reflector::run`] then waits its backoff (800 ms
/// doubling to 30 s, jittered, reset after 2 min of health; `429` waits
/// `Retry-After`, capped at the backoff's maximum) and starts the next
/// cycle, which relists. It never gives up: `run` returns only when
/// cancelled.
///
/// ```no_run
/// # async fn doc(client: kube::Client) {
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kcr_cache::IndexedStore;
/// use kcr_reflector::Reflector;
/// use tokio_util::sync::CancellationToken;
///
/// let cache = Arc::new(IndexedStore::<ConfigMap>::default());
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
    page_size: Option<u32>,
    min_watch_timeout: Duration,
    resync_period: Option<Duration>,
    should_resync: Option<ShouldResync>,
    watch_error_handler: Option<WatchErrorHandler>,
    use_watch_list: bool,
    initial_events_end_timeout: Duration,
    watch_list_reprobe_interval: Option<Duration>,
    max_internal_error_retry_duration: Duration,
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
            .field(
                "initial_events_end_timeout",
                &self.initial_events_end_timeout,
            )
            .field(
                "watch_list_given_up_at",
                &*self.shared.watch_list_given_up_at.lock(),
            )
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

/// The warning client-go's initial-events-end bookmark ticker logs at a
/// tick, if any: nothing came yet, or nothing came for a whole interval.
fn initial_events_end_warning(
    name: &str,
    started: Instant,
    last_event: Option<Instant>,
    now: Instant,
) -> Option<String> {
    match last_event {
        None => Some(format!(
            "{name}: awaiting the bookmark that ends the initial events of a streaming list; \
             no event received for {:?}",
            now.saturating_duration_since(started)
        )),
        Some(last) => {
            let quiet = now.saturating_duration_since(last);
            (quiet >= INITIAL_EVENTS_END_WARNING_INTERVAL).then(|| {
                format!(
                    "{name}: the bookmark that ends the initial events of a streaming list has \
                     not come; the last event came {quiet:?} ago"
                )
            })
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
        let backoff = BackoffConfig::default();
        Self {
            metrics: ReflectorMetrics::global().for_reflector(&name),
            name,
            lister_watcher,
            store,
            label_selector: None,
            field_selector: None,
            page_size: None,
            min_watch_timeout: DEFAULT_MIN_WATCH_TIMEOUT,
            resync_period: None,
            should_resync: None,
            watch_error_handler: None,
            use_watch_list: true,
            initial_events_end_timeout: DEFAULT_INITIAL_EVENTS_END_TIMEOUT,
            watch_list_reprobe_interval: None,
            max_internal_error_retry_duration: Duration::ZERO,
            backoff,
            shared: Arc::new(Shared::new(backoff)),
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

    /// An explicit list page size (client-go's `WatchListPageSize`): every
    /// list is paged by it, whatever its resource version; 0 lists
    /// everything in one response.
    ///
    /// Unset (the default), lists at `""` and `"0"` are paged by 500 and
    /// lists at a given version are not (so the server's watch cache can
    /// serve them), until a list at `"0"` comes back in pages: that server
    /// pages this resource, and from then on every list is paged by 500.
    #[must_use]
    pub fn page_size(mut self, page_size: u32) -> Self {
        self.page_size = Some(page_size);
        self
    }

    /// The minimum server-side watch timeout; each watch asks for a random
    /// timeout in `[min, 2 × min)`. As in client-go, a value below the
    /// default of 5 minutes is not honoured (it would load the control
    /// plane): the default is kept.
    #[must_use]
    pub fn min_watch_timeout(mut self, min: Duration) -> Self {
        self.min_watch_timeout = min.max(DEFAULT_MIN_WATCH_TIMEOUT);
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

    /// Called with the error that ended a list-and-watch cycle (client-go's
    /// `WatchErrorHandler`): a list that failed, or a watch the server
    /// refused to open. Errors the reflector recovers from inside a cycle
    /// (a store that refused an event, a very short or expired watch, a
    /// streaming list it fell back from, a retried `429`) are logged and
    /// counted but not handed here, as in client-go. A panic is caught and
    /// logged.
    #[must_use]
    pub fn watch_error_handler(mut self, f: impl Fn(&Error) + Send + Sync + 'static) -> Self {
        self.watch_error_handler = Some(Arc::new(f));
        self
    }

    /// Streaming lists (client-go's WatchList: `sendInitialEvents=true`,
    /// `resourceVersionMatch=NotOlderThan`, the initial state ending at the
    /// bookmark annotated `k8s.io/initial-events-end`): **on by default**, as
    /// in client-go 1.36; `false` always lists and watches.
    ///
    /// When on, a cycle falls back to a list exactly when client-go's does:
    /// the server refuses the streaming list (a `4xx` such as `422 Invalid`,
    /// or any error other than those retried below), its stream closes
    /// within a second without an event, or the store refuses the result;
    /// and never when the [`ListerWatcher`] says it cannot stream
    /// ([`ListerWatcher::is_watch_list_semantics_unsupported`]): then it
    /// always lists. A `429` or an unreachable server is retried after the
    /// backoff, an expired or too large version is retried at once from
    /// `""`, and a stream that closes before the initial-events-end bookmark
    /// (after an event, or after a second) is opened again at once, from the
    /// same version, its partial state dropped. The wait for the bookmark is
    /// bounded ([`Reflector::initial_events_end_timeout`]): past it, the cycle
    /// lists, and so do later cycles.
    #[must_use]
    pub fn use_watch_list(mut self, enabled: bool) -> Self {
        self.use_watch_list = enabled;
        self
    }

    /// How long a streaming list waits for the bookmark that ends its initial events
    /// (`k8s.io/initial-events-end`) before the reflector gives up on it (default
    /// [`DEFAULT_INITIAL_EVENTS_END_TIMEOUT`], a minute; zero waits for ever, as client-go up to
    /// v1.36 does).
    ///
    /// The wait starts when the first stream of the streaming list opens and goes on across
    /// the streams it re-opens after one closed before the bookmark; the backoff after a `429`
    /// or an unreachable server does not count. When it passes, the streaming list ends with
    /// [`Error::InitialEventsEndTimeout`], the cycle lists and watches instead, and the
    /// reflector remembers that the server does not end streaming lists of this resource (an
    /// aggregated API server that ignores the protocol, kubernetes#140890): its later cycles
    /// list at once, without trying a streaming list again (unless
    /// [`Reflector::watch_list_reprobe_interval`] is set). A resource whose initial state takes
    /// longer than the bound to stream (hundreds of thousands of objects over a slow link)
    /// needs a larger one.
    #[must_use]
    pub fn initial_events_end_timeout(mut self, timeout: Duration) -> Self {
        self.initial_events_end_timeout = timeout;
        self
    }

    /// After giving up on streaming lists of this resource (see
    /// [`Reflector::initial_events_end_timeout`]), tries a streaming list again in the first
    /// cycle that starts once `interval` has passed (default: never, for the reflector's
    /// life). A streaming list that then completes turns streaming lists back on; one that
    /// times out again starts a new interval.
    #[must_use]
    pub fn watch_list_reprobe_interval(mut self, interval: Duration) -> Self {
        self.watch_list_reprobe_interval = Some(interval);
        self
    }

    /// Whether the reflector has given up on streaming lists of its resource (its
    /// initial-events-end bookmark did not come within
    /// [`Reflector::initial_events_end_timeout`]) and lists instead: its next cycle starts
    /// with a list.
    pub fn watch_list_given_up(&self) -> bool {
        match *self.shared.watch_list_given_up_at.lock() {
            None => false,
            Some(at) => self
                .watch_list_reprobe_interval
                .is_none_or(|interval| at.elapsed() < interval),
        }
    }

    /// How long a watch that keeps ending with an internal error (`500`) is
    /// re-opened at once, without a relist (client-go's
    /// `MaxInternalErrorRetryDuration`; default zero: such a watch ends the
    /// cycle). A run of internal errors ends after a minute without one.
    #[must_use]
    pub fn max_internal_error_retry_duration(mut self, duration: Duration) -> Self {
        self.max_internal_error_retry_duration = duration;
        self
    }

    /// The backoff between failed attempts (default: client-go's).
    #[must_use]
    pub fn backoff(mut self, backoff: BackoffConfig) -> Self {
        self.backoff = backoff;
        *self.shared.backoff.lock() = Backoff::new(backoff);
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
        self.shared
            .resource_version_unavailable
            .store(unavailable, Ordering::Relaxed);
    }

    fn resource_version_unavailable(&self) -> bool {
        self.shared
            .resource_version_unavailable
            .load(Ordering::Relaxed)
    }

    /// client-go's `relistResourceVersion`: `""` when the last version is
    /// known to be unavailable, `"0"` before the first list, else the last version.
    fn relist_resource_version(&self) -> String {
        if self.resource_version_unavailable() {
            return String::new();
        }
        let last = self.last_sync_resource_version();
        if last.is_empty() {
            "0".to_owned()
        } else {
            last
        }
    }

    /// client-go's `rewatchResourceVersion`: where a streaming list starts.
    fn rewatch_resource_version(&self) -> String {
        if self.resource_version_unavailable() {
            return String::new();
        }
        self.last_sync_resource_version()
    }

    fn watch_timeout_seconds(&self) -> u32 {
        let r: f64 = rand::random();
        let secs = self.min_watch_timeout.as_secs_f64() * (1.0 + r);
        // Below 2 × min; `as` saturates and the minimum is 300 s.
        (secs.floor() as u32).max(1)
    }

    /// The next backoff delay (client-go's `delayHandler()`).
    fn next_delay(&self) -> Duration {
        self.shared.backoff.lock().next_delay()
    }

    /// The wait after `error`: the server's `Retry-After`, capped at the
    /// backoff's maximum, or else the next backoff delay.
    fn retry_delay(&self, error: &Error) -> Duration {
        match error.retry_after() {
            Some(after) => after.min(self.backoff.max),
            None => self.next_delay(),
        }
    }

    /// Logs and counts an error.
    fn note(&self, error: &Error) {
        self.metrics.watch_error(error.reason());
        if error.is_decode() {
            self.metrics.decode_errors.inc();
        }
        if error.is_expired() {
            debug!(reflector = %self.name, %error, "resource version expired");
        } else {
            warn!(reflector = %self.name, %error, "list/watch failed");
        }
    }

    /// Logs, counts and hands the error that ended a cycle to the watch
    /// error handler.
    fn report(&self, error: &Error) {
        self.note(error);
        if let Some(handler) = &self.watch_error_handler {
            catch("watch_error_handler", || handler(error));
        }
    }

    /// Runs list-and-watch cycles until `cancel` fires (client-go's `Run`):
    /// after each cycle it waits the backoff (or a `Retry-After`), whether
    /// the cycle failed or its watch ended, and the error that ended a cycle
    /// goes to the watch error handler. Never gives up on errors; a request
    /// in flight is dropped at once on cancellation, and the store is only
    /// ever written between requests, so it stays consistent.
    pub async fn run(&self, cancel: CancellationToken) {
        let span = info_span!("reflector", reflector = %self.name);
        async {
            loop {
                let cycle = self.list_and_watch(&cancel).await;
                if cancel.is_cancelled() {
                    return;
                }
                let delay = match &cycle {
                    // A new shard selector is no failure: list with it now.
                    Ok(()) if self.shared.relist_now.swap(false, Ordering::SeqCst) => {
                        Duration::ZERO
                    }
                    Ok(()) => self.next_delay(),
                    Err(error) => {
                        if error.is_expired() {
                            // The next cycle relists.
                            self.metrics.relists_expired.inc();
                        }
                        self.report(error);
                        self.retry_delay(error)
                    }
                };
                debug!(delay_ms = delay.as_millis() as u64, "backing off");
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => return,
                    () = tokio::time::sleep(delay) => {}
                }
            }
        }
        .instrument(span)
        .await;
    }

    /// One list-and-watch cycle (client-go's `ListAndWatch`): gets the whole
    /// state (a streaming list, or a list), replaces the store's content,
    /// then watches until a watch ends with an error or `cancel` fires.
    ///
    /// Returns `Ok(())` when the watch phase ended (an expired version, a
    /// very short watch, a failed resync...: the next cycle relists) or on
    /// cancellation, and the error when the cycle could not start: the list
    /// failed or the server refused to open a watch. [`Reflector::run`]
    /// loops over this with a backoff in between.
    pub async fn list_and_watch(&self, cancel: &CancellationToken) -> Result<()> {
        tokio::select! {
            biased;
            () = cancel.cancelled() => Ok(()),
            result = self.cycle() => result,
        }
    }

    async fn cycle(&self) -> Result<()> {
        let mut stream = None;
        if self.use_watch_list
            && !self.lister_watcher.is_watch_list_semantics_unsupported()
            && !self.watch_list_given_up()
        {
            match self.watch_list().await {
                Ok(s) => {
                    *self.shared.watch_list_given_up_at.lock() = None;
                    stream = Some(s);
                }
                Err(error) => {
                    if matches!(error, Error::InitialEventsEndTimeout { .. }) {
                        *self.shared.watch_list_given_up_at.lock() = Some(Instant::now());
                        warn!(
                            reflector = %self.name,
                            %error,
                            "the server does not end streaming lists of this resource; \
                             listing and watching from now on"
                        );
                    }
                    self.note(&error);
                    debug!(reflector = %self.name, %error, "the streaming list failed; falling back to list + watch");
                }
            }
        }
        if stream.is_none() {
            self.list().await?;
        }
        self.watch(stream).await
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
            let page_size = match self.page_size {
                Some(explicit) => explicit,
                None if self.shared.paginated_result.load(Ordering::Relaxed) => DEFAULT_PAGE_SIZE,
                // Unpaged, a list at a given version can come from the watch cache.
                None if !resource_version.is_empty() && resource_version != "0" => 0,
                None => DEFAULT_PAGE_SIZE,
            };
            let (items, list_version, paginated) =
                match self.pager_list(&resource_version, page_size).await {
                    Ok(listed) => listed,
                    Err(error) if error.is_expired() || error.is_too_large_resource_version() => {
                        // The version is gone or not there yet: list the latest.
                        self.note(&error);
                        self.metrics.relists_expired.inc();
                        self.set_resource_version_unavailable(true);
                        self.pager_list(&self.relist_resource_version(), page_size)
                            .await?
                    }
                    Err(error) => return Err(error),
                };
            // Only a list at "0" tells that the server pages this resource:
            // a list at "" is served from etcd, which always pages.
            if resource_version == "0" && paginated {
                self.shared.paginated_result.store(true, Ordering::Relaxed);
            }
            self.set_resource_version_unavailable(false);
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
            self.set_last_sync_resource_version(&list_version);
            Ok(())
        }
        .instrument(span)
        .await
    }

    /// Applies the store's transform to a page's objects as the page
    /// arrives, adding them to `items`, so a list is never held whole
    /// untransformed; the store's `replace` takes them as they are and does
    /// not transform them again. A failing or panicking transform fails the
    /// list, as it would fail the store's `replace`.
    fn transform_page(
        &self,
        transformer: Option<&TransformFunc<K>>,
        page: Vec<K>,
        items: &mut Vec<Arc<K>>,
    ) -> Result<()> {
        let page = page.into_iter().map(Arc::new);
        let Some(transform) = transformer else {
            items.extend(page);
            return Ok(());
        };
        for obj in page {
            let transformed = match catch("transform", || transform(obj)) {
                Some(result) => result.map_err(|source| Error::Store {
                    op: "transform",
                    source,
                })?,
                None => {
                    return Err(Error::Store {
                        op: "transform",
                        source: "the transform panicked".into(),
                    });
                }
            };
            items.push(transformed);
        }
        Ok(())
    }

    /// client-go's pager: lists at `resource_version` in pages of
    /// `page_size` (0: one request), following continue tokens. When a
    /// continue token expires (reason `Expired`) it redoes the list whole,
    /// unpaged, at the same version. Each page's objects are transformed
    /// (the store's transform) as the page arrives. Returns the items, the
    /// list's version and whether more than one page came.
    async fn pager_list(
        &self,
        resource_version: &str,
        page_size: u32,
    ) -> Result<(Vec<Arc<K>>, String, bool)> {
        self.metrics.lists.inc();
        let transformer = self.store.transformer();
        let transformer = transformer.as_ref();
        let mut first = self.list_options();
        first.resource_version =
            (!resource_version.is_empty()).then(|| resource_version.to_owned());
        let mut options = first.clone();
        options.limit = (page_size > 0).then_some(page_size);
        let mut items = Vec::new();
        let mut list_version = None;
        let mut paginated = false;
        loop {
            let page = match self.lister_watcher.list(&options).await {
                Ok(page) => page,
                Err(error) if error.is_resource_expired() && options.continue_token.is_some() => {
                    self.note(&error);
                    drop(items);
                    let page = self.lister_watcher.list(&first).await?;
                    let mut items = Vec::with_capacity(page.items.len());
                    self.transform_page(transformer, page.items, &mut items)?;
                    return Ok((items, page.resource_version, paginated));
                }
                Err(error) => return Err(error),
            };
            if items.is_empty() {
                // Trust the server's count only so far: it is outside input.
                let remaining =
                    usize::try_from(page.remaining_item_count.unwrap_or(0)).unwrap_or(0);
                items.reserve(page.items.len() + remaining.min(1 << 20));
            }
            let version = list_version.get_or_insert(page.resource_version);
            self.transform_page(transformer, page.items, &mut items)?;
            match page.continue_token {
                Some(token) => {
                    paginated = true;
                    options.continue_token = Some(token);
                    // The token carries the version.
                    options.resource_version = None;
                    options.resource_version_match = None;
                }
                None => return Ok((items, std::mem::take(version), paginated)),
            }
        }
    }

    /// client-go's `watchList`: streams the initial state, retrying what
    /// client-go retries, and returns the open watch once the state has been
    /// handed to the store. An error means "fall back to a list".
    async fn watch_list(&self) -> Result<WatchStream<K>> {
        let span = info_span!("watch_list", reflector = %self.name);
        async {
            let transformer = self.store.transformer();
            let timeout = self.initial_events_end_timeout;
            // When the wait for the initial-events-end bookmark ends: set when the first
            // stream opens, moved on by each backoff.
            let mut deadline: Option<Instant> = None;
            loop {
                let mut options = self.watch_options(self.rewatch_resource_version());
                options.send_initial_events = true;
                options.resource_version_match = Some(VersionMatch::NotOlderThan);
                let started = Instant::now();
                self.metrics.watches.inc();
                let streamed = match self.lister_watcher.watch(&options).await {
                    Ok(stream) => {
                        let until = (!timeout.is_zero())
                            .then(|| *deadline.get_or_insert_with(|| Instant::now() + timeout));
                        self.stream_initial_events(stream, started, until, transformer.as_ref())
                            .await
                    }
                    Err(error) => Err(error),
                };
                match streamed {
                    Ok(Streamed::Complete { items, resource_version, stream }) => {
                        self.set_resource_version_unavailable(false);
                        self.metrics.list_duration.observe(started.elapsed().as_secs_f64());
                        self.metrics.items_per_list.observe(items.len() as f64);
                        debug!(items = items.len(), %resource_version, "streamed the initial state");
                        self.store
                            .replace(items, &resource_version)
                            .map_err(|source| Error::Store { op: "replace", source })?;
                        self.set_last_sync_resource_version(&resource_version);
                        return Ok(stream);
                    }
                    // As client-go's `watchList` loop: opened again at
                    // once, from the same version (not a very short watch:
                    // that one falls back to a list).
                    Ok(Streamed::Closed) => {
                        if deadline.is_some_and(|d| Instant::now() >= d) {
                            return Err(Error::InitialEventsEndTimeout { timeout });
                        }
                        debug!("the streaming list closed before its initial events ended; re-opening it");
                    }
                    Err(error) if error.is_watch_error_retriable() => {
                        self.note(&error);
                        let delay = self.retry_delay(&error);
                        if let Some(d) = &mut deadline {
                            *d += delay;
                        }
                        tokio::time::sleep(delay).await;
                    }
                    Err(error) if error.is_expired() || error.is_too_large_resource_version() => {
                        // Stream the latest state instead.
                        self.note(&error);
                        self.metrics.relists_expired.inc();
                        self.set_resource_version_unavailable(true);
                    }
                    Err(error) => return Err(error),
                }
            }
        }
        .instrument(span)
        .await
    }

    /// Collects a streaming list's initial events into a temporary store
    /// (each object transformed as it arrives, as the real store would, and
    /// only then) until the initial-events-end bookmark, warning every 10 s
    /// while it is late, and giving up at `deadline`.
    async fn stream_initial_events(
        &self,
        mut stream: WatchStream<K>,
        started: Instant,
        deadline: Option<Instant>,
        transformer: Option<&TransformFunc<K>>,
    ) -> Result<Streamed<K>> {
        let timeout = self.initial_events_end_timeout;
        let give_up = async {
            match deadline {
                Some(at) => sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let mut give_up = pin!(give_up);
        let mut state = TemporaryStore::new();
        let mut ticker = tokio::time::interval_at(
            Instant::now() + INITIAL_EVENTS_END_WARNING_INTERVAL,
            INITIAL_EVENTS_END_WARNING_INTERVAL,
        );
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut last_event = None;
        let mut count: u64 = 0;
        loop {
            let next = tokio::select! {
                next = stream.next() => next,
                () = &mut give_up => return Err(Error::InitialEventsEndTimeout { timeout }),
                _ = ticker.tick() => {
                    if let Some(warning) = initial_events_end_warning(&self.name, started, last_event, Instant::now()) {
                        self.shared.initial_events_end_warnings.fetch_add(1, Ordering::Relaxed);
                        warn!(reflector = %self.name, "{warning}");
                    }
                    continue;
                }
            };
            let obj = match next {
                None | Some(Err(Error::Read(_))) => break,
                Some(Err(error)) => return Err(error),
                Some(Ok(WatchEvent::Added(obj) | WatchEvent::Modified(obj))) => Some(obj),
                Some(Ok(WatchEvent::Deleted(obj))) => {
                    state.remove(&obj);
                    None
                }
                Some(Ok(WatchEvent::Bookmark(bookmark))) => {
                    if bookmark.is_initial_events_end() {
                        return Ok(Streamed::Complete {
                            items: state.into_objects(),
                            resource_version: bookmark.resource_version,
                            stream,
                        });
                    }
                    None
                }
                Some(Ok(WatchEvent::Error(status))) => return Err(Error::from_status(*status)),
            };
            count += 1;
            last_event = Some(Instant::now());
            let Some(obj) = obj else { continue };
            let mut obj = Arc::new(obj);
            if let Some(transform) = transformer {
                let key = object_key(&*obj);
                match catch("transform", || transform(obj)) {
                    Some(Ok(transformed)) => obj = transformed,
                    Some(Err(error)) => {
                        warn!(reflector = %self.name, %key, %error, "the transform failed; the object is left out");
                        continue;
                    }
                    None => continue,
                }
            }
            state.upsert(obj);
        }
        if count == 0 && started.elapsed() < Duration::from_secs(1) {
            self.metrics.short_watches.inc();
            return Err(Error::VeryShortWatch);
        }
        Ok(Streamed::Closed)
    }

    /// client-go's `watch` (with the resync running beside it): re-opens the
    /// watch from the last version whenever it ends normally, until one ends
    /// with an error. `Err` only when the server refuses to open a watch.
    async fn watch(&self, mut pending: Option<WatchStream<K>>) -> Result<()> {
        let mut resync_at = self.resync_period.map(|p| Instant::now() + p);
        let mut retry = RetryWithDeadline::new(
            self.max_internal_error_retry_duration,
            INTERNAL_ERROR_RESET_PERIOD,
        );
        loop {
            let started = Instant::now();
            // A stream handed over by a streaming list is past its initial events.
            let mut propagate_from_start = true;
            let stream = match pending.take() {
                Some(stream) => stream,
                None => {
                    let resource_version = self.last_sync_resource_version();
                    // A watch from "" or "0" starts with synthetic ADDED
                    // events in no version order: their versions do not
                    // count until another event shows they are over.
                    propagate_from_start =
                        !(resource_version.is_empty() || resource_version == "0");
                    let options = self.watch_options(resource_version);
                    self.metrics.watches.inc();
                    let opened = match self
                        .with_resync(self.lister_watcher.watch(&options), &mut resync_at)
                        .await
                    {
                        Ok(opened) => opened,
                        Err(resync) => return self.end_watch(&resync),
                    };
                    match opened {
                        Ok(stream) => stream,
                        // client-go retries these watches without relisting.
                        Err(error) if error.is_watch_error_retriable() => {
                            self.note(&error);
                            let delay = self.retry_delay(&error);
                            if let Err(resync) = self
                                .with_resync(tokio::time::sleep(delay), &mut resync_at)
                                .await
                            {
                                return self.end_watch(&resync);
                            }
                            continue;
                        }
                        Err(error) => return Err(error),
                    }
                }
            };
            let span = info_span!("watch", reflector = %self.name, resource_version = %self.last_sync_resource_version());
            let handled = self
                .handle_watch(stream, started, propagate_from_start, &mut resync_at)
                .instrument(span)
                .await;
            retry.after(handled.as_ref().err());
            let Err(error) = handled else {
                continue;
            };
            if error.is_expired() {
                self.note(&error);
                self.metrics.relists_expired.inc();
                return Ok(());
            }
            if error.is_too_many_requests() {
                self.note(&error);
                let delay = self.retry_delay(&error);
                if let Err(resync) = self
                    .with_resync(tokio::time::sleep(delay), &mut resync_at)
                    .await
                {
                    return self.end_watch(&resync);
                }
                continue;
            }
            if error.is_internal_error() && retry.should_retry() {
                self.note(&error);
                debug!(reflector = %self.name, %error, "retrying the watch after an internal error");
                continue;
            }
            return self.end_watch(&error);
        }
    }

    /// A watch phase that ends with an error: logged, and the cycle ends
    /// (the next relists).
    fn end_watch(&self, error: &Error) -> Result<()> {
        if matches!(error, Error::ShardSelectorChanged) {
            debug!(reflector = %self.name, "the shard selector changed; listing again");
            self.shared.relist_now.store(true, Ordering::SeqCst);
            return Ok(());
        }
        self.note(error);
        warn!(reflector = %self.name, %error, "the watch ended with an error");
        Ok(())
    }

    /// Applies one watch's events to the store until it ends (client-go's
    /// `handleWatch`).
    async fn handle_watch(
        &self,
        mut stream: WatchStream<K>,
        started: Instant,
        propagate_from_start: bool,
        resync_at: &mut Option<Instant>,
    ) -> Result<()> {
        let mut count: u64 = 0;
        let mut besides_added = false;
        let result = loop {
            let next = match self.with_resync(stream.next(), resync_at).await {
                Ok(next) => next,
                Err(resync) => break Err(resync),
            };
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
                    besides_added = true;
                    let rv = resource_version_of(&obj);
                    ("update", self.store.update(Arc::new(obj)), rv)
                }
                WatchEvent::Deleted(obj) => {
                    besides_added = true;
                    let rv = resource_version_of(&obj);
                    ("delete", self.store.delete(Arc::new(obj)), rv)
                }
                WatchEvent::Bookmark(bookmark) => {
                    besides_added = true;
                    let result = self.store.bookmark(&bookmark.resource_version);
                    ("bookmark", result, Some(bookmark.resource_version))
                }
                WatchEvent::Error(status) => break Err(Error::from_status(*status)),
            };
            if let Err(source) = result {
                // client-go logs and goes on: the event's version still counts.
                self.note(&Error::Store { op, source });
            }
            if let Some(rv) = resource_version
                && (propagate_from_start || besides_added)
            {
                self.set_last_sync_resource_version(&rv);
                self.store.update_resource_version(&rv);
            }
            count += 1;
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
    /// elapses meanwhile. A failed resync is returned (as client-go's, it
    /// ends the watch phase of the cycle).
    async fn with_resync<F: Future>(
        &self,
        fut: F,
        resync_at: &mut Option<Instant>,
    ) -> Result<F::Output> {
        let mut fut = pin!(fut);
        loop {
            let Some(at) = *resync_at else {
                return Ok(fut.await);
            };
            tokio::select! {
                biased;
                out = &mut fut => return Ok(out),
                () = sleep_until(at) => {
                    *resync_at = self.resync_period.map(|p| Instant::now() + p);
                    let should = match &self.should_resync {
                        Some(f) => catch("should_resync", || f()).unwrap_or(false),
                        None => true,
                    };
                    if should {
                        debug!(reflector = %self.name, "resync");
                        if let Err(source) = self.store.resync() {
                            *resync_at = None;
                            return Err(Error::Store { op: "resync", source });
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
