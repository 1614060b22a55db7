//! Drives the `kcr-apiserver` binary with the real `kubectl`: apply of a CRD and an object, get,
//! get -w, delete, and a raw watch with bookmarks. Skipped (with a message) only when
//! `/usr/bin/kubectl` is absent.
//!
//! The server runs without a token: kubectl (client-go) sends credentials only over TLS, and
//! kcr-apiserver serves plain HTTP.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

const KUBECTL: &str = "/usr/bin/kubectl";

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

const WIDGET: &str = r#"
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
spec:
  size: 3
"#;

struct Server {
    child: Child,
    kubeconfig: PathBuf,
    _dir: TempDir,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn start_server() -> Server {
    // One directory per server: the tests of this file run at the same time.
    static SERVERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = SERVERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("kcr-kubectl-test-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kcr-apiserver"))
        .args(["--port", "0", "--bookmark-interval-ms", "100"])
        .arg("--kubeconfig-out")
        .arg(&kubeconfig)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start kcr-apiserver");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let first = lines
        .next_line()
        .await
        .unwrap()
        .expect("kcr-apiserver printed nothing");
    assert!(
        first.starts_with("listening on http://127.0.0.1:"),
        "{first}"
    );
    let second = lines.next_line().await.unwrap().unwrap();
    assert_eq!(second, format!("kubeconfig {}", kubeconfig.display()));
    Server {
        child,
        kubeconfig,
        _dir: TempDir(dir),
    }
}

/// Runs kubectl; returns (success, stdout, stderr).
async fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    let mut child = Command::new(KUBECTL)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run kubectl");
    let mut input = child.stdin.take().unwrap();
    input
        .write_all(stdin.unwrap_or_default().as_bytes())
        .await
        .unwrap();
    drop(input);
    let out = child.wait_with_output().await.unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn ok(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let (success, out, err) = kubectl(kubeconfig, args, stdin).await;
    assert!(success, "kubectl {args:?} failed:\n{out}\n{err}");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_should_apply_get_watch_and_delete_against_kcr_apiserver() {
    if !Path::new(KUBECTL).exists() {
        eprintln!("SKIPPED: {KUBECTL} is not installed, so the kubectl test cannot run");
        return;
    }
    let mut server = start_server().await;
    let kc = server.kubeconfig.clone();

    let out = ok(&kc, &["apply", "-f", "-"], Some(CRD)).await;
    assert!(
        out.contains("customresourcedefinition.apiextensions.k8s.io/widgets.example.com created"),
        "{out}"
    );
    let out = ok(&kc, &["apply", "-f", "-"], Some(WIDGET)).await;
    assert!(out.contains("widget.example.com/w1 created"), "{out}");
    // A second apply patches (client-side apply with the last-applied annotation).
    let out = ok(
        &kc,
        &["apply", "-f", "-"],
        Some(&WIDGET.replace("size: 3", "size: 4")),
    )
    .await;
    assert!(out.contains("widget.example.com/w1 configured"), "{out}");

    assert_eq!(
        ok(&kc, &["get", "widgets", "-o", "name"], None)
            .await
            .trim(),
        "widget.example.com/w1"
    );
    let size = ok(
        &kc,
        &["get", "wd", "w1", "-o", "jsonpath={.spec.size}"],
        None,
    )
    .await;
    assert_eq!(size, "4");
    let table = ok(&kc, &["get", "widgets"], None).await;
    assert!(table.starts_with("NAME") && table.contains("w1"), "{table}");
    let namespaces = ok(&kc, &["get", "namespaces", "-o", "name"], None).await;
    assert!(namespaces.contains("namespace/default"), "{namespaces}");
    let resources = ok(&kc, &["api-resources", "-o", "name"], None).await;
    assert!(
        resources.contains("leases.coordination.k8s.io")
            && resources.contains("widgets.example.com"),
        "{resources}"
    );

    // kubectl get -w sees a change.
    let mut watch = Command::new(KUBECTL)
        .args([
            "get",
            "widgets",
            "-w",
            "--output-watch-events",
            "-o",
            "jsonpath={.type} {.object.spec.size}{\"\\n\"}",
        ])
        .env("KUBECONFIG", &kc)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(watch.stdout.take().unwrap()).lines();
    let initial = lines.next_line().await.unwrap().unwrap();
    assert_eq!(initial, "ADDED 4");
    ok(
        &kc,
        &[
            "patch",
            "widget",
            "w1",
            "--type=merge",
            "-p",
            r#"{"spec":{"size":9}}"#,
        ],
        None,
    )
    .await;
    let changed = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(changed, "MODIFIED 9");
    watch.kill().await.unwrap();

    // A raw watch with bookmarks: the server sends one every 100 ms.
    let rv = ok(
        &kc,
        &[
            "get",
            "widget",
            "w1",
            "-o",
            "jsonpath={.metadata.resourceVersion}",
        ],
        None,
    )
    .await;
    let raw = ok(
        &kc,
        &["get", "--raw", &format!("/apis/example.com/v1/namespaces/default/widgets?watch=true&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion={rv}")],
        None,
    )
    .await;
    let first: serde_json::Value =
        serde_json::from_str(raw.lines().next().unwrap_or("{}")).unwrap();
    assert_eq!(first["type"], "BOOKMARK", "{raw}");
    assert_eq!(first["object"]["kind"], "Widget");

    // Typed commands send protobuf bodies.
    let out = ok(&kc, &["create", "namespace", "team"], None).await;
    assert!(out.contains("namespace/team created"), "{out}");
    let out = ok(
        &kc,
        &[
            "create",
            "configmap",
            "settings",
            "-n",
            "team",
            "--from-literal=mode=fast",
        ],
        None,
    )
    .await;
    assert!(out.contains("configmap/settings created"), "{out}");
    let mode = ok(
        &kc,
        &[
            "get",
            "configmap",
            "settings",
            "-n",
            "team",
            "-o",
            "jsonpath={.data.mode}",
        ],
        None,
    )
    .await;
    assert_eq!(mode, "fast");
    let out = ok(
        &kc,
        &[
            "create",
            "secret",
            "generic",
            "creds",
            "--from-literal=password=hunter2",
        ],
        None,
    )
    .await;
    assert!(out.contains("secret/creds created"), "{out}");
    let password = ok(
        &kc,
        &["get", "secret", "creds", "-o", "jsonpath={.data.password}"],
        None,
    )
    .await;
    assert_eq!(password, "aHVudGVyMg==");

    // `kubectl delete namespace` waits until the namespace is gone: kcr-testenv's namespace
    // finalizer deletes its content and then the namespace, as kube-controller-manager does.
    ok(&kc, &["create", "namespace", "doomed"], None).await;
    ok(
        &kc,
        &[
            "create",
            "configmap",
            "inside",
            "-n",
            "doomed",
            "--from-literal=a=1",
        ],
        None,
    )
    .await;
    let out = ok(
        &kc,
        &["delete", "namespace", "doomed", "--timeout=20s"],
        None,
    )
    .await;
    assert!(out.contains("namespace \"doomed\" deleted"), "{out}");
    let (found, _, err) = kubectl(&kc, &["get", "namespace", "doomed"], None).await;
    assert!(!found && err.contains("NotFound"), "{err}");

    let out = ok(&kc, &["delete", "widget", "w1"], None).await;
    assert!(out.contains("widget.example.com \"w1\" deleted"), "{out}");
    let (found, _, err) = kubectl(&kc, &["get", "widget", "w1"], None).await;
    assert!(!found && err.contains("NotFound"), "{err}");

    server.child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_deployment_should_store_what_the_same_object_sent_as_json_stores() {
    if !Path::new(KUBECTL).exists() {
        eprintln!("SKIPPED: {KUBECTL} is not installed, so the kubectl test cannot run");
        return;
    }
    let mut server = start_server().await;
    let kc = server.kubeconfig.clone();
    let create = [
        "create",
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--port=80",
        "--replicas=3",
    ];
    let command = ["--", "nginx", "-g", "daemon off;"];
    ok(&kc, &["create", "namespace", "pb"], None).await;
    ok(&kc, &["create", "namespace", "json"], None).await;

    // kubectl sends a typed Deployment as protobuf.
    let args: Vec<&str> = [&create[..], &["-n", "pb"], &command].concat();
    let out = ok(&kc, &args, None).await;
    assert!(out.contains("deployment.apps/web created"), "{out}");
    // The same object as JSON: kubectl prints it, `kubectl create -f` sends it as JSON.
    let args: Vec<&str> = [
        &create[..],
        &["-n", "json", "--dry-run=client", "-o", "json"],
        &command,
    ]
    .concat();
    let printed = ok(&kc, &args, None).await;
    // kubectl v1.32 prints the zero `creationTimestamp` as null, which kube-apiserver v1.36's
    // decoding drops: the object is sent as printed.
    let object: serde_json::Value = serde_json::from_str(&printed).unwrap();
    for pointer in ["/metadata", "/spec/template/metadata"] {
        let meta = object.pointer(pointer).unwrap();
        assert_eq!(
            meta["creationTimestamp"],
            serde_json::Value::Null,
            "{printed}"
        );
    }
    let out = ok(&kc, &["create", "-f", "-"], Some(&object.to_string())).await;
    assert!(out.contains("deployment.apps/web created"), "{out}");

    let get = |ns: &'static str| {
        let kc = kc.clone();
        async move {
            let out = ok(
                &kc,
                &["get", "deployment", "web", "-n", ns, "-o", "json"],
                None,
            )
            .await;
            serde_json::from_str::<serde_json::Value>(&out).unwrap()
        }
    };
    let (pb, json) = (get("pb").await, get("json").await);
    assert_eq!(pb["spec"], json["spec"]);
    assert_eq!(pb["metadata"]["labels"], json["metadata"]["labels"]);
    assert_eq!(pb["spec"]["replicas"], 3);
    let container = &pb["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "nginx:1.27");
    assert_eq!(
        container["command"],
        serde_json::json!(["nginx", "-g", "daemon off;"])
    );
    assert_eq!(container["ports"][0]["containerPort"], 80);
    // Defaulted by the server, as for any create.
    assert_eq!(pb["spec"]["strategy"]["type"], "RollingUpdate");
    server.child.kill().await.unwrap();
}

const DEPLOYMENT: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: a, image: "a:1"}
      - {name: b, image: "b:1"}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_server_side_and_client_side_should_merge_as_on_a_cluster() {
    if !Path::new(KUBECTL).exists() {
        eprintln!("SKIPPED: {KUBECTL} is not installed, so the kubectl test cannot run");
        return;
    }
    let mut server = start_server().await;
    let kc = server.kubeconfig.clone();

    // Server-side apply: kubectl sends YAML-as-JSON with fieldManager=kubectl.
    let out = ok(
        &kc,
        &["apply", "--server-side", "-f", "-"],
        Some(DEPLOYMENT),
    )
    .await;
    assert!(
        out.contains("deployment.apps/web serverside-applied"),
        "{out}"
    );
    let managers = ok(
        &kc,
        &[
            "get",
            "deployment",
            "web",
            "--show-managed-fields",
            "-o",
            "jsonpath={.metadata.managedFields[*].manager}:{.metadata.managedFields[*].operation}",
        ],
        None,
    )
    .await;
    assert_eq!(managers, "kubectl:Apply");
    // Another manager's conflicting apply is refused, then forced.
    let other = DEPLOYMENT.replace("image: \"a:1\"", "image: \"a:2\"");
    let (success, _, err) = kubectl(
        &kc,
        &["apply", "--server-side", "--field-manager=other", "-f", "-"],
        Some(&other),
    )
    .await;
    assert!(!success, "a conflicting apply must fail");
    assert!(err.contains("conflict"), "{err}");
    ok(
        &kc,
        &[
            "apply",
            "--server-side",
            "--field-manager=other",
            "--force-conflicts",
            "-f",
            "-",
        ],
        Some(&other),
    )
    .await;
    let images = ok(
        &kc,
        &[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[*].image}",
        ],
        None,
    )
    .await;
    assert_eq!(images, "a:2 b:1");
    ok(&kc, &["delete", "deployment", "web"], None).await;

    // Client-side apply: create, then a three-way strategic merge patch computed from the
    // last-applied annotation; a container edited by someone else survives.
    let out = ok(&kc, &["apply", "-f", "-"], Some(DEPLOYMENT)).await;
    assert!(out.contains("deployment.apps/web created"), "{out}");
    ok(
        &kc,
        &[
            "patch",
            "deployment",
            "web",
            "--type=strategic",
            "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"c:1"}]}}}}"#,
        ],
        None,
    )
    .await;
    let without_b = DEPLOYMENT
        .replace("      - {name: b, image: \"b:1\"}\n", "")
        .replace("image: \"a:1\"", "image: \"a:3\"");
    let out = ok(&kc, &["apply", "-f", "-"], Some(&without_b)).await;
    assert!(out.contains("deployment.apps/web configured"), "{out}");
    let images = ok(
        &kc,
        &[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[*].name}={.spec.template.spec.containers[*].image}",
        ],
        None,
    )
    .await;
    assert_eq!(
        images, "c a=c:1 a:3",
        "b (applied before, not now) is deleted, c kept"
    );
    server.child.kill().await.unwrap();
}
