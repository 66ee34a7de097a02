//! Figures of `cargo xtask bench` for the f16 palette formats of `skin-pack`: the largest vertex error of
//! `Mat3x4F16` and `QtF16` over every frame (30 Hz) of every clip of the default character, checked against the
//! stated per-vertex bounds, and the encoders' cost per joint next to a copy of the same output bytes.

use anim_pose::{Model, Transform};
use glam::{Affine3A, Mat4};
use skin_pack::{
    F16Format, Mat3x4F16, PaletteEntry, PaletteFormat, QT_F16_SCALE_TOLERANCE, QtF16, SkinInput, VertexErrorScratch,
    check_uniform_scale, f16_vertex_error, palette_from_model, palette_origin,
};

use crate::harness::{Effort, Figure, median_seconds_per_iteration};

/// The largest vertex error of one format, with the largest per-vertex bound met on the way, in metres.
struct Worst {
    error: f32,
    bound: f32,
    within: bool,
}

/// Every palette of skeleton 0 of `model`: every clip at 30 Hz through the exact evaluator, in glTF world space
/// (`root_transform · model · inverse_bind`).
fn palettes(model: &Model) -> Result<Vec<Vec<Affine3A>>, Box<dyn std::error::Error>> {
    let skeleton = &model.skeletons[0];
    let world = Affine3A::from_mat4(skeleton.root_transform);
    let mut local = vec![Transform::IDENTITY; skeleton.joint_count()];
    let mut model_mat = vec![Mat4::IDENTITY; skeleton.joint_count()];
    let mut model_space = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    let mut out = Vec::new();
    for clip in model.clips_for(0) {
        let frames = (clip.duration * 30.0).ceil() as usize;
        for frame in 0..=frames {
            let t = (frame as f32 / 30.0).min(clip.duration);
            clip.sample_local_pose(skeleton, t, &mut local)?;
            skeleton.local_to_model(&local, &mut model_mat)?;
            for (a, m) in model_space.iter_mut().zip(&model_mat) {
                *a = Affine3A::from_mat4(*m);
            }
            let mut palette = vec![Affine3A::IDENTITY; skeleton.skin_joint_count()];
            palette_from_model(skeleton, &model_space, Some(&world), &mut palette)?;
            out.push(palette);
        }
    }
    Ok(out)
}

/// The worst vertex error of format `F` over `palettes`, on every mesh skinned by skeleton 0, each palette
/// relative to its own [`palette_origin`].
fn worst<F: F16Format>(model: &Model, palettes: &[Vec<Affine3A>]) -> Result<Worst, Box<dyn std::error::Error>> {
    let mut w = Worst {
        error: 0.0,
        bound: 0.0,
        within: true,
    };
    let joints = model.skeletons[0].skin_joint_count();
    for binding in model.bindings.iter().filter(|b| b.skeleton == 0) {
        for mesh in &model.meshes[binding.meshes.clone()] {
            let mut scratch = VertexErrorScratch::new(joints, mesh.vertex_count());
            let input = SkinInput {
                positions: &mesh.positions,
                normals: &[],
                tangents: &[],
                joints: &mesh.joints,
                weights: &mesh.weights,
            };
            for palette in palettes {
                let e = f16_vertex_error::<F>(palette, palette_origin(palette), &input, &mut scratch)?;
                w.error = w.error.max(e.displacement);
                w.bound = w.bound.max(e.bound);
                w.within &= e.within_bound;
            }
        }
    }
    Ok(w)
}

/// Nanoseconds per joint to encode every matrix of `matrices` as `F` into `out`.
fn encode_ns<F: PaletteFormat>(effort: Effort, matrices: &[Affine3A], out: &mut [F]) -> f64 {
    let origin = palette_origin(matrices);
    let secs = median_seconds_per_iteration(effort, || {
        for (o, m) in out.iter_mut().zip(std::hint::black_box(matrices)) {
            *o = F::encode(m, origin);
        }
        std::hint::black_box(&*out);
    });
    secs * 1e9 / matrices.len() as f64
}

/// Nanoseconds per joint to copy `src` into `dst`: the memcpy baseline for an output of that size.
fn copy_ns<F: Copy>(effort: Effort, src: &[F], dst: &mut [F]) -> f64 {
    let secs = median_seconds_per_iteration(effort, || {
        dst.copy_from_slice(std::hint::black_box(src));
        std::hint::black_box(&*dst);
    });
    secs * 1e9 / src.len() as f64
}

/// Appends this part's figures to `figures`.
pub fn run(quick: bool, figures: &mut Vec<Figure>) -> Result<(), Box<dyn std::error::Error>> {
    let model = anim_pose::import_file(crate::default_character())?;
    let palettes = palettes(&model)?;
    if palettes.is_empty() {
        return Err("the default character has no clips".into());
    }
    let mat = worst::<Mat3x4F16>(&model, &palettes)?;
    let qt_allowed = check_uniform_scale(&model.skeletons[0], model.clips_for(0), QT_F16_SCALE_TOLERANCE);
    for (name, bound_name, w) in [
        (
            "skin_pack.mat3x4_f16_max_vertex_error_mm",
            "skin_pack.mat3x4_f16_vertex_error_bound_mm",
            Some(mat),
        ),
        (
            "skin_pack.qt_f16_max_vertex_error_mm",
            "skin_pack.qt_f16_vertex_error_bound_mm",
            // QtF16 needs uniform scale; the default character has it, so a failure here is an error in the figure.
            match &qt_allowed {
                Ok(()) => Some(worst::<QtF16>(&model, &palettes)?),
                Err(e) => return Err(format!("QtF16 is not allowed on the default character: {e}").into()),
            },
        ),
    ] {
        let w = w.expect("measured");
        figures.push(Figure {
            name: name.into(),
            value: f64::from(w.error) * 1e3,
            target: "<= bound",
            met: w.within,
        });
        figures.push(Figure {
            name: bound_name.into(),
            value: f64::from(w.bound) * 1e3,
            target: "report",
            met: true,
        });
    }

    // Encoding cost: every palette of every clip, joint after joint, as the flattening jobs do.
    let matrices: Vec<Affine3A> = palettes.iter().flatten().copied().collect();
    let effort = Effort::new(quick, 200);
    let mut mat_out = vec![Mat3x4F16::default(); matrices.len()];
    let mut qt_out = vec![QtF16::default(); matrices.len()];
    let mut f32_out = vec![PaletteEntry::IDENTITY; matrices.len()];
    let mat_ns = encode_ns(effort, &matrices, &mut mat_out);
    let qt_ns = encode_ns(effort, &matrices, &mut qt_out);
    let f32_ns = encode_ns(effort, &matrices, &mut f32_out);
    let mat_copy = copy_ns(effort, &mat_out.clone(), &mut mat_out);
    let qt_copy = copy_ns(effort, &qt_out.clone(), &mut qt_out);
    for (name, value) in [
        ("skin_pack.mat3x4_f16_encode_ns_per_joint", mat_ns),
        ("skin_pack.qt_f16_encode_ns_per_joint", qt_ns),
        ("skin_pack.f32_entry_encode_ns_per_joint", f32_ns),
        ("skin_pack.mat3x4_f16_copy_ns_per_joint", mat_copy),
        ("skin_pack.qt_f16_copy_ns_per_joint", qt_copy),
    ] {
        figures.push(Figure {
            name: name.into(),
            value,
            target: "report",
            met: true,
        });
    }
    Ok(())
}
