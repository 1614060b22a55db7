//! [`Reconciler`], its [`Request`] and [`Action`], and [`TerminalError`]
//! (controller-runtime `pkg/reconcile`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use kube::Resource;

use crate::BoxError;

/// What to reconcile: the namespace and name of an object
/// (controller-runtime `reconcile.Request`). `namespace` is `None` for a
/// cluster-scoped object.
///
/// The strings are shared (`Arc<str>`): a request is cloned into the queue
/// and handed to the reconciler without copying them. They read as `&str`
/// (`&req.name`, `req.namespace.as_deref()`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Request {
    /// The object's namespace (`None` when cluster-scoped).
    pub namespace: Option<Arc<str>>,
    /// The object's name.
    pub name: Arc<str>,
}

impl Request {
    /// A request for `name` in `namespace`.
    pub fn namespaced(namespace: impl Into<Arc<str>>, name: impl Into<Arc<str>>) -> Self {
        Self {
            namespace: Some(namespace.into()),
            name: name.into(),
        }
    }

    /// A request for the cluster-scoped object `name`.
    pub fn cluster(name: impl Into<Arc<str>>) -> Self {
        Self {
            namespace: None,
            name: name.into(),
        }
    }

    /// The request for `obj` (`None` if it has no name).
    pub fn from_object<K: Resource>(obj: &K) -> Option<Self> {
        let meta = obj.meta();
        let name = meta.name.as_deref().filter(|n| !n.is_empty())?;
        Some(Self {
            namespace: meta
                .namespace
                .as_deref()
                .filter(|ns| !ns.is_empty())
                .map(Arc::from),
            name: Arc::from(name),
        })
    }

    /// The request for a cache key (`namespace/name` or `name`).
    pub fn from_key(key: &str) -> Option<Self> {
        match kcr_cache::split_meta_namespace_key(key) {
            Ok((namespace, name)) if !name.is_empty() => Some(Self {
                namespace: namespace.filter(|ns| !ns.is_empty()).map(Arc::from),
                name: Arc::from(name),
            }),
            _ => None,
        }
    }
}

impl fmt::Display for Request {
    /// `namespace/name`, or `name` for a cluster-scoped object.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{ns}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// What a successful reconcile asks for next (controller-runtime
/// `reconcile.Result`): nothing, a rate-limited requeue, or a requeue after
/// a delay, each optionally at a [priority](Action::with_priority).
///
/// ```
/// use std::time::Duration;
/// use kcr_controller_manager::Action;
///
/// let poll = Action::requeue_after(Duration::from_secs(30)).with_priority(-50);
/// assert_eq!(poll.requeue_delay(), Some(Duration::from_secs(30)));
/// assert_eq!(poll.priority(), Some(-50));
/// assert_eq!(Action::done().priority(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use]
pub struct Action {
    pub(crate) next: Next,
    priority: Option<i32>,
}

/// What comes after a reconcile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Next {
    /// Nothing: the object is reconciled until something changes.
    Done,
    /// Again, after the rate limiter's delay (counted as a requeue).
    Requeue,
    /// Again after this delay, with the rate limiter's history forgotten.
    RequeueAfter(Duration),
}

impl Action {
    /// Nothing more to do until the object changes.
    pub fn done() -> Self {
        Self {
            next: Next::Done,
            priority: None,
        }
    }

    /// Reconcile again after the rate limiter's delay.
    pub fn requeue() -> Self {
        Self {
            next: Next::Requeue,
            priority: None,
        }
    }

    /// Reconcile again after `delay` (a zero delay reconciles again at once).
    pub fn requeue_after(delay: Duration) -> Self {
        Self {
            next: Next::RequeueAfter(delay),
            priority: None,
        }
    }

    /// Requeues the request at `priority` in the controller's priority queue
    /// (controller-runtime's `Result.Priority`; higher goes first, live
    /// changes are queued at 0, initial lists and resyncs at
    /// [`LOW_PRIORITY`](crate::controller::LOW_PRIORITY)). Without it a
    /// requeue keeps the priority the request was taken from the queue with.
    /// Has no effect on [`done`](Self::done), which requeues nothing. For a
    /// failed reconcile, wrap the error in
    /// [`RetryPriority`](crate::controller::RetryPriority).
    pub fn with_priority(mut self, priority: i32) -> Self {
        self.priority = Some(priority);
        self
    }

    /// The priority set with [`with_priority`](Self::with_priority).
    pub fn priority(&self) -> Option<i32> {
        self.priority
    }

    /// Whether this is [`requeue`](Self::requeue) (after the rate limiter's
    /// delay).
    pub fn is_requeue(&self) -> bool {
        self.next == Next::Requeue
    }

    /// The delay of [`requeue_after`](Self::requeue_after), `None` for the
    /// others.
    pub fn requeue_delay(&self) -> Option<Duration> {
        match self.next {
            Next::RequeueAfter(delay) => Some(delay),
            _ => None,
        }
    }
}

/// A reconcile error whose retry goes into the controller's priority queue
/// at `priority` (controller-runtime's `Result.Priority` returned with an
/// error); without it a retry keeps the priority the request was taken
/// with. The controller looks for it along the error's source chain, as for
/// [`TerminalError`] (a terminal error is not retried, whatever its
/// priority).
///
/// ```
/// use kcr_controller_manager::BoxError;
/// use kcr_controller_manager::controller::{RetryPriority, retry_priority};
///
/// let err: BoxError = RetryPriority::new("quota exhausted", -10).into();
/// assert_eq!(retry_priority(&*err), Some(-10));
/// assert_eq!(err.to_string(), "quota exhausted");
/// ```
#[derive(Debug)]
pub struct RetryPriority {
    priority: i32,
    error: BoxError,
}

impl RetryPriority {
    /// Retries after `error` at `priority`.
    pub fn new(error: impl Into<BoxError>, priority: i32) -> Self {
        Self {
            priority,
            error: error.into(),
        }
    }

    /// The priority of the retry.
    pub fn priority(&self) -> i32 {
        self.priority
    }

    /// The error.
    pub fn into_inner(self) -> BoxError {
        self.error
    }
}

impl fmt::Display for RetryPriority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.error, f)
    }
}

impl std::error::Error for RetryPriority {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.error)
    }
}

/// The priority of the first [`RetryPriority`] along `error`'s source chain.
pub fn retry_priority(error: &(dyn std::error::Error + 'static)) -> Option<i32> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(p) = e.downcast_ref::<RetryPriority>() {
            return Some(p.priority);
        }
        current = e.source();
    }
    None
}

/// An error that retrying cannot fix (controller-runtime
/// `reconcile.TerminalError`): the controller logs and counts it
/// (`controller_runtime_terminal_reconcile_errors_total`) and does not retry
/// the request until the object changes again.
///
/// Return it directly (with `Box<dyn Error>` as the reconciler's error), or
/// carry it as the `#[source]` of your own error: the controller looks for
/// it along the error's source chain.
///
/// ```
/// use kcr_controller_manager::controller::{TerminalError, is_terminal};
///
/// let err: kcr_controller_manager::BoxError = TerminalError::new("spec.replicas must be positive").into();
/// assert!(is_terminal(&*err));
/// ```
#[derive(Debug)]
pub struct TerminalError(BoxError);

impl TerminalError {
    /// Marks `error` as terminal.
    pub fn new(error: impl Into<BoxError>) -> Self {
        Self(error.into())
    }

    /// The error that was marked terminal.
    pub fn into_inner(self) -> BoxError {
        self.0
    }
}

impl fmt::Display for TerminalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "terminal error: {}", self.0)
    }
}

impl std::error::Error for TerminalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

/// Whether `error` or one of its sources is a [`TerminalError`].
pub fn is_terminal(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if e.is::<TerminalError>() {
            return true;
        }
        current = e.source();
    }
    false
}

/// Brings the state of the world closer to what an object asks for
/// (controller-runtime `reconcile.Reconciler`).
///
/// The controller calls `reconcile` with the request of an object that
/// changed (or of an object mapped to it); one request is never reconciled
/// twice at once. The outcome decides what happens next:
///
/// | outcome | the controller |
/// | --- | --- |
/// | `Ok(Action::done())` | forgets the request's failures |
/// | `Ok(Action::requeue())` | adds it back after the rate limiter's delay |
/// | `Ok(Action::requeue_after(d))` | forgets its failures and adds it back after `d` |
/// | `Err(e)` | adds it back after the rate limiter's delay |
/// | `Err(e)` with a [`TerminalError`] | logs and counts it, does not retry (its failure count stays) |
/// | a panic, or running past the reconcile timeout | as `Err` |
///
/// A request goes back at the priority it was taken from the queue with,
/// unless the action carries one ([`Action::with_priority`]) or the error
/// wraps a [`RetryPriority`].
///
/// ```
/// use kcr_controller_manager::BoxError;
/// use kcr_controller_manager::{Action, Reconciler, Request};
///
/// struct Noop;
///
/// #[async_trait::async_trait]
/// impl Reconciler for Noop {
///     type Error = BoxError;
///     async fn reconcile(&self, req: Request) -> Result<Action, BoxError> {
///         tracing::debug!(%req, "nothing to do");
///         Ok(Action::done())
///     }
/// }
/// ```
#[async_trait]
pub trait Reconciler: Send + Sync + 'static {
    /// The reconciler's error (anything that converts to a boxed error:
    /// `thiserror` enums, `std::io::Error`, `String`, `BoxError`...).
    type Error: Into<BoxError> + Send + 'static;

    /// Reconciles the object named by `req`.
    async fn reconcile(&self, req: Request) -> Result<Action, Self::Error>;
}

#[async_trait]
impl<R: Reconciler + ?Sized> Reconciler for std::sync::Arc<R> {
    type Error = R::Error;

    async fn reconcile(&self, req: Request) -> Result<Action, Self::Error> {
        (**self).reconcile(req).await
    }
}

/// A closure adapted to [`Reconciler`]; built by [`reconciler_fn`].
pub struct ReconcilerFn<F> {
    f: F,
}

impl<F> fmt::Debug for ReconcilerFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReconcilerFn").finish_non_exhaustive()
    }
}

/// Adapts `f` to a [`Reconciler`] (controller-runtime `reconcile.Func`).
///
/// ```
/// use kcr_controller_manager::BoxError;
/// use kcr_controller_manager::controller::reconciler_fn;
/// use kcr_controller_manager::Action;
///
/// let reconciler = reconciler_fn(|req| async move {
///     println!("reconciling {req}");
///     Ok::<_, BoxError>(Action::done())
/// });
/// # let _ = reconciler;
/// ```
pub fn reconciler_fn<F, Fut, E>(f: F) -> ReconcilerFn<F>
where
    F: Fn(Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: Into<BoxError> + Send + 'static,
{
    ReconcilerFn { f }
}

#[async_trait]
impl<F, Fut, E> Reconciler for ReconcilerFn<F>
where
    F: Fn(Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: Into<BoxError> + Send + 'static,
{
    type Error = E;

    async fn reconcile(&self, req: Request) -> Result<Action, E> {
        (self.f)(req).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    enum MyError {
        #[error("invalid spec")]
        Invalid(#[source] TerminalError),
        #[error("api down")]
        Transient,
    }

    #[test]
    fn a_terminal_error_should_be_found_along_the_source_chain() {
        let direct: BoxError = TerminalError::new("bad").into();
        assert!(is_terminal(&*direct));
        let wrapped: BoxError = MyError::Invalid(TerminalError::new("bad")).into();
        assert!(is_terminal(&*wrapped));
        let transient: BoxError = MyError::Transient.into();
        assert!(!is_terminal(&*transient));
    }

    #[test]
    fn a_retry_priority_should_be_found_along_the_source_chain_and_keep_terminal_errors() {
        #[derive(Debug, thiserror::Error)]
        #[error("wrapped")]
        struct Wrapper(#[source] RetryPriority);
        let wrapped: BoxError = Wrapper(RetryPriority::new(TerminalError::new("bad"), 7)).into();
        assert_eq!(retry_priority(&*wrapped), Some(7));
        assert!(is_terminal(&*wrapped));
        let plain: BoxError = MyError::Transient.into();
        assert_eq!(retry_priority(&*plain), None);
    }

    #[test]
    fn an_action_should_carry_its_priority() {
        assert_eq!(Action::requeue().with_priority(3).priority(), Some(3));
        assert!(Action::requeue().is_requeue());
        assert!(!Action::done().is_requeue());
        assert_eq!(Action::done().requeue_delay(), None);
        assert_ne!(Action::requeue(), Action::requeue().with_priority(0));
    }

    #[test]
    fn requests_should_display_and_parse_as_cache_keys() {
        let namespaced = Request::namespaced("default", "foo");
        assert_eq!(namespaced.to_string(), "default/foo");
        assert_eq!(Request::from_key("default/foo"), Some(namespaced));
        let cluster = Request::cluster("node-1");
        assert_eq!(cluster.to_string(), "node-1");
        assert_eq!(Request::from_key("node-1"), Some(cluster));
        assert_eq!(Request::from_key(""), None);
    }
}
