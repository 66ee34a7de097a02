//! Criterion benches for the f16 palette formats of `skin-pack`: encoding a batch of real palettes as
//! `Mat3x4F16`, `QtF16` and the f32 `PaletteEntry`, a copy of the same output bytes, decoding, and the f32 → f16
//! conversion alone in one batch (`halves_from_f32`, F16C when present) against one value at a time
//! (`halves_from_f32_scalar`).

use std::hint::black_box;

use anim_pose::Transform;
use criterion::{Criterion, criterion_group, criterion_main};
use crowd_benches::bench;
use glam::{Affine3A, Mat4};
use skin_pack::{
    F16Format, Mat3x4F16, PaletteEntry, PaletteFormat, QtF16, halves_from_f32, halves_from_f32_scalar,
    palette_from_model, palette_origin,
};

/// 64 palettes of the default character's walk, spread over the clip: 64 × 56 joints.
fn matrices() -> Vec<Affine3A> {
    let model = anim_pose::import_file(crowd_benches::default_character()).expect("the default character imports");
    let skeleton = &model.skeletons[0];
    let clip = model.clips_for(0).find(|c| c.name == "walk").expect("a walk clip");
    let mut local = vec![Transform::IDENTITY; skeleton.joint_count()];
    let mut model_mat = vec![Mat4::IDENTITY; skeleton.joint_count()];
    let mut palette = vec![Affine3A::IDENTITY; skeleton.skin_joint_count()];
    let mut out = Vec::new();
    for i in 0..64 {
        let t = clip.duration * i as f32 / 64.0;
        clip.sample_local_pose(skeleton, t, &mut local).expect("samples");
        skeleton.local_to_model(&local, &mut model_mat).expect("converts");
        let model_space: Vec<Affine3A> = model_mat.iter().map(|m| Affine3A::from_mat4(*m)).collect();
        palette_from_model(skeleton, &model_space, None, &mut palette).expect("palette");
        out.extend_from_slice(&palette);
    }
    out
}

fn encode<F: PaletteFormat>(c: &mut Criterion, name: &str, matrices: &[Affine3A], init: F) {
    let origin = palette_origin(matrices);
    let mut out = vec![init; matrices.len()];
    c.bench_function(&bench!("skin_pack", "f16_encode", name), |b| {
        b.iter(|| {
            for (o, m) in out.iter_mut().zip(black_box(matrices)) {
                *o = F::encode(m, origin);
            }
            black_box(&out);
        })
    });
    let src = out.clone();
    c.bench_function(&bench!("skin_pack", "f16_copy", name), |b| {
        b.iter(|| {
            out.copy_from_slice(black_box(&src));
            black_box(&out);
        })
    });
}

fn decode<F: F16Format>(c: &mut Criterion, name: &str, matrices: &[Affine3A]) {
    let origin = palette_origin(matrices);
    let encoded: Vec<F> = matrices.iter().map(|m| F::encode(m, origin)).collect();
    let mut out = vec![Affine3A::IDENTITY; matrices.len()];
    c.bench_function(&bench!("skin_pack", "f16_decode", name), |b| {
        b.iter(|| {
            for (o, e) in out.iter_mut().zip(black_box(&encoded)) {
                *o = e.decode(origin);
            }
            black_box(&out);
        })
    });
}

fn conversion<const N: usize>(c: &mut Criterion, values: &[f32]) {
    let chunks: Vec<[f32; N]> = values
        .chunks_exact(N)
        .map(|c| c.try_into().expect("N values"))
        .collect();
    let mut out = vec![[0u16; N]; chunks.len()];
    c.bench_function(&bench!("skin_pack", "f16_convert", format!("batch_{N}")), |b| {
        b.iter(|| {
            for (o, v) in out.iter_mut().zip(black_box(&chunks)) {
                *o = halves_from_f32(v);
            }
            black_box(&out);
        })
    });
    c.bench_function(&bench!("skin_pack", "f16_convert", format!("scalar_{N}")), |b| {
        b.iter(|| {
            for (o, v) in out.iter_mut().zip(black_box(&chunks)) {
                *o = halves_from_f32_scalar(v);
            }
            black_box(&out);
        })
    });
}

fn benches(c: &mut Criterion) {
    let matrices = matrices();
    encode(c, "mat3x4_f16", &matrices, Mat3x4F16::default());
    encode(c, "qt_f16", &matrices, QtF16::default());
    encode(c, "f32_entry", &matrices, PaletteEntry::IDENTITY);
    decode::<Mat3x4F16>(c, "mat3x4_f16", &matrices);
    decode::<QtF16>(c, "qt_f16", &matrices);
    let values: Vec<f32> = matrices
        .iter()
        .flat_map(|m| m.matrix3.to_cols_array().into_iter().chain(m.translation.to_array()))
        .collect();
    conversion::<12>(c, &values);
    conversion::<8>(c, &values);
}

criterion_group!(group, benches);
criterion_main!(group);
