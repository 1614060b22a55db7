//! The crate's error type.

/// Everything that can go wrong in kcr-informer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A setting that only applies before start (`set_transform`,
    /// `set_watch_error_handler`, `run`) was changed after
    /// [`run`](crate::SharedIndexInformer::run) began.
    #[error("the informer has already started")]
    AlreadyStarted,

    /// The informer has stopped: handlers and indexers can no longer be
    /// added, and it cannot be run again.
    #[error("the informer has stopped")]
    Stopped,

    /// [`shut_down_event_handler`](crate::SharedIndexInformer::shut_down_event_handler)
    /// was called from inside one of that handler's own calls, where waiting
    /// for the handler to stop would wait for itself. Nothing was removed;
    /// [`remove_event_handler`](crate::SharedIndexInformer::remove_event_handler)
    /// removes it without waiting.
    #[error("a handler cannot shut itself down from its own callback (it would wait for itself)")]
    ShutDownFromOwnHandler,

    /// The registration belongs to another informer.
    #[error("the registration belongs to another informer")]
    ForeignRegistration,

    /// The cache refused something (an indexer conflict, a failing index or
    /// key function).
    #[error("cache: {0}")]
    Cache(#[source] kcr_cache::Error),
}

impl From<kcr_cache::Error> for Error {
    fn from(e: kcr_cache::Error) -> Self {
        Error::Cache(e)
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
