//! Criterion benches for `skin_pack::FlattenJob`: 1,000 instances × 64 joints reading 128 shared poses with their
//! transforms folded in, in each palette format, next to a plain copy of the f32 output bytes and to the plain
//! reference `palette_from_model`, all measured in the same run.

use std::hint::black_box;

use anim_pose::{NO_PARENT, Skeleton, Transform};
use criterion::{Criterion, criterion_group, criterion_main};
use crowd_benches::bench;
use glam::{Affine3A, Mat4, Quat, Vec3};
use skin_pack::{
    FlattenCache, FlattenJob, Mat3x4F16, PaletteBinding, PaletteEntry, PaletteFormat, QtF16, palette_from_model,
};

const JOINTS: usize = 64;
const INSTANCES: usize = 1_000;
const POSES: usize = 128;

fn skeleton() -> Skeleton {
    let parents = (0..JOINTS)
        .map(|j| if j == 0 { NO_PARENT } else { (j as u16 - 1) / 2 })
        .collect();
    let mut s = Skeleton::from_parents("bench_64", parents, vec![Transform::IDENTITY; JOINTS]).expect("valid");
    s.inverse_bind_matrices = (0..JOINTS)
        .map(|j| Mat4::from_translation(Vec3::new(0.0, -0.03 * j as f32, 0.0)))
        .collect();
    s
}

fn flatten<F: PaletteFormat>(
    c: &mut Criterion,
    name: &str,
    binding: &PaletteBinding,
    inputs: &Inputs,
    streaming: bool,
) {
    let mut cache = FlattenCache::new(binding, POSES);
    let mut out = vec![F::zeroed(); INSTANCES * JOINTS];
    c.bench_function(&bench!("skin_pack", "flatten", name), |b| {
        b.iter(|| {
            FlattenJob {
                binding,
                poses: black_box(&inputs.poses),
                pose_of: &inputs.pose_of,
                transforms: &inputs.transforms,
                cache: &mut cache,
                output: &mut out,
                streaming,
            }
            .run()
            .expect("runs")
        })
    });
}

struct Inputs {
    poses: Vec<Affine3A>,
    pose_of: Vec<u32>,
    transforms: Vec<Affine3A>,
}

fn benches(c: &mut Criterion) {
    let skeleton = skeleton();
    let binding = PaletteBinding::new(&skeleton).expect("binds");
    let inputs = Inputs {
        poses: (0..POSES * JOINTS)
            .map(|i| Affine3A::from_rotation_translation(Quat::from_rotation_y(i as f32 * 0.1), Vec3::Y * 0.01))
            .collect(),
        pose_of: (0..INSTANCES).map(|i| (i * 37 % POSES) as u32).collect(),
        transforms: (0..INSTANCES)
            .map(|i| Affine3A::from_translation(Vec3::new(i as f32, 0.0, 0.0)))
            .collect(),
    };
    let bytes = INSTANCES * JOINTS * size_of::<PaletteEntry>();
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    c.bench_function(bench!("skin_pack", "flatten/memcpy_f32_bytes"), |b| {
        b.iter(|| dst.copy_from_slice(black_box(&src)))
    });
    flatten::<PaletteEntry>(c, "f32", &binding, &inputs, false);
    flatten::<PaletteEntry>(c, "f32_streaming", &binding, &inputs, true);
    flatten::<Mat3x4F16>(c, "mat3x4_f16", &binding, &inputs, false);
    flatten::<QtF16>(c, "qt_f16", &binding, &inputs, false);
    let mut out = vec![Affine3A::IDENTITY; JOINTS];
    c.bench_function(bench!("skin_pack", "flatten/reference_f32"), |b| {
        b.iter(|| {
            for (i, &p) in inputs.pose_of.iter().enumerate() {
                let pose = &inputs.poses[p as usize * JOINTS..][..JOINTS];
                palette_from_model(&skeleton, black_box(pose), Some(&inputs.transforms[i]), &mut out).expect("runs");
                black_box(&out);
            }
        })
    });
}

criterion_group!(group, benches);
criterion_main!(group);
