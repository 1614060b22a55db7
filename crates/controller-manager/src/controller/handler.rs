//! From informer events to queued requests (controller-runtime
//! `pkg/handler`): the object itself, its controlling owner, or any mapping.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcr_informer::{DeletedObject, ResourceEventHandler, is_resync};
use kcr_workqueue::{AddOpts, PriorityQueue};
use kube::Resource;

use super::predicate::Predicate;
use super::reconciler::Request;
use crate::sharding::{ShardField, ShardGate, fnv1a64};

/// The priority of events from an initial list or a resync
/// (controller-runtime's `handler.LowPriority`); live changes go in at 0.
pub const LOW_PRIORITY: i32 = -100;

/// A mapping from an object to the requests it triggers.
pub(crate) type MapFn<W> = Arc<dyn Fn(&W) -> Vec<Request> + Send + Sync>;

/// Which requests an event of a watched object triggers.
pub(crate) enum Mapper<W> {
    /// The object's own request (controller-runtime `EnqueueRequestForObject`).
    Object,
    /// The request of the owner that controls the object, if it is of the
    /// given group and kind (controller-runtime `EnqueueRequestForOwner`
    /// with `OnlyControllerOwner`).
    Owner(OwnerKind),
    /// Any requests (controller-runtime `EnqueueRequestsFromMapFunc`).
    Map(MapFn<W>),
}

impl<W> Clone for Mapper<W> {
    fn clone(&self) -> Self {
        match self {
            Mapper::Object => Mapper::Object,
            Mapper::Owner(kind) => Mapper::Owner(kind.clone()),
            Mapper::Map(f) => Mapper::Map(f.clone()),
        }
    }
}

/// The group and kind of the owner type, and whether it is cluster-scoped.
#[derive(Clone, Debug)]
pub(crate) struct OwnerKind {
    pub(crate) group: String,
    pub(crate) kind: String,
    pub(crate) cluster_scoped: bool,
}

impl OwnerKind {
    /// The hash a sharded controller routes the owner's request by: the controlling owner's
    /// uid, or its namespace (the object's; `""` for a cluster-scoped owner).
    fn route(&self, meta: &ObjectMeta, field: ShardField) -> Option<u64> {
        match field {
            ShardField::Namespace => {
                let ns = if self.cluster_scoped {
                    ""
                } else {
                    meta.namespace.as_deref().unwrap_or("")
                };
                Some(fnv1a64(ns.as_bytes()))
            }
            _ => {
                let owner = meta
                    .owner_references
                    .as_deref()?
                    .iter()
                    .find(|r| r.controller == Some(true))?;
                Some(fnv1a64(owner.uid.as_bytes()))
            }
        }
    }

    /// The request of the owner controlling the object with `meta`.
    fn request(&self, meta: &ObjectMeta) -> Option<Request> {
        let owner = meta
            .owner_references
            .as_deref()?
            .iter()
            .find(|r| r.controller == Some(true))?;
        // `apiVersion` is `group/version`, or `version` for the core group.
        let group = owner.api_version.rsplit_once('/').map_or("", |(g, _)| g);
        if group != self.group || owner.kind != self.kind || owner.name.is_empty() {
            return None;
        }
        Some(Request {
            namespace: if self.cluster_scoped {
                None
            } else {
                meta.namespace
                    .as_deref()
                    .filter(|ns| !ns.is_empty())
                    .map(Arc::from)
            },
            name: Arc::from(owner.name.as_str()),
        })
    }
}

/// Puts the requests of a watched type's events into a controller's queue,
/// after the controller's predicates.
pub(crate) struct EnqueueHandler<W> {
    pub(crate) queue: PriorityQueue<Request>,
    pub(crate) predicates: Arc<[Box<dyn Predicate>]>,
    pub(crate) mapper: Mapper<W>,
    /// A sharded controller's filter: only requests its member owns are queued.
    pub(crate) shard: Option<Arc<ShardGate>>,
}

impl<W: Resource> EnqueueHandler<W> {
    /// Whether a sharded controller's member owns `req` (mapped from `obj`, when known); always
    /// true for a controller that is not sharded.
    fn admit(&self, obj: Option<&W>, req: &Request) -> bool {
        let Some(gate) = &self.shard else {
            return true;
        };
        let hash = match (&self.mapper, obj) {
            (Mapper::Object, Some(obj)) => Some(gate.field().hash(obj.meta())),
            (Mapper::Owner(kind), Some(obj)) => kind.route(obj.meta(), gate.field()),
            _ => gate.route_of(req),
        };
        hash.is_some_and(|h| gate.admit(req, h))
    }

    fn map(&self, obj: &W, out: &mut Vec<Request>) {
        match &self.mapper {
            Mapper::Object => out.extend(Request::from_object(obj)),
            Mapper::Owner(kind) => out.extend(kind.request(obj.meta())),
            Mapper::Map(f) => {
                for req in f(obj) {
                    if !out.contains(&req) {
                        out.push(req);
                    }
                }
            }
        }
    }

    fn enqueue(&self, requests: Vec<Request>, priority: i32, from: Option<&W>) {
        for req in requests {
            if !self.admit(from, &req) {
                continue;
            }
            self.queue
                .add_with_opts(req, AddOpts::default().priority(priority));
        }
    }
}

impl<W: Resource + Send + Sync + 'static> ResourceEventHandler<W> for EnqueueHandler<W> {
    fn on_add(&self, obj: &Arc<W>, is_in_initial_list: bool) {
        if !self.predicates.iter().all(|p| p.create(obj.meta())) {
            return;
        }
        let priority = if is_in_initial_list { LOW_PRIORITY } else { 0 };
        if let Mapper::Object = self.mapper {
            // The hot path: one request, no vector.
            if let Some(req) = Request::from_object(&**obj) {
                if !self.admit(Some(obj), &req) {
                    return;
                }
                self.queue
                    .add_with_opts(req, AddOpts::default().priority(priority));
            }
            return;
        }
        let mut requests = Vec::new();
        self.map(obj, &mut requests);
        self.enqueue(requests, priority, Some(obj));
    }

    fn on_update(&self, old: &Arc<W>, new: &Arc<W>) {
        if !self
            .predicates
            .iter()
            .all(|p| p.update(old.meta(), new.meta()))
        {
            return;
        }
        let priority = if is_resync(old, new) { LOW_PRIORITY } else { 0 };
        let mut requests = Vec::new();
        if !matches!(self.mapper, Mapper::Object) {
            // An owner or a mapping may have changed: both sides are due.
            self.map(old, &mut requests);
        }
        let mut new_side = Vec::new();
        self.map(new, &mut new_side);
        new_side.retain(|req| !requests.contains(req));
        // Each side is routed by the object it came from (an owner may have changed).
        self.enqueue(requests, priority, Some(old));
        self.enqueue(new_side, priority, Some(new));
    }

    fn on_delete(&self, obj: &DeletedObject<W>) {
        let known = obj.object();
        let meta = match known {
            Some(last) => last.meta(),
            None => {
                // A tombstone without a last state: only the key is known.
                let Some(req) = Request::from_key(&obj.key()) else {
                    return;
                };
                let key_meta = ObjectMeta {
                    namespace: req.namespace.as_deref().map(str::to_owned),
                    name: Some(req.name.to_string()),
                    ..ObjectMeta::default()
                };
                if !self.predicates.iter().all(|p| p.delete(&key_meta)) {
                    return;
                }
                if let Mapper::Object = self.mapper {
                    self.enqueue(vec![req], 0, None);
                }
                return;
            }
        };
        if !self.predicates.iter().all(|p| p.delete(meta)) {
            return;
        }
        let mut requests = Vec::new();
        if let Some(last) = known {
            self.map(last, &mut requests);
        }
        self.enqueue(requests, 0, known.map(|k| &**k));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    fn owned(owner_api_version: &str, kind: &str, controller: Option<bool>) -> ObjectMeta {
        ObjectMeta {
            namespace: Some("ns".into()),
            name: Some("child".into()),
            owner_references: Some(vec![OwnerReference {
                api_version: owner_api_version.into(),
                kind: kind.into(),
                name: "parent".into(),
                uid: "u".into(),
                controller,
                ..OwnerReference::default()
            }]),
            ..ObjectMeta::default()
        }
    }

    fn apps_deployment() -> OwnerKind {
        OwnerKind {
            group: "apps".into(),
            kind: "Deployment".into(),
            cluster_scoped: false,
        }
    }

    #[test]
    fn an_owned_object_should_map_to_its_controlling_owner_only() {
        let kind = apps_deployment();
        assert_eq!(
            kind.request(&owned("apps/v1", "Deployment", Some(true))),
            Some(Request::namespaced("ns", "parent"))
        );
        // Not the controller, another kind, another group.
        assert_eq!(kind.request(&owned("apps/v1", "Deployment", None)), None);
        assert_eq!(
            kind.request(&owned("apps/v1", "StatefulSet", Some(true))),
            None
        );
        assert_eq!(kind.request(&owned("v1", "Deployment", Some(true))), None);
        // The version does not matter.
        assert!(
            kind.request(&owned("apps/v1beta2", "Deployment", Some(true)))
                .is_some()
        );
    }

    #[test]
    fn a_cluster_scoped_owner_should_map_without_a_namespace() {
        let kind = OwnerKind {
            group: String::new(),
            kind: "Namespace".into(),
            cluster_scoped: true,
        };
        assert_eq!(
            kind.request(&owned("v1", "Namespace", Some(true))),
            Some(Request::cluster("parent"))
        );
    }

    #[tokio::test]
    async fn initial_list_and_resync_events_should_go_in_at_low_priority() {
        let queue: PriorityQueue<Request> = PriorityQueue::default();
        let handler = EnqueueHandler::<Deployment> {
            queue: queue.clone(),
            predicates: Arc::from(Vec::<Box<dyn Predicate>>::new()),
            mapper: Mapper::Object,
            shard: None,
        };
        let obj = |name: &str, rv: &str| {
            Arc::new(Deployment {
                metadata: ObjectMeta {
                    namespace: Some("ns".into()),
                    name: Some(name.into()),
                    resource_version: Some(rv.into()),
                    ..ObjectMeta::default()
                },
                ..Deployment::default()
            })
        };
        handler.on_add(&obj("listed", "1"), true);
        handler.on_update(&obj("resynced", "2"), &obj("resynced", "2"));
        handler.on_add(&obj("created", "3"), false);
        handler.on_update(&obj("changed", "4"), &obj("changed", "5"));
        let mut got = Vec::new();
        for _ in 0..4 {
            if let Some((req, priority)) = queue.get_with_priority().await {
                got.push((req.name.to_string(), priority));
            }
        }
        assert_eq!(
            got,
            [
                ("created".to_owned(), 0),
                ("changed".to_owned(), 0),
                ("listed".to_owned(), LOW_PRIORITY),
                ("resynced".to_owned(), LOW_PRIORITY),
            ]
        );
    }
}
