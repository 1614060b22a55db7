//! [`ShardSelector`]: the `shardSelector` list and watch parameter of
//! kube-apiserver's sharded list and watch (KEP-5866, feature gate
//! `ShardedListAndWatch`, alpha in v1.36), shared between the code that
//! decides a replica's share and the lister-watcher that asks for it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::error::Error;
use crate::listwatch::{WatchEvent, WatchStream};

/// A `shardSelector` that can change while a reflector runs, such as
/// `shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')`
/// (ranges joined by ` || `).
///
/// Give it to [`ApiListerWatcher::shard_selector`](crate::ApiListerWatcher::shard_selector):
/// every list and watch then carries the selector as it is at that moment. When
/// [`set`](Self::set) changes it, an open watch ends with
/// [`Error::ShardSelectorChanged`], so the reflector's next cycle lists again with the new
/// selector and its store replaces what it held (objects that left the share reach the
/// handlers as deletions, objects that entered it as additions).
///
/// A server without the feature gate ignores the parameter and sends everything; whether the
/// last list was sharded by the server is in [`server_applied`](Self::server_applied), read
/// from the list's `metadata.shardInfo`.
///
/// The handle is cheap to clone; clones share the selector.
///
/// ```
/// use kcr_reflector::ShardSelector;
///
/// let selector = ShardSelector::new();
/// assert_eq!(selector.get(), None);
/// selector.set(Some("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')".into()));
/// assert_eq!(selector.generation(), 1);
/// assert_eq!(selector.server_applied(), None); // no list yet
/// ```
#[derive(Clone, Default)]
pub struct ShardSelector {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    // Held only to read or write the fields, never across an `.await`.
    state: Mutex<State>,
    changed: Notify,
}

#[derive(Default)]
struct State {
    selector: Option<String>,
    generation: u64,
    server_applied: Option<bool>,
}

impl std::fmt::Debug for ShardSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.inner.state.lock();
        f.debug_struct("ShardSelector")
            .field("selector", &state.selector)
            .field("generation", &state.generation)
            .field("server_applied", &state.server_applied)
            .finish()
    }
}

impl ShardSelector {
    /// A handle with no selector (lists and watches are not sharded).
    pub fn new() -> Self {
        Self::default()
    }

    /// The selector now (`None`: no `shardSelector` parameter is sent).
    pub fn get(&self) -> Option<String> {
        self.inner.state.lock().selector.clone()
    }

    /// The selector and its generation, read together.
    pub(crate) fn snapshot(&self) -> (Option<String>, u64) {
        let state = self.inner.state.lock();
        (state.selector.clone(), state.generation)
    }

    /// How many times the selector changed.
    pub fn generation(&self) -> u64 {
        self.inner.state.lock().generation
    }

    /// Replaces the selector (`None` or an empty string: none). A change ends the watches
    /// opened with the old one; setting the same selector again changes nothing.
    pub fn set(&self, selector: Option<String>) {
        let selector = selector.filter(|s| !s.is_empty());
        {
            let mut state = self.inner.state.lock();
            if state.selector == selector {
                return;
            }
            state.selector = selector;
            state.generation += 1;
        }
        self.inner.changed.notify_waiters();
    }

    /// Whether the server applied the selector to the last list sent with one: `Some(true)`
    /// when the list's `metadata.shardInfo` echoed it, `Some(false)` when a built-in kind's
    /// list came back without `shardInfo` (a server without the `ShardedListAndWatch` gate,
    /// which ignores the parameter), `None` before such a list, or when the list does not
    /// tell (kube-apiserver's custom resource lists honour the selector but carry no
    /// `shardInfo`), in JSON and in protobuf alike.
    pub fn server_applied(&self) -> Option<bool> {
        self.inner.state.lock().server_applied
    }

    /// Notes what a list answered about the selector it was sent with.
    pub(crate) fn note_list(&self, applied: Option<bool>) {
        if applied.is_some() {
            self.inner.state.lock().server_applied = applied;
        }
    }

    /// Resolves once the generation differs from `generation`.
    pub(crate) async fn changed_since(self, generation: u64) {
        loop {
            let notified = self.inner.changed.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.generation() != generation {
                return;
            }
            notified.await;
        }
    }

    /// `stream`, ended with [`Error::ShardSelectorChanged`] as soon as the selector's
    /// generation moves past `generation`.
    pub(crate) fn end_on_change<K: Send + 'static>(
        &self,
        stream: WatchStream<K>,
        generation: u64,
    ) -> WatchStream<K> {
        Box::pin(UntilChanged {
            inner: stream,
            changed: Box::pin(self.clone().changed_since(generation)),
            done: false,
        })
    }
}

/// A watch stream that ends with an error when the selector changes.
struct UntilChanged<K> {
    inner: WatchStream<K>,
    changed: Pin<Box<dyn Future<Output = ()> + Send>>,
    done: bool,
}

impl<K> Stream for UntilChanged<K> {
    type Item = crate::error::Result<WatchEvent<K>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        if self.changed.as_mut().poll(cx).is_ready() {
            self.done = true;
            return Poll::Ready(Some(Err(Error::ShardSelectorChanged)));
        }
        let polled = self.inner.as_mut().poll_next(cx);
        if let Poll::Ready(None) = polled {
            self.done = true;
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    #[tokio::test]
    async fn a_watch_should_end_with_an_error_once_the_selector_changes() {
        let selector = ShardSelector::new();
        selector.set(Some("a".into()));
        let (tx, rx) = futures::channel::mpsc::unbounded::<crate::error::Result<WatchEvent<()>>>();
        let mut stream = selector.end_on_change(rx.boxed(), selector.generation());
        tx.unbounded_send(Ok(WatchEvent::Added(()))).ok();
        assert!(matches!(
            stream.next().await,
            Some(Ok(WatchEvent::Added(())))
        ));
        // The same selector again is no change.
        selector.set(Some("a".into()));
        selector.set(Some("b".into()));
        assert!(matches!(
            stream.next().await,
            Some(Err(Error::ShardSelectorChanged))
        ));
        assert!(stream.next().await.is_none());
    }

    #[tokio::test]
    async fn a_watch_that_ends_should_end_without_waiting_for_a_change() {
        let selector = ShardSelector::new();
        let (tx, rx) = futures::channel::mpsc::unbounded::<crate::error::Result<WatchEvent<()>>>();
        let mut stream = selector.end_on_change(rx.boxed(), selector.generation());
        drop(tx);
        assert!(stream.next().await.is_none());
    }

    #[test]
    fn an_empty_selector_should_be_no_selector() {
        let selector = ShardSelector::new();
        selector.set(Some(String::new()));
        assert_eq!((selector.get(), selector.generation()), (None, 0));
    }
}
