//! The invariants of `Queue` (client-go's `queue_test.go`, rewritten).

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use kcr_workqueue::Queue;
use tokio::time::timeout;

/// Whether `get` hands out anything within a (virtual) second.
async fn gets_nothing<T: kcr_workqueue::Item>(queue: &Queue<T>) -> bool {
    timeout(Duration::from_secs(1), queue.get()).await.is_err()
}

#[tokio::test(start_paused = true)]
async fn queue_should_hand_out_items_in_the_order_they_were_added() {
    let queue = Queue::new();
    for i in 0..100 {
        queue.add(i);
    }
    for i in 0..100 {
        assert_eq!(queue.get().await, Some(i));
    }
}

#[tokio::test(start_paused = true)]
async fn queue_should_not_queue_an_item_already_waiting_twice() {
    let queue = Queue::new();
    queue.add("a");
    queue.add("b");
    queue.add("a");
    assert_eq!(queue.len(), 2);
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(queue.get().await, Some("b"));
    assert!(gets_nothing(&queue).await);
}

#[tokio::test(start_paused = true)]
async fn queue_should_not_hand_out_an_item_being_processed() {
    let queue = Queue::new();
    queue.add("a");
    let item = queue.get().await.unwrap();
    queue.add("a");
    assert_eq!(queue.len(), 0, "an item being processed waits for done");
    assert!(gets_nothing(&queue).await);
    queue.done(&item);
}

#[tokio::test(start_paused = true)]
async fn queue_should_queue_an_item_added_while_processed_again_at_done() {
    let queue = Queue::new();
    queue.add("a");
    let item = queue.get().await.unwrap();
    queue.add("a");
    queue.add("a");
    queue.done(&item);
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.get().await, Some("a"));
    queue.done(&"a");
    assert!(
        gets_nothing(&queue).await,
        "queued once, however often added"
    );
}

#[tokio::test(start_paused = true)]
async fn queue_should_forget_an_item_done_without_being_added_again() {
    let queue = Queue::new();
    queue.add("a");
    let item = queue.get().await.unwrap();
    queue.done(&item);
    assert!(gets_nothing(&queue).await);
    // done for an item that is not being processed changes nothing.
    queue.add("b");
    queue.done(&"b");
    assert_eq!(queue.get().await, Some("b"));
}

#[tokio::test(start_paused = true)]
async fn queue_should_ignore_adds_after_shut_down() {
    let queue = Queue::new();
    queue.shut_down();
    queue.add("a");
    assert_eq!(queue.len(), 0);
    assert_eq!(queue.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn queue_should_hand_out_what_is_queued_after_shut_down_then_none() {
    let queue = Queue::new();
    queue.add(1);
    queue.add(2);
    queue.shut_down();
    assert!(queue.is_shutting_down());
    assert_eq!(queue.get().await, Some(1));
    assert_eq!(queue.get().await, Some(2));
    assert_eq!(queue.get().await, None);
    assert_eq!(queue.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn queue_should_requeue_at_done_an_item_added_before_shut_down() {
    let queue = Queue::new();
    queue.add("a");
    let item = queue.get().await.unwrap();
    queue.add("a");
    queue.shut_down();
    queue.done(&item);
    assert_eq!(queue.get().await, Some("a"));
    queue.done(&"a");
    assert_eq!(queue.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn shut_down_should_wake_parked_workers_with_none() {
    let queue: Queue<u32> = Queue::new();
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let queue = queue.clone();
            tokio::spawn(async move { queue.get().await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(10)).await;
    queue.shut_down();
    for worker in workers {
        assert_eq!(worker.await.unwrap(), None);
    }
}

#[tokio::test(start_paused = true)]
async fn add_should_wake_a_parked_worker() {
    let queue: Queue<u32> = Queue::new();
    let worker = {
        let queue = queue.clone();
        tokio::spawn(async move { queue.get().await })
    };
    tokio::time::sleep(Duration::from_millis(10)).await;
    queue.add(7);
    assert_eq!(worker.await.unwrap(), Some(7));
}

#[tokio::test(start_paused = true)]
async fn shut_down_with_drain_should_wait_until_every_item_handed_out_is_done() {
    let queue = Queue::new();
    queue.add("a");
    queue.add("b");
    let a = queue.get().await.unwrap();
    let b = queue.get().await.unwrap();
    let drain = {
        let queue = queue.clone();
        tokio::spawn(async move { queue.shut_down_with_drain().await })
    };
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(!drain.is_finished(), "two items are still being processed");
    queue.done(&a);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(!drain.is_finished(), "one item is still being processed");
    queue.done(&b);
    timeout(Duration::from_secs(1), drain)
        .await
        .expect("drain returns once every item is done")
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_draining_queue_should_still_hand_out_an_item_added_again_while_processed() {
    // client-go's `TestQueueDrainageUsingShutDownWithDrainWithDirtyItem`.
    let queue = Queue::new();
    queue.add("foo");
    let gotten = queue.get().await.unwrap();
    queue.add("foo");
    let drain = {
        let queue = queue.clone();
        tokio::spawn(async move { queue.shut_down_with_drain().await })
    };
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(queue.is_shutting_down());
    assert!(!drain.is_finished(), "foo is being processed");
    // Nothing is queued yet: a worker is told the queue is shut down.
    assert_eq!(queue.get().await, None);
    queue.done(&gotten);
    let again = queue.get().await;
    assert_eq!(again, Some("foo"), "queued again at done, shut down or not");
    queue.done(&"foo");
    assert_eq!(queue.get().await, None);
    timeout(Duration::from_secs(1), drain)
        .await
        .expect("drain returns once nothing is processed")
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn shut_down_with_drain_should_return_at_once_when_nothing_is_processed() {
    let queue: Queue<u32> = Queue::new();
    timeout(Duration::from_millis(1), queue.shut_down_with_drain())
        .await
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn shut_down_should_make_a_waiting_shut_down_with_drain_return_at_once() {
    // client-go: `ShutDown` turns the drain off and wakes its waiter.
    let queue = Queue::new();
    queue.add("a");
    let a = queue.get().await.unwrap();
    let drain = {
        let queue = queue.clone();
        tokio::spawn(async move { queue.shut_down_with_drain().await })
    };
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(!drain.is_finished(), "an item is still being processed");
    queue.shut_down();
    timeout(Duration::from_millis(1), drain)
        .await
        .expect("the drain returns at once")
        .unwrap();
    // A drain asked for again waits again, until the item is done.
    let drain = {
        let queue = queue.clone();
        tokio::spawn(async move { queue.shut_down_with_drain().await })
    };
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(!drain.is_finished(), "drain is on again");
    queue.done(&a);
    timeout(Duration::from_millis(1), drain)
        .await
        .expect("drain returns once the item is done")
        .unwrap();
}

/// A key that owns a resource: equal and hashed by its name.
#[derive(Clone, Debug)]
struct Owning {
    name: &'static str,
    _resource: Arc<Vec<u8>>,
}

impl PartialEq for Owning {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for Owning {}
impl std::hash::Hash for Owning {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

fn owning(name: &'static str) -> (Owning, std::sync::Weak<Vec<u8>>) {
    let resource = Arc::new(b"hello".to_vec());
    let weak = Arc::downgrade(&resource);
    (
        Owning {
            name,
            _resource: resource,
        },
        weak,
    )
}

#[tokio::test(start_paused = true)]
async fn queue_should_hold_no_reference_to_an_item_after_done() {
    // client-go's TestGarbageCollection.
    let queue = Queue::new();
    let (item, weak) = owning("a");
    queue.add(item);
    let got = queue.get().await.unwrap();
    queue.done(&got);
    drop(got);
    assert!(weak.upgrade().is_none(), "the queue let the item go");

    // Many items, one after the other: none is kept.
    let weaks: Vec<_> = ["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"]
        .into_iter()
        .map(|name| {
            let (item, weak) = owning(name);
            queue.add(item);
            weak
        })
        .collect();
    while !queue.is_empty() {
        let got = queue.get().await.unwrap();
        queue.done(&got);
    }
    assert!(weaks.iter().all(|w| w.upgrade().is_none()));

    // An item added again while processed comes back at done, and is let go
    // at the done after that.
    let (item, weak) = owning("b");
    queue.add(item.clone());
    let got = queue.get().await.unwrap();
    queue.add(item);
    queue.done(&got);
    drop(got);
    assert!(weak.upgrade().is_some(), "queued again: still held");
    let got = queue.get().await.unwrap();
    queue.done(&got);
    drop(got);
    assert!(weak.upgrade().is_none());
}

#[tokio::test(start_paused = true)]
async fn delaying_and_rate_limiting_queues_should_hold_no_reference_to_an_item_after_done() {
    let queue = kcr_workqueue::RateLimitingQueue::default();
    let (item, weak) = owning("a");
    queue.add_rate_limited(item);
    let got = queue.get().await.unwrap();
    queue.forget(&got);
    queue.done(&got);
    drop(got);
    assert!(weak.upgrade().is_none());
    let (item, weak) = owning("b");
    queue.add_after(item, Duration::from_millis(10));
    let got = queue.get().await.unwrap();
    queue.done(&got);
    drop(got);
    assert!(weak.upgrade().is_none());
}

struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_dropped_get_should_pass_its_wake_up_to_the_next_worker() {
    let queue: Queue<u32> = Queue::new();
    let first = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let second = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let (first_waker, second_waker) = (Waker::from(first.clone()), Waker::from(second.clone()));
    let mut second_get = pin!(queue.get());
    {
        let mut first_get = pin!(queue.get());
        assert!(
            first_get
                .as_mut()
                .poll(&mut Context::from_waker(&first_waker))
                .is_pending()
        );
        assert!(
            second_get
                .as_mut()
                .poll(&mut Context::from_waker(&second_waker))
                .is_pending()
        );
        queue.add(1);
        assert_eq!(
            first.0.load(Ordering::SeqCst),
            1,
            "the oldest worker is woken"
        );
        assert_eq!(second.0.load(Ordering::SeqCst), 0);
        // The first worker goes away without taking the item.
    }
    assert_eq!(second.0.load(Ordering::SeqCst), 1, "its wake-up went on");
    assert_eq!(
        second_get
            .as_mut()
            .poll(&mut Context::from_waker(&second_waker)),
        Poll::Ready(Some(1))
    );
}

#[test]
fn add_should_wake_one_parked_worker_per_item_waiting() {
    let queue: Queue<u32> = Queue::new();
    let first = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let second = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let (first_waker, second_waker) = (Waker::from(first.clone()), Waker::from(second.clone()));
    let mut first_get = pin!(queue.get());
    let mut second_get = pin!(queue.get());
    let mut first_cx = Context::from_waker(&first_waker);
    let mut second_cx = Context::from_waker(&second_waker);
    assert!(first_get.as_mut().poll(&mut first_cx).is_pending());
    assert!(second_get.as_mut().poll(&mut second_cx).is_pending());
    queue.add(1);
    queue.add(2);
    assert_eq!(first.0.load(Ordering::SeqCst), 1);
    assert_eq!(
        second.0.load(Ordering::SeqCst),
        1,
        "two items waiting: two workers woken"
    );
    assert_eq!(first_get.as_mut().poll(&mut first_cx), Poll::Ready(Some(1)));
    assert_eq!(
        second_get.as_mut().poll(&mut second_cx),
        Poll::Ready(Some(2))
    );
}

#[test]
fn add_should_not_wake_another_worker_while_one_is_already_woken_for_the_item() {
    let queue: Queue<u32> = Queue::new();
    let first = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let second = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let (first_waker, second_waker) = (Waker::from(first.clone()), Waker::from(second.clone()));
    let mut first_get = pin!(queue.get());
    let mut second_get = pin!(queue.get());
    let mut first_cx = Context::from_waker(&first_waker);
    let mut second_cx = Context::from_waker(&second_waker);
    assert!(first_get.as_mut().poll(&mut first_cx).is_pending());
    assert!(second_get.as_mut().poll(&mut second_cx).is_pending());
    queue.add(1);
    assert_eq!(
        first.0.load(Ordering::SeqCst),
        1,
        "the oldest worker is woken"
    );
    // A worker that was still running takes the item before the woken one runs.
    let running = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let running_waker = Waker::from(running);
    let mut running_get = pin!(queue.get());
    assert_eq!(
        running_get
            .as_mut()
            .poll(&mut Context::from_waker(&running_waker)),
        Poll::Ready(Some(1))
    );
    queue.add(2);
    assert_eq!(
        second.0.load(Ordering::SeqCst),
        0,
        "one item waiting and one worker already on its way: no second wake-up"
    );
    assert_eq!(first_get.as_mut().poll(&mut first_cx), Poll::Ready(Some(2)));
    queue.add(3);
    assert_eq!(
        second.0.load(Ordering::SeqCst),
        1,
        "the woken worker took its item: the next one wakes the next worker"
    );
    assert_eq!(
        second_get.as_mut().poll(&mut second_cx),
        Poll::Ready(Some(3))
    );
}
