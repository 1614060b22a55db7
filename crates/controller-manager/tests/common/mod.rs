//! Helpers shared by the controller-manager's integration tests.

// Each test binary uses some of them.
#![allow(dead_code)]

use std::net::SocketAddr;

use kcr_controller_manager::Manager;
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
