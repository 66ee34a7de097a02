//! Flattening model-space poses into GPU-layout palettes: [`FlattenJob`], its [`PaletteBinding`] and
//! [`FlattenCache`], and the [`PaletteFormat`] trait that every palette encoding implements.
//!
//! A joint's skinning matrix is `model[joint] × inverse_bind[joint]`; per-instance palettes can fold the instance's
//! world transform in front of it. The job writes the result straight into a caller-provided slice (for example a
//! mapped staging buffer), in parallel over chunks of palettes with rayon, with no intermediate `Vec` and no
//! allocation. [`crate::palette_from_model`] is its plain reference twin.

use anim_pose::Skeleton;
use glam::{Affine3A, Mat4, Vec3A, Vec4};
use rayon::prelude::*;

use crate::{Error, PaletteEntry, Result};

/// A per-joint palette encoding that the flattening jobs can write straight into a GPU-layout slice.
///
/// `encode` receives the joint's final skinning matrix (model × inverse bind, with the instance transform folded
/// in when the caller asks for it) and the palette's translation origin. Formats that store translation relative to
/// an origin (the f16 formats) subtract it; the f32 [`PaletteEntry`] stores the absolute matrix and ignores it.
pub trait PaletteFormat: bytemuck::Pod + Send + Sync {
    /// A short name for reports and errors, for example `"f32 3x4"`.
    const NAME: &'static str;

    /// Encodes one skinning matrix. The input is finite (the jobs validate it before encoding).
    fn encode(m: &Affine3A, origin: Vec3A) -> Self;

    /// Encodes one skinning matrix given as its three rows `(r0, r1, r2)`, with the translation in `w`: the form
    /// [`FlattenJob`] computes. The default converts to an [`Affine3A`] and calls [`PaletteFormat::encode`];
    /// formats that store rows override it.
    #[inline(always)]
    fn encode_rows(rows: &[Vec4; 3], origin: Vec3A) -> Self {
        let m = Mat4::from_cols(rows[0], rows[1], rows[2], Vec4::W).transpose();
        Self::encode(&Affine3A::from_mat4(m), origin)
    }

    /// True when [`PaletteFormat::stream_rows`] writes with non-temporal stores.
    const STREAMS: bool = false;

    /// Writes the encoding of `rows` into `out` with non-temporal (streaming) stores when the format supports
    /// them and `out` is 16-byte aligned; the default stores normally. [`FlattenJob`] calls it when its
    /// `streaming` field is set, and fences the stores before it returns.
    #[inline(always)]
    fn stream_rows(rows: &[Vec4; 3], origin: Vec3A, out: &mut Self) {
        *out = Self::encode_rows(rows, origin);
    }

    /// True when the format stores translation relative to an origin (the f16 formats): [`FlattenJob`] then
    /// computes folded rows relative to the instance position directly, never adding and subtracting it.
    const RELATIVE: bool = false;

    /// Encodes `out.len()` entries whose rows (translation in `w`) `row(k)` computes, all with the same `origin`,
    /// and returns the sum of `row × 0` over every row: NaN when any row was not finite, zero otherwise.
    /// `stream` asks for [`PaletteFormat::stream_rows`].
    ///
    /// The default calls [`PaletteFormat::encode_rows`] (or `stream_rows`) for each entry; the f16 formats override
    /// it with one loop that converts with F16C.
    #[inline(always)]
    fn encode_each(out: &mut [Self], origin: Vec3A, stream: bool, mut row: impl FnMut(usize) -> [Vec4; 3]) -> Vec4 {
        let mut acc = Vec4::ZERO;
        for (k, o) in out.iter_mut().enumerate() {
            let r = row(k);
            acc += poison(r[0]) + poison(r[1]) + poison(r[2]);
            if Self::STREAMS && stream {
                Self::stream_rows(&r, origin, o);
            } else {
                *o = Self::encode_rows(&r, origin);
            }
        }
        acc
    }

    /// Fills this format's per-pose data in the cache (`aux`, [`cache_aux_floats`] long for the skin, which is what
    /// [`FlattenCache::new`] reserves beside the skinning rows) from the pose's finite skinning rows, once per pose
    /// and frame, before any palette reads it. Default: nothing.
    #[inline(always)]
    fn prepare_cached(rows: &[[Vec4; 3]], aux: &mut [f32]) {
        let _ = (rows, aux);
    }

    /// Whether this format's cached encoders read [`CachedPose::rows`]. When false, [`FlattenJob`] hands them empty
    /// rows, and [`PaletteFormat::prepare_pose`] need not leave the pose's rows in the cache ([`crate::QtF16`]'s
    /// encoders read only its own decomposed joints).
    const READS_CACHED_ROWS: bool = true;

    /// Fills the cache for one pose of [`FlattenJob`]'s shared poses, once per pose and frame: `rows` (the pose's
    /// share of the cache's skinning rows, one per skin joint) and `aux` (its share of the format's data, as for
    /// [`PaletteFormat::prepare_cached`]), from `pose`, the pose's model-space transforms (one per skeleton
    /// joint). Returns the poison sum of the skinning matrices (`pose[joint] × inverse bind`: `Vec4::ZERO` when
    /// every element is finite, NaN otherwise) and their largest absolute element ([`CachedPose::max_abs`]).
    ///
    /// The default computes the rows into `rows` and, when they are finite, calls
    /// [`PaletteFormat::prepare_cached`]. [`crate::QtF16`] overrides it with one pass from the pose to its
    /// decomposed joints where the CPU has AVX-512 (the same bits), and leaves `rows` alone.
    #[inline(always)]
    fn prepare_pose(
        binding: &PaletteBinding,
        pose: &[Affine3A],
        rows: &mut [[Vec4; 3]],
        aux: &mut [f32],
    ) -> (Vec4, f32) {
        prepare_pose_rows::<Self>(binding, pose, rows, aux)
    }

    /// Encodes one palette from a cached pose, with the instance transform `t` folded in front of every entry
    /// (`None` keeps model space, origin zero); returns the poison sum of the values it checked (NaN when any was
    /// not finite). With `t` given, relative formats ([`PaletteFormat::RELATIVE`]) store translations relative to
    /// `t`'s translation, the others absolute ones.
    ///
    /// The default folds the cached rows entry by entry through [`PaletteFormat::encode_each`]; the f16 formats
    /// override it with SIMD kernels where the CPU has them (see [`crate::Mat3x4F16`] and [`crate::QtF16`]).
    #[inline(always)]
    fn encode_cached(pose: CachedPose<'_>, t: Option<&Affine3A>, out: &mut [Self], stream: bool) -> Vec4 {
        match t {
            None => copy_rows(pose.rows, out, stream),
            Some(t) => fold_rows(t, pose.rows, out, stream),
        }
    }

    /// Encodes a run of palettes from the cache (one rayon task of [`FlattenJob`], up to [`FLATTEN_WINDOW`]):
    /// palette `i` of `out` (`skin_joints` entries each) reads `pose.pose(i)`, folded by `transforms[i]` when
    /// `transforms` is not empty (it then has one transform per palette). The palettes are encoded in `order`, which
    /// lists palette indices of `out` (palettes it leaves out are not written): [`FlattenJob`] lists every palette
    /// once, those that share a pose next to each other (see [`FLATTEN_WINDOW`]). Returns the poison sum. The
    /// default calls [`PaletteFormat::encode_cached`] palette by palette; the built-in formats override it to run
    /// their SIMD kernels over the whole run (and [`crate::QtF16`] to decompose the instance transforms sixteen or
    /// four at a time).
    ///
    /// # Panics
    ///
    /// When an index of `order` names no palette of `out` (the caller's bug).
    #[inline(always)]
    fn encode_cached_run<'a>(
        out: &mut [Self],
        skin_joints: usize,
        order: &[u16],
        pose: &impl PoseSource<'a>,
        transforms: &[Affine3A],
        stream: bool,
    ) -> Vec4 {
        encode_each_palette::<Self>(out, skin_joints, order, pose, transforms, stream)
    }
}

/// [`PaletteFormat::prepare_pose`]'s default: the pose's skinning rows into `rows`, then, when they are finite,
/// [`PaletteFormat::prepare_cached`]. Returns their poison sum and largest absolute element.
#[inline(always)]
pub fn prepare_pose_rows<F: PaletteFormat>(
    binding: &PaletteBinding,
    pose: &[Affine3A],
    rows: &mut [[Vec4; 3]],
    aux: &mut [f32],
) -> (Vec4, f32) {
    let (acc, max_abs) = cached_rows(binding, pose, rows);
    if acc == Vec4::ZERO {
        F::prepare_cached(rows, aux);
    }
    (acc, max_abs)
}

/// Encodes a run palette by palette, in `order`, through [`PaletteFormat::encode_cached`]: the default of
/// [`PaletteFormat::encode_cached_run`], and the fallback of the formats that override it.
#[inline(always)]
pub(crate) fn encode_each_palette<'a, F: PaletteFormat>(
    out: &mut [F],
    skin_joints: usize,
    order: &[u16],
    pose: &impl PoseSource<'a>,
    transforms: &[Affine3A],
    stream: bool,
) -> Vec4 {
    let mut acc = Vec4::ZERO;
    for &i in order {
        let i = usize::from(i);
        let palette = palette_mut(out, skin_joints, i);
        acc += F::encode_cached(pose.pose(i), transforms.get(i), palette, stream);
    }
    acc
}

/// Palette `i` of `out` (`skin_joints` entries each).
///
/// # Panics
///
/// When `out` has no palette `i` (the caller's bug).
#[inline(always)]
pub(crate) fn palette_mut<F>(out: &mut [F], skin_joints: usize, i: usize) -> &mut [F] {
    &mut out[i * skin_joints..(i + 1) * skin_joints]
}

/// The most palettes of one rayon task of [`FlattenJob`]'s cached path (shared poses), and so of one
/// [`PaletteFormat::encode_cached_run`].
///
/// Each task encodes its palettes grouped by pose ([`group_by_pose`]): the palettes that read one pose then follow
/// each other, and the pose's cached data (2 KiB for a 64-joint [`crate::QtF16`] pose, 3 KiB of rows for the
/// others) stays in the L1 cache between them instead of coming from L2 for every palette. A task holds at least
/// [`FLATTEN_CHUNK`] palettes, and at most this many, or a quarter of a thread's share of the job when that is less,
/// so that rayon can still balance the threads.
///
/// On the development VM (2 vCPUs; the bench's crowd of 10,000 instances over 128 poses, streaming, 2 threads;
/// three series of 80 runs alternating in one process), these tasks took 0.78–0.89 of the time of the former
/// 16-palette tasks in palette order for QtF16, 0.89–0.95 for Mat3x4F16 and 0.80–0.90 for the f32 entry (medians of
/// the run-by-run ratios). The same large tasks in palette order took 0.89–1.02, 0.95–1.03 and 0.88–0.99 of the
/// former time: most of the gain is the grouping.
pub const FLATTEN_WINDOW: usize = 1024;

/// The buckets of [`group_by_pose`]: poses equal modulo this number share one.
pub const POSE_BUCKETS: usize = 256;

/// Lists `0..pose_of.len()` (at most [`FLATTEN_WINDOW`]) into `order` by pose bucket (`pose mod POSE_BUCKETS`),
/// each bucket in increasing index order, and returns the list: a stable counting sort, with no allocation. With
/// up to [`POSE_BUCKETS`] poses each pose's palettes are adjacent; with more, a bucket interleaves palettes of
/// about `poses / POSE_BUCKETS` poses, whose cached data is then read back and forth.
///
/// # Panics
///
/// When `pose_of` is longer than [`FLATTEN_WINDOW`] (the caller's bug).
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

/// The palettes per rayon task of [`FlattenJob`]'s cached path for a job of `palettes` palettes on the current
/// rayon pool: see [`FLATTEN_WINDOW`].
fn window_for(palettes: usize) -> usize {
    palettes
        .div_ceil(4 * rayon::current_num_threads())
        .clamp(FLATTEN_CHUNK, FLATTEN_WINDOW)
}

/// The cached pose of each palette of a run, for [`PaletteFormat::encode_cached_run`]: any
/// `Fn(usize) -> CachedPose`, or the job's own source, whose lookup always inlines into the formats' palette loops
/// (with a closure, LLVM left the call out of line in the Mat3x4F16 and f32 loops: a call per palette, which took
/// 3.8% of `perf`'s samples of the bench's Mat3x4F16 crowd).
pub trait PoseSource<'a> {
    /// The pose that palette `i` of the run reads.
    fn pose(&self, i: usize) -> CachedPose<'a>;
}

impl<'a, F: Fn(usize) -> CachedPose<'a>> PoseSource<'a> for F {
    #[inline(always)]
    fn pose(&self, i: usize) -> CachedPose<'a> {
        self(i)
    }
}

/// [`FlattenJob`]'s [`PoseSource`] for one task: palette `i` reads pose `pose_of[i]` of the cache.
#[derive(Clone, Copy, Debug)]
struct SharedPoses<'a> {
    rows: &'a [[Vec4; 3]],
    /// The rows per pose: the skin's joints, or zero (every pose's rows empty) for a format that does not read
    /// them ([`PaletteFormat::READS_CACHED_ROWS`]).
    rows_stride: usize,
    aux: &'a [f32],
    max_abs: &'a [f32],
    /// The task's share of the job's `pose_of`.
    pose_of: &'a [u32],
    aux_stride: usize,
}

impl<'a> PoseSource<'a> for SharedPoses<'a> {
    #[inline(always)]
    fn pose(&self, i: usize) -> CachedPose<'a> {
        let (p, s) = (self.pose_of[i] as usize, self.rows_stride);
        CachedPose {
            rows: &self.rows[p * s..(p + 1) * s],
            aux: &self.aux[p * self.aux_stride..][..self.aux_stride],
            max_abs: self.max_abs[p],
        }
    }
}

/// One pose of a [`FlattenCache`], as [`PaletteFormat::encode_cached`] reads it.
#[derive(Clone, Copy, Debug)]
pub struct CachedPose<'a> {
    /// The skinning matrices of the pose's skin joints, as rows with the translation in `w`.
    pub rows: &'a [[Vec4; 3]],
    /// The format's own per-pose data ([`cache_aux_floats`] long), as [`PaletteFormat::prepare_cached`] left it.
    pub aux: &'a [f32],
    /// The largest absolute value among `rows`' elements (translations included).
    pub max_abs: f32,
}

impl PaletteFormat for PaletteEntry {
    const NAME: &'static str = "f32 3x4";

    #[inline(always)]
    fn encode(m: &Affine3A, _origin: Vec3A) -> Self {
        let c = m.matrix3;
        let t = m.translation;
        Self {
            rows: [
                [c.x_axis.x, c.y_axis.x, c.z_axis.x, t.x],
                [c.x_axis.y, c.y_axis.y, c.z_axis.y, t.y],
                [c.x_axis.z, c.y_axis.z, c.z_axis.z, t.z],
            ],
        }
    }

    #[inline(always)]
    fn encode_rows(rows: &[Vec4; 3], _origin: Vec3A) -> Self {
        Self {
            rows: [rows[0].to_array(), rows[1].to_array(), rows[2].to_array()],
        }
    }

    const STREAMS: bool = cfg!(target_arch = "x86_64");

    #[inline(always)]
    fn stream_rows(rows: &[Vec4; 3], _origin: Vec3A, out: &mut Self) {
        #[cfg(target_arch = "x86_64")]
        if (out as *mut Self as usize).is_multiple_of(16) {
            stream::entry(rows, out);
            return;
        }
        *out = Self::encode_rows(rows, _origin);
    }

    /// With an instance transform, the SIMD kernel of `formats/fold_simd.rs` (AVX-512F, or AVX and FMA) when the
    /// CPU has it and no product can overflow (`‖L_T‖∞ · max|S| + Σ|t_T| ≤ f32::MAX / 1024`, which also excludes
    /// non-finite transforms): the portable path's fused products in its order, so the same bits, without its
    /// per-row poison. Otherwise, and without a transform, the default (the portable path).
    fn encode_cached(pose: CachedPose<'_>, t: Option<&Affine3A>, out: &mut [Self], stream: bool) -> Vec4 {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = t
            && crate::formats::fold_simd_available()
            && crate::formats::fold_entry_in_range(t, pose.max_abs)
        {
            crate::formats::fold_entry_simd(t, pose.rows, out, stream);
            return Vec4::ZERO;
        }
        match t {
            None => copy_rows(pose.rows, out, stream),
            Some(t) => fold_rows(t, pose.rows, out, stream),
        }
    }

    /// With instance transforms, the whole run in one call of the SIMD kernel's loop (`fold_simd::entry_run`): the
    /// CPU's features detected once, each palette's range check and setup inlined. Otherwise palette by palette.
    fn encode_cached_run<'a>(
        out: &mut [Self],
        skin_joints: usize,
        order: &[u16],
        pose: &impl PoseSource<'a>,
        transforms: &[Affine3A],
        stream: bool,
    ) -> Vec4 {
        #[cfg(target_arch = "x86_64")]
        if !transforms.is_empty() && crate::formats::fold_simd_available() {
            return crate::formats::fold_entry_run(out, skin_joints, order, pose, transforms, stream);
        }
        encode_each_palette::<Self>(out, skin_joints, order, pose, transforms, stream)
    }
}

/// Non-temporal stores for the f32 palette entry on x86-64.
#[cfg(target_arch = "x86_64")]
#[allow(
    unsafe_code,
    reason = "non-temporal stores need raw pointers; each use is checked and documented"
)]
mod stream {
    use std::arch::x86_64::{_mm_loadu_ps, _mm_sfence, _mm_stream_ps};

    use glam::Vec4;

    use crate::PaletteEntry;

    /// Writes `rows` into `out` with three 16-byte non-temporal stores. `out` is 16-byte aligned.
    #[inline(always)]
    pub(super) fn entry(rows: &[Vec4; 3], out: &mut PaletteEntry) {
        let p = (out as *mut PaletteEntry).cast::<f32>();
        debug_assert!((p as usize).is_multiple_of(16), "the caller checks the alignment");
        // SAFETY: `p` points to the 48 writable bytes of `*out` (a `&mut`, so no one else reads them until it is
        // released), is 16-byte aligned as `_mm_stream_ps` requires (checked by the caller), and every load reads
        // the 16 bytes of one `Vec4`. SSE is part of the x86-64 baseline.
        unsafe {
            _mm_stream_ps(p, _mm_loadu_ps(rows[0].as_ref().as_ptr()));
            _mm_stream_ps(p.add(4), _mm_loadu_ps(rows[1].as_ref().as_ptr()));
            _mm_stream_ps(p.add(8), _mm_loadu_ps(rows[2].as_ref().as_ptr()));
        }
    }

    /// Orders this thread's non-temporal stores before its later stores, so that whoever joins the thread sees
    /// them.
    #[inline(always)]
    pub(super) fn fence() {
        // SAFETY: `_mm_sfence` has no preconditions; SSE is part of the x86-64 baseline. (It is a safe function
        // from Rust 1.87; the block keeps older compilers working.)
        #[allow(unused_unsafe, reason = "`_mm_sfence` is safe from Rust 1.87, unsafe before")]
        unsafe {
            _mm_sfence()
        };
    }
}

/// Fences this thread's non-temporal stores (see [`stream::fence`]); nothing to do elsewhere.
#[inline(always)]
fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    stream::fence();
}

/// Palettes per rayon task in [`FlattenJob::run`] when each palette reads its own pose, and the fewest per task on
/// the shared-pose path (see [`FLATTEN_WINDOW`]).
///
/// One palette of 64 joints in f32 is 3 KiB and takes about a microsecond; 16 palettes keep rayon's per-task
/// overhead (around a microsecond) near 5% while a 10,000-instance crowd still splits into hundreds of tasks.
pub const FLATTEN_CHUNK: usize = 16;

/// A skeleton's skinning binding, prepared once for [`FlattenJob`]: which skeleton joint each palette entry reads,
/// and the inverse bind matrices as affine transforms.
#[derive(Clone, Debug, PartialEq)]
pub struct PaletteBinding {
    joint_count: usize,
    skin_joints: Vec<u16>,
    inverse_bind: Vec<Affine3A>,
    /// The rows of each inverse bind matrix, for [`skin_matrix_rows`].
    inverse_bind_rows: Vec<[Vec4; 3]>,
    /// `16 · skin_joints[k]` in [`crate::QtF16`]'s block lanes (joint `k` of block `b` at `16b + qt_lane(k)`), zero
    /// past the skin: where [`crate::QtF16`]'s cache preparation gathers each joint's model-space transform.
    joint_lanes: Vec<i32>,
    /// The inverse bind rows in the same lanes: element `(r, c)` of block `b` at `192b + (4r + c) · 16`, zero past
    /// the skin.
    inverse_bind_lanes: Vec<f32>,
}

impl PaletteBinding {
    /// Prepares `skeleton`'s skin for flattening.
    ///
    /// # Errors
    ///
    /// - [`Error::BufferSize`] when the skeleton does not have one inverse bind matrix per skin joint;
    /// - [`Error::SkinJointOutOfRange`] when a skin joint maps past the skeleton's joints;
    /// - [`Error::NotAffine`] naming the skin joint whose inverse bind matrix is not finite or not affine.
    pub fn new(skeleton: &Skeleton) -> Result<Self> {
        let n = skeleton.skin_joints.len();
        if skeleton.inverse_bind_matrices.len() != n {
            return Err(Error::BufferSize {
                what: "inverse bind matrices (one per skin joint)",
                expected: n,
                actual: skeleton.inverse_bind_matrices.len(),
            });
        }
        let joint_count = skeleton.joint_count();
        if let Some((skin_joint, &joint)) = skeleton
            .skin_joints
            .iter()
            .enumerate()
            .find(|&(_, &j)| usize::from(j) >= joint_count)
        {
            return Err(Error::SkinJointOutOfRange {
                skin_joint,
                joint,
                joint_count,
            });
        }
        let inverse_bind = skeleton
            .inverse_bind_matrices
            .iter()
            .enumerate()
            .map(|(k, m)| {
                if !m.is_finite() || m.row(3) != Vec4::W {
                    return Err(Error::NotAffine {
                        what: "inverse bind matrix of skin joint",
                        index: k,
                    });
                }
                Ok(Affine3A::from_mat4(*m))
            })
            .collect::<Result<_>>()?;
        let inverse_bind_rows: Vec<[Vec4; 3]> = skeleton
            .inverse_bind_matrices
            .iter()
            .map(|m| [m.row(0), m.row(1), m.row(2)])
            .collect();
        let (joint_lanes, inverse_bind_lanes) = skin_lanes(&skeleton.skin_joints, &inverse_bind_rows);
        Ok(Self {
            joint_count,
            skin_joints: skeleton.skin_joints.clone(),
            inverse_bind,
            inverse_bind_rows,
            joint_lanes,
            inverse_bind_lanes,
        })
    }

    /// `16 · skin_joints[k]` in [`crate::QtF16`]'s block lanes, zero past the skin (see the field).
    #[cfg_attr(
        not(target_arch = "x86_64"),
        allow(dead_code, reason = "read by the AVX-512 preparation only")
    )]
    pub(crate) fn joint_lanes(&self) -> &[i32] {
        &self.joint_lanes
    }

    /// The inverse bind rows in [`crate::QtF16`]'s block lanes, zero past the skin (see the field).
    #[cfg_attr(
        not(target_arch = "x86_64"),
        allow(dead_code, reason = "read by the AVX-512 preparation only")
    )]
    pub(crate) fn inverse_bind_lanes(&self) -> &[f32] {
        &self.inverse_bind_lanes
    }

    /// The number of skeleton joints: each model-space pose has this many matrices.
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// The number of skin joints: each palette has this many entries.
    pub fn skin_joint_count(&self) -> usize {
        self.skin_joints.len()
    }
}

/// A skin's joints (`16 · joint`, the first float of the joint's [`Affine3A`]) and inverse bind rows in
/// [`crate::QtF16`]'s block lanes, zero past the skin: [`PaletteBinding`]'s `joint_lanes` and `inverse_bind_lanes`.
pub(crate) fn skin_lanes(joints: &[u16], ibm_rows: &[[Vec4; 3]]) -> (Vec<i32>, Vec<f32>) {
    use crate::formats::{QT_BLOCK, qt_lane};
    let blocks = joints.len().div_ceil(QT_BLOCK);
    let mut offsets = vec![0; blocks * QT_BLOCK];
    let mut ibm = vec![0.0; blocks * 12 * QT_BLOCK];
    for (k, (&joint, rows)) in joints.iter().zip(ibm_rows).enumerate() {
        let (block, lane) = (k / QT_BLOCK, qt_lane(k));
        offsets[block * QT_BLOCK + lane] = 16 * i32::from(joint);
        for (r, row) in rows.iter().enumerate() {
            for (c, &x) in row.to_array().iter().enumerate() {
                ibm[(block * 12 + 4 * r + c) * QT_BLOCK + lane] = x;
            }
        }
    }
    (offsets, ibm)
}

/// The floats of format-specific data per pose that a [`FlattenCache`] keeps for a skin of `skin_joints` joints
/// ([`PaletteFormat::prepare_cached`] fills them): the largest need of the built-in formats, [`crate::QtF16`]'s
/// decomposed joints or [`crate::Mat3x4F16`]'s rows regrouped by four joints. Always whole 64-byte lines (a multiple
/// of 16), so that every pose's data starts on a line.
pub fn cache_aux_floats(skin_joints: usize) -> usize {
    crate::formats::qt_cached_floats(skin_joints)
        .max(crate::formats::mat3x4_cached_floats(skin_joints))
        .next_multiple_of(16)
}

/// Scratch for [`FlattenJob`]s that share poses between palettes: the skinning matrices of every pose, in row form,
/// their largest absolute value, and per-format data derived from them ([`PaletteFormat::prepare_cached`]).
///
/// Sized at setup for a maximum number of poses; the job never grows it.
#[derive(Clone, Debug, Default)]
pub struct FlattenCache {
    rows: Vec<[Vec4; 3]>,
    /// The per-format data, in whole 64-byte lines from a line boundary; each pose's share is whole lines too
    /// ([`cache_aux_floats`]).
    aux: Vec<AuxLine>,
    max_abs: Vec<f32>,
}

/// One 64-byte line of [`FlattenCache`]'s per-format data.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
struct AuxLine([f32; 16]);

impl FlattenCache {
    /// A cache for up to `max_poses` poses of `binding`'s skeleton.
    pub fn new(binding: &PaletteBinding, max_poses: usize) -> Self {
        let s = binding.skin_joint_count();
        Self {
            rows: vec![[Vec4::ZERO; 3]; max_poses * s],
            aux: vec![AuxLine([0.0; 16]); max_poses * cache_aux_floats(s) / 16],
            max_abs: vec![0.0; max_poses],
        }
    }

    /// How many poses of `binding`'s skeleton the cache holds.
    pub fn capacity(&self, binding: &PaletteBinding) -> usize {
        let s = binding.skin_joint_count();
        let rows = self.rows.len().checked_div(s).unwrap_or(usize::MAX);
        let aux = (16 * self.aux.len())
            .checked_div(cache_aux_floats(s))
            .unwrap_or(usize::MAX);
        rows.min(aux).min(self.max_abs.len())
    }
}

/// Writes skinning palettes in GPU layout: for palette `i` and skin joint `k`,
/// `output[i × S + k] = encode(T_i × model[P_i × J + skin_joints[k]] × inverse_bind[k])`,
/// where `S` is the skin joint count, `J` the skeleton joint count, `P_i` the pose palette `i` reads and `T_i` its
/// instance transform.
///
/// - **Poses.** `poses` holds whole model-space poses back to back, `J` matrices each (the outputs of
///   `anim_pose::LocalToModelJob`, or `anim_pose::PosePool::palettes` for pooled slots).
/// - **Which pose.** With `pose_of` empty, palette `i` reads pose `i` and there are `poses.len() / J` palettes.
///   Otherwise palette `i` reads pose `pose_of[i]` and there are `pose_of.len()` palettes: many instances can share
///   one pose (pooled slots, or the classic design of per-instance palettes from a few shared poses), and each
///   pose's skinning matrices are then computed once, into `cache`.
/// - **Instance transforms.** With `transforms` empty, palettes stay in model space (pooled palettes always do)
///   and their f16 translation origin is zero. Otherwise `transforms[i]` is folded in front of every entry of
///   palette `i` and the origin is its translation, so that f16 precision does not depend on world position.
///
/// Validity rules, checked by [`FlattenJob::validate`]:
/// - `poses.len()` is a multiple of `J`, and `J > 0`;
/// - `transforms` is empty or has one entry per palette;
/// - `output` has at least `palettes × S` entries (surplus entries are untouched);
/// - with `pose_of` given, `cache` holds at least `poses.len() / J` poses; `run` also checks every `pose_of[i]`.
///
/// **Formats.** The f16 formats encode shared poses through [`PaletteFormat::encode_cached`], with AVX + F16C
/// kernels where the CPU has them: [`crate::Mat3x4F16`] gives the same bits as the portable path, and
/// [`crate::QtF16`] composes the instance transform with each pose joint's cached decomposition
/// (`q_T ⊗ q_S`, which for similarity transforms equals decomposing the product up to f32 rounding; instance
/// transforms must then be similarities too, as the crowd store's position, rotation and uniform scale are).
///
/// `run` reports the first non-finite input or result it finds ([`Error::NonFinite`]); `output` is then written
/// but unspecified.
#[derive(Debug)]
pub struct FlattenJob<'a, F: PaletteFormat = PaletteEntry> {
    /// The skeleton's skin, prepared once.
    pub binding: &'a PaletteBinding,
    /// Model-space poses, `J` matrices each, pose after pose.
    pub poses: &'a [Affine3A],
    /// The pose of each palette, or empty for one palette per pose.
    pub pose_of: &'a [u32],
    /// The instance transform of each palette, or empty to keep palettes in model space.
    pub transforms: &'a [Affine3A],
    /// Per-pose skinning matrices, used when `pose_of` is given.
    pub cache: &'a mut FlattenCache,
    /// The palettes, palette-major: `output[i × S + k]`.
    pub output: &'a mut [F],
    /// Write with non-temporal (streaming) stores where the format supports them ([`PaletteFormat::STREAMS`]; the
    /// f32 entry on x86-64, when `output` is 16-byte aligned). This suits large crowds written to upload memory that
    /// the CPU does not read back; `cargo xtask bench` measures both.
    pub streaming: bool,
}

impl<F: PaletteFormat> FlattenJob<'_, F> {
    /// The number of palettes the job writes.
    pub fn palette_count(&self) -> usize {
        if self.pose_of.is_empty() {
            self.poses.len().checked_div(self.binding.joint_count).unwrap_or(0)
        } else {
            self.pose_of.len()
        }
    }

    /// Checks the validity rules listed on [`FlattenJob`], in O(1).
    ///
    /// # Errors
    ///
    /// [`Error::BufferSize`] naming the argument at fault.
    pub fn validate(&self) -> Result<()> {
        let j = self.binding.joint_count;
        if j == 0 || !self.poses.len().is_multiple_of(j) {
            return Err(Error::BufferSize {
                what: "model-space poses (a whole number of poses of the skeleton's joints)",
                expected: self.poses.len().div_ceil(j.max(1)) * j.max(1),
                actual: self.poses.len(),
            });
        }
        let palettes = self.palette_count();
        if !self.transforms.is_empty() && self.transforms.len() != palettes {
            return Err(Error::BufferSize {
                what: "instance transforms (one per palette, or none)",
                expected: palettes,
                actual: self.transforms.len(),
            });
        }
        let needed = palettes * self.binding.skin_joint_count();
        if self.output.len() < needed {
            return Err(Error::BufferSize {
                what: "flatten output (palettes × skin joints)",
                expected: needed,
                actual: self.output.len(),
            });
        }
        let poses = self.poses.len() / j;
        if !self.pose_of.is_empty() && self.cache.capacity(self.binding) < poses {
            return Err(Error::BufferSize {
                what: "flatten cache (poses it holds; make it with FlattenCache::new for this skin)",
                expected: poses,
                actual: self.cache.capacity(self.binding),
            });
        }
        Ok(())
    }

    /// Writes the palettes. Never allocates.
    ///
    /// # Errors
    ///
    /// - [`Error::BufferSize`] from [`FlattenJob::validate`], before anything is written;
    /// - [`Error::PoseOutOfRange`] when a `pose_of` entry names no pose;
    /// - [`Error::NonFinite`] naming the first palette and joint whose input (pose matrix or instance transform) is
    ///   not finite, or whose product overflowed.
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let binding = self.binding;
        let (j, s) = (binding.joint_count, binding.skin_joint_count());
        let palettes = self.palette_count();
        if s == 0 || palettes == 0 {
            return Ok(());
        }
        let pose_count = self.poses.len() / j;
        if let Some((palette, &pose)) = self
            .pose_of
            .iter()
            .enumerate()
            .find(|&(_, &p)| p as usize >= pose_count)
        {
            return Err(Error::PoseOutOfRange {
                palette,
                pose: pose as usize,
                pose_count,
            });
        }
        let output = &mut self.output[..palettes * s];
        let (poses, transforms, stream) = (self.poses, self.transforms, self.streaming);
        let fence = F::STREAMS && stream;
        let ok = if self.pose_of.is_empty() {
            for_each_palette(output, s, fence, |p, palette| {
                let pose = &poses[p * j..(p + 1) * j];
                match transforms.get(p) {
                    None => write_palette(binding, pose, palette, stream),
                    Some(t) => write_palette_folded(binding, pose, t, palette, stream),
                }
            })
        } else {
            let cache = &mut *self.cache;
            let rows = &mut cache.rows[..pose_count * s];
            let aux = &mut bytemuck::cast_slice_mut::<AuxLine, f32>(&mut cache.aux)[..pose_count * cache_aux_floats(s)];
            let max_abs = &mut cache.max_abs[..pose_count];
            let cached = rows
                .par_chunks_mut(s)
                .zip(aux.par_chunks_mut(cache_aux_floats(s)))
                .zip(max_abs.par_iter_mut())
                .enumerate()
                .with_min_len(4)
                .map(|(p, ((rows, aux), max_abs))| {
                    let acc;
                    (acc, *max_abs) = F::prepare_pose(binding, &poses[p * j..(p + 1) * j], rows, aux);
                    acc
                })
                .reduce(|| Vec4::ZERO, |a, b| a + b)
                .is_finite();
            let (rows, aux, max_abs) = (&*rows, &*aux, &*max_abs);
            let aux_stride = cache_aux_floats(s);
            let pose_of = self.pose_of;
            let window = window_for(palettes);
            cached
                && output
                    .par_chunks_mut(window * s)
                    .enumerate()
                    .map(|(c, chunk)| {
                        let first = c * window;
                        let n = chunk.len() / s;
                        let ts = transforms.get(first..first + n).unwrap_or(&[]);
                        // The f16 formats never read the translations of `ts` (they are their origins): check them
                        // here.
                        let origins = ts.iter().fold(Vec4::ZERO, |a, t| a + poison(t.translation.extend(0.0)));
                        let mut order = [0u16; FLATTEN_WINDOW];
                        let order = group_by_pose(&pose_of[first..first + n], &mut order);
                        let poses = SharedPoses {
                            rows,
                            rows_stride: if F::READS_CACHED_ROWS { s } else { 0 },
                            aux,
                            max_abs,
                            pose_of: &pose_of[first..first + n],
                            aux_stride,
                        };
                        let acc = F::encode_cached_run(chunk, s, order, &poses, ts, stream);
                        if fence {
                            stream_fence();
                        }
                        acc + origins
                    })
                    .reduce(|| Vec4::ZERO, |a, b| a + b)
                    .is_finite()
        };
        if ok { Ok(()) } else { Err(self.first_non_finite()) }
    }

    /// The cold path of a failed run: finds the first palette and joint whose input or result is not finite.
    #[cold]
    fn first_non_finite(&self) -> Error {
        let j = self.binding.joint_count;
        for palette in 0..self.palette_count() {
            let pose = self.pose_of.get(palette).map_or(palette, |&p| p as usize);
            let transform = self.transforms.get(palette);
            if transform.is_some_and(|t| !t.is_finite()) {
                return Error::NonFinite {
                    what: "instance transform of palette",
                    index: palette,
                    joint: None,
                };
            }
            for (k, &joint) in self.binding.skin_joints.iter().enumerate() {
                let m = &self.poses[pose * j + usize::from(joint)];
                if !m.is_finite() {
                    return Error::NonFinite {
                        what: "model-space pose",
                        index: pose,
                        joint: Some(usize::from(joint)),
                    };
                }
                let skin = *m * self.binding.inverse_bind[k];
                let skin = transform.map_or(skin, |t| *t * skin);
                if !skin.is_finite() {
                    return Error::NonFinite {
                        what: "skinning matrix (the product overflowed) of palette",
                        index: palette,
                        joint: Some(k),
                    };
                }
            }
        }
        // The parallel pass saw a non-finite value that the scalar rescan does not reproduce: this would be a bug.
        Error::NonFinite {
            what: "flatten output (not reproduced by the rescan)",
            index: 0,
            joint: None,
        }
    }
}

/// Runs `write(p, palette)` for every palette `p` of `out` (`s` entries each), in parallel over chunks of
/// [`FLATTEN_CHUNK`] palettes, fencing each chunk's streaming stores when `fence` is set; returns whether the sum of
/// the poison values `write` returned is finite.
#[inline(always)]
fn for_each_palette<T: Send>(
    out: &mut [T],
    s: usize,
    fence: bool,
    write: impl Fn(usize, &mut [T]) -> Vec4 + Sync,
) -> bool {
    out.par_chunks_mut(FLATTEN_CHUNK * s)
        .enumerate()
        .map(|(c, chunk)| {
            let mut acc = Vec4::ZERO;
            for (i, palette) in chunk.chunks_exact_mut(s).enumerate() {
                acc += write(c * FLATTEN_CHUNK + i, palette);
            }
            if fence {
                stream_fence();
            }
            acc
        })
        .reduce(|| Vec4::ZERO, |a, b| a + b)
        .is_finite()
}

/// `0` for a finite vector and NaN otherwise: `inf × 0` and `NaN × 0` are NaN. Summing these over a pass gives a
/// finiteness check of every value at the cost of one multiply and one add per row.
#[inline(always)]
pub(crate) fn poison(v: Vec4) -> Vec4 {
    v * 0.0
}

/// The largest absolute value among the elements of `rows`; meaningful for finite rows only (the poison sum
/// reports the others, and the job then encodes nothing from the cache).
#[inline]
pub(crate) fn max_abs_of(rows: &[[Vec4; 3]]) -> f32 {
    // One running maximum per row, so that the loop is three short chains of `max` rather than one long one.
    let m = rows.iter().fold([Vec4::ZERO; 3], |m, r| {
        [m[0].max(r[0].abs()), m[1].max(r[1].abs()), m[2].max(r[2].abs())]
    });
    m[0].max(m[1]).max(m[2]).max_element()
}

/// The rows of `m × ibm`, given the rows of `ibm`: row `r` is `Σₖ m[r][k] · ibm_row_k + (0, 0, 0, m[r][3])`.
/// This needs one splat per element of `m` (12), 9 multiplies and 9 adds, and no transpose.
#[inline(always)]
fn skin_matrix_rows(m: &Affine3A, ibm: &[Vec4; 3]) -> [Vec4; 3] {
    // Written out row by row: an `[0, 1, 2].map` closure here was left out of line, one call per row.
    #[inline(always)]
    fn row(x: f32, y: f32, z: f32, t: f32, ibm: &[Vec4; 3]) -> Vec4 {
        (Vec4::splat(x) * ibm[0] + Vec4::splat(y) * ibm[1]) + (Vec4::splat(z) * ibm[2] + Vec4::new(0.0, 0.0, 0.0, t))
    }
    let (c, t) = (&m.matrix3, m.translation);
    [
        row(c.x_axis.x, c.y_axis.x, c.z_axis.x, t.x, ibm),
        row(c.x_axis.y, c.y_axis.y, c.z_axis.y, t.y, ibm),
        row(c.x_axis.z, c.y_axis.z, c.z_axis.z, t.z, ibm),
    ]
}

/// Encodes `out.len()` entries whose rows `row(k)` computes, with translation origin `origin`; returns the poison
/// sum of the rows.
#[inline(always)]
fn emit<F: PaletteFormat>(out: &mut [F], origin: Vec3A, stream: bool, row: impl FnMut(usize) -> [Vec4; 3]) -> Vec4 {
    F::encode_each(out, origin, stream, row)
}

/// Writes one model-space palette (no instance transform, origin zero); returns the poison sum of its rows.
#[inline(always)]
fn write_palette<F: PaletteFormat>(binding: &PaletteBinding, pose: &[Affine3A], out: &mut [F], stream: bool) -> Vec4 {
    let (joints, ibms) = (
        &binding.skin_joints[..out.len()],
        &binding.inverse_bind_rows[..out.len()],
    );
    emit(out, Vec3A::ZERO, stream, |k| {
        skin_matrix_rows(&pose[usize::from(joints[k])], &ibms[k])
    })
}

/// Writes one palette with its instance transform folded in; returns the poison sum of its rows.
#[inline(always)]
fn write_palette_folded<F: PaletteFormat>(
    binding: &PaletteBinding,
    pose: &[Affine3A],
    t: &Affine3A,
    out: &mut [F],
    stream: bool,
) -> Vec4 {
    let fold = Fold::new(t);
    let (joints, ibms) = (
        &binding.skin_joints[..out.len()],
        &binding.inverse_bind_rows[..out.len()],
    );
    emit(out, t.translation, stream, |k| {
        fold.apply(&skin_matrix_rows(&pose[usize::from(joints[k])], &ibms[k]))
    })
}

/// Writes the skinning matrices of one pose, in row form, into `rows` for the [`FlattenCache`]; returns their poison
/// sum and their largest absolute value ([`max_abs_of`]). With AVX-512F where the CPU has it (one joint per 512-bit
/// register, the same bits as [`skin_rows_into`], tested), the portable path otherwise.
#[inline]
fn cached_rows(binding: &PaletteBinding, pose: &[Affine3A], rows: &mut [[Vec4; 3]]) -> (Vec4, f32) {
    #[cfg(target_arch = "x86_64")]
    if crate::formats::skin_rows_simd_available() {
        let n = rows.len();
        return crate::formats::skin_rows_simd(pose, &binding.skin_joints[..n], &binding.inverse_bind_rows[..n], rows);
    }
    let acc = skin_rows_into(binding, pose, rows);
    (acc, max_abs_of(rows))
}

/// Writes the skinning matrices of one pose, in row form, into `rows`; returns their poison sum.
#[inline(always)]
fn skin_rows_into(binding: &PaletteBinding, pose: &[Affine3A], rows: &mut [[Vec4; 3]]) -> Vec4 {
    skin_rows_with(pose, &binding.skin_joints, &binding.inverse_bind_rows, rows)
}

/// [`skin_rows_into`] from the skin's joints and inverse bind rows: `rows[k]` gets `pose[joints[k]] × ibm[k]`.
#[inline(always)]
pub(crate) fn skin_rows_with(pose: &[Affine3A], joints: &[u16], ibms: &[[Vec4; 3]], rows: &mut [[Vec4; 3]]) -> Vec4 {
    let mut acc = Vec4::ZERO;
    for ((r, &joint), ibm) in rows.iter_mut().zip(joints).zip(ibms) {
        *r = skin_matrix_rows(&pose[usize::from(joint)], ibm);
        acc += poison(r[0]) + poison(r[1]) + poison(r[2]);
    }
    acc
}

/// Encodes cached rows as they are (no instance transform, origin zero).
#[inline(always)]
pub(crate) fn copy_rows<F: PaletteFormat>(rows: &[[Vec4; 3]], out: &mut [F], stream: bool) -> Vec4 {
    let rows = &rows[..out.len()];
    emit(out, Vec3A::ZERO, stream, |k| rows[k])
}

/// Encodes cached rows with the instance transform `t` folded in, with fused multiply-adds
/// ([`Fold::apply_fused`], [`Fold::apply_relative`]); returns their poison sum.
///
/// This is the plain twin of the SIMD kernels in `formats/fold_simd.rs`, which compute the same fused products in
/// the same order and so give the same bits. (The uncached path, [`write_palette_folded`], keeps separate
/// multiplies and adds, [`Fold::apply`]: without FMA in the compiled target, a fused multiply-add is a call, which
/// that path would pay on every joint. The two differ by at most the roundings of a few products.)
#[inline(always)]
pub(crate) fn fold_rows<F: PaletteFormat>(t: &Affine3A, rows: &[[Vec4; 3]], out: &mut [F], stream: bool) -> Vec4 {
    let fold = Fold::new(t);
    let rows = &rows[..out.len()];
    if F::RELATIVE {
        // Relative to the origin `t.translation` straight away: the translation is never added and subtracted.
        emit(out, Vec3A::ZERO, stream, |k| fold.apply_relative(&rows[k]))
    } else {
        emit(out, t.translation, stream, |k| fold.apply_fused(&rows[k]))
    }
}

/// An instance transform `T`, prepared to multiply matrices given as rows: row `r` of `T × S` is
/// `T[r][0] S₀ + T[r][1] S₁ + T[r][2] S₂ + (0, 0, 0, T[r][3])`, so each element of `T` is splat once per palette
/// and each entry then costs 9 multiplies and 9 adds (or 9 fused multiply-adds), with no shuffles.
struct Fold {
    splat: [[Vec4; 3]; 3],
    translation: [Vec4; 3],
}

impl Fold {
    #[inline(always)]
    fn new(t: &Affine3A) -> Self {
        let m = t.matrix3;
        let element = |r: usize, c: usize| Vec4::splat([m.x_axis, m.y_axis, m.z_axis][c][r]);
        Self {
            splat: [0, 1, 2].map(|r| [element(r, 0), element(r, 1), element(r, 2)]),
            translation: [0, 1, 2].map(|r| Vec4::new(0.0, 0.0, 0.0, t.translation[r])),
        }
    }

    /// `T × S` with `T`'s translation left out: the rows relative to the origin `T.translation`, each
    /// `T[r][0]·S₀ + (T[r][1]·S₁ + T[r][2]·S₂)` with the two outer operations fused (one rounding each).
    #[inline(always)]
    fn apply_relative(&self, s: &[Vec4; 3]) -> [Vec4; 3] {
        let row = |e: &[Vec4; 3]| e[0].mul_add(s[0], e[1].mul_add(s[1], e[2] * s[2]));
        [row(&self.splat[0]), row(&self.splat[1]), row(&self.splat[2])]
    }

    /// `T × S`, each row `T[r][0]·S₀ + (T[r][1]·S₁ + (T[r][2]·S₂ + (0, 0, 0, t_r)))` as three fused multiply-adds.
    #[inline(always)]
    fn apply_fused(&self, s: &[Vec4; 3]) -> [Vec4; 3] {
        let row = |e: &[Vec4; 3], t: Vec4| e[0].mul_add(s[0], e[1].mul_add(s[1], e[2].mul_add(s[2], t)));
        [
            row(&self.splat[0], self.translation[0]),
            row(&self.splat[1], self.translation[1]),
            row(&self.splat[2], self.translation[2]),
        ]
    }

    /// `T × S`, each row `(T[r][0]·S₀ + T[r][1]·S₁) + (T[r][2]·S₂ + (0, 0, 0, t_r))` with separate multiplies and
    /// adds: the uncached path's order.
    #[inline(always)]
    fn apply(&self, s: &[Vec4; 3]) -> [Vec4; 3] {
        let row = |e: &[Vec4; 3], t: Vec4| (e[0] * s[0] + e[1] * s[1]) + (e[2] * s[2] + t);
        [
            row(&self.splat[0], self.translation[0]),
            row(&self.splat[1], self.translation[1]),
            row(&self.splat[2], self.translation[2]),
        ]
    }
}
