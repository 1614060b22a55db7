//! Helpers shared by the integration tests: a raw HTTP/1.1 client (to send exactly the bytes a
//! test needs, malformed ones included) and small object builders.
#![allow(dead_code)]

use std::net::SocketAddr;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A response read to the end.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// Each line of a (watch) body as JSON.
    pub fn lines(&self) -> Vec<Value> {
        self.body
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap_or(Value::Null))
            .collect()
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(pos) = data.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&data[..pos])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok())
            .unwrap_or(0);
        data = &data[pos + 2..];
        if size == 0 || data.len() < size {
            out.extend_from_slice(&data[..size.min(data.len())]);
            break;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[(size + 2).min(data.len())..];
    }
    out
}

/// Sends one request (with `Connection: close`) and reads the whole response.
pub async fn raw(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> RawResponse {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(req.as_bytes()).await.expect("write head");
    stream.write_all(body).await.expect("write body");
    let mut buf = Vec::new();
    let _ = stream.read_to_end(&mut buf).await;
    parse_response(&buf)
}

pub fn parse_response(buf: &[u8]) -> RawResponse {
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(buf.len());
    let head = String::from_utf8_lossy(&buf[..split]).to_string();
    let rest = if split + 4 <= buf.len() {
        &buf[split + 4..]
    } else {
        &[][..]
    };
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    RawResponse {
        status,
        headers,
        body,
    }
}

/// A ConfigMap as JSON.
pub fn configmap(name: &str, labels: &[(&str, &str)]) -> k8s_openapi::api::core::v1::ConfigMap {
    let mut cm = k8s_openapi::api::core::v1::ConfigMap::default();
    cm.metadata.name = Some(name.to_owned());
    if !labels.is_empty() {
        cm.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
    }
    cm.data = Some([("key".to_owned(), "value".to_owned())].into());
    cm
}

/// A server that keeps 5 versions of history, a version `from`, then 10 ConfigMaps created in
/// `default` after it: a watch from `from` is too old.
pub async fn env_past_its_history() -> (
    kcr_testenv::TestEnv,
    kube::Api<k8s_openapi::api::core::v1::ConfigMap>,
    String,
) {
    let env = kcr_testenv::TestEnv::builder()
        .history_size(5)
        .start()
        .await
        .unwrap();
    let api = kube::Api::namespaced(env.client(), "default");
    let from = env.resource_version().to_string();
    for i in 0..10 {
        api.create(
            &kube::api::PostParams::default(),
            &configmap(&format!("c{i}"), &[]),
        )
        .await
        .unwrap();
    }
    (env, api, from)
}

/// Polls until `f` holds, for at most ten seconds: what kcr-testenv's controllers do happens in
/// the background, shortly after the change that calls for it.
pub async fn eventually<F, Fut>(mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..200 {
        if f().await {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}
