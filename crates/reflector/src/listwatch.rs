//! [`ListerWatcher`]: what a reflector lists and watches (client-go's
//! `listwatch.go`), and its implementation for [`kube::Api`].

use std::collections::BTreeMap;
use std::fmt;

use async_trait::async_trait;
use futures::stream::BoxStream;
use kube::core::Status;

use crate::error::Result;

/// The annotation of the bookmark that ends a streaming list's initial events.
pub const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// How a list's `resourceVersion` is interpreted (`resourceVersionMatch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionMatch {
    /// Data at least as new as the given version.
    NotOlderThan,
    /// Data at exactly the given version.
    Exact,
}

impl VersionMatch {
    /// The query value.
    pub fn as_str(self) -> &'static str {
        match self {
            VersionMatch::NotOlderThan => "NotOlderThan",
            VersionMatch::Exact => "Exact",
        }
    }
}

/// The options of one list request (one page), as client-go's `metav1.ListOptions`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListOptions {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `resourceVersion`: `Some("0")` is "any version, from the server's
    /// cache"; `Some("")` or `None` is "the latest (a quorum read)".
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<VersionMatch>,
    /// `limit`: the page size; `None` asks for everything at once.
    pub limit: Option<u32>,
    /// `continue`: the token of the next page. When set, `resourceVersion` is
    /// not sent (the token carries it).
    pub continue_token: Option<String>,
}

impl ListOptions {
    /// Empty options (no selector, latest version, no paging).
    pub fn new() -> Self {
        Self::default()
    }
}

/// The options of one watch request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WatchOptions {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `resourceVersion` to watch from (`""` is "now").
    pub resource_version: String,
    /// `resourceVersionMatch` (only with `send_initial_events`).
    pub resource_version_match: Option<VersionMatch>,
    /// `timeoutSeconds`: the server ends the watch after this long.
    pub timeout_seconds: Option<u32>,
    /// `allowWatchBookmarks`.
    pub allow_watch_bookmarks: bool,
    /// `sendInitialEvents` (a streaming list).
    pub send_initial_events: bool,
}

impl WatchOptions {
    /// Options that watch from `resource_version` with bookmarks on.
    pub fn new(resource_version: impl Into<String>) -> Self {
        Self {
            resource_version: resource_version.into(),
            allow_watch_bookmarks: true,
            ..Self::default()
        }
    }
}

/// One page of a list: the items, the list's resource version and the
/// continue token of the next page.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectList<K> {
    /// The objects.
    pub items: Vec<K>,
    /// `metadata.resourceVersion` of the list.
    pub resource_version: String,
    /// `metadata.continue`: set when more pages follow.
    pub continue_token: Option<String>,
    /// `metadata.remainingItemCount`, when the server tells.
    pub remaining_item_count: Option<i64>,
}

/// A bookmark: the server's note that the watch has reached a version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bookmark {
    /// The version reached.
    pub resource_version: String,
    /// The bookmark object's annotations.
    pub annotations: BTreeMap<String, String>,
}

impl Bookmark {
    /// Whether this bookmark ends the initial events of a streaming list.
    pub fn is_initial_events_end(&self) -> bool {
        self.annotations
            .get(INITIAL_EVENTS_END_ANNOTATION)
            .is_some_and(|v| v == "true")
    }
}

/// One event of a watch.
#[derive(Clone, PartialEq)]
pub enum WatchEvent<K> {
    /// An object was created (or is part of a streaming list's initial state).
    Added(K),
    /// An object changed.
    Modified(K),
    /// An object was deleted (its last state).
    Deleted(K),
    /// The watch has reached a version.
    Bookmark(Bookmark),
    /// The server reports an error inside the watch (`410 Expired`, ...).
    Error(Box<Status>),
}

impl<K> fmt::Debug for WatchEvent<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WatchEvent::Added(_) => f.write_str("Added"),
            WatchEvent::Modified(_) => f.write_str("Modified"),
            WatchEvent::Deleted(_) => f.write_str("Deleted"),
            WatchEvent::Bookmark(b) => write!(f, "Bookmark({})", b.resource_version),
            WatchEvent::Error(s) => write!(f, "Error({} {})", s.code, s.reason),
        }
    }
}

/// The stream of a watch. It ends when the server closes the watch; an item
/// `Err` reports an event that could not be read (the reflector relists).
pub type WatchStream<K> = BoxStream<'static, Result<WatchEvent<K>>>;

/// Lists and watches one kind of object: what a [`Reflector`](crate::Reflector)
/// reads from (client-go's `ListerWatcher`).
///
/// Object-safe: a reflector holds an `Arc<dyn ListerWatcher<K>>`. It is
/// implemented for [`kube::Api<K>`] (typed objects, custom resources and
/// `DynamicObject`); any other source can be plugged in.
#[async_trait]
pub trait ListerWatcher<K>: Send + Sync {
    /// Lists one page.
    async fn list(&self, options: &ListOptions) -> Result<ObjectList<K>>;

    /// Opens a watch. An error status on the request itself is an
    /// [`Error::Api`](crate::Error::Api) here; one inside the stream is a
    /// [`WatchEvent::Error`].
    async fn watch(&self, options: &WatchOptions) -> Result<WatchStream<K>>;

    /// `true` when this source cannot serve streaming lists (a watch with
    /// `sendInitialEvents=true` that ends its initial state with the
    /// `k8s.io/initial-events-end` bookmark), as client-go's
    /// `IsWatchListSemanticsUnSupported`: a reflector over it then always
    /// lists and watches. Default `false`; a fake or in-memory source that
    /// ignores `send_initial_events` says `true`.
    fn is_watch_list_semantics_unsupported(&self) -> bool {
        false
    }
}

#[async_trait]
impl<K, L> ListerWatcher<K> for std::sync::Arc<L>
where
    L: ListerWatcher<K> + ?Sized,
{
    async fn list(&self, options: &ListOptions) -> Result<ObjectList<K>> {
        (**self).list(options).await
    }

    async fn watch(&self, options: &WatchOptions) -> Result<WatchStream<K>> {
        (**self).watch(options).await
    }

    fn is_watch_list_semantics_unsupported(&self) -> bool {
        (**self).is_watch_list_semantics_unsupported()
    }
}
