//! What a controller watches (controller-runtime `pkg/source`): a shared
//! informer of the manager's factory and the mapping of its events.

use std::sync::Arc;

use kcr_informer::{Registration, SharedIndexInformer};
use kcr_workqueue::PriorityQueue;
use kube::Resource;

use super::handler::{EnqueueHandler, Mapper};
use super::predicate::Predicate;
use super::reconciler::Request;
use crate::Result;

/// A watch whose handler is registered when the controller starts.
pub(crate) trait Source: Send + Sync {
    /// Registers the handler: from now on the informer's events reach
    /// `queue` (a handler added to a running informer first gets the cache
    /// as initial-list adds).
    fn start(
        &self,
        queue: &PriorityQueue<Request>,
        predicates: &Arc<[Box<dyn Predicate>]>,
    ) -> Result<Box<dyn StartedSource>>;

    /// The watched resource, for logs and errors.
    fn name(&self) -> String;

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
    ) -> Result<Box<dyn StartedSource>> {
        let registration = self.informer.add_event_handler(EnqueueHandler {
            queue: queue.clone(),
            predicates: predicates.clone(),
            mapper: self.mapper.clone(),
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
