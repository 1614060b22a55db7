//! The crate's error type.

/// A boxed error from user code (an index function, a transform, a process
/// callback or a known-objects store).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can go wrong in kcr-cache.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The object has no `metadata.name` (or an empty one), so it has no key.
    #[error("object has no name, so it has no key")]
    ObjectHasNoName,

    /// A key that is not `name` or `namespace/name` with non-empty parts.
    #[error("invalid key {key:?}: {reason}")]
    InvalidKey {
        /// The key as given.
        key: String,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// A `Deltas` with no delta in it has no key.
    #[error("a Deltas with no delta has no key")]
    ZeroLengthDeltas,

    /// An atomic delta (`ReplacedAll`, `SyncAll`, `Bookmark`) concerns no
    /// single object and has no key.
    #[error("an atomic delta (ReplacedAll, SyncAll, Bookmark) has no key")]
    NoKey,

    /// Options that cannot work together (client-go panics on them).
    #[error("invalid options: {0}")]
    InvalidOptions(&'static str),

    /// A resource version that is not an integer where one is compared as
    /// one (a [`MutationCache`](crate::MutationCache)).
    #[error("resource version {resource_version:?} is not an integer")]
    InvalidResourceVersion {
        /// The resource version as given.
        resource_version: String,
    },

    /// [`MutationCache::by_index`](crate::MutationCache::by_index) was
    /// called on a cache made without an indexer.
    #[error("no indexer has been provided to the mutation cache")]
    NoIndexer,

    /// No indexer is registered under this name.
    #[error("index {name:?} does not exist")]
    IndexNotFound {
        /// The index name asked for.
        name: String,
    },

    /// `add_indexers` was given a name that is already registered.
    #[error("indexer conflict: index {name:?} already exists")]
    IndexerConflict {
        /// The conflicting index name.
        name: String,
    },

    /// An index function failed for an object.
    #[error("index function {name:?} failed for key {key:?}")]
    IndexFunc {
        /// The index name.
        name: String,
        /// The object's key.
        key: String,
        /// The index function's error.
        #[source]
        source: BoxError,
    },

    /// The key function failed (custom key functions may fail in their own way).
    #[error("key function failed")]
    KeyFunc {
        /// The key function's error.
        #[source]
        source: BoxError,
    },

    /// The FIFO is closed and empty.
    #[error("FIFO is closed")]
    Closed,

    /// The `process` callback given to `pop` returned an error.
    #[error("processing popped deltas for key {key:?} failed")]
    Process {
        /// The key of the popped entry.
        key: String,
        /// The callback's error.
        #[source]
        source: BoxError,
    },

    /// The `process` callback given to `pop` panicked; the panic was caught.
    #[error("processing popped deltas for key {key:?} panicked: {message}")]
    ProcessPanicked {
        /// The key of the popped entry.
        key: String,
        /// The panic payload, when it is a string.
        message: String,
    },

    /// The transform function failed for an object.
    #[error("transform failed")]
    Transform {
        /// The transform's error.
        #[source]
        source: BoxError,
    },

    /// A label selector that does not parse.
    #[error("invalid label selector {selector:?} at byte {position}: {reason}")]
    InvalidSelector {
        /// The selector as given.
        selector: String,
        /// Byte offset where the problem was found.
        position: usize,
        /// What is wrong.
        reason: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The message of a caught panic (the payload `std::panic::catch_unwind`
/// returns): the `&str` or `String` it carries, or a fixed text for any other
/// payload. What kcr reports for a panicking index function, transform, pop
/// callback, reconciler or runnable.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}
