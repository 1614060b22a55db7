//! Helpers shared by the controller-manager's integration tests.

// Each test binary uses some of them.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::time::Duration;

use kcr_controller_manager::Manager;
use kcr_testenv::TestCluster;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Starts `manager` on a task; sending on (or dropping) the sender stops it.
pub fn start(
    manager: &Manager,
) -> (
    oneshot::Sender<()>,
    JoinHandle<kcr_controller_manager::Result<()>>,
) {
    let (tx, rx) = oneshot::channel::<()>();
    let m = manager.clone();
    let task = tokio::spawn(async move {
        m.start(async move {
            let _ = rx.await;
        })
        .await
    });
    (tx, task)
}

/// A plain HTTP/1.1 GET of `path`: the status and the body.
pub async fn get(
    addr: SocketAddr,
    path: &str,
) -> Result<(u16, String), Box<dyn std::error::Error>> {
    let mut stream = TcpStream::connect(addr).await?;
    stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await?;
    let text = String::from_utf8(raw)?;
    let (head, body) = text.split_once("\r\n\r\n").ok_or("no header end")?;
    let status = head.split_whitespace().nth(1).ok_or("no status")?.parse()?;
    Ok((status, body.to_owned()))
}

/// How a test checks the durations it measures, on the clock its cluster gives it.
///
/// Against kcr-testenv the clock is paused (`TestCluster::start_paused`): timers fire exactly
/// when due, so a duration is asserted exactly. On a real cluster the clock is the wall clock:
/// a timer fires no earlier than asked, but a busy machine may run it late, so a duration is
/// asserted within a window — no more than a millisecond short (the test reads the clock a
/// moment after the code it checks did) and at most half the duration late (at least half a
/// second, for the short ones).
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    real: bool,
    /// Lateness allowed on the wall clock on top of the usual.
    extra_late: Duration,
}

impl Timing {
    /// How early a measurement on the wall clock may read.
    const EARLY: Duration = Duration::from_millis(1);
    /// The least lateness allowed on the wall clock.
    const MIN_LATE: Duration = Duration::from_millis(500);

    /// The timing of `cluster`: exact on kcr-testenv, windowed on a real cluster.
    pub fn of(cluster: &TestCluster) -> Self {
        Self {
            real: cluster.is_real(),
            extra_late: Duration::ZERO,
        }
    }

    /// Allows `extra` more lateness on the wall clock, for a delay that includes work of its
    /// own (under the paused clock such work takes no time).
    #[must_use]
    pub fn late_by(self, extra: Duration) -> Self {
        Self {
            extra_late: extra,
            ..self
        }
    }

    /// Whether durations are checked on the wall clock (a real cluster).
    pub fn is_real(self) -> bool {
        self.real
    }

    /// The durations that pass for `expected`: `expected` alone under the paused clock.
    pub fn window(self, expected: Duration) -> RangeInclusive<Duration> {
        if self.real {
            let late = (expected / 2).max(Self::MIN_LATE) + self.extra_late;
            expected.saturating_sub(Self::EARLY)..=expected + late
        } else {
            expected..=expected
        }
    }

    /// Asserts that `measured` passes for `expected`.
    #[track_caller]
    pub fn assert_about(self, measured: Duration, expected: Duration, what: &str) {
        let window = self.window(expected);
        assert!(
            window.contains(&measured),
            "{what}: {measured:?}, expected {expected:?} (within {window:?})"
        );
    }

    /// Asserts that each of `measured` passes for the `expected` at its place, and that there are
    /// as many.
    #[track_caller]
    pub fn assert_all_about(self, measured: &[Duration], expected: &[Duration], what: &str) {
        assert_eq!(
            measured.len(),
            expected.len(),
            "{what}: {measured:?}, expected {expected:?}"
        );
        for (m, e) in measured.iter().zip(expected) {
            let window = self.window(*e);
            assert!(
                window.contains(m),
                "{what}: {measured:?}, expected {expected:?} ({m:?} not within {window:?})"
            );
        }
    }
}
