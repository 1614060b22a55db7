//! The cache-sync timeout of controllers (controller-runtime's
//! `CacheSyncTimeout`): how long a controller waits for the informers it
//! watches to list their objects before its start fails.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use super::controller::Core;
use crate::Error;

/// controller-runtime's default cache-sync timeout: 2 minutes.
pub const DEFAULT_CACHE_SYNC_TIMEOUT: Duration = Duration::from_secs(2 * 60);

/// The controllers a manager waits for in its caches step, so that a
/// controller whose informers never sync fails the manager's start after
/// its own timeout instead of holding it for ever. Held only to copy the
/// list.
#[derive(Default)]
pub(crate) struct CacheSyncWaits {
    controllers: Mutex<Vec<Arc<Core>>>,
}

impl CacheSyncWaits {
    pub(crate) fn register(&self, core: &Arc<Core>) {
        self.controllers.lock().push(core.clone());
    }

    /// The first controller whose cache-sync timeout, counted from
    /// `started`, has passed while some of its informers have not synced.
    pub(crate) fn timed_out(&self, started: Instant) -> Option<Error> {
        let controllers = self.controllers.lock().clone();
        let now = Instant::now();
        controllers.iter().find_map(|core| {
            if now < started + core.cache_sync_timeout {
                return None;
            }
            let resources = core.unsynced_informers();
            (!resources.is_empty()).then(|| core.cache_sync_error(resources))
        })
    }
}
