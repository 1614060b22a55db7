//! Property test: random add/update/delete/replace sequences (with watch
//! events sometimes lost) go through a FIFO with known objects; popping
//! everything and applying it to the known store ends with the store equal
//! to the last state of the world. For the RealFifo (with known objects, or
//! with atomic events and batch pops) it also checks that every delivered
//! event pops exactly once, in per-key order, and that no deletion reaches
//! the handlers twice in a row for a key.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_cache::{
    Delta, DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType, Deltas, IndexedStore, ProcessError,
    RealFifo, RealFifoOptions, Transaction, TransactionType,
};
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
fn apply(store: &IndexedStore<ConfigMap>, deltas: &Deltas<ConfigMap>) -> Result<(), ProcessError> {
    for delta in deltas {
        let result = match (delta.type_, &delta.object) {
            (DeltaType::Deleted, DeltaObject::Object(obj)) => store.delete(obj.clone()),
            (DeltaType::Deleted, DeltaObject::DeletedFinalStateUnknown(tombstone)) => {
                store.delete_by_key(&tombstone.key)
            }
            (_, DeltaObject::Object(obj)) => store.add(obj.clone()),
            _ => Ok(()),
        };
        result.map_err(ProcessError::failed)?;
    }
    Ok(())
}

fn snapshot(store: &IndexedStore<ConfigMap>) -> BTreeMap<String, String> {
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

/// What a handler would see: (key, type, version, synthetic). Synthetic
/// events are the ones a relist makes (tombstones, `Replaced`).
type Seen = Vec<(String, DeltaType, u64, bool)>;

fn version_of(obj: &ConfigMap) -> u64 {
    obj.metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn name_of(obj: &ConfigMap) -> String {
    obj.metadata.name.clone().unwrap_or_default()
}

/// One per-object delta as a handler sees it.
fn seen_of(delta: &Delta<ConfigMap>) -> (String, DeltaType, u64, bool) {
    let key = match &delta.object {
        DeltaObject::DeletedFinalStateUnknown(t) => {
            t.key.rsplit('/').next().unwrap_or_default().to_owned()
        }
        other => other.object().map(|o| name_of(o)).unwrap_or_default(),
    };
    let version = delta.object.object().map_or(0, |o| version_of(o));
    let synthetic = delta.object.is_tombstone() || delta.type_ == DeltaType::Replaced;
    (key, delta.type_, version, synthetic)
}

/// The FIFO operations the test drives, so both FIFOs run the same script.
trait Fifo {
    fn write(&self, op: &Op, existed: bool, obj: Arc<ConfigMap>);
    fn relist(&self, world: Vec<Arc<ConfigMap>>);
    fn is_empty(&self) -> bool;
    fn pop_into(&self, store: &IndexedStore<ConfigMap>, seen: &mut Seen);
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
            fn pop_into(&self, store: &IndexedStore<ConfigMap>, seen: &mut Seen) {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                let deltas = rt
                    .block_on(self.pop(|deltas, _| apply(store, deltas)))
                    .unwrap();
                seen.extend(deltas.iter().map(seen_of));
            }
        }
    };
}
impl_fifo!(DeltaFifo<ConfigMap>);
impl_fifo!(RealFifo<ConfigMap>);

/// A RealFifo with atomic events, consumed as client-go 1.36's informer
/// does: `pop_batch`, batches applied in one transaction, a `ReplacedAll`
/// reconciled against the store (deletions first, then the listed objects).
struct Atomic(RealFifo<ConfigMap>);

impl Fifo for Atomic {
    fn write(&self, op: &Op, existed: bool, obj: Arc<ConfigMap>) {
        self.0.write(op, existed, obj);
    }
    fn relist(&self, world: Vec<Arc<ConfigMap>>) {
        self.0.replace(world, "").unwrap();
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn pop_into(&self, store: &IndexedStore<ConfigMap>, seen: &mut Seen) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let log = std::cell::RefCell::new(Vec::new());
        rt.block_on(self.0.pop_batch(
            |batch, _| {
                let txns = batch
                    .iter()
                    .map(|d| {
                        let type_ = if d.type_ == DeltaType::Deleted {
                            TransactionType::Delete
                        } else {
                            TransactionType::Update
                        };
                        Transaction::new(type_, d.object.clone())
                    })
                    .collect();
                for result in store.transaction(txns) {
                    result.map_err(ProcessError::failed)?;
                }
                log.borrow_mut().extend(batch.iter().map(seen_of));
                Ok(())
            },
            |single, _| {
                for delta in single {
                    match &delta.object {
                        DeltaObject::ReplacedAll(info) => {
                            let listed: std::collections::HashSet<String> =
                                info.objects.iter().map(|o| name_of(o)).collect();
                            for old in store.list().iter() {
                                if !listed.contains(&name_of(old)) {
                                    log.borrow_mut().push((
                                        name_of(old),
                                        DeltaType::Deleted,
                                        version_of(old),
                                        true,
                                    ));
                                }
                            }
                            for obj in &info.objects {
                                log.borrow_mut().push((
                                    name_of(obj),
                                    DeltaType::Replaced,
                                    version_of(obj),
                                    true,
                                ));
                            }
                            store
                                .replace(info.objects.clone(), &info.resource_version)
                                .map_err(ProcessError::failed)?;
                        }
                        _ => {
                            apply(store, &Deltas::new(vec![delta.clone()]))?;
                            log.borrow_mut().push(seen_of(delta));
                        }
                    }
                }
                Ok(())
            },
        ))
        .unwrap();
        seen.extend(log.into_inner());
    }
}

fn run(fifo: &dyn Fifo, store: &IndexedStore<ConfigMap>, ops: &[Op], final_relist: bool) {
    run_checked(fifo, store, ops, final_relist, false);
}

/// Runs the script; with `check_events`, also checks what the handlers saw.
fn run_checked(
    fifo: &dyn Fifo,
    store: &IndexedStore<ConfigMap>,
    ops: &[Op],
    final_relist: bool,
    check_events: bool,
) {
    let mut world: BTreeMap<u8, u64> = BTreeMap::new();
    let mut clock = 0u64;
    let mut sent: Vec<(String, DeltaType, u64)> = Vec::new();
    let mut seen: Seen = Vec::new();
    for op in ops {
        match *op {
            Op::Upsert { name, delivered } => {
                clock += 1;
                let existed = world.insert(name, clock).is_some();
                if delivered {
                    fifo.write(op, existed, config_map(name, clock));
                    let type_ = if existed {
                        DeltaType::Updated
                    } else {
                        DeltaType::Added
                    };
                    sent.push((format!("o{name}"), type_, clock));
                }
            }
            Op::Remove { name, delivered } => {
                if let Some(version) = world.remove(&name)
                    && delivered
                {
                    fifo.write(op, true, config_map(name, version));
                    sent.push((format!("o{name}"), DeltaType::Deleted, version));
                }
            }
            Op::Relist => fifo.relist(world.iter().map(|(n, v)| config_map(*n, *v)).collect()),
            Op::Pop { n } => {
                for _ in 0..n {
                    if !fifo.is_empty() {
                        fifo.pop_into(store, &mut seen);
                    }
                }
            }
        }
    }
    if final_relist {
        fifo.relist(world.iter().map(|(n, v)| config_map(*n, *v)).collect());
    }
    while !fifo.is_empty() {
        fifo.pop_into(store, &mut seen);
    }
    if check_events {
        check_seen(&sent, &seen, ops);
    }
    let expected: BTreeMap<String, String> = world
        .iter()
        .map(|(n, v)| (format!("o{n}"), v.to_string()))
        .collect();
    assert_eq!(snapshot(store), expected, "ops: {ops:?}");
}

/// Every delivered event was seen exactly once, in per-key order, and no
/// relist reported a deletion that was already reported.
fn check_seen(delivered: &[(String, DeltaType, u64)], seen: &Seen, ops: &[Op]) {
    let mut want: BTreeMap<&str, Vec<(DeltaType, u64)>> = BTreeMap::new();
    for (key, t, v) in delivered {
        want.entry(key).or_default().push((*t, *v));
    }
    let mut got: BTreeMap<&str, Vec<(DeltaType, u64)>> = BTreeMap::new();
    let mut last_deleted: BTreeMap<&str, bool> = BTreeMap::new();
    for (key, t, v, synthetic) in seen {
        if !synthetic {
            got.entry(key).or_default().push((*t, *v));
        }
        let deleted = *t == DeltaType::Deleted;
        let before = last_deleted.insert(key, deleted).unwrap_or(false);
        // A relist's deletion never repeats one already reported (two
        // delivered deletions with a lost re-creation between are real).
        assert!(
            !(deleted && *synthetic && before),
            "{key}: a relist reported a deletion again; seen {seen:?}; ops {ops:?}"
        );
    }
    assert_eq!(got, want, "ops: {ops:?}; seen {seen:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn delta_fifo_with_lost_events_and_a_final_relist_should_converge_to_the_world(
        ops in prop::collection::vec(op(false), 0..60),
        emit_replaced in any::<bool>(),
    ) {
        let store = Arc::new(IndexedStore::namespace_indexed());
        let fifo = DeltaFifo::new(
            DeltaFifoOptions::new().known_objects(store.clone()).emit_delta_type_replaced(emit_replaced),
        );
        run(&fifo, &store, &ops, true);
    }

    #[test]
    fn delta_fifo_with_every_event_delivered_should_converge_to_the_world(
        ops in prop::collection::vec(op(true), 0..60),
    ) {
        let store = Arc::new(IndexedStore::namespace_indexed());
        let fifo = DeltaFifo::new(DeltaFifoOptions::new().known_objects(store.clone()));
        run(&fifo, &store, &ops, false);
    }

    #[test]
    fn real_fifo_with_lost_events_and_a_final_relist_should_converge_and_pop_each_event_once(
        ops in prop::collection::vec(op(false), 0..60),
    ) {
        let store = Arc::new(IndexedStore::namespace_indexed());
        let fifo = RealFifo::new(RealFifoOptions::new().known_objects(store.clone())).unwrap();
        run_checked(&fifo, &store, &ops, true, true);
    }

    #[test]
    fn atomic_real_fifo_with_batch_pops_should_converge_and_pop_each_event_once(
        ops in prop::collection::vec(op(false), 0..60),
    ) {
        let store = Arc::new(IndexedStore::namespace_indexed());
        let fifo = Atomic(RealFifo::new(RealFifoOptions::new().atomic_events(true)).unwrap());
        run_checked(&fifo, &store, &ops, true, true);
    }
}
