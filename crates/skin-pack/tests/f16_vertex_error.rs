//! The largest vertex error of each f16 palette format over every frame (30 Hz through the exact clip) of every
//! clip, on the default character and on CesiumMan, checked against the stated per-vertex bounds and printed.
//!
//! Palettes are in glTF world space: `root_transform · model[j] · inverse_bind[k]` (CesiumMan's root transform
//! rotates Z-up to Y-up). The origin of each frame's palette is [`palette_origin`], the centre of its translations,
//! which stands for the instance position the renderer would pass.

mod common;

use anim_pose::{Model, Transform};
use glam::{Affine3A, Mat4, Vec3A};
use skin_pack::{
    F16Format, F16Kind, Mat3x4F16, QT_F16_SCALE_TOLERANCE, QtF16, SkinInput, VertexError, VertexErrorScratch,
    check_uniform_scale, f16_vertex_error, palette_from_model, palette_origin,
};

/// The largest error and bound of one format over all frames of one clip, in metres.
#[derive(Default)]
struct Worst {
    error: f32,
    bound: f32,
    frames: usize,
}

impl Worst {
    fn add(&mut self, e: VertexError, clip: &str, frame: usize, format: &str) {
        assert!(
            e.within_bound,
            "{format}, clip '{clip}' frame {frame}: a vertex moved beyond its bound (largest move {:e} m, largest bound {:e} m)",
            e.displacement, e.bound
        );
        self.error = self.error.max(e.displacement);
        self.bound = self.bound.max(e.bound);
        self.frames += 1;
    }
}

/// Runs every clip of skeleton 0 of `model` at 30 Hz and returns the largest Mat3x4F16 and QtF16 vertex errors
/// (QtF16 only when the skeleton passes the uniform-scale check), printing one line per clip and format.
fn measure(name: &str, model: &Model) -> (f32, Option<f32>) {
    let skeleton = &model.skeletons[0];
    let qt_allowed = check_uniform_scale(skeleton, model.clips_for(0), QT_F16_SCALE_TOLERANCE);
    println!(
        "{name}: QtF16 {}",
        match &qt_allowed {
            Ok(()) => "allowed".to_owned(),
            Err(e) => format!("not allowed, falls back to Mat3x4F16 ({e})"),
        }
    );
    let world = Affine3A::from_mat4(skeleton.root_transform);
    let mut local = vec![Transform::IDENTITY; skeleton.joint_count()];
    let mut model_mat = vec![Mat4::IDENTITY; skeleton.joint_count()];
    let mut model_space = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    let mut palette = vec![Affine3A::IDENTITY; skeleton.skin_joint_count()];
    let meshes: Vec<_> = model
        .bindings
        .iter()
        .filter(|b| b.skeleton == 0)
        .flat_map(|b| &model.meshes[b.meshes.clone()])
        .collect();
    assert!(!meshes.is_empty(), "{name} has a mesh skinned by skeleton 0");
    let mut scratches: Vec<VertexErrorScratch> = meshes
        .iter()
        .map(|m| VertexErrorScratch::new(palette.len(), m.vertex_count()))
        .collect();
    let radius = meshes
        .iter()
        .flat_map(|m| m.positions.iter())
        .map(|p| p.length())
        .fold(0.0f32, f32::max);
    let (mut all_mat, mut all_qt) = (0.0f32, 0.0f32);
    let mut clips = 0;
    for clip in model.clips_for(0) {
        clips += 1;
        let (mut mat, mut qt) = (Worst::default(), Worst::default());
        let frames = (clip.duration * 30.0).ceil() as usize;
        for frame in 0..=frames {
            let t = (frame as f32 / 30.0).min(clip.duration);
            clip.sample_local_pose(skeleton, t, &mut local).expect("samples");
            skeleton.local_to_model(&local, &mut model_mat).expect("converts");
            for (a, m) in model_space.iter_mut().zip(&model_mat) {
                *a = Affine3A::from_mat4(*m);
            }
            palette_from_model(skeleton, &model_space, Some(&world), &mut palette).expect("palette");
            let origin: Vec3A = palette_origin(&palette);
            for (mesh, scratch) in meshes.iter().zip(&mut scratches) {
                let input = SkinInput {
                    positions: &mesh.positions,
                    normals: &[],
                    tangents: &[],
                    joints: &mesh.joints,
                    weights: &mesh.weights,
                };
                let e = f16_vertex_error::<Mat3x4F16>(&palette, origin, &input, scratch).expect("Mat3x4F16 in range");
                mat.add(e, &clip.name, frame, "Mat3x4F16");
                if qt_allowed.is_ok() {
                    let e = f16_vertex_error::<QtF16>(&palette, origin, &input, scratch).expect("QtF16 in range");
                    qt.add(e, &clip.name, frame, "QtF16");
                }
            }
        }
        println!(
            "{name} clip '{}' ({} frames): Mat3x4F16 max {:.4} mm (bound {:.3} mm){}",
            clip.name,
            frames + 1,
            mat.error * 1e3,
            mat.bound * 1e3,
            if qt_allowed.is_ok() {
                format!(", QtF16 max {:.4} mm (bound {:.3} mm)", qt.error * 1e3, qt.bound * 1e3)
            } else {
                String::new()
            }
        );
        assert!(mat.frames > 0);
        all_mat = all_mat.max(mat.error);
        all_qt = all_qt.max(qt.error);
    }
    assert!(clips > 0, "{name} has clips");
    println!(
        "{name}: mesh radius {radius:.3} m; largest vertex error Mat3x4F16 {:.4} mm{}",
        all_mat * 1e3,
        if qt_allowed.is_ok() {
            format!(", QtF16 {:.4} mm", all_qt * 1e3)
        } else {
            String::new()
        }
    );
    (all_mat, qt_allowed.is_ok().then_some(all_qt))
}

#[test]
fn default_character_vertex_error_within_bounds() {
    let model = anim_pose::import_file(common::default_character()).expect("the default character imports");
    let (mat, qt) = measure("default character", &model);
    assert_eq!(
        skin_pack::choose_f16_format(&model.skeletons[0], model.clips_for(0), QT_F16_SCALE_TOLERANCE),
        F16Kind::QtF16,
        "the default character has uniform scales"
    );
    let qt = qt.expect("QtF16 is allowed");
    // Both formats really quantise (the per-vertex bounds were asserted frame by frame in `measure`).
    assert!(mat > 0.0 && qt > 0.0, "{mat} {qt}");
}

#[test]
fn cesium_man_vertex_error_within_bounds() {
    let Some(path) = common::asset_file("gltf/CesiumMan/CesiumMan.glb") else {
        return;
    };
    let model = anim_pose::import_file(path).expect("CesiumMan imports");
    let (mat, qt) = measure("CesiumMan", &model);
    assert!(mat > 0.0, "{mat}");
    assert!(qt.is_none_or(|qt| qt > 0.0), "{qt:?}");
}

#[test]
fn vertex_bounds_are_tight_enough_to_mean_something() {
    // The f16 error of a rigid joint one metre from the origin, on a vertex one metre away, is within a factor of
    // a few of the stated bound: the bound is not vacuous.
    let m = Affine3A::from_rotation_translation(glam::Quat::from_rotation_y(0.3), glam::Vec3::new(0.0, 1.0, 0.0));
    let b_mat = Mat3x4F16::vertex_error_bound(&m, Vec3A::ZERO, 1.0);
    let b_qt = QtF16::vertex_error_bound(&m, Vec3A::ZERO, 1.0);
    assert!((1.0e-3..1.4e-3).contains(&b_mat), "{b_mat}");
    assert!((1.5e-3..2.0e-3).contains(&b_qt), "{b_qt}");
}
