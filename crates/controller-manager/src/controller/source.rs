//! What a controller watches (controller-runtime `pkg/source`): a shared
//! informer of the manager's factory and the mapping of its events.

use std::sync::Arc;

use kcr_cache::Store;
use kcr_informer::{Registration, SharedIndexInformer};
use kcr_workqueue::{AddOpts, PriorityQueue};
use kube::Resource;

use super::handler::{EnqueueHandler, LOW_PRIORITY, Mapper};
use super::predicate::Predicate;
use super::reconciler::Request;
use crate::Result;
use crate::sharding::{PrimaryLookup, RangeSet, ShardGate};

/// A watch whose handler is registered when the controller starts.
pub(crate) trait Source: Send + Sync {
    /// Registers the handler: from now on the informer's events reach
    /// `queue` (a handler added to a running informer first gets the cache
    /// as initial-list adds).
    fn start(
        &self,
        queue: &PriorityQueue<Request>,
        predicates: &Arc<[Box<dyn Predicate>]>,
        shard: Option<&Arc<ShardGate>>,
    ) -> Result<Box<dyn StartedSource>>;

    /// The watched resource, for logs and errors.
    fn name(&self) -> String;

    /// For a source of the primary type: how to find the hash of the cached object a
    /// request names.
    fn primary_lookup(&self) -> Option<PrimaryLookup> {
        None
    }

    /// For a source of the primary type: queues the cached objects whose hash is in `ranges`
    /// (a sharded controller's newly acquired ranges); returns how many there were.
    fn resync(&self, queue: &PriorityQueue<Request>, gate: &ShardGate, ranges: &RangeSet) -> usize {
        let _ = (queue, gate, ranges);
        0
    }

    /// For a source of the primary type: how many cached objects have their hash in
    /// `ranges`.
    fn count_in(&self, gate: &ShardGate, ranges: &RangeSet) -> usize {
        let _ = (gate, ranges);
        0
    }

    /// Whether the informer has synced (listed its objects).
    fn cache_synced(&self) -> bool;
}

/// A registered watch.
pub(crate) trait StartedSource: Send + Sync {
    /// Whether the handler has seen the informer's whole initial list.
    fn has_synced(&self) -> bool;
    /// Unregisters the handler.
    fn stop(&self);
}

/// A watch on a shared informer.
pub(crate) struct InformerSource<W> {
    pub(crate) informer: SharedIndexInformer<W>,
    pub(crate) mapper: Mapper<W>,
}

struct Started<W> {
    informer: SharedIndexInformer<W>,
    registration: Registration,
}

impl<W> Source for InformerSource<W>
where
    W: Resource + Clone + Send + Sync + 'static,
{
    fn start(
        &self,
        queue: &PriorityQueue<Request>,
        predicates: &Arc<[Box<dyn Predicate>]>,
        shard: Option<&Arc<ShardGate>>,
    ) -> Result<Box<dyn StartedSource>> {
        let registration = self.informer.add_event_handler(EnqueueHandler {
            queue: queue.clone(),
            predicates: predicates.clone(),
            mapper: self.mapper.clone(),
            shard: shard.cloned(),
        })?;
        Ok(Box::new(Started {
            informer: self.informer.clone(),
            registration,
        }))
    }

    fn name(&self) -> String {
        self.informer.informer_name()
    }

    fn cache_synced(&self) -> bool {
        self.informer.has_synced()
    }

    fn primary_lookup(&self) -> Option<PrimaryLookup> {
        if !matches!(self.mapper, Mapper::Object) {
            return None;
        }
        let store = self.informer.get_store();
        Some(Arc::new(move |req: &Request| {
            let key = match &req.namespace {
                Some(ns) => format!("{ns}/{}", req.name),
                None => req.name.to_string(),
            };
            store.get_by_key(&key).map(|obj| {
                crate::sharding::fnv1a64(obj.meta().uid.as_deref().unwrap_or("").as_bytes())
            })
        }))
    }

    fn resync(&self, queue: &PriorityQueue<Request>, gate: &ShardGate, ranges: &RangeSet) -> usize {
        if !matches!(self.mapper, Mapper::Object) {
            return 0;
        }
        let field = gate.field();
        let mut count = 0;
        for obj in self.informer.get_store().list().iter() {
            let hash = field.hash(obj.meta());
            if !ranges.contains(hash) {
                continue;
            }
            count += 1;
            if let Some(req) = Request::from_object(&**obj)
                && gate.admit(&req, hash)
            {
                queue.add_with_opts(req, AddOpts::default().priority(LOW_PRIORITY));
            }
        }
        count
    }

    fn count_in(&self, gate: &ShardGate, ranges: &RangeSet) -> usize {
        if !matches!(self.mapper, Mapper::Object) {
            return 0;
        }
        let field = gate.field();
        self.informer
            .get_store()
            .list()
            .iter()
            .filter(|obj| ranges.contains(field.hash(obj.meta())))
            .count()
    }
}

impl<W> StartedSource for Started<W>
where
    W: Resource + Clone + Send + Sync + 'static,
{
    fn has_synced(&self) -> bool {
        self.registration.has_synced()
    }

    fn stop(&self) {
        if let Err(e) = self.informer.remove_event_handler(&self.registration) {
            tracing::debug!(error = %e, "event handler not removed");
        }
    }
}
