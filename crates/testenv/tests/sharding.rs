//! `shardSelector` (KEP-5866, the `ShardedListAndWatch` gate) beyond the recorded `sharding`
//! cases: other kinds, the namespace field, cluster-scoped kinds, watch filtering,
//! deletecollection, malformed selectors and the gate off.

mod common;

use std::collections::BTreeSet;
use std::net::SocketAddr;

use common::{RawResponse, raw};
use serde_json::{Value, json};

const FULL_END: u128 = 1 << 64;

/// 64-bit FNV-1a, written out here so the test does not lean on the server's own function.
fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

fn hex(v: u128) -> String {
    if v == FULL_END {
        "0x10000000000000000".into()
    } else {
        format!("0x{v:016x}")
    }
}

fn range(field: &str, start: u128, end: u128) -> String {
    format!(
        "shardRange(object.metadata.{field}, '{}', '{}')",
        hex(start),
        hex(end)
    )
}

/// The four quarters of the hash space.
fn quarters(field: &str) -> Vec<(u128, u128, String)> {
    (0..4u128)
        .map(|i| {
            let (s, e) = (i << 62, (i + 1) << 62);
            (s, e, range(field, s, e))
        })
        .collect()
}

fn q(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn sharded_env() -> kcr_testenv::TestEnv {
    kcr_testenv::TestEnv::builder()
        .sharded_list_and_watch(true)
        .start()
        .await
        .expect("start the server")
}

async fn get(addr: SocketAddr, path: &str) -> RawResponse {
    raw(addr, "GET", path, &[("Accept", "application/json")], b"").await
}

async fn send(addr: SocketAddr, method: &str, path: &str, body: &Value) -> Value {
    let body = serde_json::to_vec(body).expect("encode");
    let r = raw(
        addr,
        method,
        path,
        &[("Content-Type", "application/json")],
        &body,
    )
    .await;
    assert!(
        r.status < 300,
        "{method} {path}: {} {}",
        r.status,
        String::from_utf8_lossy(&r.body)
    );
    r.json()
}

async fn namespace(addr: SocketAddr, name: &str) {
    send(
        addr,
        "POST",
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
    )
    .await;
}

async fn config_map(addr: SocketAddr, ns: &str, name: &str) -> Value {
    send(
        addr,
        "POST",
        &format!("/api/v1/namespaces/{ns}/configmaps"),
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {"t": "shard"}}, "data": {"v": "1"}}),
    )
    .await
}

fn uid(v: &Value) -> &str {
    v["metadata"]["uid"].as_str().unwrap_or_default()
}

fn names(list: &Value) -> BTreeSet<String> {
    list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn uid_quarters_should_partition_secrets_by_the_hash_of_their_uid() {
    let env = sharded_env().await;
    let addr = env.addr();
    namespace(addr, "secrets").await;
    let mut uids = Vec::new();
    for i in 0..16 {
        let s = send(
            addr,
            "POST",
            "/api/v1/namespaces/secrets/secrets",
            &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": format!("s{i}")},
                    "stringData": {"k": "v"}}),
        )
        .await;
        uids.push((format!("s{i}"), uid(&s).to_owned()));
    }
    let mut seen = BTreeSet::new();
    for (start, end, selector) in quarters("uid") {
        let r = get(
            addr,
            &format!(
                "/api/v1/namespaces/secrets/secrets?shardSelector={}",
                q(&selector)
            ),
        )
        .await;
        assert_eq!(r.status, 200);
        let list = r.json();
        assert_eq!(list["metadata"]["shardInfo"]["selector"], selector);
        let expected: BTreeSet<String> = uids
            .iter()
            .filter(|(_, u)| (start..end).contains(&u128::from(fnv(u))))
            .map(|(n, _)| n.clone())
            .collect();
        let got = names(&list);
        assert_eq!(got, expected, "quarter {selector}");
        for n in got {
            assert!(seen.insert(n), "an object in two quarters");
        }
    }
    assert_eq!(seen.len(), 16);
}

#[tokio::test]
async fn a_namespace_range_should_select_namespaced_objects_by_their_namespace() {
    let env = sharded_env().await;
    let addr = env.addr();
    for ns in ["shard-ns-a", "shard-ns-b"] {
        namespace(addr, ns).await;
        for i in 0..3 {
            config_map(addr, ns, &format!("{ns}-{i}")).await;
        }
    }
    let h = u128::from(fnv("shard-ns-a"));
    let selector = range("namespace", h, h + 1);
    let list = get(
        addr,
        &format!(
            "/api/v1/configmaps?labelSelector=t%3Dshard&shardSelector={}",
            q(&selector)
        ),
    )
    .await
    .json();
    assert_eq!(
        names(&list),
        ["shard-ns-a-0", "shard-ns-a-1", "shard-ns-a-2"]
            .map(String::from)
            .into()
    );
    // The same range within another namespace selects nothing there.
    let other = get(
        addr,
        &format!(
            "/api/v1/namespaces/shard-ns-b/configmaps?shardSelector={}",
            q(&selector)
        ),
    )
    .await
    .json();
    assert_eq!(names(&other), BTreeSet::new());
    assert_eq!(other["metadata"]["shardInfo"]["selector"], selector);
}

#[tokio::test]
async fn cluster_scoped_objects_should_hash_an_empty_namespace() {
    let env = sharded_env().await;
    let addr = env.addr();
    for n in ["shard-role-a", "shard-role-b"] {
        send(
            addr,
            "POST",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": n, "labels": {"t": "shard"}}, "rules": []}),
        )
        .await;
    }
    let empty = u128::from(fnv(""));
    let path = |sel: &str| {
        format!(
            "/apis/rbac.authorization.k8s.io/v1/clusterroles?labelSelector=t%3Dshard&shardSelector={}",
            q(sel)
        )
    };
    let inside = get(addr, &path(&range("namespace", empty, FULL_END)))
        .await
        .json();
    assert_eq!(names(&inside).len(), 2);
    let below = get(addr, &path(&range("namespace", 0, empty))).await.json();
    assert_eq!(names(&below).len(), 0);
    assert_eq!(below["kind"], "ClusterRoleList");
    assert!(below["metadata"]["shardInfo"].is_object());
}

#[tokio::test]
async fn a_watch_should_send_only_the_events_of_objects_in_its_shard() {
    let env = sharded_env().await;
    let addr = env.addr();
    namespace(addr, "watched").await;
    let start = get(addr, "/api/v1/namespaces/watched/configmaps")
        .await
        .json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let half = 1u128 << 63;
    let selector = range("uid", 0, half);
    let mut inside = BTreeSet::new();
    for i in 0..12 {
        let name = format!("w{i}");
        let cm = config_map(addr, "watched", &name).await;
        if u128::from(fnv(uid(&cm))) < half {
            inside.insert(name.clone());
        }
        let r = raw(
            addr,
            "PATCH",
            &format!("/api/v1/namespaces/watched/configmaps/{name}"),
            &[("Content-Type", "application/merge-patch+json")],
            br#"{"data":{"v":"2"}}"#,
        )
        .await;
        assert_eq!(r.status, 200);
    }
    for i in 0..12 {
        let r = raw(
            addr,
            "DELETE",
            &format!("/api/v1/namespaces/watched/configmaps/w{i}"),
            &[],
            b"",
        )
        .await;
        assert_eq!(r.status, 200);
    }
    let r = raw(
        addr,
        "GET",
        &format!(
            "/api/v1/namespaces/watched/configmaps?watch=1&timeoutSeconds=1&resourceVersion={start}&shardSelector={}",
            q(&selector)
        ),
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 200);
    let events = r.lines();
    let mut by_name: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for e in &events {
        let name = e["object"]["metadata"]["name"].as_str().unwrap_or_default();
        by_name
            .entry(name.to_owned())
            .or_default()
            .push(e["type"].as_str().unwrap_or_default().to_owned());
    }
    assert_eq!(by_name.keys().cloned().collect::<BTreeSet<_>>(), inside);
    for (name, types) in by_name {
        assert_eq!(types, ["ADDED", "MODIFIED", "DELETED"], "{name}");
    }
}

#[tokio::test]
async fn a_watch_from_now_should_start_with_the_objects_of_its_shard_only() {
    let env = sharded_env().await;
    let addr = env.addr();
    namespace(addr, "initial").await;
    let mut inside = BTreeSet::new();
    let half = 1u128 << 63;
    for i in 0..10 {
        let cm = config_map(addr, "initial", &format!("i{i}")).await;
        if u128::from(fnv(uid(&cm))) >= half {
            inside.insert(format!("i{i}"));
        }
    }
    let r = raw(
        addr,
        "GET",
        &format!(
            "/api/v1/namespaces/initial/configmaps?watch=true&timeoutSeconds=1&shardSelector={}",
            q(&range("uid", half, FULL_END))
        ),
        &[],
        b"",
    )
    .await;
    let added: BTreeSet<String> = r
        .lines()
        .iter()
        .filter(|e| e["type"] == "ADDED")
        .filter_map(|e| e["object"]["metadata"]["name"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(added, inside);
}

#[tokio::test]
async fn deletecollection_should_delete_only_the_objects_of_its_shard() {
    let env = sharded_env().await;
    let addr = env.addr();
    namespace(addr, "deleting").await;
    let half = 1u128 << 63;
    let (mut inside, mut outside) = (BTreeSet::new(), BTreeSet::new());
    for i in 0..10 {
        let cm = config_map(addr, "deleting", &format!("d{i}")).await;
        if u128::from(fnv(uid(&cm))) < half {
            inside.insert(format!("d{i}"));
        } else {
            outside.insert(format!("d{i}"));
        }
    }
    let selector = range("uid", 0, half);
    let r = raw(
        addr,
        "DELETE",
        &format!(
            "/api/v1/namespaces/deleting/configmaps?shardSelector={}",
            q(&selector)
        ),
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 200);
    let deleted = r.json();
    assert_eq!(deleted["kind"], "ConfigMapList");
    assert_eq!(deleted["metadata"]["shardInfo"]["selector"], selector);
    assert_eq!(names(&deleted), inside);
    let left = get(addr, "/api/v1/namespaces/deleting/configmaps")
        .await
        .json();
    assert_eq!(names(&left), outside);
    assert!(left["metadata"].get("shardInfo").is_none());
}

#[tokio::test]
async fn malformed_selectors_should_be_refused_with_500_by_lists_watches_and_deletecollection() {
    let env = sharded_env().await;
    let addr = env.addr();
    let cases = [
        (
            "shardRange(object.metadata.uid, '0000000000000000', '0x10000000000000000')",
            "hexStart must have '0x' prefix, got \"0000000000000000\"",
        ),
        (
            "shardRange(object.metadata.namespace, '0x0000000000000000', '0x')",
            "hexEnd: hex value is required after '0x'",
        ),
        (
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x8')",
            "hexEnd must be a 0x-prefixed 16-digit hex value, got \"0x8\" (did you mean \"0x0000000000000008\"?)",
        ),
        (
            "shardRange(object.metadata.uid, '0x0000000000000000', true)",
            "hexEnd must be a string literal, got bool",
        ),
        (
            "shardRange(object.metadata.labels, '0x0000000000000000', '0x10000000000000000')",
            "unsupported field path \"object.metadata.labels\"; supported: object.metadata.uid, object.metadata.namespace",
        ),
        (
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000', '0x0')",
            "shardRange() requires exactly 3 arguments, got 4",
        ),
    ];
    for (selector, message) in cases {
        for (method, path) in [
            ("GET", "/api/v1/namespaces/default/configmaps?"),
            (
                "GET",
                "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1&",
            ),
            ("DELETE", "/api/v1/namespaces/default/configmaps?"),
            ("GET", "/api/v1/pods?"),
        ] {
            let r = raw(
                addr,
                method,
                &format!("{path}shardSelector={}", q(selector)),
                &[],
                b"",
            )
            .await;
            assert_eq!(r.status, 500, "{method} {path} {selector}");
            let status = r.json();
            assert_eq!(status["kind"], "Status");
            assert!(status.get("reason").is_none());
            assert_eq!(
                status["message"],
                format!("invalid shard selector: {message}"),
                "{method} {path}"
            );
        }
    }
}

#[tokio::test]
async fn without_the_gate_a_shard_selector_should_be_ignored() {
    let env = kcr_testenv::TestEnv::start()
        .await
        .expect("start the server");
    let addr = env.addr();
    namespace(addr, "gate-off").await;
    for i in 0..4 {
        config_map(addr, "gate-off", &format!("g{i}")).await;
    }
    for selector in [
        range("uid", 0, 1),
        "hashRange(object.metadata.uid)".to_owned(),
    ] {
        let r = get(
            addr,
            &format!(
                "/api/v1/namespaces/gate-off/configmaps?shardSelector={}",
                q(&selector)
            ),
        )
        .await;
        assert_eq!(r.status, 200, "{selector}");
        let list = r.json();
        assert_eq!(names(&list).len(), 4);
        assert!(list["metadata"].get("shardInfo").is_none());
    }
}
