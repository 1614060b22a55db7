//! The watch cache's rules, as kube-apiserver's cacher (`apiserver/pkg/storage/cacher/`) applies
//! them to lists and watches.
//!
//! kcr-testenv's store keeps a bounded window of recent changes (the `history` of
//! [`Store`](crate::store::Store)): that window is the watch cache. Watches from a version in it
//! replay the changes after that version; lists at an exact version in it (`resourceVersionMatch
//! =Exact`, continue tokens) are served from a snapshot rebuilt from it, as kube-apiserver serves
//! them from its cache snapshots. A compaction of the storage underneath
//! ([`Faults::compact_storage`](crate::Faults::compact_storage), `etcdctl compact` on a real
//! cluster) does not touch the window; only versions older than the window are `410 Gone`.
//! [`Faults::compact_history`](crate::Faults::compact_history) also empties the window (as a
//! restart of kube-apiserver after a compaction would), so every older version is `410`.
//!
//! Other rules:
//! - a list or a watch-list (`sendInitialEvents=true`) from a version newer than the store's
//!   waits up to [`BLOCK_TIMEOUT`] for it, then fails with `504 Timeout` "Too large resource
//!   version" (cause `ResourceVersionTooLarge`); a plain watch from the future waits silently
//!   for the changes after that version, as kube-apiserver's does;
//! - a list with `resourceVersion=0` is served from the cache as it is, whole: `limit` is ignored.

use std::time::Duration;

use crate::server::Shared;
use crate::status::{ApiError, ApiResult};
use crate::store::Store;

/// How long a request from a future version waits for the cache to reach it
/// (kube-apiserver's `blockTimeout`).
pub(crate) const BLOCK_TIMEOUT: Duration = Duration::from_secs(3);

/// Waits until the store has reached `rv`, at most [`BLOCK_TIMEOUT`]; then the version is served,
/// or the request fails with "Too large resource version".
pub(crate) async fn wait_until_fresh(shared: &Shared, rv: u64) -> ApiResult<()> {
    let mut changed = shared.changed.subscribe();
    // The channel carries the newest version; the store's lock must not be taken inside
    // `wait_for` (commits notify under that lock).
    let reached = tokio::time::timeout(BLOCK_TIMEOUT, changed.wait_for(|&current| current >= rv));
    match reached.await {
        Ok(Ok(_)) => Ok(()),
        // Timed out, or the server is going away.
        _ => Err(ApiError::too_large_resource_version(
            rv,
            shared.store.lock().rv(),
        )),
    }
}

/// The version a list must wait for: a `resourceVersion` newer than the store's (unless the list
/// continues an earlier page, whose token names the version).
pub(crate) fn list_waits_for(
    store: &Store,
    resource_version: Option<&str>,
    continues: bool,
) -> Option<u64> {
    if continues {
        return None;
    }
    let rv = resource_version?.parse::<u64>().ok()?;
    (rv > store.rv()).then_some(rv)
}

/// The page size of a list: `resourceVersion=0` is served from the cache whole.
pub(crate) fn list_limit(resource_version: Option<&str>, limit: usize) -> usize {
    if resource_version == Some("0") {
        0
    } else {
        limit
    }
}

/// The `410 Gone` of a list at an exact version older than the window. kube-apiserver serves
/// such a list from storage (etcd), which refuses versions it has compacted with etcd's message;
/// kcr-testenv's storage keeps no history beyond the window, so a version between the last
/// storage compaction and the window gets the watch cache's message instead (a real server would
/// answer it from etcd).
pub(crate) fn expired_list(store: &Store, requested: u64) -> ApiError {
    if requested < store.storage_compacted() {
        ApiError::gone("The resourceVersion for the provided list is too old.")
    } else {
        ApiError::gone(format!(
            "too old resource version: {requested} ({})",
            store.window_start()
        ))
    }
}

/// kube-apiserver's answer to a request its initializing watch cache would serve
/// (`storage is (re)initializing`, `429` with `Retry-After: 1`).
pub(crate) fn initializing() -> ApiError {
    let mut e = ApiError::new(429, "TooManyRequests", "storage is (re)initializing");
    e.retry_after = Some(1);
    e
}

/// Whether a list or watch is refused while the watch cache initializes (KEP-4568): every
/// watch; a list unless kube-apiserver sends it to etcd anyway (from the latest version, at an
/// exact version, continuing a page) or delegates it because it is cheap there (no selector
/// and a `limit`).
pub(crate) fn refused_while_initializing(
    verb: &str,
    param: &dyn Fn(&str) -> Option<String>,
) -> bool {
    match verb {
        "watch" => true,
        "list" => {
            let set = |name: &str| param(name).is_some_and(|v| !v.is_empty());
            let from_storage = !set("resourceVersion")
                || set("continue")
                || param("resourceVersionMatch").as_deref() == Some("Exact");
            let limited = param("limit")
                .and_then(|l| l.parse::<i64>().ok())
                .is_some_and(|l| l > 0);
            let delegated = limited && !set("labelSelector") && !set("fieldSelector");
            !(from_storage || delegated)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared() -> std::sync::Arc<Shared> {
        let options = crate::server::Options {
            history_size: 10,
            token: None,
            body_limit: 1024,
            bookmark_interval: Duration::from_secs(60),
            admin_endpoint: false,
            watch_buffer: 1,
            tls: false,
            reviews: Default::default(),
            finalize_namespaces: false,
            rbac: false,
            namespace_controllers: false,
            sharded_list_and_watch: false,
            garbage_collector: false,
            quota_controller: false,
            storage_protection: false,
            workload_controllers: false,
            stateful_set_controller: false,
            job_controller: false,
            cluster_role_aggregation: false,
            disabled_admission_plugins: Default::default(),
        };
        Shared::new(options, ([127, 0, 0, 1], 0).into(), None)
    }

    /// Commits one change, as a write does.
    fn commit(shared: &Shared) {
        let mut store = shared.store.lock();
        let rv = store.next_rv();
        let value = serde_json::json!({"metadata": {"name": format!("c{rv}"), "resourceVersion": rv.to_string()}});
        store.commit(
            &"/configmaps".into(),
            None,
            &format!("c{rv}"),
            crate::store::EventType::Added,
            value,
        );
        shared.notify(store.rv());
    }

    #[tokio::test(start_paused = true)]
    async fn a_future_version_reached_within_the_wait_should_be_served() {
        let shared = shared();
        let target = shared.store.lock().rv() + 2;
        let started = tokio::time::Instant::now();
        let waiting = tokio::spawn({
            let shared = shared.clone();
            async move { wait_until_fresh(&shared, target).await }
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
        commit(&shared);
        commit(&shared);
        assert!(waiting.await.unwrap().is_ok());
        assert!(started.elapsed() < BLOCK_TIMEOUT);
    }

    #[tokio::test(start_paused = true)]
    async fn a_future_version_not_reached_should_fail_after_the_block_timeout() {
        let shared = shared();
        let current = shared.store.lock().rv();
        let started = tokio::time::Instant::now();
        let e = wait_until_fresh(&shared, current + 5).await.unwrap_err();
        assert_eq!(started.elapsed(), BLOCK_TIMEOUT);
        assert_eq!((e.code, e.reason), (504, "Timeout"));
        assert_eq!(
            e.message,
            format!(
                "Timeout: Too large resource version: {}, current: {current}",
                current + 5
            )
        );
    }

    #[test]
    fn resource_version_zero_should_ignore_the_limit() {
        assert_eq!(list_limit(Some("0"), 2), 0);
        assert_eq!(list_limit(Some("5"), 2), 2);
        assert_eq!(list_limit(None, 2), 2);
    }

    #[test]
    fn only_lists_from_a_future_version_should_wait() {
        let store = Store::new(10);
        let future = (store.rv() + 5).to_string();
        let now = store.rv().to_string();
        assert_eq!(
            list_waits_for(&store, Some(&future), false),
            Some(store.rv() + 5)
        );
        assert_eq!(list_waits_for(&store, Some(&future), true), None);
        assert_eq!(list_waits_for(&store, Some(&now), false), None);
        assert_eq!(list_waits_for(&store, Some("abc"), false), None);
        assert_eq!(list_waits_for(&store, None, false), None);
    }

    #[test]
    fn an_initializing_cache_should_refuse_watches_and_the_lists_it_would_serve() {
        let refused = |verb: &str, query: &[(&str, &str)]| {
            let query: Vec<(String, String)> = query
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            refused_while_initializing(verb, &|name: &str| {
                query
                    .iter()
                    .rev()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
            })
        };
        assert!(refused("watch", &[("resourceVersion", "5")]));
        assert!(refused("watch", &[("sendInitialEvents", "true")]));
        // Served from the cache: refused.
        assert!(refused("list", &[("resourceVersion", "0")]));
        assert!(refused(
            "list",
            &[
                ("resourceVersion", "0"),
                ("limit", "500"),
                ("labelSelector", "a=b")
            ]
        ));
        // Delegated to etcd: served.
        assert!(!refused(
            "list",
            &[("resourceVersion", "0"), ("limit", "500")]
        ));
        assert!(!refused("list", &[]));
        assert!(!refused(
            "list",
            &[("resourceVersion", ""), ("labelSelector", "a=b")]
        ));
        assert!(!refused(
            "list",
            &[("resourceVersion", "5"), ("resourceVersionMatch", "Exact")]
        ));
        assert!(!refused(
            "list",
            &[("continue", "abc"), ("labelSelector", "a=b")]
        ));
        assert!(!refused("get", &[]));
        let status = initializing().to_status();
        assert_eq!(
            serde_json::to_string(&status).unwrap_or_default(),
            r#"{"apiVersion":"v1","code":429,"details":{"retryAfterSeconds":1},"kind":"Status","message":"storage is (re)initializing","metadata":{},"reason":"TooManyRequests","status":"Failure"}"#
        );
    }
}
