//! The hash that places an object in the 64-bit shard space: FNV-1a 64 of a metadata field, the
//! function kube-apiserver's `shardSelector` applies (KEP-5866).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// FNV-1a 64's offset basis: the hash of the empty string (a cluster-scoped object's
/// namespace).
pub const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a 64 of `bytes`, as Go's `hash/fnv.New64a`.
///
/// ```
/// use kcr_controller_manager::sharding::fnv1a64;
/// assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
/// assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
/// ```
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash = FNV_OFFSET_BASIS;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// The metadata field an object is sharded by (the first argument of `shardRange`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShardField {
    /// `object.metadata.uid` (the default): objects spread evenly whatever their namespaces.
    #[default]
    Uid,
    /// `object.metadata.namespace`: a namespace's objects all go to one member (a
    /// cluster-scoped object's namespace is `""`).
    Namespace,
}

impl ShardField {
    /// The field path as `shardRange` names it.
    pub fn path(self) -> &'static str {
        match self {
            ShardField::Uid => "object.metadata.uid",
            ShardField::Namespace => "object.metadata.namespace",
        }
    }

    /// Where an object with `meta` lies in the shard space (a missing field hashes as `""`,
    /// as the server reads it).
    pub fn hash(self, meta: &ObjectMeta) -> u64 {
        let value = match self {
            ShardField::Uid => meta.uid.as_deref(),
            ShardField::Namespace => meta.namespace.as_deref(),
        };
        fnv1a64(value.unwrap_or("").as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_should_match_the_reference_vectors() {
        // From the FNV reference test suite (and Go's hash/fnv tests).
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn a_cluster_scoped_objects_namespace_should_hash_as_the_empty_string() {
        let meta = ObjectMeta {
            name: Some("n".into()),
            ..ObjectMeta::default()
        };
        assert_eq!(ShardField::Namespace.hash(&meta), 0xcbf29ce484222325);
        let meta = ObjectMeta {
            uid: Some("a".into()),
            ..ObjectMeta::default()
        };
        assert_eq!(ShardField::Uid.hash(&meta), 0xaf63dc4c8601ec8c);
    }
}
