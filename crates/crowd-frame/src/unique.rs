//! The unique tier: each unique instance's own pose, sampled, crossfaded and converted to model space.

use anim_pose::{LocalToModelJob, PosePool, SamplingJob, SoaTransform, crossfade, num_soa_joints};
use crowd_cull::AnimState;
use glam::Affine3A;
use rayon::prelude::*;

use crate::anim::clip_time;
use crate::character::Character;
use crate::{Error, Result};

/// What [`animate_unique`] reads.
pub(crate) struct UniqueInput<'a> {
    /// The character.
    pub character: &'a Character,
    /// The pose pool (for the phase sync of crossfades).
    pub pool: &'a PosePool,
    /// The skeleton's rest pose, SoA.
    pub rest: &'a [SoaTransform],
    /// The crowd group's per-slot animation states.
    pub anim: &'a [AnimState],
    /// The store slot of each unique instance.
    pub slots: &'a [u32],
    /// The clock.
    pub now: f32,
}

/// Writes unique instance `k`'s model-space pose to `model[k * joint_count..]`, in parallel, using three SoA
/// poses of `local` per instance as scratch (the clip, the fade target, the blend). A crossfade blends the source
/// clip at the target's synced phase with the target, as the pool's buckets do.
///
/// # Errors
///
/// The jobs' errors, which the frame's checked states do not cause.
pub(crate) fn animate_unique(
    input: &UniqueInput<'_>,
    local: &mut [SoaTransform],
    model: &mut [Affine3A],
) -> Result<()> {
    let n = input.slots.len();
    if n == 0 {
        return Ok(());
    }
    let skeleton = input.character.skeleton();
    let clips = input.character.clips();
    let (j, soa) = (skeleton.joint_count(), num_soa_joints(skeleton.joint_count()));
    let (pool, rest, now) = (input.pool, input.rest, input.now);
    model[..n * j]
        .par_chunks_mut(j)
        .zip(local[..n * 3 * soa].par_chunks_mut(3 * soa))
        .zip(input.slots.par_iter())
        .try_for_each(|((model, local), &slot)| {
            let anim = &input.anim[slot as usize];
            let t = clip_time(anim, now);
            let (a, rest_local) = local.split_at_mut(soa);
            let (b, blend) = rest_local.split_at_mut(soa);
            let input: &[SoaTransform] = match anim.fade_target {
                None => {
                    SamplingJob {
                        clip: &clips[anim.clip as usize],
                        time: t,
                        output: a,
                    }
                    .run()?;
                    a
                }
                Some(to) => {
                    let t_from = pool.synced_time(to as u16, anim.clip as u16, t)?;
                    SamplingJob {
                        clip: &clips[anim.clip as usize],
                        time: t_from,
                        output: a,
                    }
                    .run()?;
                    SamplingJob {
                        clip: &clips[to as usize],
                        time: t,
                        output: b,
                    }
                    .run()?;
                    let w = anim.fade_weight;
                    crossfade(a, b, w, rest, blend)?;
                    blend
                }
            };
            LocalToModelJob {
                skeleton,
                input,
                output: model,
                from: None,
                root: None,
            }
            .run()?;
            Ok::<(), Error>(())
        })
}
