//! Sharded controllers: N replicas split a controller's work, coordinated through Leases.
//! (Protocol documentation: see below.)
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
