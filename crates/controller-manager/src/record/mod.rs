//! Kubernetes events (client-go `tools/record`): an [`EventRecorder`] that
//! correlates (aggregates, counts, rate-limits) and writes events without
//! ever blocking or failing its caller.

mod event;
mod events_cache;

pub use event::{
    DEFAULT_QUEUE_SIZE, EventRecorder, EventRecorderBuilder, EventType, EventsApi,
    NOTE_LENGTH_LIMIT, Reporter,
};
pub use events_cache::{AGGREGATE_PREFIX, CorrelatorOptions};
