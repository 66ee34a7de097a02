//! [`FlattenCache`]: the per-pose scratch of [`crate::FlattenJob`]'s shared-pose path, and the order in which a
//! task visits its palettes ([`group_by_pose`]).

use std::marker::PhantomData;

use glam::Vec4;

use super::PaletteBinding;
use crate::{PaletteEntry, PaletteFormat};

/// The most palettes of one rayon task of [`crate::FlattenJob`]'s shared-pose path.
///
/// Each task encodes its palettes grouped by pose ([`group_by_pose`]), so that the palettes that read one pose
/// follow each other and its cached data stays in the L1 cache between them. A task holds at least
/// [`crate::FLATTEN_CHUNK`] palettes, and at most this many, or a quarter of a thread's share of the job when that
/// is less, so that rayon can still balance the threads.
#[doc(hidden)]
pub const FLATTEN_WINDOW: usize = 1024;

/// The buckets of [`group_by_pose`]: poses equal modulo this number share one.
#[doc(hidden)]
pub const POSE_BUCKETS: usize = 256;

/// Lists `0..pose_of.len()` (at most [`FLATTEN_WINDOW`]) into `order` by pose bucket (`pose mod POSE_BUCKETS`),
/// each bucket in increasing index order, and returns the list: a stable counting sort, with no allocation. With
/// up to [`POSE_BUCKETS`] poses each pose's palettes are adjacent.
///
/// # Panics
///
/// When `pose_of` is longer than [`FLATTEN_WINDOW`] (the caller's bug).
#[doc(hidden)]
pub fn group_by_pose<'o>(pose_of: &[u32], order: &'o mut [u16; FLATTEN_WINDOW]) -> &'o [u16] {
    assert!(pose_of.len() <= FLATTEN_WINDOW, "at most one window");
    const _: () = assert!(FLATTEN_WINDOW <= u16::MAX as usize, "indices fit u16");
    let bucket = |p: u32| p as usize % POSE_BUCKETS;
    // `next[b]`: where bucket `b`'s next palette goes, after counting (`next[b + 1]` is bucket `b`'s count).
    let mut next = [0u16; POSE_BUCKETS + 1];
    for &p in pose_of {
        next[bucket(p) + 1] += 1;
    }
    for b in 1..=POSE_BUCKETS {
        next[b] += next[b - 1];
    }
    for (i, &p) in pose_of.iter().enumerate() {
        let at = &mut next[bucket(p)];
        order[usize::from(*at)] = i as u16;
        *at += 1;
    }
    &order[..pose_of.len()]
}

/// Scratch for [`crate::FlattenJob`]s in format `F` whose palettes share poses: the skinning matrices of every
/// pose in row form, their largest absolute value, and the format's own data derived from them (the decomposed
/// joints of [`crate::QtF16`]).
///
/// Sized at setup for a maximum number of poses of one skin; the job never grows it.
#[derive(Clone, Debug)]
pub struct FlattenCache<F: PaletteFormat = PaletteEntry> {
    pub(super) rows: Vec<[Vec4; 3]>,
    /// The format's data, in whole 64-byte lines from a line boundary; each pose's share is whole lines too.
    aux: Vec<AuxLine>,
    pub(super) max_abs: Vec<f32>,
    format: PhantomData<fn() -> F>,
}

/// One 64-byte line of [`FlattenCache`]'s per-format data.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
struct AuxLine([f32; 16]);

impl<F: PaletteFormat> Default for FlattenCache<F> {
    /// An empty cache, for jobs whose palettes each read their own pose.
    fn default() -> Self {
        Self {
            rows: Vec::new(),
            aux: Vec::new(),
            max_abs: Vec::new(),
            format: PhantomData,
        }
    }
}

impl<F: PaletteFormat> FlattenCache<F> {
    /// A cache for up to `max_poses` poses of `binding`'s skin.
    pub fn new(binding: &PaletteBinding, max_poses: usize) -> Self {
        let s = binding.skin_joint_count();
        Self {
            rows: vec![[Vec4::ZERO; 3]; max_poses * s],
            aux: vec![AuxLine([0.0; 16]); max_poses * F::cached_floats(s) / 16],
            max_abs: vec![0.0; max_poses],
            format: PhantomData,
        }
    }

    /// How many poses of `binding`'s skin the cache holds.
    pub fn capacity(&self, binding: &PaletteBinding) -> usize {
        let s = binding.skin_joint_count();
        let rows = self.rows.len().checked_div(s).unwrap_or(usize::MAX);
        let aux = (16 * self.aux.len())
            .checked_div(F::cached_floats(s))
            .unwrap_or(usize::MAX);
        rows.min(aux).min(self.max_abs.len())
    }

    /// The rows, the format's data and the largest absolute values of the first `poses` poses of a skin of `s`
    /// joints (the caller checked [`FlattenCache::capacity`]).
    pub(super) fn parts(&mut self, poses: usize, s: usize) -> (&mut [[Vec4; 3]], &mut [f32], &mut [f32]) {
        let aux = bytemuck::cast_slice_mut::<AuxLine, f32>(&mut self.aux);
        (
            &mut self.rows[..poses * s],
            &mut aux[..poses * F::cached_floats(s)],
            &mut self.max_abs[..poses],
        )
    }
}

/// One pose of a [`FlattenCache`], as a format's cached encoder reads it.
#[derive(Clone, Copy, Debug)]
pub struct CachedPose<'a> {
    /// The skinning matrices of the pose's skin joints, as rows with the translation in `w`.
    pub rows: &'a [[Vec4; 3]],
    /// The format's own data, as its preparation left it.
    pub aux: &'a [f32],
    /// The largest absolute value among `rows`' elements (translations included).
    pub max_abs: f32,
}

/// The largest absolute value among the elements of `rows`; meaningful for finite rows only.
#[inline]
pub(super) fn max_abs_of(rows: &[[Vec4; 3]]) -> f32 {
    // One running maximum per row, so that the loop is three short chains of `max` rather than one long one.
    let m = rows.iter().fold([Vec4::ZERO; 3], |m, r| {
        [m[0].max(r[0].abs()), m[1].max(r[1].abs()), m[2].max(r[2].abs())]
    });
    m[0].max(m[1]).max(m[2]).max_element()
}
