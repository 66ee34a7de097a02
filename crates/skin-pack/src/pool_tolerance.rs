//! The number of pose pool slots a clip needs for an error budget in vertex displacement.
//!
//! A pooled instance (see `anim_pose::PosePool`) is drawn with two neighbouring slot palettes, lerped component-wise
//! by its fraction on the GPU. [`slots_for_tolerance`] finds the smallest slot count `K` for which this
//! interpolated pose stays within a distance budget of the exact pose, measured on the skinned mesh.
//! It lives here rather than in `anim-pose` because it skins vertices.

use anim_pose::{LocalToModelJob, RuntimeClip, SamplingJob, Skeleton, SkinnedMesh, SoaTransform};
use glam::{Affine3A, Mat3A, Vec3, Vec3A};

use crate::{palette_from_model, skin_positions_reference};

/// The fractions between two slots at which instances are evaluated, the middle first: the interpolation error
/// peaks near the middle, so a slot count that fails usually fails on the first evaluation.
const FRACTIONS: [f32; 7] = [0.5, 0.375, 0.625, 0.25, 0.75, 0.125, 0.875];

/// The offsets of the slot grid, in slot spacings, at which a looping clip is evaluated.
///
/// Looping slots advance with the pool time, so the grid slides over the clip; two offsets half a spacing apart
/// put slots where the other grid has its worst instances.
const GRID_OFFSETS: [f32; 2] = [0.0, 0.5];

/// The smallest number of pool slots `K` (from 2 to `max_slots`) for which every pooled instance of `clip`, drawn
/// as the component-wise lerp of its two slot palettes, stays within `tolerance` of the exact pose on `mesh`.
///
/// The error of a slot count is the largest distance between a vertex skinned with the interpolated palette and
/// the same vertex skinned with the palette of the runtime clip sampled at the instance's exact time, in the
/// skeleton's world space (`Skeleton::root_transform` applied, so metres for glTF).
/// It is evaluated at 7 fractions of every slot interval, and for looping clips at two grid offsets (the slots at
/// `s * D / K` and at `(s + 1/2) * D / K`); non-looping clips use the fixed slots `s * D / (K - 1)`.
/// The search gallops through `K = 2, 4, 8, ...` to the first count that passes, then bisects below it, so it
/// evaluates `O(log K)` slot counts. It assumes that the error does not grow with `K`; that holds up to the
/// aliasing between the slot spacing and the clip's frames, so a smaller `K` that happens to pass may be missed,
/// but the returned `K` always passes.
///
/// The error falls only as `1 / K` near the frames of a runtime clip: the clip is piecewise linear between
/// frames, and an interpolated pose that straddles a frame cuts the corner. Fast motion (a running character's
/// toes) therefore needs many slots for a millimetre budget.
///
/// With several meshes (a character's body, head and gear), the answer is the largest of theirs: the smallest
/// `K` that keeps every mesh within the budget. No mesh at all needs 2 slots.
///
/// Cost: a setup-time search, to run once per clip at load or offline and keep `K`. Each tried `K` skins each mesh
/// twice per evaluated instance (`7 · K` instances per grid offset, stopping at the first over the budget), so it
/// grows with the vertex count and with the `K` it finds; allocation is limited to `max_slots` palettes and two
/// position buffers per mesh.
///
/// # Errors
///
/// `anim_pose::Error` values, so that they can name the clip and the mesh (this crate's own error type is `Copy`
/// and carries no names):
/// - [`anim_pose::Error::InvalidArgument`] when `tolerance` is not finite and positive or `max_slots < 2`;
/// - [`anim_pose::Error::Invalid`] naming the clip when it is not built for `skeleton` (joint counts differ) or no
///   `K` up to `max_slots` meets the budget (the message gives the error reached);
/// - [`anim_pose::Error::Invalid`] naming the mesh when skinning rejects it (attribute counts, joint indices past
///   the skin).
pub fn slots_for_tolerance(
    skeleton: &Skeleton,
    clip: &RuntimeClip,
    meshes: &[&SkinnedMesh],
    tolerance: f32,
    max_slots: usize,
) -> anim_pose::Result<usize> {
    let mut k = 2;
    for mesh in meshes {
        k = k.max(slots_for_mesh(skeleton, clip, mesh, tolerance, max_slots)?);
    }
    if meshes.is_empty() {
        // The argument errors still apply.
        check_arguments(tolerance, max_slots)?;
    }
    Ok(k)
}

/// [`slots_for_tolerance`]'s arguments: `tolerance` finite and positive, `max_slots` at least 2.
fn check_arguments(tolerance: f32, max_slots: usize) -> anim_pose::Result<()> {
    if !(tolerance.is_finite() && tolerance > 0.0) {
        return Err(anim_pose::Error::InvalidArgument {
            what: "tolerance",
            message: format!("is {tolerance}; it must be finite and positive"),
        });
    }
    if max_slots < 2 {
        return Err(anim_pose::Error::InvalidArgument {
            what: "max_slots",
            message: format!("is {max_slots}; a pool needs at least 2 slots"),
        });
    }
    Ok(())
}

/// [`slots_for_tolerance`] for one mesh.
fn slots_for_mesh(
    skeleton: &Skeleton,
    clip: &RuntimeClip,
    mesh: &SkinnedMesh,
    tolerance: f32,
    max_slots: usize,
) -> anim_pose::Result<usize> {
    check_arguments(tolerance, max_slots)?;
    let clip_object = || format!("clip '{}'", clip.name());
    if clip.joint_count() != skeleton.joint_count() {
        return Err(anim_pose::Error::invalid(
            clip_object(),
            format!(
                "has {} joints, but the skeleton '{}' has {}",
                clip.joint_count(),
                skeleton.name,
                skeleton.joint_count()
            ),
        ));
    }
    let mut eval = Evaluator::new(skeleton, clip, mesh);
    // Skinning the bind pose checks the mesh against the palette once, so that later failures cannot happen.
    eval.skin_exact(0.0, false)?;
    // Gallop up in powers of two to the first slot count that passes, then bisect below it.
    let mut failed = 1usize;
    let mut worst = 0.0f32;
    let mut k = 2usize;
    let passed = loop {
        let error = eval.error_bound(k, tolerance)?;
        if error <= tolerance {
            break Some(k);
        }
        (failed, worst) = (k, error);
        if k == max_slots {
            break None;
        }
        k = (2 * k).min(max_slots);
    };
    if let Some(mut pass) = passed {
        while pass - failed > 1 {
            let mid = failed + (pass - failed) / 2;
            if eval.error_bound(mid, tolerance)? <= tolerance {
                pass = mid;
            } else {
                failed = mid;
            }
        }
        return Ok(pass);
    }
    Err(anim_pose::Error::invalid(
        clip_object(),
        format!(
            "needs more than {max_slots} pool slots for a tolerance of {} mm on mesh '{}': {max_slots} slots still \
             leave {} mm",
            tolerance * 1e3,
            mesh.name,
            worst * 1e3
        ),
    ))
}

/// Scratch buffers and the fixed inputs of [`slots_for_tolerance`].
struct Evaluator<'a> {
    skeleton: &'a Skeleton,
    clip: &'a RuntimeClip,
    mesh: &'a SkinnedMesh,
    world: Affine3A,
    local: Vec<SoaTransform>,
    model: Vec<Affine3A>,
    /// Slot skinning palettes, `skin_joint_count` each, for up to the largest `K` tried so far.
    slots: Vec<Affine3A>,
    /// One interpolated skinning palette.
    lerped: Vec<Affine3A>,
    /// The skinning palette of the exact pose.
    exact: Vec<Affine3A>,
    exact_positions: Vec<Vec3>,
    pooled_positions: Vec<Vec3>,
}

impl<'a> Evaluator<'a> {
    fn new(skeleton: &'a Skeleton, clip: &'a RuntimeClip, mesh: &'a SkinnedMesh) -> Self {
        let joints = skeleton.skin_joint_count();
        Self {
            skeleton,
            clip,
            mesh,
            world: Affine3A::from_mat4(skeleton.root_transform),
            local: vec![SoaTransform::IDENTITY; clip.num_soa_joints()],
            model: vec![Affine3A::IDENTITY; skeleton.joint_count()],
            slots: Vec::new(),
            lerped: vec![Affine3A::IDENTITY; joints],
            exact: vec![Affine3A::IDENTITY; joints],
            exact_positions: vec![Vec3::ZERO; mesh.positions.len()],
            pooled_positions: vec![Vec3::ZERO; mesh.positions.len()],
        }
    }

    /// Writes the skinning palette of the clip at `time` into `out`.
    fn palette(&mut self, time: f32, out: PaletteTarget) -> anim_pose::Result<()> {
        SamplingJob {
            clip: self.clip,
            time,
            output: &mut self.local,
        }
        .run()?;
        LocalToModelJob {
            skeleton: self.skeleton,
            input: &self.local,
            output: &mut self.model,
            from: None,
            root: None,
        }
        .run()?;
        let joints = self.skeleton.skin_joint_count();
        let out = match out {
            PaletteTarget::Exact => &mut self.exact[..],
            PaletteTarget::Slot(s) => &mut self.slots[s * joints..(s + 1) * joints],
        };
        palette_from_model(self.skeleton, &self.model, Some(&self.world), out).map_err(|e| self.mesh_error(e))
    }

    /// Skins the mesh with the clip's exact pose at `time` into `exact_positions`, or with the bind pose when
    /// `posed` is false.
    fn skin_exact(&mut self, time: f32, posed: bool) -> anim_pose::Result<()> {
        if posed {
            self.palette(time, PaletteTarget::Exact)?;
        } else {
            self.exact.fill(Affine3A::IDENTITY);
        }
        let m = self.mesh;
        skin_positions_reference(
            &self.exact,
            &m.positions,
            &m.joints,
            &m.weights,
            &mut self.exact_positions,
        )
        .map_err(|e| self.mesh_error(e))
    }

    /// The largest vertex error of `k` slots, or the first error found over `tolerance`.
    fn error_bound(&mut self, k: usize, tolerance: f32) -> anim_pose::Result<f32> {
        let joints = self.skeleton.skin_joint_count();
        self.slots.resize(k * joints, Affine3A::IDENTITY);
        let d = self.clip.duration();
        let looping = self.clip.is_looping();
        let (intervals, offsets): (usize, &[f32]) = if looping { (k, &GRID_OFFSETS) } else { (k - 1, &[0.0]) };
        let spacing = d / intervals as f32;
        let mut worst = 0.0f32;
        for &offset in offsets {
            for s in 0..k {
                self.palette((s as f32 + offset) * spacing, PaletteTarget::Slot(s))?;
            }
            for &f in &FRACTIONS {
                for i in 0..intervals {
                    let (a, b) = (i, (i + 1) % k);
                    for (j, out) in self.lerped.iter_mut().enumerate() {
                        *out = lerp_affine(&self.slots[a * joints + j], &self.slots[b * joints + j], f);
                    }
                    self.skin_exact((i as f32 + offset + f) * spacing, true)?;
                    let m = self.mesh;
                    skin_positions_reference(
                        &self.lerped,
                        &m.positions,
                        &m.joints,
                        &m.weights,
                        &mut self.pooled_positions,
                    )
                    .map_err(|e| self.mesh_error(e))?;
                    let error = self
                        .exact_positions
                        .iter()
                        .zip(&self.pooled_positions)
                        .map(|(p, q)| p.distance(*q))
                        .fold(0.0f32, f32::max);
                    worst = worst.max(error);
                    if worst > tolerance {
                        return Ok(worst);
                    }
                }
            }
        }
        Ok(worst)
    }

    /// A skinning error, attributed to the mesh.
    fn mesh_error(&self, e: crate::Error) -> anim_pose::Error {
        anim_pose::Error::invalid(format!("mesh '{}'", self.mesh.name), e.to_string())
    }
}

/// Where [`Evaluator::palette`] writes.
#[derive(Clone, Copy)]
enum PaletteTarget {
    /// The exact pose's palette.
    Exact,
    /// Slot `s`'s palette.
    Slot(usize),
}

/// The component-wise lerp of two affine matrices, as the GPU interpolates two slot palettes.
fn lerp_affine(a: &Affine3A, b: &Affine3A, f: f32) -> Affine3A {
    let l = |x: Vec3A, y: Vec3A| x + (y - x) * f;
    Affine3A {
        matrix3: Mat3A::from_cols(
            l(a.matrix3.x_axis, b.matrix3.x_axis),
            l(a.matrix3.y_axis, b.matrix3.y_axis),
            l(a.matrix3.z_axis, b.matrix3.z_axis),
        ),
        translation: l(a.translation, b.translation),
    }
}

#[cfg(test)]
mod tests {
    use std::f32::consts::TAU;

    use anim_pose::{
        Aabb, Channel, Clip, ErrorBudget, Indices, Interpolation, Looping, Material, NO_PARENT, Property,
        RuntimeClipOptions, Transform,
    };
    use glam::{Mat4, Quat, Vec2, Vec4};

    use super::*;

    /// A vertical chain of `n` joints, one unit apart.
    fn chain(n: usize) -> Skeleton {
        let rest = Transform {
            translation: Vec3::Y,
            ..Transform::IDENTITY
        };
        let parents = (0..n).map(|i| if i == 0 { NO_PARENT } else { i as u16 - 1 }).collect();
        let mut skeleton = Skeleton::from_parents("chain", parents, vec![rest; n]).expect("a valid chain");
        skeleton.inverse_bind_matrices = (0..n)
            .map(|i| Mat4::from_translation(Vec3::Y * (i as f32 + 1.0)).inverse())
            .collect();
        skeleton
    }

    /// A clip that swings every joint about z, with dense linear keys.
    fn swing(skeleton: &Skeleton, duration: f32) -> RuntimeClip {
        let keys = 33;
        let times: Vec<f32> = (0..keys).map(|k| k as f32 * duration / (keys - 1) as f32).collect();
        let channels = (0..skeleton.joint_count())
            .map(|j| Channel {
                joint: j as u16,
                property: Property::Rotation,
                interpolation: Interpolation::Linear,
                times: times.clone(),
                values: times
                    .iter()
                    .map(|t| Vec4::from(Quat::from_rotation_z(0.3 * (TAU * t / duration + j as f32).sin())))
                    .collect(),
            })
            .collect();
        let clip = Clip {
            name: "swing".into(),
            animation: 0,
            skeleton: 0,
            duration,
            channels,
        };
        let options = RuntimeClipOptions {
            looping: Looping::Yes,
            budget: ErrorBudget {
                translation: 1e-2,
                rotation: 1e-2,
            },
            ..RuntimeClipOptions::default()
        };
        RuntimeClip::build(&clip, skeleton, &options).expect("the test clip builds")
    }

    /// One vertex bound rigidly to each joint, at the joint's bind position plus an offset.
    fn mesh(n: usize) -> SkinnedMesh {
        let positions: Vec<Vec3> = (0..n).map(|i| Vec3::new(0.3, i as f32 + 1.0, 0.0)).collect();
        SkinnedMesh {
            name: "sticks".into(),
            mesh: 0,
            primitive: 0,
            normals: Vec::new(),
            tangents: Vec::new(),
            uvs: vec![Vec2::ZERO; n],
            colors: Vec::new(),
            joints: (0..n as u16).map(|j| [j, 0, 0, 0]).collect(),
            weights: vec![[1.0, 0.0, 0.0, 0.0]; n],
            indices: Indices::U32(Vec::new()),
            max_influences: 1,
            source_max_influences: 1,
            material: Material::default(),
            bounds: Aabb::from_points(&positions),
            positions,
        }
    }

    #[test]
    fn pool_tolerance_is_monotone_and_validates() {
        let skeleton = chain(5);
        let clip = swing(&skeleton, 1.0);
        let mesh = mesh(5);
        let coarse = slots_for_tolerance(&skeleton, &clip, &[&mesh], 0.05, 256).expect("reachable");
        let fine = slots_for_tolerance(&skeleton, &clip, &[&mesh], 0.005, 256).expect("reachable");
        eprintln!("synthetic chain: K = {coarse} at 5 cm, {fine} at 5 mm");
        assert!(
            fine >= coarse && coarse >= 2,
            "K is not monotone: {coarse} at 5 cm, {fine} at 5 mm"
        );
        assert!(slots_for_tolerance(&skeleton, &clip, &[&mesh], 0.0, 16).is_err());
        assert!(slots_for_tolerance(&skeleton, &clip, &[&mesh], f32::NAN, 16).is_err());
        assert!(slots_for_tolerance(&skeleton, &clip, &[&mesh], 0.01, 1).is_err());
        let unreachable = slots_for_tolerance(&skeleton, &clip, &[&mesh], 1e-7, 3).expect_err("too few slots");
        assert!(unreachable.to_string().contains("clip 'swing'"), "{unreachable}");
        let other = chain(6);
        assert!(slots_for_tolerance(&other, &clip, &[&mesh], 0.01, 16).is_err());
        let mut broken = mesh.clone();
        broken.joints[0] = [9, 0, 0, 0];
        let e = slots_for_tolerance(&skeleton, &clip, &[&broken], 0.01, 16).expect_err("joint past the skin");
        assert!(e.to_string().contains("mesh 'sticks'"), "{e}");
        // Several meshes need the largest of their counts: a copy three times as far from the joints moves three
        // times as much, and needs more slots for the same budget.
        let mut far = mesh.clone();
        far.positions.iter_mut().for_each(|p| *p *= 3.0);
        let far_k = slots_for_tolerance(&skeleton, &clip, &[&far], 0.05, 256).expect("reachable");
        assert!(
            far_k > coarse,
            "{far_k} slots for the far mesh, {coarse} for the near one"
        );
        assert_eq!(
            slots_for_tolerance(&skeleton, &clip, &[&mesh, &far], 0.05, 256).expect("reachable"),
            far_k
        );
        assert_eq!(
            slots_for_tolerance(&skeleton, &clip, &[&far, &mesh], 0.05, 256).expect("reachable"),
            far_k
        );
        assert_eq!(
            slots_for_tolerance(&skeleton, &clip, &[], 0.05, 256).expect("reachable"),
            2
        );
        assert!(slots_for_tolerance(&skeleton, &clip, &[], 0.0, 256).is_err());
        assert!(slots_for_tolerance(&skeleton, &clip, &[&mesh, &broken], 0.01, 16).is_err());
    }
}
