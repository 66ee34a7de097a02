//! Criterion benches for `skin-pack`: CPU reference skinning of the default character, scalar and parallel,
//! next to a plain copy of the same vertex bytes measured in the same run.

use std::hint::black_box;

use anim_pose::{RuntimeClip, RuntimeClipOptions, SamplingJob, SoaTransform};
use criterion::{Criterion, criterion_group, criterion_main};
use crowd_benches::bench;
use glam::{Affine3A, Vec3, Vec4};
use skin_pack::{SkinInput, SkinOutput, SkinningJob, palette_from_model, skin_reference};

fn skinning(c: &mut Criterion) {
    let model = anim_pose::import_file(crowd_benches::default_character()).expect("the default character imports");
    let skeleton = &model.skeletons[0];
    let mesh = &model.meshes[0];
    let clip = model.clips_for(0).find(|c| c.name == "walk").expect("a walk clip");
    let clip = RuntimeClip::build(clip, skeleton, &RuntimeClipOptions::default()).expect("builds");
    let mut local = vec![SoaTransform::IDENTITY; clip.num_soa_joints()];
    SamplingJob {
        clip: &clip,
        time: 0.4,
        output: &mut local,
    }
    .run()
    .expect("samples");
    let mut model_space = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    anim_pose::LocalToModelJob {
        skeleton,
        input: &local,
        output: &mut model_space,
        from: None,
        root: None,
    }
    .run()
    .expect("converts");
    let mut palette = vec![Affine3A::IDENTITY; skeleton.skin_joint_count()];
    palette_from_model(skeleton, &model_space, None, &mut palette).expect("palette");

    let n = mesh.vertex_count();
    let mut positions = vec![Vec3::ZERO; n];
    let mut normals = vec![Vec3::ZERO; mesh.normals.len()];
    let mut tangents = vec![Vec4::ZERO; mesh.tangents.len()];
    c.bench_function(bench!("skin_pack", "vertex_copy"), |b| {
        b.iter(|| {
            positions.copy_from_slice(black_box(&mesh.positions));
            normals.copy_from_slice(black_box(&mesh.normals));
        })
    });
    let input = SkinInput {
        positions: &mesh.positions,
        normals: &mesh.normals,
        tangents: &mesh.tangents,
        joints: &mesh.joints,
        weights: &mesh.weights,
    };
    c.bench_function(bench!("skin_pack", "skin_reference"), |b| {
        b.iter(|| {
            let mut out = SkinOutput {
                positions: &mut positions,
                normals: &mut normals,
                tangents: &mut tangents,
            };
            skin_reference(black_box(&palette), &input, &mut out).expect("skins")
        })
    });
    c.bench_function(bench!("skin_pack", "skinning_job_parallel"), |b| {
        b.iter(|| {
            SkinningJob {
                palette: black_box(&palette),
                positions: &mesh.positions,
                normals: &mesh.normals,
                tangents: &mesh.tangents,
                joints: &mesh.joints,
                weights: &mesh.weights,
                out_positions: &mut positions,
                out_normals: &mut normals,
                out_tangents: &mut tangents,
            }
            .run()
            .expect("skins")
        })
    });
}

criterion_group!(benches, skinning);
criterion_main!(benches);
