//! The plain twin of a step's packing, which the tests compare the packet with: written from the documented
//! contracts one instance at a time, with the checked record constructor, the pool's plain mapping twin
//! (`PosePool::map_instances_scalar`, one instance per call) and
//! `skin_pack::palette_from_model`. It allocates and is slow; never call it per frame in a game.

use anim_pose::{LocalToModelJob, SamplingJob, SlotRef, SoaTransform, crossfade, num_soa_joints};
use crowd_cull::Tier;
use glam::Affine3A;
use skin_pack::{PaletteFormat, palette_from_model};

use crate::anim::clip_time;
use crate::packet::{PacketDraw, RecordKind};
use crate::record::{InstanceRecord, RecordAnim};
use crate::{CrowdFrame, Error, Result};

/// What a step should have packed, recomputed plainly from the frame's state after the step.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceFrame {
    /// One record per visible instance, in visible-list order.
    pub records: Vec<InstanceRecord>,
    /// The draws.
    pub draws: Vec<PacketDraw>,
    /// Each live pool slot with its skinning palette (instance space).
    pub pool_palettes: Vec<(u32, Vec<Affine3A>)>,
    /// Each unique instance's skinning palette (instance space), in record order.
    pub unique_palettes: Vec<Vec<Affine3A>>,
}

/// Recomputes the last step's packet contents from `frame`'s state (the store, the culling output, the pool).
///
/// Pooled instances without a crossfade map `(clip, clip time)` from their state; those in a crossfade map the
/// track and time the step assigned (`CrowdFrame::pool_inputs`), since the bucket a request returns depends on
/// the pool's bucket state.
///
/// # Errors
///
/// The errors of the jobs it runs, which a frame that stepped without error does not cause.
pub fn reference_frame<F: PaletteFormat>(frame: &CrowdFrame<F>) -> Result<ReferenceFrame> {
    let store = frame.store();
    let slots = store.group_slots(frame.group())?;
    let cull = frame.cull_output();
    let pool = frame.pool();
    let character = frame.character();
    let skeleton = character.skeleton();
    let s = character.binding().skin_joint_count();
    let now = frame.anim_time();
    let (tracks, times) = frame.pool_inputs();
    let max_unique = frame.settings().max_unique;
    let root = Affine3A::from_mat4(skeleton.root_transform);

    let mut out = ReferenceFrame {
        records: Vec::new(),
        draws: Vec::new(),
        pool_palettes: Vec::new(),
        unique_palettes: Vec::new(),
    };
    let soa = num_soa_joints(skeleton.joint_count());
    let rest = skeleton.rest_pose_soa();
    for d in cull.draws() {
        let list = cull.list(frame.group(), d.lod, d.tier);
        let take = if d.tier == Tier::Unique {
            list.len().min(max_unique - out.unique_palettes.len())
        } else {
            0
        };
        for (k, &slot) in list.iter().enumerate() {
            let i = d.first_instance as usize + k;
            let slot = slot as usize;
            let anim = slots.anim[slot];
            let t = clip_time(&anim, now);
            let record_anim = if k < take {
                let palette = (out.unique_palettes.len() * s) as u32;
                let mut a = vec![SoaTransform::IDENTITY; soa];
                let mut local = vec![SoaTransform::IDENTITY; soa];
                match anim.fade_target {
                    None => SamplingJob {
                        clip: &character.clips()[anim.clip as usize],
                        time: t,
                        output: &mut local,
                    }
                    .run()?,
                    Some(to) => {
                        let mut b = vec![SoaTransform::IDENTITY; soa];
                        let t_from = pool.synced_time(to as u16, anim.clip as u16, t)?;
                        SamplingJob {
                            clip: &character.clips()[anim.clip as usize],
                            time: t_from,
                            output: &mut a,
                        }
                        .run()?;
                        SamplingJob {
                            clip: &character.clips()[to as usize],
                            time: t,
                            output: &mut b,
                        }
                        .run()?;
                        crossfade(&a, &b, anim.fade_weight, &rest, &mut local)?;
                    }
                }
                let mut model = vec![Affine3A::IDENTITY; skeleton.joint_count()];
                LocalToModelJob {
                    skeleton,
                    input: &local,
                    output: &mut model,
                    from: None,
                    root: None,
                }
                .run()?;
                let mut entries = vec![Affine3A::IDENTITY; s];
                palette_from_model(skeleton, &model, Some(&root), &mut entries)?;
                out.unique_palettes.push(entries);
                RecordAnim::Unique { palette }
            } else {
                let (track, time) = match anim.fade_target {
                    None => (anim.clip as u16, t),
                    Some(_) => (tracks[i], times[i]),
                };
                let mut r = [SlotRef::default()];
                pool.map_instances_scalar(&[track], &[time], &mut r)?;
                let r = r[0];
                RecordAnim::Pooled {
                    slots: [r.slot_a, r.slot_b],
                    fraction: r.fraction,
                }
            };
            out.records.push(InstanceRecord::new(
                slots.position[slot],
                slots.rotation[slot],
                slots.scale[slot],
                record_anim,
                slots.custom[slot],
            )?);
        }
        let draw = |kind, first_instance, instance_count| PacketDraw {
            lod: d.lod,
            tier: d.tier,
            kind,
            first_instance,
            instance_count,
        };
        if d.tier == Tier::Unique {
            out.draws.push(draw(RecordKind::Unique, d.first_instance, take as u32));
            out.draws.push(draw(
                RecordKind::Pooled,
                d.first_instance + take as u32,
                d.instance_count - take as u32,
            ));
        } else {
            out.draws
                .push(draw(RecordKind::Pooled, d.first_instance, d.instance_count));
        }
    }
    for range in pool.live_slots() {
        for slot in range.first_slot..range.first_slot + range.slot_count {
            let model = pool.slot_model(slot as usize).ok_or(Error::Slot {
                what: "reference pool",
                slot,
                slots: pool.slot_count(),
            })?;
            let mut palette = vec![Affine3A::IDENTITY; s];
            palette_from_model(skeleton, model, Some(&root), &mut palette)?;
            out.pool_palettes.push((slot, palette));
        }
    }
    Ok(out)
}
