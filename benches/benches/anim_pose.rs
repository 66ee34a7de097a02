//! Criterion benches for `anim-pose`: glTF import, the exact (reference) clip evaluator, and the runtime
//! jobs and pose pool that `cargo xtask bench` reports as headline figures.
//!
//! The exact evaluator searches keys per channel and is the correctness reference, not the crowd hot path.
//! Costs are reported next to plain copies of the same bytes (`rest_pose_copy`, `pose_pool/slot_ref_copy`),
//! measured in the same run, so the ratios are meaningful on noisy machines.

use std::hint::black_box;

use anim_pose::{
    BlendLayer, BlendingJob, LocalToModelJob, Model, PoolClip, PosePool, PosePoolOptions, RuntimeClip,
    RuntimeClipOptions, SamplingJob, SlotRef, SoaTransform, Transform,
};
use criterion::{Criterion, criterion_group, criterion_main};
use crowd_benches::bench;
use glam::{Affine3A, Mat4};

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

fn runtime(c: &mut Criterion) {
    let (_, model) = load(&crowd_benches::default_character());
    let skeleton = &model.skeletons[0];
    let clips: Vec<RuntimeClip> = model
        .clips_for(0)
        .map(|c| RuntimeClip::build(c, skeleton, &RuntimeClipOptions::default()).expect("builds"))
        .collect();
    let soa = clips[0].num_soa_joints();
    let mut a = vec![SoaTransform::IDENTITY; soa];
    let mut b = vec![SoaTransform::IDENTITY; soa];
    let mut out = vec![SoaTransform::IDENTITY; soa];
    let mut model_space = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    for clip in &clips {
        let mut t = 0.0f32;
        c.bench_function(&bench!("anim_pose", "sampling_job", clip.name()), |bch| {
            bch.iter(|| {
                t = (t + 1.0 / 61.0) % clip.duration();
                SamplingJob {
                    clip,
                    time: black_box(t),
                    output: &mut a,
                }
                .run()
                .expect("samples");
            })
        });
    }
    SamplingJob {
        clip: &clips[1],
        time: 0.3,
        output: &mut a,
    }
    .run()
    .expect("samples");
    SamplingJob {
        clip: &clips[2],
        time: 0.5,
        output: &mut b,
    }
    .run()
    .expect("samples");
    c.bench_function(bench!("anim_pose", "local_to_model_job"), |bch| {
        bch.iter(|| {
            LocalToModelJob {
                skeleton,
                input: black_box(&a),
                output: &mut model_space,
                from: None,
                root: None,
            }
            .run()
            .expect("converts")
        })
    });
    let rest = skeleton.rest_pose_soa();
    c.bench_function(bench!("anim_pose", "blending_job/crossfade"), |bch| {
        bch.iter(|| {
            let layers = [
                BlendLayer {
                    transform: &a,
                    weight: 0.6,
                    joint_weights: None,
                },
                BlendLayer {
                    transform: &b,
                    weight: 0.4,
                    joint_weights: None,
                },
            ];
            BlendingJob {
                layers: &layers,
                additive: &[],
                rest_pose: &rest,
                threshold: 0.1,
                output: &mut out,
            }
            .run()
            .expect("blends")
        })
    });

    let pool_clips: Vec<PoolClip> = clips.iter().map(|clip| PoolClip { clip, slots: 32 }).collect();
    let mut pool = PosePool::new(skeleton, &pool_clips, &PosePoolOptions::default()).expect("the pool builds");
    let mut t = 0.0f32;
    c.bench_function(bench!("anim_pose", "pose_pool/update_4x32"), |bch| {
        bch.iter(|| {
            t += 1.0 / 60.0;
            pool.update(black_box(t)).expect("updates")
        })
    });
    let n = 100_000;
    let tracks: Vec<u16> = (0..n).map(|i| (i % clips.len()) as u16).collect();
    let times: Vec<f32> = (0..n).map(|i| (i as f32 * 0.618_034).fract() * 4.0).collect();
    let mut refs = vec![SlotRef::default(); n];
    let source = vec![SlotRef::default(); n];
    c.bench_function(bench!("anim_pose", "pose_pool/slot_ref_copy_100k"), |bch| {
        bch.iter(|| refs.copy_from_slice(black_box(&source)))
    });
    c.bench_function(bench!("anim_pose", "pose_pool/map_100k"), |bch| {
        bch.iter(|| pool.map_instances(&tracks, black_box(&times), &mut refs).expect("maps"))
    });
}

criterion_group!(benches, import, sampling, runtime);
criterion_main!(benches);
