//! Dirty ranges: which palette slots and instance records changed since the last upload, as coalesced byte ranges.
//!
//! A [`DirtyTracker`] covers `len` elements of `stride` bytes each (a palette slot is `joints × entry size` bytes, an
//! instance record is its record size). It is a bitset of `u64` words sized at setup; marking and clearing never
//! allocate.
//! [`DirtyTracker::ranges`] turns the set bits into sorted, disjoint byte ranges, merging two dirty runs when the clean
//! gap between them is smaller than a threshold in bytes.
//! The result is exactly determined by these rules:
//! - every byte of every dirty element is inside a range;
//! - every range starts at the first byte of a dirty element and ends after the last byte of a dirty element;
//! - inside a range, every clean run is shorter than the threshold in bytes, so each merged gap adds fewer than
//!   `gap_threshold_bytes` extra bytes to the upload;
//! - between two consecutive ranges, the clean gap is at least the threshold.
//!
//! Adjacent dirty elements always form one run; a threshold of 0 merges nothing else. A larger threshold trades upload bytes for fewer copies: each
//! `wgpu::Queue::write_buffer` call has a fixed cost on top of its bytes.
//!
//! `dirty_ranges_reference` (hidden from the docs) is the plain per-element twin of [`DirtyTracker::ranges`], which scans whole words with
//! `trailing_zeros`; `tests/prop_dirty.rs` compares them.
//! [`split_ranges_at_chunks`] cuts ranges at multiples of a chunk size, for buffers that are split into several
//! bindings at the device's storage binding limit (`PIPELINE.md`, step 7).
//!
//! A frame packet that crosses threads in a [`FrameExchange`](crate::FrameExchange) carries its tracker, and folds the
//! tracker of a dropped frame into its own with [`DirtyTracker::union_with`], so no change is lost to a drop.

use std::ops::Range;

use crate::{Error, Result};

/// Bits per bitset word.
const WORD_BITS: usize = 64;

/// A half-open range of bytes, `start..end`, in a buffer of elements of a fixed stride.
///
/// Offsets are in bytes from the buffer's start. With the palette (48 B) and instance record (32 B) strides, both ends
/// are multiples of 4, as `wgpu::Queue::write_buffer` requires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ByteRange {
    /// The first byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl ByteRange {
    /// The number of bytes, `end - start` (0 if `end < start`).
    pub fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }

    /// True when the range holds no byte.
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }

    /// The range as a `Range<usize>`, for slicing the packet's bytes.
    pub fn as_range(&self) -> Range<usize> {
        self.start..self.end
    }
}

/// The most ranges that [`DirtyTracker::ranges`] can write for `len` elements, whatever is marked and whatever the
/// threshold: `ceil(len / 2)`, reached when every other element is dirty.
///
/// Size the output slice with this at setup, so that [`DirtyTracker::ranges`] never fails for lack of room.
pub fn dirty_ranges_bound(len: usize) -> usize {
    len.div_ceil(2)
}

/// Which of a fixed number of equal-sized elements changed since the last upload.
///
/// The tracker does not know what an element is: the caller marks element indices, and reads back byte ranges.
/// Setup ([`DirtyTracker::new`], [`DirtyTracker::resize`]) allocates; [`mark`](DirtyTracker::mark),
/// [`mark_range`](DirtyTracker::mark_range), [`clear`](DirtyTracker::clear), [`union_with`](DirtyTracker::union_with)
/// and [`ranges`](DirtyTracker::ranges) do not.
/// Indices at or past [`len`](DirtyTracker::len) are an [`Error::ElementOutOfRange`], never a panic.
///
/// # Example
///
/// ```
/// use skin_pack::{ByteRange, DirtyTracker, dirty_ranges_bound};
///
/// // 1,000 instance records of 32 bytes; records 3, 5 and 700..703 changed.
/// let mut dirty = DirtyTracker::new(1000, 32)?;
/// dirty.mark(3)?;
/// dirty.mark(5)?;
/// dirty.mark_range(700..703)?;
/// let mut ranges = vec![ByteRange::default(); dirty_ranges_bound(dirty.len())];
/// // Gaps under 64 bytes are merged: record 4 (32 bytes) is uploaded with its neighbours.
/// let n = dirty.ranges(64, &mut ranges)?;
/// assert_eq!(&ranges[..n], [ByteRange { start: 96, end: 192 }, ByteRange { start: 22400, end: 22496 }]);
/// dirty.clear();
/// # Ok::<(), skin_pack::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirtyTracker {
    /// One bit per element, element `i` in bit `i % 64` of word `i / 64`. Bits at or past `len` are always zero.
    words: Vec<u64>,
    /// The number of elements.
    len: usize,
    /// Bytes per element.
    stride: usize,
}

impl DirtyTracker {
    /// A tracker of `len` clean elements of `stride` bytes each.
    ///
    /// Errors: [`Error::DirtyLayout`] if `stride` is 0 or `len × stride` overflows `usize`.
    pub fn new(len: usize, stride: usize) -> Result<Self> {
        check_layout(len, stride)?;
        Ok(Self {
            words: vec![0; len.div_ceil(WORD_BITS)],
            len,
            stride,
        })
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the tracker covers no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes per element.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// The size in bytes of the buffer the tracker covers, `len × stride`.
    pub fn byte_len(&self) -> usize {
        self.len * self.stride
    }

    /// Changes the number of elements, for a crowd that grew or shrank. This allocates when the tracker grows past its
    /// capacity, so it belongs to setup, not to the frame loop.
    ///
    /// New elements start dirty (the buffer they live in has never been uploaded); elements past the new length are
    /// forgotten. Errors: [`Error::DirtyLayout`] if `len × stride` overflows, leaving the tracker unchanged.
    pub fn resize(&mut self, len: usize) -> Result<()> {
        check_layout(len, self.stride)?;
        let old = self.len;
        self.words.resize(len.div_ceil(WORD_BITS), 0);
        self.len = len;
        if len > old {
            self.set_range(old, len);
        } else {
            self.mask_tail();
        }
        Ok(())
    }

    /// Marks element `index` dirty.
    ///
    /// Errors: [`Error::ElementOutOfRange`] if `index >= len`.
    #[inline]
    pub fn mark(&mut self, index: usize) -> Result<()> {
        if index >= self.len {
            return Err(Error::ElementOutOfRange {
                what: "dirty tracker mark",
                index,
                len: self.len,
            });
        }
        self.words[index / WORD_BITS] |= 1 << (index % WORD_BITS);
        Ok(())
    }

    /// Marks every element of `range` dirty, a whole word at a time. An empty range marks nothing.
    ///
    /// Errors: [`Error::InvalidRange`] if `range.start > range.end` or `range.end > len`; nothing is marked then.
    pub fn mark_range(&mut self, range: Range<usize>) -> Result<()> {
        if range.start > range.end || range.end > self.len {
            return Err(Error::InvalidRange {
                what: "dirty tracker mark_range",
                start: range.start,
                end: range.end,
                len: self.len,
            });
        }
        self.set_range(range.start, range.end);
        Ok(())
    }

    /// Marks every element dirty, for a full upload (a new buffer, a lost device).
    pub fn mark_all(&mut self) {
        self.set_range(0, self.len);
    }

    /// Marks every element clean, after an upload.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// Whether element `index` is dirty.
    ///
    /// Errors: [`Error::ElementOutOfRange`] if `index >= len`.
    pub fn is_dirty(&self, index: usize) -> Result<bool> {
        if index >= self.len {
            return Err(Error::ElementOutOfRange {
                what: "dirty tracker is_dirty",
                index,
                len: self.len,
            });
        }
        Ok(self.words[index / WORD_BITS] >> (index % WORD_BITS) & 1 == 1)
    }

    /// The number of dirty elements.
    pub fn dirty_count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// True when at least one element is dirty.
    pub fn any(&self) -> bool {
        self.words.iter().any(|&w| w != 0)
    }

    /// Marks dirty every element that is dirty in `other` (a bitwise OR), without allocating.
    ///
    /// The two trackers may differ in length, as when the crowd grew between two frames: elements past either length
    /// are ignored (new elements are already dirty after [`resize`](DirtyTracker::resize)). The strides are not
    /// compared. This is how a frame packet that replaces a dropped frame keeps the dropped frame's changes (see
    /// [`FramePacket`](crate::FramePacket)).
    pub fn union_with(&mut self, other: &DirtyTracker) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
        self.mask_tail();
    }

    /// Writes the dirty elements as coalesced byte ranges into `out` and returns how many it wrote.
    ///
    /// Two dirty runs are merged into one range when the clean bytes between them number fewer than
    /// `gap_threshold_bytes`; the module docs list the rules that determine the result exactly. Ranges are sorted and
    /// disjoint. The cost is one pass over the words: O(len / 64 + ranges).
    ///
    /// `out` needs room for every range; [`dirty_ranges_bound`]`(len)` is always enough. Entries past the returned
    /// count are not touched.
    /// Errors: [`Error::BufferSize`] if `out` is too short, with the number of ranges needed; `out` then holds the
    /// first `out.len()` ranges.
    pub fn ranges(&self, gap_threshold_bytes: usize, out: &mut [ByteRange]) -> Result<usize> {
        // Two runs merge when `gap * stride < threshold`, that is when `gap < ceil(threshold / stride)` elements.
        let merge_below = gap_threshold_bytes.div_ceil(self.stride);
        let mut count = 0;
        let mut current: Option<(usize, usize)> = None;
        let mut at = 0;
        while let Some(start) = self.next_set(at) {
            let end = self.next_clear(start);
            current = match current {
                Some((s, e)) if start - e < merge_below => Some((s, end)),
                Some((s, e)) => {
                    if let Some(slot) = out.get_mut(count) {
                        *slot = self.bytes(s, e);
                    }
                    count += 1;
                    Some((start, end))
                }
                None => Some((start, end)),
            };
            at = end;
        }
        if let Some((s, e)) = current {
            if let Some(slot) = out.get_mut(count) {
                *slot = self.bytes(s, e);
            }
            count += 1;
        }
        if count > out.len() {
            return Err(Error::BufferSize {
                what: "dirty ranges output",
                expected: count,
                actual: out.len(),
            });
        }
        Ok(count)
    }

    /// The byte range of elements `start..end`.
    fn bytes(&self, start: usize, end: usize) -> ByteRange {
        ByteRange {
            start: start * self.stride,
            end: end * self.stride,
        }
    }

    /// The first dirty element at or after `from`, if any.
    fn next_set(&self, from: usize) -> Option<usize> {
        let mut w = from / WORD_BITS;
        let mut bits = *self.words.get(w)? & (!0u64 << (from % WORD_BITS));
        loop {
            if bits != 0 {
                // Bits past `len` are zero, so a set bit is always a valid element.
                return Some(w * WORD_BITS + bits.trailing_zeros() as usize);
            }
            w += 1;
            bits = *self.words.get(w)?;
        }
    }

    /// The first clean element at or after `from`, or `len` if every element from there on is dirty.
    fn next_clear(&self, from: usize) -> usize {
        let mut w = from / WORD_BITS;
        let Some(&first) = self.words.get(w) else {
            return self.len;
        };
        let mut bits = !first & (!0u64 << (from % WORD_BITS));
        loop {
            if bits != 0 {
                return (w * WORD_BITS + bits.trailing_zeros() as usize).min(self.len);
            }
            w += 1;
            match self.words.get(w) {
                Some(&word) => bits = !word,
                None => return self.len,
            }
        }
    }

    /// Sets the bits of elements `start..end` (checked by the caller).
    fn set_range(&mut self, start: usize, end: usize) {
        if start >= end {
            return;
        }
        let (first, last) = (start / WORD_BITS, (end - 1) / WORD_BITS);
        let low = !0u64 << (start % WORD_BITS);
        let high = !0u64 >> (WORD_BITS - 1 - (end - 1) % WORD_BITS);
        if first == last {
            self.words[first] |= low & high;
        } else {
            self.words[first] |= low;
            self.words[first + 1..last].fill(!0);
            self.words[last] |= high;
        }
    }

    /// Clears the bits at or past `len` in the last word, keeping the invariant that they are zero.
    fn mask_tail(&mut self) {
        if !self.len.is_multiple_of(WORD_BITS)
            && let Some(last) = self.words.last_mut()
        {
            *last &= !0u64 >> (WORD_BITS - self.len % WORD_BITS);
        }
    }
}

/// Checks a tracker's element count and stride.
fn check_layout(len: usize, stride: usize) -> Result<()> {
    if stride == 0 || len.checked_mul(stride).is_none() {
        return Err(Error::DirtyLayout { len, stride });
    }
    Ok(())
}

/// The plain reference twin of [`DirtyTracker::ranges`]: one element at a time, over a `bool` per element.
///
/// Clears `out` and pushes the ranges (it allocates when `out` is too small; it is for tests).
/// Errors: [`Error::DirtyLayout`] for a zero stride or an overflowing byte size.
#[doc(hidden)]
pub fn dirty_ranges_reference(
    dirty: &[bool],
    stride: usize,
    gap_threshold_bytes: usize,
    out: &mut Vec<ByteRange>,
) -> Result<()> {
    check_layout(dirty.len(), stride)?;
    out.clear();
    for (i, &d) in dirty.iter().enumerate() {
        if !d {
            continue;
        }
        let bytes = ByteRange {
            start: i * stride,
            end: (i + 1) * stride,
        };
        match out.last_mut() {
            // Adjacent dirty elements are one run whatever the threshold; a clean gap merges below it.
            Some(last) if bytes.start == last.end || bytes.start - last.end < gap_threshold_bytes => {
                last.end = bytes.end
            }
            _ => out.push(bytes),
        }
    }
    Ok(())
}

/// The most ranges that [`split_ranges_at_chunks`] can write for `range_count` ranges inside a buffer of `byte_len`
/// bytes: each chunk boundary inside the buffer splits at most one range in two.
///
/// Returns `range_count` when `chunk_bytes` is 0 (which [`split_ranges_at_chunks`] rejects).
pub fn split_ranges_bound(range_count: usize, byte_len: usize, chunk_bytes: usize) -> usize {
    match chunk_bytes {
        0 => range_count,
        c => range_count + byte_len.saturating_sub(1) / c,
    }
}

/// Cuts every range at each multiple of `chunk_bytes` it crosses, writing the pieces in order into `out`, and returns
/// the number written.
///
/// A buffer bigger than the device's storage binding limit is bound as several chunks of `chunk_bytes` each; after
/// the split, every range lies inside one chunk, and its offset within the chunk is `start % chunk_bytes`.
/// Choose `chunk_bytes` as a multiple of the element stride (and of 4), so that no element straddles two chunks.
/// Empty input ranges are skipped. `out` needs room for [`split_ranges_bound`] pieces; entries past the returned
/// count are not touched.
///
/// Errors: [`Error::DirtyLayout`] if `chunk_bytes` is 0; [`Error::InvalidRange`] if a range has `start > end`;
/// [`Error::BufferSize`] if `out` is too short, with the number of pieces needed.
pub fn split_ranges_at_chunks(ranges: &[ByteRange], chunk_bytes: usize, out: &mut [ByteRange]) -> Result<usize> {
    if chunk_bytes == 0 {
        return Err(Error::DirtyLayout {
            len: ranges.len(),
            stride: chunk_bytes,
        });
    }
    let mut count = 0;
    for r in ranges {
        if r.start > r.end {
            return Err(Error::InvalidRange {
                what: "split_ranges_at_chunks input",
                start: r.start,
                end: r.end,
                len: usize::MAX,
            });
        }
        let mut start = r.start;
        while start < r.end {
            let chunk_end = (start / chunk_bytes).saturating_add(1).saturating_mul(chunk_bytes);
            let end = r.end.min(chunk_end);
            if let Some(slot) = out.get_mut(count) {
                *slot = ByteRange { start, end };
            }
            count += 1;
            start = end;
        }
    }
    if count > out.len() {
        return Err(Error::BufferSize {
            what: "split ranges output",
            expected: count,
            actual: out.len(),
        });
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(t: &DirtyTracker, threshold: usize) -> Vec<(usize, usize)> {
        let mut out = vec![ByteRange::default(); dirty_ranges_bound(t.len())];
        let n = t.ranges(threshold, &mut out).expect("bounded output");
        out[..n].iter().map(|r| (r.start, r.end)).collect()
    }

    #[test]
    fn coalesces_small_gaps_only() {
        let mut t = DirtyTracker::new(200, 10).expect("layout");
        t.mark(1).expect("in range");
        t.mark(2).expect("in range");
        t.mark(5).expect("in range"); // gap of 2 elements = 20 B after element 2
        t.mark_range(64..130).expect("in range"); // crosses two word boundaries
        t.mark(199).expect("in range");
        assert_eq!(ranges(&t, 0), [(10, 30), (50, 60), (640, 1300), (1990, 2000)]);
        assert_eq!(ranges(&t, 20), [(10, 30), (50, 60), (640, 1300), (1990, 2000)]);
        assert_eq!(ranges(&t, 21), [(10, 60), (640, 1300), (1990, 2000)]);
        assert_eq!(ranges(&t, 691), [(10, 2000)]);
        assert_eq!(t.dirty_count(), 70);
        t.clear();
        assert!(!t.any());
        assert_eq!(ranges(&t, 100), []);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert_eq!(DirtyTracker::new(4, 0), Err(Error::DirtyLayout { len: 4, stride: 0 }));
        assert!(matches!(
            DirtyTracker::new(usize::MAX, 2),
            Err(Error::DirtyLayout { .. })
        ));
        let mut t = DirtyTracker::new(70, 48).expect("layout");
        assert!(matches!(
            t.mark(70),
            Err(Error::ElementOutOfRange { index: 70, len: 70, .. })
        ));
        assert!(matches!(t.is_dirty(71), Err(Error::ElementOutOfRange { .. })));
        assert!(matches!(t.mark_range(3..71), Err(Error::InvalidRange { .. })));
        #[expect(
            clippy::reversed_empty_ranges,
            reason = "the reversed range is the bad input under test"
        )]
        let reversed = 5..3;
        assert!(matches!(t.mark_range(reversed), Err(Error::InvalidRange { .. })));
        assert!(!t.any(), "a rejected call marks nothing");
        for i in (0..70).step_by(2) {
            t.mark(i).expect("in range");
        }
        let mut small = [ByteRange::default(); 3];
        assert_eq!(
            t.ranges(0, &mut small),
            Err(Error::BufferSize {
                what: "dirty ranges output",
                expected: 35,
                actual: 3
            })
        );
        assert_eq!(
            small[2],
            ByteRange {
                start: 4 * 48,
                end: 5 * 48
            }
        );
        assert_eq!(dirty_ranges_bound(70), 35);
        assert!(matches!(t.resize(usize::MAX), Err(Error::DirtyLayout { .. })));
        assert_eq!(t.len(), 70);
    }

    #[test]
    fn resize_marks_new_elements_and_forgets_old_ones() {
        let mut t = DirtyTracker::new(3, 4).expect("layout");
        t.resize(130).expect("grows");
        assert_eq!(ranges(&t, 0), [(12, 520)]);
        t.clear();
        t.mark(100).expect("in range");
        t.mark(129).expect("in range");
        t.resize(101).expect("shrinks");
        assert_eq!(ranges(&t, 0), [(400, 404)]);
        t.resize(130).expect("grows");
        assert_eq!(
            ranges(&t, 0),
            [(400, 520)],
            "the forgotten element 129 comes back dirty as a new element"
        );
    }

    #[test]
    fn union_ignores_elements_past_either_length() {
        let mut small = DirtyTracker::new(10, 1).expect("layout");
        let mut big = DirtyTracker::new(100, 1).expect("layout");
        big.mark(3).expect("in range");
        big.mark(9).expect("in range");
        big.mark(50).expect("in range");
        small.mark(0).expect("in range");
        small.union_with(&big);
        assert_eq!(ranges(&small, 0), [(0, 1), (3, 4), (9, 10)]);
        assert_eq!(small.dirty_count(), 3, "bits past the length stay clear");
        let mut bigger = DirtyTracker::new(200, 1).expect("layout");
        bigger.union_with(&small);
        assert_eq!(ranges(&bigger, 0), [(0, 1), (3, 4), (9, 10)]);
    }

    #[test]
    fn splits_at_chunk_boundaries() {
        let input = [
            ByteRange { start: 0, end: 96 },
            ByteRange { start: 96, end: 96 },
            ByteRange { start: 100, end: 350 },
        ];
        let mut out = [ByteRange::default(); 8];
        let n = split_ranges_at_chunks(&input, 100, &mut out).expect("room");
        let got: Vec<_> = out[..n].iter().map(|r| (r.start, r.end)).collect();
        assert_eq!(got, [(0, 96), (100, 200), (200, 300), (300, 350)]);
        assert!(n <= split_ranges_bound(input.len(), 350, 100));
        assert!(matches!(
            split_ranges_at_chunks(&input, 0, &mut out),
            Err(Error::DirtyLayout { .. })
        ));
        assert!(matches!(
            split_ranges_at_chunks(&input, 100, &mut out[..2]),
            Err(Error::BufferSize {
                expected: 4,
                actual: 2,
                ..
            })
        ));
        let reversed = [ByteRange { start: 9, end: 3 }];
        assert!(matches!(
            split_ranges_at_chunks(&reversed, 100, &mut out),
            Err(Error::InvalidRange { .. })
        ));
    }
}
