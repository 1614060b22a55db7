//! Sharded controllers: N replicas of a controller split its objects among themselves,
//! coordinated through Leases on the API server, with nothing else to deploy.
//!
//! # Use
//!
//! Each replica makes a [`ShardMember`] of the same group and passes it to
//! [`Builder::sharded`](crate::controller::Builder::sharded):
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kcr_controller_manager::controller::reconciler_fn;
//! use kcr_controller_manager::{Action, Controller, Request};
//! use kcr_controller_manager::sharding::{Config, ShardMember};
//! use kcr_controller_manager::{BoxError, Manager, Options};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let env = kcr_testenv::TestEnv::start().await?;
//! # let client = env.client();
//! let manager = Manager::new(client.clone(), Options::default().metrics_bind_address("0"))?;
//! // The pod name is a good identity; every replica uses the same group.
//! let member = ShardMember::new(client, Config::new("config-maps", "default", "replica-0"))?;
//! Controller::builder(&manager, "config-maps")
//!     .for_::<ConfigMap>()
//!     .sharded(&member)
//!     .build(reconciler_fn(|_req: Request| async { Ok::<_, BoxError>(Action::done()) }))?;
//! // manager.start(shutdown_signal).await?;
//! # Ok(())
//! # }
//! ```
//!
//! # Hashing and assignment
//!
//! A key's place in the 64-bit shard space is the FNV-1a 64 hash of its object's
//! `metadata.uid` (or `metadata.namespace`, see [`ShardField`]): the function kube-apiserver's
//! `shardSelector` applies (KEP-5866), so a server with `ShardedListAndWatch` and the client
//! agree on every object. The space is split among the live members by consistent hashing
//! ([`assign`]): each member has [`DEFAULT_POINTS_PER_MEMBER`] points on a ring and owns the
//! hashes from each of its points to the next point; a member joining or leaving moves only the
//! ranges next to its points, about 1/N of the space. Every member computes the same split
//! from the same member set.
//!
//! # Membership
//!
//! Each member holds a `coordination.k8s.io/v1` Lease of its own, `<group>-<identity>`,
//! labelled [`GROUP_LABEL`]`=<group>`, whose annotation [`RANGES_ANNOTATION`] lists the ranges
//! the member *holds*. A member renews its Lease every retry period. Another member counts it
//! live while it has seen that Lease change within the Lease's `leaseDurationSeconds`, timed by
//! its own clock from the moment it first saw the current `resourceVersion` (never from a
//! timestamp someone wrote, so wall-clock skew does not matter; clock *rates* must agree within
//! the margins below). A deleted Lease is a member that left.
//!
//! # The protocol
//!
//! Each member runs rounds, one per retry period (and one as soon as a peer's Lease expires):
//!
//! 1. **Observe**: a consistent list (from etcd, not the watch cache) of the group's Leases.
//! 2. **Plan**: the target is the member's share among the live members. Active ranges that
//!    left the target stop admitting reconciles at once and start *draining*; once their
//!    reconciles in flight have ended, they leave the Lease. Target ranges that no live peer's
//!    Lease holds become *claims*.
//! 3. **Renew**: write the Lease, conditional on its last `resourceVersion`, holding
//!    `active ∪ draining ∪ claims`. A write that succeeds within the *request timeout*
//!    (`(lease_duration - renew_deadline) / 2`) of being sent makes the member *valid* until
//!    it was sent plus the renew deadline.
//! 4. **Verify** (only with claims): a second consistent list; claims that no live peer's Lease
//!    holds become active (their cached objects are queued); the others are dropped and claiming
//!    waits a random time up to two retry periods.
//!
//! A watchdog drops every range the moment the member stops being valid: the reconciles in
//! flight are aborted (their futures dropped), nothing more is admitted, and the member must
//! claim and verify again from scratch. A member that stops (its manager's shutdown) admits
//! nothing more, lets its reconciles in flight finish, then deletes its Lease.
//!
//! # Invariants, and why they hold
//!
//! **I1 — what a member may reconcile is on its Lease.** A range is written on the Lease
//! before it becomes active (step 3 precedes step 4), and leaves the Lease only after it stopped
//! being active and its last reconcile ended (draining). A write that failed or timed out may or
//! may not have landed; either way both the old and the new content hold every active range.
//! Writes are conditional on the `resourceVersion`, so a delayed write cannot land over a newer
//! one.
//!
//! **I2 — no two members activate the same hash.** Say members A and B both claim hash h.
//! Each writes its claim (W_A, W_B), then lists (V_A, V_B); the API server orders them. If
//! V_A does not see W_B, then V_A < W_B < V_B, so W_A < V_A < V_B: B sees A's claim. A claim
//! that a verification sees on a live peer is not activated, so at most one of the two
//! activates h. A member that already holds h keeps it on its Lease (I1), so any later claimant
//! sees it there.
//!
//! **I3 — a member stops before anyone judges it gone.** B judges A gone only after seeing A's
//! Lease unchanged for `lease_duration` on B's clock, timed from when B first saw that version,
//! which is after A sent the write that made it. A stays valid only until that write was sent
//! plus `renew_deadline`, and its watchdog drops everything then. A write answered later than the
//! request timeout counts for nothing, so a write that lands late (after B started timing
//! the previous version) cannot extend A beyond B's judgement: that would need the write to take
//! longer than `lease_duration - renew_deadline`, twice the request timeout. The margins allow
//! clock rates to differ by about 10 % with the defaults (15 s, 10 s, 2 s). A member judged gone
//! that comes back (a partition heals) has dropped everything and claims again like a newcomer,
//! so the claims of I2 decide.
//!
//! Together: at any instant, a key is in at most one member's reconciles. The model test
//! (`model_tests.rs`, proptest over joins, graceful leaves, kills, partitions longer than the
//! lease, slow and late writes, clock rates within ±10 %) checks this every 10 ms of simulated
//! time and that, once changes stop, every hash is owned by exactly one live member; the HTTP
//! tests (`tests/sharding.rs`) check it with three replicas and 3,000 objects.
//!
//! **Liveness.** Once the live members see the same member set, their targets are disjoint and
//! cover the space; a peer's draining ends with its reconciles; claims then verify. A dead
//! member's ranges are taken over once its Lease expires: one lease duration after the last
//! renewal others saw, plus at most a round.
//!
//! **Limits.** A reconcile aborted at the renew deadline may have sent requests that land later.
//! A sharded controller remembers the hash each request it queued was routed by, for as long as
//! it runs (one map entry per key seen).
//! An object deleted and re-created with the same name gets a new uid, hence maybe another
//! member: the old object's last reconcile (by one member) and the new object's first (by
//! another) may overlap.
//!
//! # Server-side and client-side filtering
//!
//! With [`Mode::ServerSide`] (the default) the informers of the controller's `for_` type list
//! and watch with the member's Lease ranges as `shardSelector` (ranges joined by ` || `); when
//! they change, the watch ends and the informer lists again, so its cache holds only the
//! member's share on a server with `ShardedListAndWatch` (whether it did is in
//! [`ShardSelector::server_applied`](kcr_informer::ShardSelector::server_applied)). With
//! [`Mode::ClientSide`], or on a server without the gate (which ignores the parameter), caches
//! hold everything. Either way every event is filtered before the queue, and a worker admits a
//! request only while the member owns it: handlers, queue and reconciler see only owned keys.
//!
//! | watched through | routed by | filtered on the server |
//! | --- | --- | --- |
//! | `for_` | the object's own uid (namespace) | yes |
//! | `owns` | its controlling owner's uid (namespace) | only with [`ShardField::Namespace`] |
//! | `watches` | the cached `for_` object the request names (its namespace) | only with [`ShardField::Namespace`] |
//!
//! Sharding by namespace is exact on the server for owned objects too, since an owner and what
//! it owns share a namespace; sharding by uid is not (an owned object's uid is not its owner's),
//! so those caches stay whole and are filtered on the client.

mod assignment;
mod filter;
mod hash;
mod member;
mod membership;
#[cfg(test)]
mod model_tests;
mod options;
mod protocol;
mod range;

pub use assignment::{DEFAULT_POINTS_PER_MEMBER, assign};
pub(crate) use filter::{PrimaryLookup, ShardGate};
pub use hash::{FNV_OFFSET_BASIS, ShardField, fnv1a64};
pub use member::ShardMember;
pub use membership::{GROUP_LABEL, RANGES_ANNOTATION};
pub use options::{Config, Mode};
pub use protocol::Timing;
pub use range::{HashRange, RangeSet, SPACE_END};
