//! The README's "Getting started" controller: it greets every ConfigMap labelled
//! `greeter=on` by writing `data.greeting`, reading each ConfigMap from the manager's cache.

use std::collections::BTreeMap;

use kcr::k8s_openapi::api::core::v1::ConfigMap;
use kcr::kube::api::{Patch, PatchParams};
use kcr::prelude::*;

/// Reconciles ConfigMaps: adds `data.greeting` where it is missing.
struct Greeter {
    client: Client,
    config_maps: InformerReader<ConfigMap>,
}

#[async_trait]
impl Reconciler for Greeter {
    type Error = kcr::kube::Error;

    async fn reconcile(&self, req: Request) -> Result<Action, Self::Error> {
        // Read the object from the manager's cache, not from the API server.
        let Some(cm) = self.config_maps.get(req.namespace.as_deref(), &req.name) else {
            return Ok(Action::done()); // deleted meanwhile: nothing to do
        };
        if cm.data.as_ref().is_some_and(|d| d.contains_key("greeting")) {
            return Ok(Action::done());
        }
        let patch = ConfigMap {
            data: Some(BTreeMap::from([(
                "greeting".to_owned(),
                format!("hello, {}", cm.name_any()),
            )])),
            ..ConfigMap::default()
        };
        let namespace = cm.namespace().unwrap_or_default();
        Api::<ConfigMap>::namespaced(self.client.clone(), &namespace)
            .patch(&req.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        tracing::info!(%req, "greeted");
        Ok(Action::done())
    }
}

/// A manager that caches only ConfigMaps labelled `greeter=on`, with the greeter controller.
fn greeter_manager(client: Client, options: Options) -> Result<Manager, BoxError> {
    let options =
        options.informers(InformerOptions::default().default_label_selector("greeter=on"));
    let manager = Manager::new(client.clone(), options)?;
    let greeter = Greeter {
        client,
        config_maps: manager.informer_reader::<ConfigMap>(),
    };
    Controller::builder(&manager, "greeter")
        .for_::<ConfigMap>()
        .build(greeter)?;
    Ok(manager)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    // RUST_LOG=info shows the manager and the reconciles; RUST_LOG=debug shows more.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    // KUBECONFIG, ~/.kube/config, or the pod's service account.
    let client = Client::try_default().await?;
    let manager = greeter_manager(client, Options::default())?;
    manager
        .start(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kcr::kube::api::{ObjectMeta, PostParams};
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_labelled_config_map_should_be_greeted() -> Result<(), BoxError> {
        let env = kcr_testenv::TestEnv::start().await?; // an API server on loopback
        let options = Options::default().metrics_bind_address("0");
        let manager = greeter_manager(env.client(), options)?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = tokio::spawn({
            let manager = manager.clone();
            async move {
                manager
                    .start(async {
                        let _ = stopped.await;
                    })
                    .await
            }
        });

        let api = Api::<ConfigMap>::namespaced(env.client(), "default");
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some("world".into()),
                labels: Some(BTreeMap::from([("greeter".into(), "on".into())])),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        api.create(&PostParams::default(), &cm).await?;
        let greeting = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let cm = api.get("world").await?;
                if let Some(g) = cm.data.and_then(|mut d| d.remove("greeting")) {
                    return Ok::<_, BoxError>(g);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await??;
        assert_eq!(greeting, "hello, world");

        let _ = stop.send(());
        running.await??;
        Ok(())
    }
}
