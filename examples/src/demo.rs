//! What the examples print while they run on a test server: how many Foos
//! have converged, and the Events the controller records.

use std::collections::HashSet;
use std::time::Duration;

use k8s_openapi::api::events::v1::Event;
use kube::Client;
use kube::api::{Api, ListParams};

use crate::cluster;

/// Prints `converged: D/T Foos have their desired replicas` each time the
/// count changes (polling every `every`), until dropped.
pub async fn print_convergence(client: Client, every: Duration) {
    let mut last = None;
    loop {
        match cluster::converged(&client).await {
            Ok(now) if Some(now) != last => {
                let (done, total) = now;
                println!("converged: {done}/{total} Foos have their desired replicas");
                last = Some(now);
            }
            Ok(_) => {}
            Err(e) => tracing::debug!(error = %e, "cannot list Foos"),
        }
        tokio::time::sleep(every).await;
    }
}

/// Prints each new Event about a Foo once (events.k8s.io/v1), polling every
/// `every`, until dropped: `event: <type> <reason> foo <ns>/<name>: <note>`.
pub async fn print_foo_events(client: Client, every: Duration) {
    let events: Api<Event> = Api::all(client);
    let mut seen = HashSet::new();
    loop {
        match events.list(&ListParams::default()).await {
            Ok(list) => {
                for event in list.items {
                    let Some(regarding) = event.regarding.as_ref() else {
                        continue;
                    };
                    if regarding.kind.as_deref() != Some("Foo") {
                        continue;
                    }
                    let key = (
                        event.metadata.name.clone(),
                        event.metadata.resource_version.clone(),
                    );
                    if !seen.insert(key) {
                        continue;
                    }
                    println!(
                        "event: {} {} foo {}/{}: {}",
                        event.type_.as_deref().unwrap_or(""),
                        event.reason.as_deref().unwrap_or(""),
                        regarding.namespace.as_deref().unwrap_or(""),
                        regarding.name.as_deref().unwrap_or(""),
                        event.note.as_deref().unwrap_or(""),
                    );
                }
            }
            Err(e) => tracing::debug!(error = %e, "cannot list events"),
        }
        tokio::time::sleep(every).await;
    }
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            tracing::info!("shutdown signal received");
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
    tracing::info!("shutdown signal received");
}

/// Logs to stderr with `tracing` (`RUST_LOG`, default `info`), keeping
/// stdout for the examples' own lines. Lines are kept short: seconds since the start instead
/// of a date, no module path.
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_timer(tracing_subscriber::fmt::time::uptime())
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}
