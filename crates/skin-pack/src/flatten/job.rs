//! [`FlattenJob`]: writes the palettes of many instances in GPU layout, in parallel, without allocating.

use glam::{Affine3A, Vec3A, Vec4};
use rayon::prelude::*;

use super::cache::{CachedPose, FLATTEN_WINDOW, FlattenCache, group_by_pose, max_abs_of};
use super::{PaletteBinding, poison};
use crate::formats::row_fold::RowFold;
use crate::kernels::{self, Tier};
use crate::{Error, PaletteEntry, PaletteFormat, Result};

/// Palettes per rayon task in [`FlattenJob::run`] when each palette reads its own pose, and the fewest per task on
/// the shared-pose path (see [`FLATTEN_WINDOW`]).
///
/// One palette of 64 joints in f32 is 3 KiB; 16 palettes keep rayon's per-task overhead small while a
/// 10,000-instance crowd still splits into hundreds of tasks.
pub const FLATTEN_CHUNK: usize = 16;

/// The palettes per rayon task of the shared-pose path for a job of `palettes` palettes on the current rayon pool:
/// see [`FLATTEN_WINDOW`].
fn window_for(palettes: usize) -> usize {
    palettes
        .div_ceil(4 * rayon::current_num_threads())
        .clamp(FLATTEN_CHUNK, FLATTEN_WINDOW)
}

/// Writes skinning palettes in GPU layout: for palette `i` and skin joint `k`,
/// `output[i × S + k] = encode(T_i × root × model[P_i × J + skin_joints[k]] × inverse_bind[k])`,
/// where `S` is the skin joint count, `J` the skeleton joint count, `P_i` the pose palette `i` reads, `T_i` its
/// instance transform and `root` the skeleton's root transform ([`PaletteBinding::root`], identity for most
/// models): palettes are in the space that an instance transform places, as [`crate::animated_bounds`] is.
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
/// **Tiers.** Shared poses are encoded with the AVX2 + FMA + F16C kernels where the CPU has them and the
/// portable twins otherwise (the `portable` feature forces them), with the same bits. [`crate::QtF16`] composes the instance transform with each pose joint's cached decomposition
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
    /// Per-pose skinning matrices, used when `pose_of` is given; otherwise pass `&mut FlattenCache::default()`,
    /// which is empty and allocates nothing.
    pub cache: &'a mut FlattenCache<F>,
    /// The palettes, palette-major: `output[i × S + k]`.
    pub output: &'a mut [F],
    /// Write with non-temporal (streaming) stores where a SIMD kernel writes (shared poses with the SIMD tier, an
    /// output aligned to 16 bytes, or to 64 for [`crate::QtF16`]), and fence them before `run` returns. This suits
    /// large crowds written to upload memory that the CPU does not read back; `cargo xtask bench` measures both.
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
        let tier = Tier::detect();
        let ok = if self.pose_of.is_empty() {
            output
                .par_chunks_mut(FLATTEN_CHUNK * s)
                .enumerate()
                .map(|(c, chunk)| {
                    let mut acc = Vec4::ZERO;
                    for (i, palette) in chunk.chunks_exact_mut(s).enumerate() {
                        let p = c * FLATTEN_CHUNK + i;
                        acc += write_palette(tier, binding, &poses[p * j..(p + 1) * j], transforms.get(p), palette);
                    }
                    acc
                })
                .reduce(|| Vec4::ZERO, |a, b| a + b)
                .is_finite()
        } else {
            let (rows, aux, max_abs) = self.cache.parts(pose_count, s);
            let aux_stride = F::cached_floats(s);
            // Each pose's skinning rows, their largest element, and the format's own data from them.
            let prepare = |p: usize, rows: &mut [[Vec4; 3]], aux: &mut [f32], max_abs: &mut f32| {
                let acc = binding.skin_rows(&poses[p * j..(p + 1) * j], rows);
                *max_abs = max_abs_of(rows);
                if acc == Vec4::ZERO {
                    F::prepare(rows, aux);
                }
                acc
            };
            let rows_and_max = rows.par_chunks_mut(s).zip(max_abs.par_iter_mut()).with_min_len(4);
            let cached = if aux_stride == 0 {
                rows_and_max
                    .enumerate()
                    .map(|(p, (rows, max_abs))| prepare(p, rows, &mut [], max_abs))
                    .reduce(|| Vec4::ZERO, |a, b| a + b)
            } else {
                rows_and_max
                    .zip(aux.par_chunks_mut(aux_stride))
                    .enumerate()
                    .map(|(p, ((rows, max_abs), aux))| prepare(p, rows, aux, max_abs))
                    .reduce(|| Vec4::ZERO, |a, b| a + b)
            }
            .is_finite();
            let (rows, aux, max_abs) = (&*rows, &*aux, &*max_abs);
            let pose_of = self.pose_of;
            let window = window_for(palettes);
            cached
                && output
                    .par_chunks_mut(window * s)
                    .enumerate()
                    .map(|(c, chunk)| {
                        let first = c * window;
                        let n = chunk.len() / s;
                        let (pose_of, ts) = (&pose_of[first..first + n], transforms.get(first..first + n));
                        // The f16 formats never read the translations of `ts` (they are their origins): check them
                        // here.
                        let origins = ts
                            .unwrap_or(&[])
                            .iter()
                            .fold(Vec4::ZERO, |a, t| a + poison(t.translation.extend(0.0)));
                        let mut order = [0u16; FLATTEN_WINDOW];
                        let mut acc = origins;
                        let mut encode = |i: usize, fold: Option<&F::Fold>| {
                            let p = pose_of[i] as usize;
                            let pose = CachedPose {
                                rows: &rows[p * s..(p + 1) * s],
                                aux: &aux[p * aux_stride..(p + 1) * aux_stride],
                                max_abs: max_abs[p],
                            };
                            F::encode_cached(tier, pose, fold, &mut chunk[i * s..(i + 1) * s], stream)
                        };
                        // Four palettes at a time, so that their instance transforms are prepared together.
                        for ids in group_by_pose(pose_of, &mut order).chunks(4) {
                            let Some(ts) = ts else {
                                for &i in ids {
                                    acc += encode(usize::from(i), None);
                                }
                                continue;
                            };
                            let at = |k: usize| ids.get(k).map_or(&Affine3A::IDENTITY, |&i| &ts[usize::from(i)]);
                            let folds = F::folds([at(0), at(1), at(2), at(3)]);
                            for (&i, fold) in ids.iter().zip(&folds) {
                                acc += encode(usize::from(i), Some(fold));
                            }
                        }
                        // Every task that may have streamed fences, whatever the format and tier.
                        if stream {
                            kernels::stream_fence();
                        }
                        kernels::assert_fenced();
                        acc
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
                let skin = self.binding.root() * *m * self.binding.inverse_bind[k];
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

/// Writes one palette from its own model-space pose, with its instance transform `t` folded in when given (the
/// f16 origin is then `t`'s translation, zero otherwise); returns the poison sum of its rows.
#[inline(always)]
fn write_palette<F: PaletteFormat>(
    tier: Tier,
    binding: &PaletteBinding,
    pose: &[Affine3A],
    t: Option<&Affine3A>,
    out: &mut [F],
) -> Vec4 {
    match t {
        None => F::encode_rows(tier, out, Vec3A::ZERO, |k| binding.skin_row(pose, k)),
        Some(t) => {
            let fold = RowFold::new(t);
            F::encode_rows(tier, out, t.translation, |k| fold.apply(&binding.skin_row(pose, k)))
        }
    }
}
