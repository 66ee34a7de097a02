//! Property tests of dirty ranges: [`DirtyTracker::ranges`] (word scanning) against the per-element reference
//! [`dirty_ranges_reference`], and both against the rules that define the result.
//!
//! - Every byte of every marked element is inside a range (coverage).
//! - Ranges are sorted and disjoint, start and end on dirty elements, and every clean run inside a range is shorter
//!   than the threshold in bytes, so no merged gap adds the threshold or more in extra bytes.
//! - Consecutive ranges are separated by at least the threshold (nothing mergeable is left unmerged).
//! - The range count never exceeds `dirty_ranges_bound`, and a short output is an error, not a panic.
//! - Random sequences of `mark`, `mark_range`, `clear`, `resize` and `union_with` match a `Vec<bool>` model.
//! - Splitting at chunk boundaries keeps every byte and puts each piece inside one chunk.

use proptest::prelude::*;
use skin_pack::{
    ByteRange, DirtyTracker, Error, dirty_ranges_bound, dirty_ranges_reference, split_ranges_at_chunks,
    split_ranges_bound,
};

/// Dirty flags: runs of random lengths, so that long clean and dirty stretches cross word boundaries, or independent
/// flags, for many short runs.
fn flags() -> impl Strategy<Value = Vec<bool>> {
    let runs = prop::collection::vec((any::<bool>(), 1usize..90), 0..24).prop_map(|runs| {
        runs.into_iter()
            .flat_map(|(dirty, n)| std::iter::repeat_n(dirty, n))
            .collect()
    });
    prop_oneof![runs, prop::collection::vec(any::<bool>(), 0..300)]
}

/// A tracker with exactly `flags` marked, built through the public API.
fn tracker(flags: &[bool], stride: usize) -> DirtyTracker {
    let mut t = DirtyTracker::new(flags.len(), stride).expect("layout");
    for (i, _) in flags.iter().enumerate().filter(|(_, d)| **d) {
        t.mark(i).expect("in range");
    }
    t
}

/// The fast path's ranges, through an output sized by the bound.
fn fast(t: &DirtyTracker, threshold: usize) -> Vec<ByteRange> {
    let mut out = vec![ByteRange::default(); dirty_ranges_bound(t.len())];
    let n = t.ranges(threshold, &mut out).expect("the bound is enough");
    out.truncate(n);
    out
}

/// Checks the defining rules of the ranges of `flags` directly, without either implementation.
fn check_rules(flags: &[bool], stride: usize, threshold: usize, ranges: &[ByteRange]) -> Result<(), TestCaseError> {
    let dirty_at = |byte: usize| flags[byte / stride];
    for (i, _) in flags.iter().enumerate().filter(|(_, d)| **d) {
        let (a, b) = (i * stride, (i + 1) * stride);
        prop_assert!(
            ranges.iter().any(|r| r.start <= a && b <= r.end),
            "element {i} (bytes {a}..{b}) is not covered by {ranges:?}"
        );
    }
    for r in ranges {
        prop_assert!(r.start < r.end, "empty range {r:?}");
        prop_assert!(
            r.start % stride == 0 && r.end % stride == 0,
            "{r:?} is not on element bounds"
        );
        prop_assert!(dirty_at(r.start), "{r:?} starts on a clean element");
        prop_assert!(dirty_at(r.end - 1), "{r:?} ends on a clean element");
        let mut clean_run = 0;
        for &dirty in &flags[r.start / stride..r.end / stride] {
            if dirty {
                clean_run = 0;
            } else {
                clean_run += 1;
                prop_assert!(
                    clean_run * stride < threshold,
                    "{r:?} merges a gap of {} bytes, not below the threshold {threshold}",
                    clean_run * stride
                );
            }
        }
    }
    for pair in ranges.windows(2) {
        prop_assert!(pair[0].end < pair[1].start, "{pair:?} are not sorted and disjoint");
        prop_assert!(
            pair[1].start - pair[0].end >= threshold,
            "{pair:?} are closer than the threshold {threshold} and were not merged"
        );
    }
    prop_assert!(ranges.len() <= dirty_ranges_bound(flags.len()));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn fast_ranges_match_the_reference_and_the_rules(
        flags in flags(),
        stride in prop_oneof![Just(1usize), Just(32), Just(48), 1usize..100],
        threshold in prop_oneof![Just(0usize), 0usize..2000],
    ) {
        let t = tracker(&flags, stride);
        let got = fast(&t, threshold);
        let mut want = Vec::new();
        dirty_ranges_reference(&flags, stride, threshold, &mut want).expect("layout");
        prop_assert_eq!(&got, &want);
        check_rules(&flags, stride, threshold, &got)?;
        prop_assert_eq!(t.dirty_count(), flags.iter().filter(|d| **d).count());
        prop_assert_eq!(t.any(), flags.contains(&true));

        // An output one short is an error that names the count needed; the prefix it holds is right.
        if !got.is_empty() {
            let mut short = vec![ByteRange::default(); got.len() - 1];
            prop_assert_eq!(
                t.ranges(threshold, &mut short),
                Err(Error::BufferSize { what: "dirty ranges output", expected: got.len(), actual: got.len() - 1 })
            );
            prop_assert_eq!(&short[..], &got[..got.len() - 1]);
        }
    }

    #[test]
    fn random_operations_match_a_bool_model(
        len in 0usize..300,
        ops in prop::collection::vec((0u8..6, any::<prop::sample::Index>(), any::<prop::sample::Index>(), 0usize..300), 1..40),
        threshold in 0usize..200,
    ) {
        let stride = 4;
        let mut t = DirtyTracker::new(len, stride).expect("layout");
        let mut model = vec![false; len];
        for (op, a, b, n) in ops {
            match op {
                0 | 1 => {
                    // Mark one element; indices up to 10 past the end must be errors.
                    let i = a.index(model.len() + 10);
                    let r = t.mark(i);
                    if i < model.len() {
                        prop_assert!(r.is_ok());
                        model[i] = true;
                    } else {
                        let is_out_of_range = matches!(r, Err(Error::ElementOutOfRange { .. }));
                        prop_assert!(is_out_of_range);
                    }
                }
                2 => {
                    let (x, y) = (a.index(model.len() + 3), b.index(model.len() + 3));
                    let r = t.mark_range(x..y);
                    if x <= y && y <= model.len() {
                        prop_assert!(r.is_ok());
                        model[x..y].fill(true);
                    } else {
                        let is_invalid = matches!(r, Err(Error::InvalidRange { .. }));
                        prop_assert!(is_invalid);
                    }
                }
                3 => {
                    t.clear();
                    model.fill(false);
                }
                4 => {
                    t.resize(n).expect("small sizes");
                    // New elements start dirty; elements past the new length are forgotten.
                    model.resize(n, true);
                }
                _ => {
                    let mut other_model = vec![false; n];
                    for i in (a.index(n + 1)..n).step_by(1 + b.index(7)) {
                        other_model[i] = true;
                    }
                    let other = tracker(&other_model, stride);
                    t.union_with(&other);
                    for (m, o) in model.iter_mut().zip(&other_model) {
                        *m |= o;
                    }
                }
            }
            prop_assert_eq!(t.len(), model.len());
        }
        for (i, &d) in model.iter().enumerate() {
            prop_assert_eq!(t.is_dirty(i), Ok(d));
        }
        let got = fast(&t, threshold);
        let mut want = Vec::new();
        dirty_ranges_reference(&model, stride, threshold, &mut want).expect("layout");
        prop_assert_eq!(&got, &want);
        check_rules(&model, stride, threshold, &got)?;
    }

    #[test]
    fn chunk_splits_keep_every_byte_inside_one_chunk(
        flags in flags(),
        stride in prop_oneof![Just(48usize), 1usize..64],
        threshold in 0usize..500,
        chunk_elements in 1usize..70,
    ) {
        let t = tracker(&flags, stride);
        let ranges = fast(&t, threshold);
        let chunk = chunk_elements * stride;
        let mut pieces = vec![ByteRange::default(); split_ranges_bound(ranges.len(), t.byte_len(), chunk)];
        let n = split_ranges_at_chunks(&ranges, chunk, &mut pieces).expect("the bound is enough");
        let pieces = &pieces[..n];
        for p in pieces {
            prop_assert!(p.start < p.end);
            prop_assert_eq!(p.start / chunk, (p.end - 1) / chunk, "{:?} crosses a chunk boundary", p);
        }
        // Pieces tile the input ranges exactly, in order.
        let mut it = pieces.iter();
        for r in &ranges {
            let mut at = r.start;
            while at < r.end {
                let p = it.next();
                prop_assert!(p.is_some(), "missing piece at byte {}", at);
                let p = p.copied().unwrap_or_default();
                prop_assert_eq!(p.start, at);
                at = p.end;
            }
            prop_assert_eq!(at, r.end);
        }
        prop_assert!(it.next().is_none());
    }
}
