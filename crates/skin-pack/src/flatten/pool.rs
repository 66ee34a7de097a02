//! [`PoolFlattenJob`]: the skinning palettes of a pose pool's live slots, slot-major.

use anim_pose::PosePool;

use super::{FlattenCache, FlattenJob, PaletteBinding};
use crate::{Error, PaletteEntry, PaletteFormat, Result};

/// Writes the skinning palette of every live slot of `pool` ([`PosePool::live_slots`]: the clip slots and the
/// active crossfade buckets) into `output`, slot-major: slot `s`'s palette is
/// `output[`[`PaletteBinding::palette_entries`]`(s)]`, `skin_joint_count` entries from `s * skin_joint_count`
/// (not `s * joint_count`, the stride of [`PosePool::palettes`]: the two differ when the skeleton has joints
/// without a skin index). Entries of the slots that are not live are left as they are, so a renderer uploads only
/// the live ranges.
///
/// The palettes are in instance space (the skeleton's root transform folded in, no instance transform, f16 origin
/// zero); the renderer interpolates two slot palettes per pooled instance and places them with its record. Run it after [`PosePool::update`]. Never allocates.
#[derive(Debug)]
pub struct PoolFlattenJob<'a, F: PaletteFormat = PaletteEntry> {
    /// The skin of the pool's skeleton, prepared once.
    pub binding: &'a PaletteBinding,
    /// The pool, after its update.
    pub pool: &'a PosePool,
    /// At least `pool.slot_count() * binding.skin_joint_count()` entries.
    pub output: &'a mut [F],
    /// Streaming stores where a kernel writes (see [`FlattenJob::streaming`]).
    pub streaming: bool,
}

impl<F: PaletteFormat> PoolFlattenJob<'_, F> {
    /// Checks, in O(1), that the binding is for the pool's skeleton (the same joint count) and that `output`
    /// holds every slot's palette.
    ///
    /// # Errors
    ///
    /// [`Error::BufferSize`] naming the pool's joints or the output.
    pub fn validate(&self) -> Result<()> {
        if self.pool.joint_count() != self.binding.joint_count() {
            return Err(Error::BufferSize {
                what: "pose pool joints (the binding's skeleton joints)",
                expected: self.binding.joint_count(),
                actual: self.pool.joint_count(),
            });
        }
        let needed = self.pool.slot_count() * self.binding.skin_joint_count();
        if self.output.len() < needed {
            return Err(Error::BufferSize {
                what: "pool flatten output (slots × skin joints)",
                expected: needed,
                actual: self.output.len(),
            });
        }
        Ok(())
    }

    /// Writes the live slots' palettes.
    ///
    /// # Errors
    ///
    /// The errors of [`PoolFlattenJob::validate`], before anything is written, and [`Error::NonFinite`] (from
    /// [`FlattenJob`], naming the palette within its range of live slots) when a slot's pose is not finite.
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let (j, s) = (self.binding.joint_count(), self.binding.skin_joint_count());
        let palettes = self.pool.palettes();
        for range in self.pool.live_slots() {
            let slots = range.first_slot as usize..(range.first_slot + range.slot_count) as usize;
            FlattenJob {
                binding: self.binding,
                poses: &palettes[slots.start * j..slots.end * j],
                pose_of: &[],
                transforms: &[],
                cache: &mut FlattenCache::default(),
                output: &mut self.output[slots.start * s..slots.end * s],
                streaming: self.streaming,
            }
            .run()?;
        }
        Ok(())
    }
}
