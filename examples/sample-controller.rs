//! kubernetes/sample-controller in kcr: the Foo controller, on its own.
//!
//! ```text
//! cargo run --example sample-controller                       # no cluster needed
//! cargo run --example sample-controller -- --kubeconfig ~/.kube/config
//! ```
//!
//! For each `Foo` (`samplecontroller.k8s.io/v1alpha1`) it creates or
//! updates the Deployment the Foo names, owned by the Foo, and copies the
//! Deployment's available replicas into the Foo's status, recording a
//! `Synced` Event each time. A Deployment of that name that the Foo does not
//! own is left alone and reported as an `ErrResourceExists` Event.
//!
//! With a kubeconfig (`--kubeconfig`, `KUBECONFIG`, `~/.kube/config`, in a
//! pod) it runs against that cluster (the Foo CRD must be installed: see
//! `cargo run --example controller-manager -- --print-crd`). With none it
//! starts kcr-testenv in this process, installs the CRD, creates
//! `example-foo` (2 replicas) and `conflicting-foo`, whose Deployment
//! `taken` already exists and belongs to nobody, runs a stand-in for the
//! Deployment controller, and prints the Foos' progress and Events until
//! Ctrl-C.

// `foo` names sample-controller's Foo resource here, not a placeholder.
#![allow(clippy::disallowed_names)]

use std::process::ExitCode;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kcr_controller_manager::{Manager, Options};
use kcr_examples::cluster::{self, Connect, Target};
use kcr_examples::foo::{Foo, FooSpec};
use kcr_examples::{demo, deployment_status, sample_controller};
use kube::api::{Api, PostParams};

const USAGE: &str = "usage: sample-controller [--kubeconfig PATH | --apiserver URL]";

/// The demo's Foo whose Deployment name is taken.
async fn create_conflict(client: &kube::Client) -> kcr_examples::Result<()> {
    let mut taken: Deployment = serde_json::from_value(serde_json::json!({
        "metadata": { "name": "taken", "namespace": "default" },
        "spec": {
            "replicas": 5,
            "selector": { "matchLabels": { "app": "someone-else" } },
            "template": {
                "metadata": { "labels": { "app": "someone-else" } },
                "spec": { "containers": [{ "name": "app", "image": "busybox" }] }
            }
        }
    }))
    .map_err(|e| kcr_examples::Error::Serialize(e.to_string()))?;
    taken.status = None;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    match deployments.create(&PostParams::default(), &taken).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => return Err(e.into()),
    }
    let foos: Api<Foo> = Api::namespaced(client.clone(), "default");
    let foo = Foo::new(
        "conflicting-foo",
        FooSpec {
            deployment_name: "taken".into(),
            replicas: 1,
        },
    );
    match foos.create(&PostParams::default(), &foo).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

async fn run(connect: Connect) -> Result<(), Box<dyn std::error::Error>> {
    let target = cluster::connect(&connect).await?;
    let client = target.client();
    if let Target::InProcess(env) = &target {
        println!(
            "no kubeconfig found: started kcr-testenv in this process at {}",
            env.base_url()
        );
    }
    if target.is_test_server() {
        cluster::install_foo_crd(&client).await?;
        cluster::create_foo(&client, "default", "example-foo", 2).await?;
        create_conflict(&client).await?;
    }

    // One replica, no leader election, no metrics server.
    let manager = Manager::new(client.clone(), Options::default().metrics_bind_address("0"))?;
    sample_controller::add_to_manager(&manager, sample_controller::Settings::default()).await?;
    let mut printers = Vec::new();
    if target.is_test_server() {
        deployment_status::add_to_manager(&manager, Duration::from_millis(500))?;
        let every = Duration::from_millis(500);
        printers.push(tokio::spawn(demo::print_convergence(client.clone(), every)));
        printers.push(tokio::spawn(demo::print_foo_events(client.clone(), every)));
    }
    let result = manager.start(demo::shutdown_signal()).await;
    for printer in printers {
        printer.abort();
    }
    if let Target::InProcess(env) = target {
        env.shutdown().await;
    }
    result?;
    println!("stopped");
    Ok(())
}

fn main() -> ExitCode {
    let mut connect = Connect::default();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match (flag.as_str(), args.next()) {
            ("--kubeconfig", Some(path)) => connect.kubeconfig = Some(path.into()),
            ("--apiserver", Some(url)) => connect.apiserver = Some(url),
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    demo::init_tracing();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("sample-controller: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(connect)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sample-controller: {e}");
            ExitCode::FAILURE
        }
    }
}
