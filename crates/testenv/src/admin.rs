//! The admin HTTP endpoint: fault injection for a server in another process (`kcr-apiserver`).
//!
//! Every call is a `POST` under `/kcr/faults/` (with the bearer token when one is configured):
//!
//! | path | query | effect |
//! | --- | --- | --- |
//! | `close-watches` | | [`Faults::close_all_watches`] |
//! | `close-watches-after` | `events=N` (absent: off) | [`Faults::close_watches_after_events`] |
//! | `compact` | | [`Faults::compact_history`] |
//! | `compact-storage` | | [`Faults::compact_storage`] |
//! | `fail` | `count=N&status=S[&verb=V][&resource=R][&retryAfter=SECS]` | [`Faults::fail_next`] |
//! | `latency` | `ms=N` | [`Faults::set_latency`] |
//! | `watch-delay` | `ms=N` | [`Faults::delay_watch_events`] |
//! | `refuse-user-agent` | `userAgent=UA` | [`Faults::refuse_updates_from_user_agent`] |
//! | `refuse-object` | `resource=R[&namespace=NS]&name=N` | [`Faults::refuse_updates_to`] |
//! | `omit-initial-events-end` | `resource=R` | [`Faults::omit_initial_events_end`] |
//! | `initialize-watch-cache` | `resource=R&ms=N` | [`Faults::initialize_watch_cache`] |
//! | `clear` | | [`Faults::clear`] |
//! | `restart` | `downMs=N` (default 500) | stop serving, wait, serve again on the same port |
//!
//! [`Faults::close_all_watches`]: crate::Faults::close_all_watches
//! [`Faults::close_watches_after_events`]: crate::Faults::close_watches_after_events
//! [`Faults::compact_history`]: crate::Faults::compact_history
//! [`Faults::compact_storage`]: crate::Faults::compact_storage
//! [`Faults::fail_next`]: crate::Faults::fail_next
//! [`Faults::set_latency`]: crate::Faults::set_latency
//! [`Faults::delay_watch_events`]: crate::Faults::delay_watch_events
//! [`Faults::refuse_updates_from_user_agent`]: crate::Faults::refuse_updates_from_user_agent
//! [`Faults::refuse_updates_to`]: crate::Faults::refuse_updates_to
//! [`Faults::omit_initial_events_end`]: crate::Faults::omit_initial_events_end
//! [`Faults::initialize_watch_cache`]: crate::Faults::initialize_watch_cache
//! [`Faults::clear`]: crate::Faults::clear

use std::sync::Arc;
use std::time::Duration;

use http::{Method, Response};
use serde_json::json;

use crate::body::Body;
use crate::faults::{Failure, Faults};
use crate::server::{Request, Shared, error_response, json_response};
use crate::status::ApiError;

/// Where the admin endpoint lives.
pub(crate) const PREFIX: &str = "/kcr/faults/";

fn number<T: std::str::FromStr>(req: &Request, name: &str) -> Result<Option<T>, ApiError> {
    match req.param(name).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => s
            .parse()
            .map(Some)
            .map_err(|_| ApiError::bad_request(format!("invalid {name}: {s:?}"))),
    }
}

/// Serves an admin request.
pub(crate) async fn handle(shared: &Arc<Shared>, req: &Request) -> Response<Body> {
    match apply(shared, req) {
        Ok(()) => json_response(
            200,
            serde_json::to_vec(&json!({"ok": true})).unwrap_or_default(),
        ),
        Err(e) => error_response(&e),
    }
}

fn apply(shared: &Arc<Shared>, req: &Request) -> Result<(), ApiError> {
    if req.method != Method::POST {
        return Err(ApiError::method_not_allowed());
    }
    let faults = Faults {
        shared: shared.clone(),
    };
    let action = req
        .path
        .strip_prefix(PREFIX)
        .unwrap_or_default()
        .trim_end_matches('/');
    match action {
        "close-watches" => faults.close_all_watches(),
        "close-watches-after" => faults.close_watches_after_events(number(req, "events")?),
        "compact" => faults.compact_history(),
        "compact-storage" => faults.compact_storage(),
        "fail" => {
            let count: usize = number(req, "count")?.unwrap_or(1);
            let status: u16 = number(req, "status")?.unwrap_or(500);
            if !(400..=599).contains(&status) {
                return Err(ApiError::bad_request("status must be 400..=599"));
            }
            let mut f = Failure::status(status);
            if let Some(secs) = number::<u32>(req, "retryAfter")? {
                f = f.retry_after(secs);
            }
            if let Some(v) = req.param("verb").filter(|s| !s.is_empty()) {
                f = f.verb(v);
            }
            if let Some(r) = req.param("resource").filter(|s| !s.is_empty()) {
                f = f.resource(r);
            }
            faults.fail_next(count, f);
        }
        "latency" => faults.set_latency(Duration::from_millis(number(req, "ms")?.unwrap_or(0))),
        "watch-delay" => {
            faults.delay_watch_events(Duration::from_millis(number(req, "ms")?.unwrap_or(0)))
        }
        "refuse-user-agent" => {
            let ua = req
                .param("userAgent")
                .filter(|s| !s.is_empty())
                .ok_or_else(|| ApiError::bad_request("userAgent is required"))?;
            faults.refuse_updates_from_user_agent(ua);
        }
        "refuse-object" => {
            let resource = req.param("resource").filter(|s| !s.is_empty());
            let name = req.param("name").filter(|s| !s.is_empty());
            let (Some(resource), Some(name)) = (resource, name) else {
                return Err(ApiError::bad_request("resource and name are required"));
            };
            faults.refuse_updates_to(
                resource,
                req.param("namespace").filter(|s| !s.is_empty()),
                name,
            );
        }
        "omit-initial-events-end" | "initialize-watch-cache" => {
            let resource = req
                .param("resource")
                .filter(|s| !s.is_empty())
                .ok_or_else(|| ApiError::bad_request("resource is required"))?;
            if action == "omit-initial-events-end" {
                faults.omit_initial_events_end(resource);
            } else {
                let ms = number(req, "ms")?.unwrap_or(0);
                faults.initialize_watch_cache(resource, Duration::from_millis(ms));
            }
        }
        "clear" => faults.clear(),
        "restart" => {
            let down = Duration::from_millis(number(req, "downMs")?.unwrap_or(500));
            tokio::spawn(async move {
                // Let this response reach the client before the connections close.
                tokio::time::sleep(Duration::from_millis(50)).await;
                faults.stop_serving().await;
                tokio::time::sleep(down).await;
                if let Err(e) = faults.restart_serving().await {
                    tracing::error!(error = %e, "kcr-testenv: cannot serve again");
                }
            });
        }
        _ => return Err(ApiError::path_not_found()),
    }
    Ok(())
}
