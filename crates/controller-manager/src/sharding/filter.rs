//! The client-side filter: which requests of a controller its member may queue and reconcile.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::hash::{ShardField, fnv1a64};
use super::member::{Reconciling, ShardMember};
use crate::Request;

/// Finds the hash of the primary object a request names (from the primary type's cache).
pub(crate) type PrimaryLookup = Arc<dyn Fn(&Request) -> Option<u64> + Send + Sync>;

/// A sharded controller's filter: it remembers the hash each queued request is routed by, and
/// admits requests to the queue and to a worker only while the member owns that hash.
pub(crate) struct ShardGate {
    pub(crate) member: ShardMember,
    // Held only for a map operation.
    routes: Mutex<HashMap<Request, u64>>,
    primary: OnceLock<PrimaryLookup>,
}

impl ShardGate {
    pub(crate) fn new(member: ShardMember) -> Self {
        Self {
            member,
            routes: Mutex::new(HashMap::new()),
            primary: OnceLock::new(),
        }
    }

    pub(crate) fn field(&self) -> ShardField {
        self.member.field()
    }

    /// Sets how a request's primary object is found (the first `for_` source).
    pub(crate) fn set_primary(&self, lookup: PrimaryLookup) {
        let _ = self.primary.set(lookup);
    }

    /// Routes `req` by `hash`: true if the member owns it now (the request may be queued).
    pub(crate) fn admit(&self, req: &Request, hash: u64) -> bool {
        {
            let mut routes = self.routes.lock();
            // A request seen before (every later event of its object) is not cloned again.
            match routes.get_mut(req) {
                Some(known) => *known = hash,
                None => {
                    routes.insert(req.clone(), hash);
                }
            }
        }
        self.member.owns(hash)
    }

    /// The hash a request maps to when only the request is known: its namespace's when
    /// sharding by namespace, else the cached primary object's (`None` when it is not cached:
    /// then it is not this member's).
    pub(crate) fn route_of(&self, req: &Request) -> Option<u64> {
        match self.field() {
            ShardField::Namespace => {
                Some(fnv1a64(req.namespace.as_deref().unwrap_or("").as_bytes()))
            }
            _ => self
                .primary
                .get()
                .and_then(|lookup| lookup(req))
                .or_else(|| self.routes.lock().get(req).copied()),
        }
    }

    /// Admits `req` to a worker: `None` if it is not the member's now (the worker drops it).
    pub(crate) fn begin(&self, req: &Request) -> Option<Reconciling> {
        let hash = self.routes.lock().get(req).copied();
        let hash = match hash {
            Some(h) => h,
            None => self.route_of(req)?,
        };
        self.member.begin(hash)
    }
}
