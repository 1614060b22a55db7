//! Sharded controllers (WIP)
mod assignment;
mod hash;
#[cfg(test)]
mod model_tests;
mod protocol;
mod range;

pub use assignment::{DEFAULT_POINTS_PER_MEMBER, assign};
pub use hash::{FNV_OFFSET_BASIS, ShardField, fnv1a64};
pub use protocol::Timing;
pub use range::{HashRange, RangeSet, SPACE_END};
