//! HTTPS with a generated certificate authority: `kube::Client` with and without the token and
//! the CA, the kubeconfig, and `kubectl` with a bearer token against `kcr-apiserver --tls`
//! (skipped, with a message, only when `/usr/bin/kubectl` is absent).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_testenv::TestEnv;
use kube::api::{Api, ListParams, PostParams};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const KUBECTL: &str = "/usr/bin/kubectl";

fn config_map(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.data = Some([("k".to_string(), "v".to_string())].into());
    cm
}

fn code(err: &kube::Error) -> Option<u16> {
    match err {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

#[tokio::test]
async fn a_tls_server_should_serve_the_client_with_its_token_and_refuse_others() {
    let env = TestEnv::builder()
        .tls(true)
        .token("s3cret")
        .start()
        .await
        .unwrap();
    assert!(
        env.base_url().starts_with("https://127.0.0.1:"),
        "{}",
        env.base_url()
    );
    assert!(
        env.ca_certificate_pem()
            .unwrap()
            .starts_with("-----BEGIN CERTIFICATE-----")
    );

    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    api.create(&PostParams::default(), &config_map("over-tls"))
        .await
        .unwrap();
    let listed = api.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1);

    // The same TLS settings without the token: anonymous, forbidden.
    let mut no_token = env.config().unwrap();
    no_token.headers.clear();
    let anonymous: Api<ConfigMap> =
        Api::namespaced(kube::Client::try_from(no_token).unwrap(), "default");
    let err = anonymous.list(&ListParams::default()).await.unwrap_err();
    assert_eq!(code(&err), Some(403), "{err:?}");

    // The token without trusting the CA: the handshake fails, nothing is answered.
    let mut untrusted = env.config().unwrap();
    untrusted.root_cert = None;
    let untrusted: Api<ConfigMap> =
        Api::namespaced(kube::Client::try_from(untrusted).unwrap(), "default");
    let err = untrusted.list(&ListParams::default()).await.unwrap_err();
    assert_eq!(code(&err), None, "expected a TLS failure, got {err:?}");
}

#[tokio::test]
async fn a_plain_http_client_should_get_no_answer_from_a_tls_server() {
    let env = TestEnv::builder().tls(true).start().await.unwrap();
    let plain = env.base_url().replace("https://", "http://");
    let client = kube::Client::try_from(kube::Config::new(plain.parse().unwrap())).unwrap();
    let err = Api::<ConfigMap>::namespaced(client, "default")
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert_eq!(code(&err), None, "{err:?}");
    // The server still serves TLS clients afterwards.
    Api::<ConfigMap>::namespaced(env.client(), "default")
        .list(&ListParams::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn the_kubeconfig_of_a_tls_server_should_carry_the_ca_and_an_https_server() {
    let env = TestEnv::builder()
        .tls(true)
        .token("s3cret")
        .start()
        .await
        .unwrap();
    let text = std::fs::read_to_string(env.kubeconfig_path()).unwrap();
    assert!(text.contains("certificate-authority-data: "), "{text}");
    assert!(
        text.contains(&format!("server: {}", env.base_url())),
        "{text}"
    );

    let kubeconfig = kube::config::Kubeconfig::read_from(env.kubeconfig_path()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    Api::<ConfigMap>::namespaced(client, "default")
        .create(&PostParams::default(), &config_map("from-kubeconfig"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_plain_server_should_still_be_http_without_a_ca() {
    let env = TestEnv::start().await.unwrap();
    assert!(env.base_url().starts_with("http://"));
    assert!(env.ca_certificate_pem().is_none());
    let text = std::fs::read_to_string(env.kubeconfig_path()).unwrap();
    assert!(!text.contains("certificate-authority-data"), "{text}");
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn kubectl(kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(KUBECTL)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .expect("run kubectl");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_should_use_a_token_over_tls_against_kcr_apiserver() {
    if !Path::new(KUBECTL).exists() {
        eprintln!("SKIPPED: {KUBECTL} is not installed, so the kubectl-over-TLS test cannot run");
        return;
    }
    let dir = std::env::temp_dir().join(format!("kcr-kubectl-tls-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let _dir = TempDir(dir.clone());
    let kc = dir.join("kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kcr-apiserver"))
        .args(["--port", "0", "--tls", "--token", "s3cret"])
        .arg("--kubeconfig-out")
        .arg(&kc)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start kcr-apiserver");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines
        .next_line()
        .await
        .unwrap()
        .expect("kcr-apiserver printed nothing");
    assert!(
        first.starts_with("listening on https://127.0.0.1:"),
        "{first}"
    );
    let second = lines.next_line().await.unwrap().unwrap();
    assert_eq!(second, format!("kubeconfig {}", kc.display()));

    let (ok, out, err) = kubectl(
        &kc,
        &["create", "configmap", "tls-demo", "--from-literal=a=b"],
    )
    .await;
    assert!(ok, "kubectl create failed:\n{out}\n{err}");
    let (ok, out, err) = kubectl(
        &kc,
        &["get", "configmap", "tls-demo", "-o", "jsonpath={.data.a}"],
    )
    .await;
    assert!(ok, "kubectl get failed:\n{out}\n{err}");
    assert_eq!(out, "b");
    let (ok, out, err) = kubectl(&kc, &["get", "configmaps"]).await;
    assert!(
        ok && out.contains("tls-demo"),
        "kubectl get failed:\n{out}\n{err}"
    );

    // The review APIs work from kubectl too (create only; the answer carries the status).
    let review = dir.join("review.yaml");
    std::fs::write(
        &review,
        "apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec:\n  token: unknown\n",
    )
    .unwrap();
    let review = review.to_string_lossy().into_owned();
    let (ok, out, err) = kubectl(
        &kc,
        &[
            "create",
            "-f",
            &review,
            "-o",
            "jsonpath={.status.authenticated}",
        ],
    )
    .await;
    assert!(ok, "kubectl create tokenreview failed:\n{out}\n{err}");
    assert_eq!(out, "false");

    // A wrong token is refused.
    let (ok, out, err) = kubectl(&kc, &["--token", "wrong", "get", "configmaps"]).await;
    assert!(!ok, "a wrong token was accepted:\n{out}");
    assert!(
        err.contains("Unauthorized") || err.contains("logged in"),
        "{err}"
    );
    child.kill().await.unwrap();
}
