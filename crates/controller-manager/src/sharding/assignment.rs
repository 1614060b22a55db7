//! Assignment: the shard space split among the live members by consistent hashing.

use std::collections::BTreeMap;

use super::hash::fnv1a64;
use super::range::{HashRange, RangeSet, SPACE_END};

/// The default number of points each member has on the ring. More points even out the
/// shares (their spread shrinks as one over the square root) at the price of more ranges
/// per member, hence a longer `shardSelector` (about `points × (1 - 1/N)` ranges of 77
/// characters: some 15 KB of query at four members). With 256, the largest of four members'
/// shares is 0.266 in the median of random identity sets, 0.276 at the 90th percentile (128
/// points: 0.271 and 0.289).
pub const DEFAULT_POINTS_PER_MEMBER: usize = 256;

/// A point of a member on the ring: FNV-1a 64 of `identity#index`, then mixed (splitmix64's
/// finaliser) so that identities differing in their last characters spread over the whole
/// space.
fn point(identity: &str, index: usize) -> u64 {
    let mut x = fnv1a64(format!("{identity}#{index}").as_bytes());
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Splits the shard space among `members` (identities; order and duplicates do not matter)
/// with `points_per_member` points each on a ring: a hash belongs to the member of the
/// nearest point at or below it (the last point's member also takes the hashes below the
/// first point). Every member that computes this from the same set gets the same answer; a
/// member joining or leaving moves only the ranges next to its own points, about 1/N of the
/// space. No members: an empty map.
///
/// ```
/// use kcr_controller_manager::sharding::assign;
/// let shares = assign(["a", "b", "c"], 64);
/// assert_eq!(shares.len(), 3);
/// let total: u128 = shares.values().map(|s| s.len()).sum();
/// assert_eq!(total, 1u128 << 64);
/// ```
pub fn assign<I, S>(members: I, points_per_member: usize) -> BTreeMap<String, RangeSet>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut names: Vec<String> = members.into_iter().map(|m| m.as_ref().to_owned()).collect();
    names.sort();
    names.dedup();
    let points_per_member = points_per_member.max(1);
    let mut ring: Vec<(u64, usize)> = Vec::with_capacity(names.len() * points_per_member);
    for (m, name) in names.iter().enumerate() {
        for i in 0..points_per_member {
            ring.push((point(name, i), m));
        }
    }
    ring.sort_unstable();
    let mut ranges: Vec<Vec<HashRange>> = vec![Vec::new(); names.len()];
    if let (Some(&(first, _)), Some(&(_, last_owner))) = (ring.first(), ring.last()) {
        if let Some(r) = HashRange::new(0, u128::from(first)) {
            ranges[last_owner].push(r);
        }
        for (k, &(p, owner)) in ring.iter().enumerate() {
            let end = ring
                .get(k + 1)
                .map_or(SPACE_END, |&(next, _)| u128::from(next));
            if let Some(r) = HashRange::new(p, end) {
                ranges[owner].push(r);
            }
        }
    }
    names
        .into_iter()
        .zip(ranges)
        .map(|(name, r)| (name, RangeSet::from_ranges(r)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_member_should_own_everything() {
        let shares = assign(["only"], 8);
        assert_eq!(shares.get("only"), Some(&RangeSet::full()));
        assert!(assign(Vec::<String>::new(), 8).is_empty());
    }

    #[test]
    fn shares_should_be_about_equal_with_the_default_points() {
        for n in [2usize, 3, 4, 8] {
            let members: Vec<String> = (0..n).map(|i| format!("replica-{i}")).collect();
            let shares = assign(&members, DEFAULT_POINTS_PER_MEMBER);
            for (m, s) in &shares {
                let ratio = s.share() * n as f64;
                assert!((0.7..1.3).contains(&ratio), "{m} of {n}: {ratio}");
            }
        }
    }

    proptest! {
        #[test]
        fn an_assignment_should_partition_the_space_and_a_join_should_move_only_to_the_newcomer(
            n in 1usize..7, points in 1usize..40, seed in any::<u32>()
        ) {
            let members: Vec<String> = (0..n).map(|i| format!("m{seed}-{i}")).collect();
            let before = assign(&members, points);
            let mut union = RangeSet::new();
            for s in before.values() {
                prop_assert!(!union.overlaps(s));
                union = union.union(s);
            }
            prop_assert_eq!(union, RangeSet::full());
            // A newcomer takes ranges only: nobody else gains anything.
            let mut joined = members.clone();
            joined.push(format!("m{seed}-new"));
            let after = assign(&joined, points);
            for m in &members {
                prop_assert!(after[m].difference(&before[m]).is_empty());
            }
        }
    }
}
