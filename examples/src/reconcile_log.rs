//! [`Logged`]: a reconciler wrapper that logs each reconcile with this
//! replica's identity, to `tracing` and optionally to a file (one line when
//! a reconcile starts, one when it ends, with wall-clock milliseconds), so
//! that runs of several replicas can be checked for overlap.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use kcr_controller_manager::{Action, Reconciler, Request};
use tokio::io::AsyncWriteExt;
use tokio::sync::Mutex;

/// Wraps a reconciler: `tracing` logs (controller, request, identity,
/// outcome) and, with [`to_file`](Logged::to_file), lines
/// `start <unix-ms> <identity> <controller> <namespace/name>` and
/// `end <unix-ms> <identity> <controller> <namespace/name> <ok|error>`.
pub struct Logged<R> {
    inner: R,
    controller: String,
    identity: String,
    /// Held only while one line is written: lines never interleave.
    file: Option<Arc<Mutex<tokio::fs::File>>>,
}

impl<R> std::fmt::Debug for Logged<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logged")
            .field("controller", &self.controller)
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl<R: Reconciler> Logged<R> {
    /// Logs the reconciles of `inner` (controller `controller`) as
    /// `identity`.
    pub fn new(inner: R, controller: impl Into<String>, identity: impl Into<String>) -> Self {
        Self {
            inner,
            controller: controller.into(),
            identity: identity.into(),
            file: None,
        }
    }

    /// Also appends the lines to `path` (shared by clones of the file
    /// handle; several processes may append to the same file).
    pub async fn to_file(mut self, path: impl Into<PathBuf>) -> crate::Result<Self> {
        let file = tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path.into())
            .await
            .map_err(crate::Error::Io)?;
        self.file = Some(Arc::new(Mutex::new(file)));
        Ok(self)
    }

    async fn write(&self, line: String) {
        if let Some(file) = &self.file {
            let mut file = file.lock().await;
            let written = async {
                file.write_all(line.as_bytes()).await?;
                file.flush().await
            };
            if let Err(e) = written.await {
                tracing::warn!(error = %e, "cannot write the reconcile log");
            }
        }
    }
}

fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

#[async_trait]
impl<R: Reconciler> Reconciler for Logged<R> {
    type Error = R::Error;

    async fn reconcile(&self, req: Request) -> Result<Action, Self::Error> {
        let (id, ctl) = (&self.identity, &self.controller);
        self.write(format!("start {} {id} {ctl} {req}\n", unix_ms()))
            .await;
        let result = self.inner.reconcile(req.clone()).await;
        let outcome = match &result {
            Ok(action) => {
                // The reconcile span names the controller and the object.
                tracing::info!(identity = %id, ?action, "reconciled");
                "ok"
            }
            Err(_) => "error",
        };
        self.write(format!("end {} {id} {ctl} {req} {outcome}\n", unix_ms()))
            .await;
        result
    }
}
