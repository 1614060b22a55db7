//! How a queue is built: [`Config`] (its name, for metrics) for a
//! [`Queue`](crate::Queue), [`DelayingConfig`] (a [`Config`] plus the timer's
//! resolution) for a [`DelayingQueue`](crate::DelayingQueue) or
//! [`RateLimitingQueue`](crate::RateLimitingQueue), and [`PriorityConfig`] (a
//! [`Config`] plus aging) for a [`PriorityQueue`](crate::PriorityQueue), the
//! one type that ages items.

use std::sync::{Arc, Weak};
use std::time::Duration;

#[cfg(feature = "metrics")]
use kcr_metrics::workqueue::{DepthSource, MetricsProvider};

use crate::metrics::Metrics;

/// A waiting item of a [`PriorityQueue`](crate::PriorityQueue) gains one
/// priority level per this much waiting, by default.
///
/// With controller-runtime's `LowPriority` (-100) for the items of an initial
/// list, such an item waits at most 10 s longer than a priority-0 item made
/// ready at the same moment.
pub const DEFAULT_AGING_STEP: Duration = Duration::from_millis(100);

/// How finely a delaying queue's timer wakes for the ready times of its
/// items, by default: see [`DelayingConfig::timer_resolution`].
pub const DEFAULT_TIMER_RESOLUTION: Duration = Duration::from_micros(200);

/// How a [`Queue`](crate::Queue) is built (`with_config`): its name and
/// metrics. A [`DelayingQueue`](crate::DelayingQueue) or
/// [`RateLimitingQueue`](crate::RateLimitingQueue) takes a [`DelayingConfig`],
/// a [`PriorityQueue`](crate::PriorityQueue) a [`PriorityConfig`], or either a
/// `Config` with the default timer resolution or aging.
///
/// ```
/// use std::time::Duration;
/// use kcr_workqueue::{Config, Queue};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let queue: Queue<String> = Queue::with_config(Config::default().name("pods"));
/// # }
/// ```
///
/// Aging belongs to [`PriorityConfig`]: no other queue type ages, so a
/// `Config` has no such setting.
///
/// ```compile_fail
/// use std::time::Duration;
/// use kcr_workqueue::Config;
/// let _ = PriorityConfig::default().aging(Duration::from_millis(5));
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct Config {
    pub(crate) name: Option<Arc<str>>,
    #[cfg(feature = "metrics")]
    pub(crate) provider: Option<Arc<dyn MetricsProvider>>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Config {
    /// Names the queue. A named queue records the workqueue metrics (labels
    /// `name` and `controller` carry the name) when the `metrics` feature is on;
    /// an unnamed one records none, as in client-go.
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Records the metrics through `provider` instead of the prometheus
    /// families of the default registry (`kcr_metrics::registry()`); use
    /// `kcr_metrics::workqueue::PrometheusProvider::new` for a registry of your own.
    #[cfg(feature = "metrics")]
    pub fn metrics_provider(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// The metrics of a priority queue (depth recorded per priority).
    pub(crate) fn priority_metrics(&self) -> Metrics {
        #[cfg(feature = "metrics")]
        {
            Metrics::new(self.name.as_deref(), self.provider.as_deref(), true, None)
        }
        #[cfg(not(feature = "metrics"))]
        {
            Metrics
        }
    }

    /// The metrics of a queue whose depth the provider may read from `queue`
    /// when it gathers them.
    #[cfg(feature = "metrics")]
    pub(crate) fn queue_metrics<Q: DepthSource + 'static>(&self, queue: Weak<Q>) -> Metrics {
        let queue: Weak<dyn DepthSource> = queue;
        Metrics::new(
            self.name.as_deref(),
            self.provider.as_deref(),
            false,
            Some(queue),
        )
    }

    /// No metrics without the `metrics` feature.
    #[cfg(not(feature = "metrics"))]
    pub(crate) fn queue_metrics<Q>(&self, _queue: Weak<Q>) -> Metrics {
        Metrics
    }
}

/// How a [`PriorityQueue`](crate::PriorityQueue) is built: a [`Config`] (name,
/// metrics) plus its aging ([`DEFAULT_AGING_STEP`] unless set).
///
/// ```
/// use std::time::Duration;
/// use kcr_workqueue::{PriorityConfig, PriorityQueue, default_controller_rate_limiter};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let queue: PriorityQueue<String> = PriorityQueue::with_config(
///     default_controller_rate_limiter(),
///     PriorityConfig::default().name("pods").aging(Duration::from_millis(50)),
/// );
/// # }
/// ```
#[derive(Clone)]
#[must_use]
pub struct PriorityConfig {
    pub(crate) config: Config,
    pub(crate) aging: Option<Duration>,
}

impl Default for PriorityConfig {
    fn default() -> Self {
        Config::default().into()
    }
}

impl From<Config> for PriorityConfig {
    /// `config` with the default aging.
    fn from(config: Config) -> Self {
        Self {
            config,
            aging: Some(DEFAULT_AGING_STEP),
        }
    }
}

impl std::fmt::Debug for PriorityConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PriorityConfig")
            .field("config", &self.config)
            .field("aging", &self.aging)
            .finish()
    }
}

impl PriorityConfig {
    /// Names the queue (see [`Config::name`]).
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.config = self.config.name(name);
        self
    }

    /// Records the metrics through `provider` (see [`Config::metrics_provider`]).
    #[cfg(feature = "metrics")]
    pub fn metrics_provider(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.config = self.config.metrics_provider(provider);
        self
    }

    /// A ready item gains one priority level per `step` of waiting, so no stream of higher-priority
    /// items can starve it ([`DEFAULT_AGING_STEP`] unless set).
    ///
    /// An item of priority `p` ready at `r` goes before an item of priority
    /// `q` ready at `s` when `p + (now - r) / step > q + (now - s) / step`,
    /// that is when `r - p·step < s - q·step`: the order does not depend on
    /// `now`, so it costs nothing to keep. A zero step is treated as 1 ns.
    pub fn aging(mut self, step: Duration) -> Self {
        self.aging = Some(step.max(Duration::from_nanos(1)));
        self
    }

    /// No aging: strict priorities as in controller-runtime (a steady stream of high-priority
    /// items can then starve low-priority ones).
    pub fn without_aging(mut self) -> Self {
        self.aging = None;
        self
    }
}

/// How a [`DelayingQueue`](crate::DelayingQueue) or
/// [`RateLimitingQueue`](crate::RateLimitingQueue) is built: a [`Config`]
/// (name, metrics) plus the resolution of its timer
/// ([`DEFAULT_TIMER_RESOLUTION`] unless set).
///
/// ```
/// use std::time::Duration;
/// use kcr_workqueue::{DelayingConfig, DelayingQueue};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let queue: DelayingQueue<String> = DelayingQueue::with_config(
///     DelayingConfig::default().name("pods").timer_resolution(Duration::from_millis(1)),
/// );
/// # }
/// ```
#[derive(Clone)]
#[must_use]
pub struct DelayingConfig {
    pub(crate) config: Config,
    pub(crate) timer_resolution: Duration,
}

impl Default for DelayingConfig {
    fn default() -> Self {
        Config::default().into()
    }
}

impl From<Config> for DelayingConfig {
    /// `config` with the default timer resolution.
    fn from(config: Config) -> Self {
        Self {
            config,
            timer_resolution: DEFAULT_TIMER_RESOLUTION,
        }
    }
}

impl std::fmt::Debug for DelayingConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelayingConfig")
            .field("config", &self.config)
            .field("timer_resolution", &self.timer_resolution)
            .finish()
    }
}

impl DelayingConfig {
    /// Names the queue (see [`Config::name`]).
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.config = self.config.name(name);
        self
    }

    /// Records the metrics through `provider` (see [`Config::metrics_provider`]).
    #[cfg(feature = "metrics")]
    pub fn metrics_provider(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.config = self.config.metrics_provider(provider);
        self
    }

    /// How finely the timer that queues delayed items wakes for their ready
    /// times ([`DEFAULT_TIMER_RESOLUTION`] unless set).
    ///
    /// Below 1 ms the queue's timer sleeps on Tokio's timer wheel until 2 ms
    /// before the earliest ready time and is then woken at that time by the
    /// process's timer thread (started at the first use), no sooner than
    /// `resolution` after it last ran: under a steady stream of ready times
    /// it runs about once per `resolution`, and the items come about half
    /// of it late, plus the time a thread takes to wake up. It asks the
    /// thread for nothing while every worker of the runtime is busy or while
    /// adds wake it more often than that anyway. From 1 ms the
    /// queue uses Tokio's wheel alone, which counts whole milliseconds: no
    /// thread and the fewest wake-ups, but about 0.5 ms of lateness on
    /// average. Either way a paused test clock drives the queue as before.
    pub fn timer_resolution(mut self, resolution: Duration) -> Self {
        self.timer_resolution = resolution;
        self
    }
}
