//! Property test: random add/update/delete/replace sequences (with watch
//! events sometimes lost) go through a FIFO with known objects; popping
//! everything and applying it to the known store ends with the store equal
//! to the last state of the world.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_cache::{Cache, DeltaFifo, DeltaFifoOptions, DeltaType, Deltas, ProcessError, RealFifo};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// Create or modify object `name`; the watch event reaches the FIFO
    /// only if `delivered`.
    Upsert { name: u8, delivered: bool },
    /// Delete object `name` (if it exists).
    Remove { name: u8, delivered: bool },
    /// The reflector relists: `replace` with the whole world.
    Relist,
    /// The informer pops up to `n` entries.
    Pop { n: u8 },
}

fn op(always_delivered: bool) -> impl Strategy<Value = Op> {
    let delivered = if always_delivered {
        Just(true).boxed()
    } else {
        prop::bool::weighted(0.8).boxed()
    };
    prop_oneof![
        4 => (0u8..6, delivered.clone()).prop_map(|(name, delivered)| Op::Upsert { name, delivered }),
        2 => (0u8..6, delivered).prop_map(|(name, delivered)| Op::Remove { name, delivered }),
        1 => Just(Op::Relist),
        3 => (1u8..4).prop_map(|n| Op::Pop { n }),
    ]
}

fn config_map(name: u8, version: u64) -> Arc<ConfigMap> {
    let mut cm = ConfigMap::default();
    cm.metadata.namespace = Some("ns".to_owned());
    cm.metadata.name = Some(format!("o{name}"));
    cm.metadata.resource_version = Some(version.to_string());
    Arc::new(cm)
}

/// What an informer does with popped deltas.
fn apply(store: &Cache<ConfigMap>, deltas: &Deltas<ConfigMap>) -> Result<(), ProcessError> {
    for delta in deltas {
        let result = match (delta.type_, delta.object.object()) {
            (DeltaType::Deleted, _) => store.delete(delta.object.clone()),
            (_, Some(obj)) => store.add(obj.clone()),
            (_, None) => Ok(()),
        };
        result.map_err(ProcessError::failed)?;
    }
    Ok(())
}

fn snapshot(store: &Cache<ConfigMap>) -> BTreeMap<String, String> {
    store
        .list()
        .iter()
        .map(|o| {
            (
                o.metadata.name.clone().unwrap_or_default(),
                o.metadata.resource_version.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// The FIFO operations the test drives, so both FIFOs run the same script.
trait Fifo {
    fn write(&self, op: &Op, existed: bool, obj: Arc<ConfigMap>);
    fn relist(&self, world: Vec<Arc<ConfigMap>>);
    fn is_empty(&self) -> bool;
    fn pop_into(&self, store: &Cache<ConfigMap>);
}

macro_rules! impl_fifo {
    ($t:ty) => {
        impl Fifo for $t {
            fn write(&self, op: &Op, existed: bool, obj: Arc<ConfigMap>) {
                match op {
                    Op::Upsert { .. } if existed => self.update(obj).unwrap(),
                    Op::Upsert { .. } => self.add(obj).unwrap(),
                    Op::Remove { .. } => self.delete(obj.into()).unwrap(),
                    _ => {}
                }
            }
            fn relist(&self, world: Vec<Arc<ConfigMap>>) {
                self.replace(world, "").unwrap();
            }
            fn is_empty(&self) -> bool {
                <$t>::is_empty(self)
            }
            fn pop_into(&self, store: &Cache<ConfigMap>) {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                rt.block_on(self.pop(|deltas, _| apply(store, deltas)))
                    .unwrap();
            }
        }
    };
}
impl_fifo!(DeltaFifo<ConfigMap>);
impl_fifo!(RealFifo<ConfigMap>);

fn run(fifo: &dyn Fifo, store: &Cache<ConfigMap>, ops: &[Op], final_relist: bool) {
    let mut world: BTreeMap<u8, u64> = BTreeMap::new();
    let mut clock = 0u64;
    for op in ops {
        match *op {
            Op::Upsert { name, delivered } => {
                clock += 1;
                let existed = world.insert(name, clock).is_some();
                if delivered {
                    fifo.write(op, existed, config_map(name, clock));
                }
            }
            Op::Remove { name, delivered } => {
                if let Some(version) = world.remove(&name)
                    && delivered
                {
                    fifo.write(op, true, config_map(name, version));
                }
            }
            Op::Relist => fifo.relist(world.iter().map(|(n, v)| config_map(*n, *v)).collect()),
            Op::Pop { n } => {
                for _ in 0..n {
                    if !fifo.is_empty() {
                        fifo.pop_into(store);
                    }
                }
            }
        }
    }
    if final_relist {
        fifo.relist(world.iter().map(|(n, v)| config_map(*n, *v)).collect());
    }
    while !fifo.is_empty() {
        fifo.pop_into(store);
    }
    let expected: BTreeMap<String, String> = world
        .iter()
        .map(|(n, v)| (format!("o{n}"), v.to_string()))
        .collect();
    assert_eq!(snapshot(store), expected, "ops: {ops:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn delta_fifo_with_lost_events_and_a_final_relist_should_converge_to_the_world(
        ops in prop::collection::vec(op(false), 0..60),
        emit_replaced in any::<bool>(),
    ) {
        let store = Arc::new(Cache::with_namespace_index());
        let fifo = DeltaFifo::new(
            DeltaFifoOptions::new().known_objects(store.clone()).emit_delta_type_replaced(emit_replaced),
        );
        run(&fifo, &store, &ops, true);
    }

    #[test]
    fn delta_fifo_with_every_event_delivered_should_converge_to_the_world(
        ops in prop::collection::vec(op(true), 0..60),
    ) {
        let store = Arc::new(Cache::with_namespace_index());
        let fifo = DeltaFifo::new(DeltaFifoOptions::new().known_objects(store.clone()));
        run(&fifo, &store, &ops, false);
    }

    #[test]
    fn real_fifo_with_lost_events_and_a_final_relist_should_converge_to_the_world(
        ops in prop::collection::vec(op(false), 0..60),
    ) {
        let store = Arc::new(Cache::with_namespace_index());
        let fifo = RealFifo::new(DeltaFifoOptions::new().known_objects(store.clone()));
        run(&fifo, &store, &ops, true);
    }
}
