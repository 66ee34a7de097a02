//! Animated bounds: the union of a mesh's skinned positions over every frame of a clip, the per-clip box that
//! `crowd-cull` culls with, so that a waving arm is never culled.

use anim_pose::{Aabb, LocalToModelJob, RuntimeClip, SamplingJob, Skeleton, SkinnedMesh, SoaTransform};
use glam::{Affine3A, Vec3};

use crate::{Error, Result, palette_from_model, skin_positions_reference};

/// Sub-steps per runtime frame at which [`animated_bounds`] skins: the frames themselves and the midpoints
/// between them, where a vertex on a rotating joint can bulge past the chord between two frames.
pub const BOUNDS_SUBSTEPS: usize = 2;

/// The box around every skinned position of `meshes` at every frame of `clip` and at the midpoints between frames,
/// in instance space: the skeleton's model space under its root transform (`Skeleton::root_transform`), the space
/// of [`crate::FlattenJob`]'s palettes without an instance transform, which instances place with their own.
///
/// `crowd_cull::GroupDesc::clip_bounds` takes the result as `crowd_cull::Aabb::new(b.min, b.max)`.
///
/// Between two sampled times a vertex moves by at most `clip`'s per-step motion; the box is exact at the sampled
/// times, and `tests/animated_bounds.rs` checks it against random times with the margin it documents.
/// Allocates its scratch: it runs at setup, once per (clip, mesh set), not per frame. An empty mesh list gives [`Aabb::EMPTY`].
///
/// # Errors
///
/// - [`Error::BufferSize`] when `clip` animates a different number of joints than `skeleton` has;
/// - [`Error::JointOutOfRange`] when a mesh vertex names a joint outside the skeleton's skin;
/// - the errors of [`palette_from_model`] for a skeleton whose skin does not validate.
pub fn animated_bounds(skeleton: &Skeleton, clip: &RuntimeClip, meshes: &[&SkinnedMesh]) -> Result<Aabb> {
    let joints = skeleton.joint_count();
    if clip.joint_count() != joints {
        return Err(Error::BufferSize {
            what: "joints of the runtime clip (one per skeleton joint)",
            expected: joints,
            actual: clip.joint_count(),
        });
    }
    let root = Affine3A::from_mat4(skeleton.root_transform);
    let mut local = vec![SoaTransform::IDENTITY; clip.num_soa_joints()];
    let mut model = vec![Affine3A::IDENTITY; joints];
    let mut palette = vec![Affine3A::IDENTITY; skeleton.skin_joint_count()];
    let mut positions = Vec::new();
    let mut bounds = Aabb::EMPTY;
    // Every frame time, and the times between frames at `1 / BOUNDS_SUBSTEPS` of the interval, whether the frames
    // are uniform or a frame-time table.
    let steps = (clip.frame_count().max(2) - 1) * BOUNDS_SUBSTEPS;
    for step in 0..=steps {
        let (frame, part) = (step / BOUNDS_SUBSTEPS, step % BOUNDS_SUBSTEPS);
        let (t0, t1) = (clip.frame_time(frame), clip.frame_time(frame + 1));
        let time = t0 + (t1 - t0) * part as f32 / BOUNDS_SUBSTEPS as f32;
        // Both jobs only fail on sizes, which are right by construction here, or on a non-finite time.
        let sized = |_| Error::BufferSize {
            what: "pose buffers of animated_bounds",
            expected: joints,
            actual: joints,
        };
        SamplingJob {
            clip,
            time,
            output: &mut local,
        }
        .run()
        .map_err(sized)?;
        LocalToModelJob {
            skeleton,
            input: &local,
            output: &mut model,
            from: None,
            root: None,
        }
        .run()
        .map_err(sized)?;
        palette_from_model(skeleton, &model, Some(&root), &mut palette)?;
        for mesh in meshes {
            positions.resize(mesh.positions.len(), Vec3::ZERO);
            skin_positions_reference(&palette, &mesh.positions, &mesh.joints, &mesh.weights, &mut positions)?;
            for &p in &positions {
                bounds = bounds.including(p);
            }
        }
    }
    Ok(bounds)
}
