//! Criterion benches for `anim-pose`: glTF import and the exact (reference) clip evaluator.
//!
//! The exact evaluator searches keys per channel and is the correctness reference, not the crowd hot path.
//! Its cost is reported next to a plain copy of the same rest pose (`rest_pose_copy`), measured in the same
//! run, so the ratio is meaningful on noisy machines.

use std::hint::black_box;

use anim_pose::{Model, Transform};
use criterion::{Criterion, criterion_group, criterion_main};
use crowd_benches::bench;
use glam::Mat4;

fn load(path: &std::path::Path) -> (Vec<u8>, Model) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let model = anim_pose::import_slice(&bytes, path.parent()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (bytes, model)
}

fn import(c: &mut Criterion) {
    let path = crowd_benches::default_character();
    let (bytes, _) = load(&path);
    c.bench_function(bench!("anim_pose", "import/default_character"), |b| {
        b.iter(|| anim_pose::import_slice(black_box(&bytes), None).expect("imports"))
    });
    if let Some(dir) = std::env::var_os("CROWD_SAMPLE_ASSETS") {
        let path = std::path::Path::new(&dir).join("gltf/CesiumMan/CesiumMan.glb");
        let (bytes, _) = load(&path);
        c.bench_function(bench!("anim_pose", "import/cesium_man"), |b| {
            b.iter(|| anim_pose::import_slice(black_box(&bytes), None).expect("imports"))
        });
    }
}

fn sampling(c: &mut Criterion) {
    let (_, model) = load(&crowd_benches::default_character());
    let skeleton = &model.skeletons[0];
    let n = skeleton.joint_count();
    let mut local = vec![Transform::IDENTITY; n];
    let mut model_space = vec![Mat4::IDENTITY; n];

    c.bench_function(bench!("anim_pose", "rest_pose_copy"), |b| {
        b.iter(|| local.copy_from_slice(black_box(&skeleton.rest_pose)))
    });
    for clip in model.clips_for(0) {
        let mut t = 0.0f32;
        let step = 1.0 / 61.0;
        c.bench_function(&bench!("anim_pose", "sample_exact", clip.name), |b| {
            b.iter(|| {
                t = if t + step > clip.duration { 0.0 } else { t + step };
                clip.sample_local_pose(skeleton, black_box(t), &mut local)
                    .expect("samples");
            })
        });
    }
    c.bench_function(bench!("anim_pose", "local_to_model_reference"), |b| {
        b.iter(|| {
            skeleton
                .local_to_model(black_box(&local), &mut model_space)
                .expect("converts")
        })
    });
}

criterion_group!(benches, import, sampling);
criterion_main!(benches);
