//! Three replicas of one sharded controller in one process: each reconciles only its share
//! of 300 ConfigMaps, coordinated through one Lease per replica. The program prints each
//! replica's share of the hash space, the objects in its cache and the reconciles it ran, while
//! one replica is stopped and started again.
//!
//! ```text
//! cargo run --example sharded-controller                      # kcr-testenv in this process
//! cargo run --example sharded-controller -- --client-side     # a server without sharded list and watch
//! cargo run --example sharded-controller -- --kubeconfig      # the cluster of KUBECONFIG / ~/.kube/config
//! ```
//!
//! Against kcr-testenv the `ShardedListAndWatch` gate is on (unless `--client-side`), so each
//! replica's cache holds only its share; on a real cluster that depends on the gate (alpha in
//! Kubernetes v1.36). The short lease timing (3 s, 2 s, 0.5 s) keeps the demo quick.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_controller_manager::controller::reconciler_fn;
use kcr_controller_manager::manager::InformerOptions;
use kcr_controller_manager::sharding::{Config, Mode, ShardMember};
use kcr_controller_manager::{Action, Controller, Request};
use kcr_controller_manager::{BoxError, Manager, Options};
use kube::api::{ListParams, ObjectMeta, PostParams};
use kube::{Api, Client};

const OBJECTS: usize = 300;
const LABEL: &str = "kcr-example=sharded-controller";

struct Replica {
    name: String,
    member: ShardMember,
    manager: Manager,
    reconciled: Arc<AtomicUsize>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<kcr_controller_manager::Result<()>>,
}

fn start(
    client: &Client,
    namespace: &str,
    name: &str,
    run: usize,
    mode: Mode,
) -> Result<Replica, BoxError> {
    let manager = Manager::new(
        client.clone(),
        Options::default().metrics_bind_address("0").informers(
            InformerOptions::default()
                .default_namespaces([namespace])
                .default_label_selector(LABEL),
        ),
    )?;
    let member = ShardMember::new(
        client.clone(),
        Config::new("example-sharded", namespace, name)
            .with_mode(mode)
            .lease_duration(Duration::from_secs(3))
            .renew_deadline(Duration::from_secs(2))
            .retry_period(Duration::from_millis(500)),
    )?;
    let reconciled = Arc::new(AtomicUsize::new(0));
    let count = reconciled.clone();
    Controller::builder(&manager, format!("sharded-{name}-{run}"))
        .for_::<ConfigMap>()
        .max_concurrent_reconciles(4)
        .sharded(&member)
        .build(reconciler_fn(move |_req: Request| {
            let count = count.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                count.fetch_add(1, Ordering::SeqCst);
                Ok::<_, BoxError>(Action::done())
            }
        }))?;
    let (stop, rx) = tokio::sync::oneshot::channel::<()>();
    let m = manager.clone();
    let task = tokio::spawn(async move {
        m.start(async move {
            let _ = rx.await;
        })
        .await
    });
    Ok(Replica {
        name: name.to_owned(),
        member,
        manager,
        reconciled,
        stop: Some(stop),
        task,
    })
}

async fn stop(replica: &mut Replica) -> Result<(), BoxError> {
    drop(replica.stop.take());
    (&mut replica.task).await??;
    Ok(())
}

fn print(what: &str, replicas: &[Option<Replica>]) {
    println!("{what}");
    for r in replicas.iter().flatten() {
        println!(
            "  {:<10} share {:>5.1} %  cached {:>3}  reconciled {:>3}  sees {:?}",
            r.name,
            r.member.share() * 100.0,
            r.manager.informer_reader::<ConfigMap>().list().len(),
            r.reconciled.load(Ordering::SeqCst),
            r.member.members(),
        );
    }
}

async fn create_objects(client: &Client, namespace: &str) -> Result<(), BoxError> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let existing = api
        .list(&ListParams::default().labels(LABEL))
        .await?
        .items
        .len();
    for i in existing..OBJECTS {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("sharded-example-{i:03}")),
                labels: Some(BTreeMap::from([(
                    "kcr-example".into(),
                    "sharded-controller".into(),
                )])),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        api.create(&PostParams::default(), &cm).await?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = if args.iter().any(|a| a == "--client-side") {
        Mode::ClientSide
    } else {
        Mode::ServerSide
    };
    let (client, _env) = if args.iter().any(|a| a == "--kubeconfig") {
        (Client::try_default().await?, None)
    } else {
        let env = kcr_testenv::TestEnv::builder()
            .sharded_list_and_watch(mode == Mode::ServerSide)
            .start()
            .await?;
        (env.client(), Some(env))
    };
    let namespace = "default";
    create_objects(&client, namespace).await?;
    println!("{OBJECTS} ConfigMaps; mode {mode:?}");

    let mut replicas: Vec<Option<Replica>> = Vec::new();
    for name in ["replica-0", "replica-1", "replica-2"] {
        replicas.push(Some(start(&client, namespace, name, 0, mode)?));
    }
    tokio::time::sleep(Duration::from_secs(4)).await;
    print("three replicas:", &replicas);

    if let Some(mut r) = replicas[1].take() {
        stop(&mut r).await?;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    print(
        "replica-1 stopped (its Lease deleted, its share taken over):",
        &replicas,
    );

    replicas[1] = Some(start(&client, namespace, "replica-1", 1, mode)?);
    tokio::time::sleep(Duration::from_secs(4)).await;
    print("replica-1 started again:", &replicas);

    for r in replicas.iter_mut().flatten() {
        stop(r).await?;
    }
    Ok(())
}
