//! An in-memory lister-watcher for the benchmarks: it lists the objects it
//! was given (in pages, as the API server does) and then watches forever
//! without events, so what is measured is the informer, not a network.

#![allow(dead_code)]

use std::sync::Arc;

use async_trait::async_trait;
use kcr_reflector::{ListOptions, ListerWatcher, ObjectList, WatchOptions, WatchStream};

pub struct InMemory<K> {
    pub make: Arc<dyn Fn(usize) -> K + Send + Sync>,
    pub count: usize,
}

#[async_trait]
impl<K: Send + Sync + 'static> ListerWatcher<K> for InMemory<K> {
    async fn list(&self, options: &ListOptions) -> kcr_reflector::Result<ObjectList<K>> {
        let start: usize = options
            .continue_token
            .as_deref()
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
        let limit = options.limit.map_or(self.count, |l| l as usize);
        let end = (start + limit).min(self.count);
        Ok(ObjectList {
            items: (start..end).map(|i| (self.make)(i)).collect(),
            resource_version: "1".into(),
            continue_token: (end < self.count).then(|| end.to_string()),
            remaining_item_count: None,
        })
    }

    async fn watch(&self, _options: &WatchOptions) -> kcr_reflector::Result<WatchStream<K>> {
        Ok(Box::pin(futures::stream::pending()))
    }

    // It lists; it does not stream lists.
    fn is_watch_list_semantics_unsupported(&self) -> bool {
        true
    }
}
