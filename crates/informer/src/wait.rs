//! [`wait_for_cache_sync`] and the [`HasSynced`] trait it waits on
//! (client-go's `WaitForCacheSync` and `InformerSynced`).

use std::time::Duration;

use kube::Resource;
use tokio_util::sync::CancellationToken;

use crate::shared_informer::{Registration, SharedIndexInformer};

/// How often [`wait_for_cache_sync`] polls (client-go's `syncedPollPeriod`).
pub const SYNCED_POLL_PERIOD: Duration = Duration::from_millis(100);

/// Something that reports whether its cache is synced (client-go's
/// `InformerSynced`): an informer, a handler registration, or any
/// `Fn() -> bool`.
pub trait HasSynced: Send + Sync {
    /// Whether the initial list has been fully processed.
    fn has_synced(&self) -> bool;
}

impl<K> HasSynced for SharedIndexInformer<K>
where
    K: Resource + Clone + Send + Sync + 'static,
{
    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }
}

impl HasSynced for Registration {
    fn has_synced(&self) -> bool {
        Registration::has_synced(self)
    }
}

impl<F: Fn() -> bool + Send + Sync> HasSynced for F {
    fn has_synced(&self) -> bool {
        self()
    }
}

/// Waits until every one of `synced` has synced (true), or `cancel` fires
/// first (false). Polls every [`SYNCED_POLL_PERIOD`].
///
/// ```no_run
/// # async fn doc(informer: kcr_informer::SharedIndexInformer<k8s_openapi::api::core::v1::Pod>,
/// #              registration: kcr_informer::Registration) {
/// let cancel = tokio_util::sync::CancellationToken::new();
/// if !kcr_informer::wait_for_cache_sync(&cancel, &[&informer, &registration]).await {
///     return; // cancelled before the caches synced
/// }
/// # }
/// ```
pub async fn wait_for_cache_sync(cancel: &CancellationToken, synced: &[&dyn HasSynced]) -> bool {
    loop {
        if synced.iter().all(|s| s.has_synced()) {
            tracing::debug!("caches are synced");
            return true;
        }
        tokio::select! {
            () = cancel.cancelled() => {
                tracing::debug!("stopped waiting for caches to sync");
                return false;
            }
            () = tokio::time::sleep(SYNCED_POLL_PERIOD) => {}
        }
    }
}
