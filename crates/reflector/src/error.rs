//! The errors of kcr-reflector and how the reflector classifies them.

use std::time::Duration;

use kube::core::Status;

/// What went wrong while listing, watching or writing to the store.
///
/// The reflector never stops on one of these: it reports it (to the watch
/// error handler, the log and the metrics) and recovers as client-go does.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The API server answered with an error status (an HTTP error response,
    /// or an `ERROR` event inside a watch).
    #[error("the API server answered {}{}: {}", .status.code, reason_suffix(&.status.reason), .status.message)]
    Api {
        /// The status the server sent.
        status: Box<Status>,
        /// The server's `Retry-After` (header or `details.retryAfterSeconds`), if any.
        retry_after: Option<Duration>,
    },

    /// The request did not get an answer (connection refused, reset, TLS, ...).
    #[error("request failed: {0}")]
    Request(#[source] kube::Error),

    /// The request could not be built (a bad selector or URL).
    #[error("could not build the request: {0}")]
    BuildRequest(#[source] http::Error),

    /// Reading the body of a response failed part way.
    #[error("reading the response failed: {0}")]
    Read(#[source] Box<dyn std::error::Error + Send + Sync>),

    /// An object (of a list or a watch event) did not decode as `K`.
    #[error("{kind} {name:?} does not decode: {source}")]
    Decode {
        /// The raw object's `kind`, or `"<unknown kind>"`.
        kind: String,
        /// The raw object's `namespace/name`, or `"<unknown name>"`.
        name: String,
        /// The decoder's complaint.
        #[source]
        source: serde_json::Error,
    },

    /// A watch event of a type the reflector does not know.
    #[error("unknown watch event type {event_type:?} for {kind} {name:?}")]
    UnknownEventType {
        /// The event's `type` field.
        event_type: String,
        /// The raw object's `kind`, or `"<unknown kind>"`.
        kind: String,
        /// The raw object's `namespace/name`, or `"<unknown name>"`.
        name: String,
    },

    /// A watch line or a list body that is not a JSON event / list at all.
    #[error("malformed {what}: {source}")]
    Malformed {
        /// What was expected (`"watch event"`, `"list"`).
        what: &'static str,
        /// The decoder's complaint.
        #[source]
        source: serde_json::Error,
    },

    /// The store refused a write.
    #[error("the store refused {op}: {source}")]
    Store {
        /// The store operation (`"replace"`, `"add"`, ...).
        op: &'static str,
        /// The store's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// A streaming list (WatchList) ended before its initial-events-end bookmark.
    #[error("the streaming list ended before the initial-events-end bookmark")]
    WatchListIncomplete,

    /// A streaming list's initial-events-end bookmark did not come in time (see
    /// [`Reflector::initial_events_end_timeout`](crate::Reflector::initial_events_end_timeout)):
    /// the reflector falls back to list and watch, and keeps listing this resource.
    #[error(
        "the bookmark that ends a streaming list's initial events did not come within {timeout:?}"
    )]
    InitialEventsEndTimeout {
        /// The bound that passed.
        timeout: Duration,
    },

    /// A compressed (`Content-Encoding: gzip`) response body did not decompress.
    #[error("the gzip-compressed response does not decompress: {0}")]
    Decompress(#[source] std::io::Error),

    /// A watch closed in under a second without delivering anything
    /// (client-go's "very short watch").
    #[error("very short watch: the watch closed within a second without delivering an event")]
    VeryShortWatch,

    /// A protobuf list, watch frame or object (see
    /// [`ApiListerWatcher::wire_format`](crate::ApiListerWatcher::wire_format)) that did not
    /// decode as `K`.
    #[error("{kind} {name:?} does not decode from protobuf: {source}")]
    Protobuf {
        /// The object's kind, or what was read (`"list"`, `"watch event"`).
        kind: String,
        /// The object's `namespace/name`, `"<unknown name>"`, or empty for a whole list or
        /// event.
        name: String,
        /// The decoder's complaint.
        #[source]
        source: kcr_protobuf::Error,
    },

    /// A watch line grew past the configured limit without ending (see
    /// [`ApiListerWatcher::max_event_bytes`](crate::ApiListerWatcher::max_event_bytes)).
    #[error("a watch event is longer than the limit of {limit} bytes")]
    EventTooLarge {
        /// The limit that was exceeded, in bytes.
        limit: usize,
    },

    /// A metadata-only list or watch (of `PartialObjectMeta<K>`, `Accept: ...;as=
    /// PartialObjectMetadataList`) was answered with another kind: a server or proxy that
    /// ignored the `as=` parameter sent the full objects.
    #[error("a metadata-only request was answered with {kind}, not PartialObjectMetadata")]
    NotMetadata {
        /// The kind the server sent (the list's or the object's), or `"<unknown kind>"`.
        kind: String,
    },

    /// The watch was ended because its [`ShardSelector`](crate::ShardSelector) changed: the
    /// reflector lists again with the new one.
    #[error("the shard selector changed: the watch ends so the next list uses the new one")]
    ShardSelectorChanged,
}

/// Status reasons the API server defines (`metav1.StatusReason*`). A status
/// with another reason is classified by its HTTP code alone, as client-go's
/// `apierrors` does.
const KNOWN_REASONS: &[&str] = &[
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "AlreadyExists",
    "Conflict",
    "Gone",
    "Invalid",
    "ServerTimeout",
    "StoreReadError",
    "Timeout",
    "TooManyRequests",
    "BadRequest",
    "MethodNotAllowed",
    "NotAcceptable",
    "RequestEntityTooLarge",
    "UnsupportedMediaType",
    "InternalError",
    "Expired",
    "ServiceUnavailable",
];

/// The message of the server's "too large resource version" error, and of its cause.
const TOO_LARGE_RESOURCE_VERSION: &str = "Too large resource version";

fn reason_suffix(reason: &str) -> String {
    if reason.is_empty() {
        String::new()
    } else {
        format!(" {reason}")
    }
}

/// The result type of kcr-reflector.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Builds an [`Error::Api`] from a status, taking `retryAfterSeconds` from its details.
    pub fn from_status(status: Status) -> Self {
        let retry_after = status
            .details
            .as_ref()
            .map(|d| d.retry_after_seconds)
            .filter(|s| *s > 0)
            .map(|s| Duration::from_secs(u64::from(s)));
        Error::Api {
            status: Box::new(status),
            retry_after,
        }
    }

    /// The status of an [`Error::Api`].
    pub fn status(&self) -> Option<&Status> {
        match self {
            Error::Api { status, .. } => Some(status),
            _ => None,
        }
    }

    /// `410 Gone` or reason `Expired`/`Gone`: the requested resource version
    /// (or continue token) is too old; a relist is needed.
    pub fn is_expired(&self) -> bool {
        self.status()
            .is_some_and(|s| s.code == 410 || s.reason == "Expired" || s.reason == "Gone")
    }

    /// Reason `Expired` only (client-go's `apierrors.IsResourceExpired`): the
    /// check its pager makes before it redoes an expired paged list whole.
    pub fn is_resource_expired(&self) -> bool {
        self.status().is_some_and(|s| s.reason == "Expired")
    }

    /// Reason `Timeout`, or an unknown reason with code 504 (client-go's
    /// `apierrors.IsTimeout`).
    pub fn is_timeout(&self) -> bool {
        self.status().is_some_and(|s| {
            s.reason == "Timeout" || (!KNOWN_REASONS.contains(&s.reason.as_str()) && s.code == 504)
        })
    }

    /// Reason `InternalError`, or an unknown reason with code 500 (client-go's
    /// `apierrors.IsInternalError`).
    pub fn is_internal_error(&self) -> bool {
        self.status().is_some_and(|s| {
            s.reason == "InternalError"
                || (!KNOWN_REASONS.contains(&s.reason.as_str()) && s.code == 500)
        })
    }

    /// The server does not have the requested resource version yet, which
    /// client-go treats like an expired version for lists (it relists from
    /// `""`). Recognised in each form a server sends, as client-go's
    /// `isTooLargeResourceVersionError`: a cause of type
    /// `ResourceVersionTooLarge` (1.18.6 and later); or, on a `Timeout`, a
    /// cause whose message is "Too large resource version" (1.17.0–1.18.5) or
    /// that text in the status message (before 1.17).
    pub fn is_too_large_resource_version(&self) -> bool {
        let Some(status) = self.status() else {
            return false;
        };
        let causes = status
            .details
            .as_ref()
            .map(|d| d.causes.as_slice())
            .unwrap_or_default();
        if causes.iter().any(|c| c.reason == "ResourceVersionTooLarge") {
            return true;
        }
        if !self.is_timeout() {
            return false;
        }
        causes
            .iter()
            .any(|c| c.message == TOO_LARGE_RESOURCE_VERSION)
            || status.message.contains(TOO_LARGE_RESOURCE_VERSION)
    }

    /// `429 Too Many Requests`.
    pub fn is_too_many_requests(&self) -> bool {
        self.status()
            .is_some_and(|s| s.code == 429 || s.reason == "TooManyRequests")
    }

    /// client-go's `isWatchErrorRetriable`: the server could not be reached
    /// or answered `429`. A watch (or streaming list) that fails so is
    /// retried after a backoff without relisting.
    pub fn is_watch_error_retriable(&self) -> bool {
        self.is_server_unreachable() || self.is_too_many_requests()
    }

    /// The server's requested delay before the next attempt.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Api { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The connection was refused (the server is down or restarting).
    pub fn is_connection_refused(&self) -> bool {
        let Error::Request(e) = self else {
            return false;
        };
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(err) = source {
            if let Some(io) = err.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::ConnectionRefused
            {
                return true;
            }
            source = err.source();
        }
        false
    }

    /// The server could not be reached: the connection was refused, reset or
    /// aborted, or a pooled connection was closed by the server before it
    /// answered. (Go's transport retries the last case on a fresh connection,
    /// which is then refused; hyper reports it.) client-go retries a watch
    /// that fails this way without relisting.
    pub fn is_server_unreachable(&self) -> bool {
        let Error::Request(e) = self else {
            return false;
        };
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(err) = source {
            if let Some(io) = err.downcast_ref::<std::io::Error>()
                && matches!(
                    io.kind(),
                    std::io::ErrorKind::ConnectionRefused
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::ConnectionAborted
                        | std::io::ErrorKind::BrokenPipe
                        | std::io::ErrorKind::UnexpectedEof
                )
            {
                return true;
            }
            if let Some(h) = err.downcast_ref::<hyper::Error>()
                && (h.is_incomplete_message() || h.is_canceled() || h.is_closed())
            {
                return true;
            }
            source = err.source();
        }
        false
    }

    /// A decoding problem: a malformed event or list, an object that does not
    /// decode, an unknown event type.
    pub fn is_decode(&self) -> bool {
        matches!(
            self,
            Error::Decode { .. }
                | Error::Protobuf { .. }
                | Error::UnknownEventType { .. }
                | Error::Malformed { .. }
                | Error::EventTooLarge { .. }
                | Error::Decompress(_)
                | Error::NotMetadata { .. }
        )
    }

    /// A short label for metrics and logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::Api { .. } if self.is_expired() => "expired",
            Error::Api { .. } if self.is_too_many_requests() => "too_many_requests",
            Error::Api { .. } => "api",
            Error::Request(_) if self.is_connection_refused() => "connection_refused",
            Error::Request(_) if self.is_server_unreachable() => "server_unreachable",
            Error::Request(_) => "request",
            Error::BuildRequest(_) => "build_request",
            Error::Read(_) => "read",
            Error::Decode { .. } | Error::Protobuf { .. } => "decode",
            Error::UnknownEventType { .. } => "unknown_event_type",
            Error::Malformed { .. } => "malformed",
            Error::Store { .. } => "store",
            Error::WatchListIncomplete => "watch_list_incomplete",
            Error::InitialEventsEndTimeout { .. } => "initial_events_end_timeout",
            Error::Decompress(_) => "decompress",
            Error::VeryShortWatch => "very_short_watch",
            Error::EventTooLarge { .. } => "event_too_large",
            Error::ShardSelectorChanged => "shard_selector_changed",
            Error::NotMetadata { .. } => "not_metadata",
        }
    }
}
