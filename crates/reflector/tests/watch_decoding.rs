//! Watch decoding against a scripted HTTP server (a few lines of TCP in this
//! file, so that a test can send what no real server would: a line that
//! never ends, one huge event in tiny chunks, an hour's `Retry-After`).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kcr_cache::IndexedStore;
use kcr_reflector::{ApiListerWatcher, Error, ListerWatcher, Reflector, WatchEvent, WatchOptions};
use kube::Api;
use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// One scripted answer: the status line's code, extra headers, and the body
/// in chunks; `hang` keeps the response open after the chunks.
struct Answer {
    code: u16,
    headers: Vec<(&'static str, String)>,
    chunks: Vec<Vec<u8>>,
    hang: bool,
}

impl Answer {
    fn ok(chunks: Vec<Vec<u8>>) -> Self {
        Self {
            code: 200,
            headers: Vec::new(),
            chunks,
            hang: false,
        }
    }
}

type Script = Arc<dyn Fn(&str) -> Answer + Send + Sync>;

/// Serves each request (one per connection) with `script(path)`, recording
/// the request paths and when they came.
async fn serve(script: Script) -> (String, Arc<Mutex<Vec<(Instant, String)>>>) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("addr: {e}"));
    let requests = Arc::new(Mutex::new(Vec::new()));
    tokio::spawn({
        let requests = requests.clone();
        async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (script, requests) = (script.clone(), requests.clone());
                tokio::spawn(async move {
                    let _ = answer(socket, &script, &requests).await;
                });
            }
        }
    });
    (format!("http://{addr}"), requests)
}

async fn answer(
    mut socket: TcpStream,
    script: &Script,
    requests: &Mutex<Vec<(Instant, String)>>,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if socket.read(&mut byte).await? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split(' ').nth(1).unwrap_or_default().to_owned();
    requests.lock().push((Instant::now(), path.clone()));
    let answer = script(&path);
    let mut out = format!(
        "HTTP/1.1 {} Scripted\r\ncontent-type: application/json\r\n\
         transfer-encoding: chunked\r\nconnection: close\r\n",
        answer.code
    );
    for (name, value) in &answer.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    socket.write_all(out.as_bytes()).await?;
    for chunk in &answer.chunks {
        socket
            .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
            .await?;
        socket.write_all(chunk).await?;
        socket.write_all(b"\r\n").await?;
    }
    if answer.hang {
        std::future::pending::<()>().await;
    }
    socket.write_all(b"0\r\n\r\n").await?;
    socket.shutdown().await
}

fn api(url: &str) -> Api<ConfigMap> {
    let mut config = kube::Config::new(url.parse().unwrap_or_else(|e| panic!("url: {e}")));
    config.default_retry = false;
    let client = kube::Client::try_from(config).unwrap_or_else(|e| panic!("client: {e}"));
    Api::namespaced(client, "default")
}

fn added_line(name: &str, value_len: usize) -> Vec<u8> {
    let event = serde_json::json!({
        "type": "ADDED",
        "object": {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": "5"},
            "data": {"big": "x".repeat(value_len)}
        }
    });
    let mut line = serde_json::to_vec(&event).unwrap_or_else(|e| panic!("{e}"));
    line.push(b'\n');
    line
}

#[tokio::test]
async fn a_watch_line_that_never_ends_should_be_refused_at_the_limit_with_a_typed_error() {
    // 64 MiB without a newline, in 1 KiB chunks; the client must give up
    // after the limit (64 KiB) instead of buffering it all.
    let script: Script = Arc::new(|_: &str| Answer {
        chunks: std::iter::once(b"{\"type\":\"ADDED\",\"object\":{\"data\":\"".to_vec())
            .chain(std::iter::repeat_n(vec![b'x'; 1024], 64 * 1024))
            .collect(),
        ..Answer::ok(Vec::new())
    });
    let (url, _) = serve(script).await;
    let lw = ApiListerWatcher::new(api(&url)).max_event_bytes(64 * 1024);
    let mut stream = ListerWatcher::<ConfigMap>::watch(&lw, &WatchOptions::new("1"))
        .await
        .unwrap_or_else(|e| panic!("watch: {e}"));
    let first = stream.next().await;
    assert!(
        matches!(first, Some(Err(Error::EventTooLarge { limit: 65536 }))),
        "{first:?}"
    );
    assert!(stream.next().await.is_none(), "the stream ends there");
}

#[tokio::test]
async fn a_large_event_in_small_chunks_should_decode_whole() {
    // One 4 MiB event in 1 KiB chunks, then a small one.
    let script: Script = Arc::new(|_: &str| {
        let big = added_line("big", 4 << 20);
        let mut chunks: Vec<Vec<u8>> = big.chunks(1024).map(<[u8]>::to_vec).collect();
        chunks.push(added_line("small", 1));
        Answer {
            hang: true,
            ..Answer::ok(chunks)
        }
    });
    let (url, _) = serve(script).await;
    let lw = ApiListerWatcher::new(api(&url));
    let mut stream = ListerWatcher::<ConfigMap>::watch(&lw, &WatchOptions::new("1"))
        .await
        .unwrap_or_else(|e| panic!("watch: {e}"));
    let big = stream.next().await;
    match big {
        Some(Ok(WatchEvent::Added(cm))) => {
            let len = cm.data.as_ref().and_then(|d| d.get("big")).map(String::len);
            assert_eq!(len, Some(4 << 20));
        }
        other => panic!("expected the big event, got {other:?}"),
    }
    let small = stream.next().await;
    assert!(
        matches!(&small, Some(Ok(WatchEvent::Added(cm))) if cm.metadata.name.as_deref() == Some("small")),
        "{small:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn retry_after_from_the_server_should_be_capped_at_the_maximum_backoff() {
    let script: Script = Arc::new(|path: &str| {
        if path.contains("watch=true") {
            return Answer {
                hang: true,
                ..Answer::ok(Vec::new())
            };
        }
        Answer {
            code: 429,
            headers: vec![("retry-after", "3600".to_owned())],
            chunks: vec![
                br#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"slow down","reason":"TooManyRequests","code":429}"#
                    .to_vec(),
            ],
            hang: false,
        }
    });
    let (url, requests) = serve(script).await;
    let cache = Arc::new(IndexedStore::<ConfigMap>::default());
    let retry_after = Arc::new(Mutex::new(None));
    let reflector = Reflector::new(api(&url), cache)
        .use_watch_list(false)
        .watch_error_handler({
            let retry_after = retry_after.clone();
            move |e| *retry_after.lock() = e.retry_after()
        });
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let cancel = cancel.clone();
        async move { reflector.run(cancel).await }
    });
    while requests.lock().len() < 2 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let at: Vec<Instant> = requests.lock().iter().map(|(at, _)| *at).collect();
    assert_eq!(*retry_after.lock(), Some(Duration::from_secs(3600)));
    let waited = at[1] - at[0];
    assert!(
        waited >= Duration::from_secs(30) && waited < Duration::from_secs(31),
        "waited {waited:?}, not the 30 s maximum backoff"
    );
    cancel.cancel();
    let _ = task.await;
}
