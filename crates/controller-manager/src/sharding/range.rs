//! Ranges of the 64-bit shard space and sets of them, with the `shardSelector` they make.

use std::fmt;

use super::hash::ShardField;

/// The size of the shard space, 2^64: the exclusive end of its last range.
pub const SPACE_END: u128 = 1 << 64;

/// A range `[start, end)` of the shard space (`end` up to 2^64), as `shardRange` takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HashRange {
    start: u64,
    end: u128,
}

impl HashRange {
    /// `[start, end)`, or `None` unless `start < end <= 2^64`.
    pub fn new(start: u64, end: u128) -> Option<Self> {
        (u128::from(start) < end && end <= SPACE_END).then_some(Self { start, end })
    }

    /// The whole space.
    pub fn full() -> Self {
        Self {
            start: 0,
            end: SPACE_END,
        }
    }

    /// The first hash in the range.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// The first hash after the range (2^64 for a range that runs to the end).
    pub fn end(&self) -> u128 {
        self.end
    }

    /// Whether `hash` lies in the range.
    pub fn contains(&self, hash: u64) -> bool {
        self.start <= hash && u128::from(hash) < self.end
    }

    /// How many hashes the range holds.
    pub fn len(&self) -> u128 {
        self.end - u128::from(self.start)
    }

    /// Never true: a range holds at least one hash.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The range as a `shardRange` term on `field`, with kube-apiserver's canonical bounds
    /// (16 lower-case hex digits, `0x10000000000000000` for 2^64).
    pub fn selector(&self, field: ShardField) -> String {
        format!(
            "shardRange({}, '0x{:016x}', '0x{:016x}')",
            field.path(),
            self.start,
            self.end
        )
    }
}

impl fmt::Display for HashRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}-{:016x}", self.start, self.end)
    }
}

/// A set of hashes kept as sorted, disjoint, non-adjacent [`HashRange`]s.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RangeSet {
    ranges: Vec<HashRange>,
}

impl RangeSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The whole space.
    pub fn full() -> Self {
        Self {
            ranges: vec![HashRange::full()],
        }
    }

    /// The union of `ranges`.
    pub fn from_ranges(ranges: impl IntoIterator<Item = HashRange>) -> Self {
        let mut ranges: Vec<HashRange> = ranges.into_iter().collect();
        ranges.sort();
        let mut out: Vec<HashRange> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match out.last_mut() {
                Some(last) if u128::from(r.start) <= last.end => last.end = last.end.max(r.end),
                _ => out.push(r),
            }
        }
        Self { ranges: out }
    }

    /// The ranges, sorted.
    pub fn ranges(&self) -> &[HashRange] {
        &self.ranges
    }

    /// Whether the set holds no hash.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Whether `hash` is in the set.
    pub fn contains(&self, hash: u64) -> bool {
        let i = self.ranges.partition_point(|r| r.end <= u128::from(hash));
        self.ranges.get(i).is_some_and(|r| r.contains(hash))
    }

    /// How many hashes the set holds.
    pub fn len(&self) -> u128 {
        self.ranges.iter().map(HashRange::len).sum()
    }

    /// The set's share of the whole space, in `[0, 1]`.
    pub fn share(&self) -> f64 {
        self.len() as f64 / SPACE_END as f64
    }

    /// Hashes in either set.
    #[must_use]
    pub fn union(&self, other: &RangeSet) -> RangeSet {
        RangeSet::from_ranges(self.ranges.iter().chain(&other.ranges).copied())
    }

    /// Hashes in both sets.
    #[must_use]
    pub fn intersection(&self, other: &RangeSet) -> RangeSet {
        let mut out = Vec::new();
        let (mut i, mut j) = (0, 0);
        while let (Some(a), Some(b)) = (self.ranges.get(i), other.ranges.get(j)) {
            let start = a.start.max(b.start);
            let end = a.end.min(b.end);
            if u128::from(start) < end {
                out.push(HashRange { start, end });
            }
            if a.end < b.end {
                i += 1;
            } else {
                j += 1;
            }
        }
        RangeSet { ranges: out }
    }

    /// Hashes in this set and not in `other`.
    #[must_use]
    pub fn difference(&self, other: &RangeSet) -> RangeSet {
        let mut out = Vec::new();
        let mut j = 0;
        for a in &self.ranges {
            let mut start = u128::from(a.start);
            while let Some(b) = other.ranges.get(j) {
                if b.end <= start {
                    j += 1;
                    continue;
                }
                if u128::from(b.start) >= a.end {
                    break;
                }
                if u128::from(b.start) > start {
                    out.push(HashRange {
                        start: start as u64,
                        end: u128::from(b.start),
                    });
                }
                start = b.end;
                if b.end >= a.end {
                    break;
                }
                j += 1;
            }
            if start < a.end {
                out.push(HashRange {
                    start: start as u64,
                    end: a.end,
                });
            }
        }
        RangeSet { ranges: out }
    }

    /// Whether the sets share a hash.
    pub fn overlaps(&self, other: &RangeSet) -> bool {
        !self.intersection(other).is_empty()
    }

    /// The set as a `shardSelector` on `field` (its ranges joined by ` || `); `None` for the
    /// empty set, which no selector expresses.
    pub fn selector(&self, field: ShardField) -> Option<String> {
        if self.ranges.is_empty() {
            return None;
        }
        let terms: Vec<String> = self.ranges.iter().map(|r| r.selector(field)).collect();
        Some(terms.join(" || "))
    }

    /// The compact form written on a member's Lease: `start-end` pairs in hex, comma-separated
    /// (empty for the empty set).
    pub fn encode(&self) -> String {
        let parts: Vec<String> = self.ranges.iter().map(ToString::to_string).collect();
        parts.join(",")
    }

    /// Reads [`encode`](Self::encode)'s form; `None` if it is malformed.
    pub fn decode(text: &str) -> Option<RangeSet> {
        let text = text.trim();
        if text.is_empty() {
            return Some(RangeSet::new());
        }
        let mut ranges = Vec::new();
        for part in text.split(',') {
            let (start, end) = part.trim().split_once('-')?;
            let start = u64::from_str_radix(start, 16).ok()?;
            let end = u128::from_str_radix(end, 16).ok()?;
            ranges.push(HashRange::new(start, end)?);
        }
        Some(RangeSet::from_ranges(ranges))
    }
}

impl fmt::Display for RangeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.encode())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn r(start: u64, end: u128) -> HashRange {
        HashRange::new(start, end).unwrap_or_else(|| panic!("bad range {start}..{end}"))
    }

    #[test]
    fn a_selector_should_use_the_servers_canonical_form() {
        let set = RangeSet::from_ranges([
            r(0, 0x4000_0000_0000_0000),
            r(0xc000_0000_0000_0000, SPACE_END),
        ]);
        assert_eq!(
            set.selector(ShardField::Uid).as_deref(),
            Some(
                "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || \
                 shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')"
            )
        );
        assert_eq!(RangeSet::new().selector(ShardField::Namespace), None);
    }

    #[test]
    fn ranges_should_coalesce_and_round_trip_through_the_lease_form() {
        let set = RangeSet::from_ranges([r(10, 20), r(20, 30), r(25, 40), r(50, 60)]);
        assert_eq!(set.ranges(), &[r(10, 40), r(50, 60)]);
        assert_eq!(RangeSet::decode(&set.encode()), Some(set));
        assert_eq!(RangeSet::decode(""), Some(RangeSet::new()));
        assert_eq!(RangeSet::decode("zz-1"), None);
        assert_eq!(RangeSet::decode("5-5"), None);
        assert_eq!(RangeSet::decode("0-20000000000000000"), None);
    }

    fn arb_set() -> impl Strategy<Value = RangeSet> {
        prop::collection::vec((0u64..64, 1u64..16), 0..6).prop_map(|v| {
            RangeSet::from_ranges(v.into_iter().filter_map(|(s, l)| {
                HashRange::new(s * (1 << 58), u128::from(s + l).min(64) << 58)
            }))
        })
    }

    proptest! {
        #[test]
        fn set_operations_should_agree_with_membership(a in arb_set(), b in arb_set(), probe in prop::collection::vec(any::<u64>(), 32)) {
            let (u, i, d) = (a.union(&b), a.intersection(&b), a.difference(&b));
            let edges = a.ranges().iter().chain(b.ranges()).flat_map(|r| [r.start(), (r.end() - 1) as u64, (r.end() as u64).wrapping_sub(0), r.start().wrapping_sub(1)]);
            for h in probe.into_iter().chain(edges) {
                prop_assert_eq!(u.contains(h), a.contains(h) || b.contains(h));
                prop_assert_eq!(i.contains(h), a.contains(h) && b.contains(h));
                prop_assert_eq!(d.contains(h), a.contains(h) && !b.contains(h));
            }
            prop_assert_eq!(u.len(), a.len() + b.len() - i.len());
            prop_assert_eq!(d.len(), a.len() - i.len());
        }
    }
}
