//! Benchmarks of the embedded API server over real HTTP (a `harness = false` binary that prints
//! medians; `cargo bench -p kcr-testenv`).
//!
//! - creates: 100,000 ConfigMaps through `kube::Client` from 8 concurrent clients (baseline: 1
//!   and 8 clients creating 20,000);
//! - list all 100,000: unpaginated and paginated (`limit=500`), as raw bytes (the server's cost)
//!   and decoded by `kube::Client`: time and peak memory (growth of the process's peak RSS);
//! - fan-out: one stream of 2,000 changes to 100 watchers (baseline: 1 watcher): events/s
//!   delivered.
//!
//! Set `KCR_BENCH_OBJECTS` to change the object count (default 100,000). Memory is the growth
//! of the process's peak RSS (server and client share the process), with glibc set to return
//! freed memory at once (the benchmark re-runs itself with `MALLOC_MMAP_THRESHOLD_=65536`,
//! `MALLOC_TRIM_THRESHOLD_=0`).
#![allow(clippy::disallowed_methods)] // a benchmark measures wall-clock time with std's Instant
#![allow(missing_docs)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_testenv::TestEnv;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Peak resident memory of this process, in KiB (`VmHWM`).
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Resets the peak to the current RSS (Linux: `echo 5 > /proc/self/clear_refs`).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn configmap(name: String) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name);
    cm.metadata.labels = Some([("app".to_owned(), "bench".to_owned())].into());
    cm.data = Some(
        [(
            "key".to_owned(),
            "a value of some thirty bytes....".to_owned(),
        )]
        .into(),
    );
    cm
}

async fn create_many(env: &TestEnv, clients: usize, total: usize, prefix: &str) -> f64 {
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let api: Api<ConfigMap> = Api::namespaced(
            env.config()
                .map(|cfg| kube::Client::try_from(cfg).unwrap())
                .unwrap(),
            "default",
        );
        let prefix = prefix.to_owned();
        tasks.push(tokio::spawn(async move {
            for i in (c..total).step_by(clients) {
                api.create(
                    &PostParams::default(),
                    &configmap(format!("{prefix}-{i:06}")),
                )
                .await
                .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    total as f64 / started.elapsed().as_secs_f64()
}

/// GETs `path` and reads the whole body, discarding it; returns the bytes read.
async fn raw_get(addr: SocketAddr, path: &str) -> usize {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut buf = vec![0u8; 256 * 1024];
    let mut n = 0;
    loop {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    n
}

/// Follows `continue` tokens with raw requests; returns the pages read.
async fn raw_paginated(addr: SocketAddr, limit: usize) -> usize {
    let mut token = String::new();
    let mut pages = 0;
    loop {
        let path = format!("/api/v1/namespaces/default/configmaps?limit={limit}&continue={token}");
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
        let mut body = Vec::new();
        s.read_to_end(&mut body).await.unwrap();
        pages += 1;
        // The token is in the list metadata, before the items.
        let text = String::from_utf8_lossy(&body[..body.len().min(4096)]).into_owned();
        match text
            .split("\"continue\":\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
        {
            Some(t) if !t.is_empty() => token = t.to_owned(),
            _ => return pages,
        }
    }
}

async fn measure<F, Fut>(runs: usize, mut f: F) -> (f64, f64)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut times = Vec::new();
    let mut peaks = Vec::new();
    for _ in 0..runs {
        let base = rss_kib();
        reset_peak();
        let started = Instant::now();
        f().await;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        peaks.push(peak_rss_kib().saturating_sub(base) as f64);
    }
    (median(times), median(peaks) / 1024.0)
}

/// Opens `watchers` raw watches from `from`, makes `changes` patches, and returns events/s
/// delivered (all watchers together) until every watcher has every event.
async fn fan_out(env: &TestEnv, watchers: usize, changes: usize, run: usize) -> f64 {
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let name = format!("fan-{watchers}-{run}");
    api.create(&PostParams::default(), &configmap(name.clone()))
        .await
        .unwrap();
    let from = env.resource_version();
    let mut readers = Vec::new();
    for _ in 0..watchers {
        let mut s = TcpStream::connect(env.addr()).await.unwrap();
        let path = format!(
            "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={from}&fieldSelector=metadata.name%3D{name}"
        );
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        readers.push(tokio::spawn(async move {
            // Count event lines: each ends with `}\n` (JSON strings escape newlines).
            let mut buf = vec![0u8; 64 * 1024];
            let (mut events, mut last) = (0usize, 0u8);
            while events < changes {
                let Ok(k) = s.read(&mut buf).await else { break };
                if k == 0 {
                    break;
                }
                for &b in &buf[..k] {
                    if b == b'\n' && last == b'}' {
                        events += 1;
                    }
                    last = b;
                }
            }
            events
        }));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let pp = PatchParams::default();
    for i in 0..changes {
        let patch = Patch::Merge(serde_json::json!({"data": {"n": i.to_string()}}));
        api.patch(&name, &pp, &patch).await.unwrap();
    }
    let mut delivered = 0;
    for r in readers {
        delivered += r.await.unwrap();
    }
    assert_eq!(delivered, watchers * changes);
    delivered as f64 / started.elapsed().as_secs_f64()
}

/// Re-runs this benchmark with glibc told to return freed memory to the system at once, so
/// the growth of the peak RSS measures what each list allocates (not reused free heap).
fn reexec_with_eager_trim() -> bool {
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_some() {
        return false;
    }
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    let status = std::process::Command::new(exe)
        .args(std::env::args().skip(1))
        .env("MALLOC_MMAP_THRESHOLD_", "65536")
        .env("MALLOC_TRIM_THRESHOLD_", "0")
        .status();
    match status {
        Ok(s) => std::process::exit(s.code().unwrap_or(1)),
        Err(_) => false,
    }
}

fn main() {
    // `cargo test --benches` runs this with `--bench` absent: keep that a no-op.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    reexec_with_eager_trim();
    let objects: usize = std::env::var("KCR_BENCH_OBJECTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        println!("kcr-testenv benchmarks ({objects} objects, 2 worker threads, medians)");

        for clients in [1, 8] {
            let env = TestEnv::start().await.unwrap();
            let rate = create_many(&env, clients, 20_000, "small").await;
            println!("create, {clients} client(s), 20,000 ConfigMaps:  {rate:>10.0} creates/s");
        }

        let mut rates = Vec::new();
        let mut kept = None;
        for run in 0..3 {
            let env = TestEnv::start().await.unwrap();
            rates.push(create_many(&env, 8, objects, "cm").await);
            if run == 2 {
                kept = Some(env);
            }
        }
        let env = kept.unwrap();
        println!(
            "create, 8 clients, {objects} ConfigMaps: {:>10.0} creates/s (median of 3)",
            median(rates)
        );

        let addr = env.addr();
        let (t, m) = measure(5, || async move {
            raw_get(addr, "/api/v1/namespaces/default/configmaps").await;
        })
        .await;
        println!("list all, unpaginated, raw bytes:        {t:>8.1} ms, peak +{m:.1} MiB");
        let (t, m) = measure(5, || async move {
            raw_paginated(addr, 500).await;
        })
        .await;
        println!("list all, paginated (limit=500), raw:    {t:>8.1} ms, peak +{m:.1} MiB");
        let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
        let (t, m) = measure(3, || {
            let api = api.clone();
            async move {
                let n = api.list(&ListParams::default()).await.unwrap().items.len();
                assert!(n >= objects);
            }
        })
        .await;
        println!("list all, unpaginated, kube::Client:     {t:>8.1} ms, peak +{m:.1} MiB");
        let (t, m) = measure(3, || {
            let api = api.clone();
            async move {
                let mut lp = ListParams::default().limit(500);
                let mut n = 0;
                loop {
                    let page = api.list(&lp).await.unwrap();
                    n += page.items.len();
                    match page.metadata.continue_ {
                        Some(t) if !t.is_empty() => lp = lp.continue_token(&t),
                        _ => break,
                    }
                }
                assert!(n >= objects);
            }
        })
        .await;
        println!("list all, paginated (500), kube::Client: {t:>8.1} ms, peak +{m:.1} MiB");
        drop(api);
        drop(env);

        let env = TestEnv::start().await.unwrap();
        let one: Vec<f64> = {
            let mut v = Vec::new();
            for run in 0..3 {
                v.push(fan_out(&env, 1, 2_000, run).await);
            }
            v
        };
        println!(
            "fan-out, 1 watcher, 2,000 changes:      {:>10.0} events/s delivered (baseline)",
            median(one)
        );
        let mut hundred = Vec::new();
        for run in 0..3 {
            hundred.push(fan_out(&env, 100, 2_000, run).await);
        }
        println!(
            "fan-out, 100 watchers, 2,000 changes:    {:>10.0} events/s delivered",
            median(hundred)
        );
    });
}
